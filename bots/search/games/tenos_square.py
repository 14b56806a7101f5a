"""tenos_square: the search's settings, and the heuristic's move read from
the engine state, its row valuations cached (a row changes once a turn;
every playout asks about the same rows)."""

from __future__ import annotations

import random

from bots.heuristics.tenos_square import best_for, decide
from bots.search.core.config import GameConfig, rounds_left

_TENOS_BEST: dict[tuple, tuple[float, int]] = {}


def _tenos_best_for(row: tuple, card: int, n: int) -> tuple[float, int]:
    key = (row, card, n)
    found = _TENOS_BEST.get(key)
    if found is None:
        if len(_TENOS_BEST) > 200_000:
            _TENOS_BEST.clear()
        found = _TENOS_BEST[key] = best_for(list(row), card, n)
    return found


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The tenos_square heuristic's ``choose`` with its row valuations cached
    (a row changes once per turn; every playout asks about the same rows)."""
    if len(legal) == 1:
        return 0
    return decide(state.phase, tuple(state.visible_row(seat)), state.hands[seat], state.centre,
                  state.playing, state.num_players, legal, _tenos_best_for)


CONFIG = GameConfig(
    round_of=lambda g: g.deal, remaining=rounds_left("deal", "deals"), sigma=43.0,
    rollout=policy)
