"""target: the search's settings, and its tuned default move.

Playouts run a round at a time on the engine's fields (``rollout.py``),
are cut two rounds on and scored by a fitted chance of finishing ahead
(``evaluate.py``). The other hands of each sampled world are dealt again
to fit their owners' latest play and discards (``beliefs.py``). The default
move plays and chooses targets as the heuristic does, but discards by a
hand-value model (``hand.py``), as does the searching seat in its own
playouts (``playout_base``). The figures behind each choice:
docs/search.md.
"""

from __future__ import annotations

import random

from bots.heuristics import target as heuristic
from bots.search.core.config import GameConfig
from bots.search.games.target.beliefs import TargetRefiner
from bots.search.games.target.evaluate import target_strengths
from bots.search.games.target.hand import discard
from bots.search.games.target.rollout import playout, policy


def default_move(obs: dict, legal: list, rng: random.Random) -> int:
    """The heuristic's plays and targets; discards by the hand-value model (``hand.discard``)."""
    if obs["phase"] != "discard":
        return heuristic.choose(obs, legal, rng)
    card = discard([c for c in legal if c != heuristic.STOP], obs["num_players"])
    return 0 if card is None else legal.index(card)


def _round_playout(g, rng, seat: int) -> None:
    """The heuristic plays target without the rng: only the round is needed."""
    playout(g, g.round + 1, hero=seat)


CONFIG = GameConfig(
    round_of=lambda g: g.round, remaining=lambda g: 1.0, sigma=1.7, depth=2,
    estimate=target_strengths, rollout=policy, fast_playout=_round_playout,
    refine=TargetRefiner, base=default_move, playout_base=True)
