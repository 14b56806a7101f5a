"""Full game states built from one seat's observation (determinizations).

A search bot knows only what the harness sends it: the ``start`` message and,
at each decision, its ``obs`` (as it arrives over the wire: msgpack, so
tuples are lists) and ``legal``. :func:`from_observation` builds a complete
engine state that this seat cannot tell from the real one: its
``observation(seat)`` equals ``obs`` and, when the seat is to act, its
``legal_actions()`` equal ``legal``. Everything hidden from the seat is
sampled from the seed, and the state's ``rng`` is seeded from it too, so
future chance is fresh.

Each game builds its own: ``Game.from_observation`` (``games.base`` states
the contract; each engine's module docstring says what it samples and which
inferences from the public record it keeps; ``games.sampling`` holds the
shared dealing helpers; ``games.testing.check_from_observation`` checks it).
This module dispatches by slug, and keeps kings_order's rank bounds
importable from here, where the search bot and the heuristics find them.

    state = from_observation("limit", obs, seed=7)
    state.observation(obs["seat"]) == obs   # on the wire
"""

from __future__ import annotations

from games.base import Game
from games.registry import get_game, implemented_games

__all__ = ["from_observation", "supported"]


def from_observation(slug: str, obs: dict, seed: int, decisions: int = 0) -> Game:
    """A full state of ``slug`` consistent with ``obs`` (one seat's view, wire
    form), hidden parts sampled from ``seed``. ``decisions`` sets the state's
    decision counter (the harness sends it with every ``act``), which only
    matters for the game's cap on decisions."""
    return get_game(slug).from_observation(obs, seed, decisions)


def supported() -> list[str]:
    """The registered games that build states from an observation."""
    return sorted(slug for slug in implemented_games()
                  if any("from_observation" in vars(k) for k in get_game(slug).__mro__ if k is not Game))
