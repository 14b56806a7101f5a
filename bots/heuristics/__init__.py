"""Heuristic policies, one module per game slug.

Each module defines ``choose(obs, legal, rng) -> int``: given the observation
and legal actions exactly as they arrive over the wire (msgpack: tuples are
lists) and a seeded ``random.Random``, return the index of the chosen action.
Policies see only the observation, like any external bot.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

Policy = Callable[[dict, list, Any], int]


def available() -> list[str]:
    """Slugs that have a heuristic policy."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load(slug: str) -> Policy:
    if slug not in available():
        raise KeyError(f"no heuristic policy for game {slug!r}; have: {', '.join(available())}")
    return importlib.import_module(f"{__name__}.{slug}").choose
