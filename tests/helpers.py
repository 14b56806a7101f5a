"""Waiting in tests without guessing how long things take: a loaded machine
(two cores, other test processes, bots starting) stretches every delay, so a
test polls for the condition it needs instead of sleeping a fixed time and
then asserting."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Far beyond what anything polled for takes on a quiet machine (well under a
# second): the limit only turns a hang into a failure, it never times a pass.
GENEROUS_S = 60.0


def wait_until(predicate: Callable[[], T], what: str, timeout: float = GENEROUS_S,
               interval: float = 0.05, describe: Callable[[], object] | None = None) -> T:
    """Call ``predicate`` until it returns something true, and return that;
    fail with ``what`` (what was awaited) after ``timeout`` seconds, and with
    ``describe()`` (what is still in the way) where given."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            seen = describe() if describe is not None else value
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}: {seen!r}")
        time.sleep(interval)
