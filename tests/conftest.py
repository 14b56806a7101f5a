import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The headless Chromium fixture of the browser tests, for every test module.
from tests.browser import browser  # noqa: E402, F401


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests first in every xdist process's share: `--dist worksteal`
    gives each process a contiguous share of this list and lets an idle one
    steal from the end of another's, so the long tests start early on both
    and the last minutes are short tests that keep every process busy, not
    one long test that leaves the others idle."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    slow = [item for item in items if item.get_closest_marker("slow")]
    fast = [item for item in items if not item.get_closest_marker("slow")]
    items[:] = [item for k in range(workers) for item in slow[k::workers] + fast[k::workers]]
