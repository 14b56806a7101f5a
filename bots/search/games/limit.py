"""limit: the search's settings, and the heuristic's move read from the engine state."""

from __future__ import annotations

import random

from bots.search.core.config import GameConfig, rounds_left


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move (``bots/heuristics/limit.py``), read from the state."""
    room = state.limit_card[0] - sum(v for _, v in state.basket)
    if room in state.hands[seat] and room not in state.blocked[seat] and room in legal:
        return legal.index(room)
    others_left = sum(sum(h) for s, h in enumerate(state.hands) if s != seat)
    margin = min(room - 1, others_left // 6)
    safe = [c for c in legal if c != 0 and c <= room - margin]
    if safe:
        # the heuristic's "mine <= leader" always holds (the leader's sum is a max
        # over every seat, this one included), so it plays the largest safe card
        return legal.index(max(safe))
    return 0


CONFIG = GameConfig(
    round_of=lambda g: g.round, remaining=rounds_left("round", "rounds"), sigma=7.5, depth=2,
    rollout=policy)
