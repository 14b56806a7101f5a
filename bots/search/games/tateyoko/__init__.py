"""tateyoko: the search's settings, the heuristic's move read from the
engine state, and the tuned default move's ratings of the moves (the
prior).

Playouts run whole games on the engine's fields (``whole_game.py``); the
default move plays the game as a race (``tuned.py``).
"""

from __future__ import annotations

import random
from typing import cast

from bots.heuristics.tateyoko import decide, placed_value
from bots.search.core.config import GameConfig, rounds_left
from bots.search.games.tateyoko.tuned import default_move, leaf
from bots.search.games.tateyoko.whole_game import playout


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move (its line search on copies of the grid and hand)."""
    if len(legal) == 1:
        return 0
    return decide(dict(state.grid), list(state.hands[seat]), list(state.turn), legal, rng)


def prior(state, seat: int, legal: list) -> list[float]:
    """The tuned move's value of the hand each move leaves (``tuned.leaf``)."""
    grid = dict(state.grid)
    hand = list(state.hands[seat])
    turn = list(state.turn)
    return [leaf(hand, grid) if isinstance(action, str)
            else placed_value(grid, hand, turn, *cast("tuple[int, int, int]", action), leaf=leaf)
            for action in legal]


def _playout(g, rng, seat: int) -> None:
    playout(g, rng)


CONFIG = GameConfig(
    round_of=lambda g: g.game_index, remaining=rounds_left("game_index", "games"), sigma=5.5,
    rollout=policy, prior=prior, fast_playout=_playout, z_final=0.8, base=default_move)
