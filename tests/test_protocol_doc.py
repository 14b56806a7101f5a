"""PROTOCOL.md is enough to write a bot: its example bot plays a real match."""

from __future__ import annotations

import re
from pathlib import Path

from harness.catalog import load_manifest
from harness.match import BotPool, Limits, run_match

ROOT = Path(__file__).resolve().parent.parent


def test_the_documented_example_bot_plays_without_faults(tmp_path):
    text = (ROOT / "PROTOCOL.md").read_text()
    section = text.split("## A complete bot in Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "first.py").write_text(code)
    (tmp_path / "first.toml").write_text(
        'name = "first"\ncommand = ["{python}", "first.py"]\ngames = "*"\n')
    spec = load_manifest(tmp_path / "first.toml")
    from harness.catalog import discover

    specs = {**discover(), "first": spec}
    limits = Limits(decision_s=2.0, startup_s=10.0)
    pool = BotPool(specs, limits)
    try:
        for game in ("limit", "tateyoko"):
            result = run_match(game, 1, ["first", "random", "random"], pool, limits, f"doc-{game}")
            assert result.faults == [None, None, None]
            assert not result.capped
        assert pool.starts["first"] == 1, "one process played both matches"
    finally:
        pool.close()
