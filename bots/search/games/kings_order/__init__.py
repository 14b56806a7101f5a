"""kings_order: the search's settings.

The heuristic's moves and ratings come from its model read off the engine
state (``model.py``). The other hands of each sampled world are dealt again
until the heuristic, holding them, would have played this round's cards,
positions and discards as their owners did (``beliefs.py``): it costs
playouts, and measured well worth them (docs/search.md).
"""

from __future__ import annotations

from bots.search.core.config import GameConfig, rounds_left
from bots.search.games.kings_order.beliefs import KingsOrderRefiner
from bots.search.games.kings_order.model import policy, prior

CONFIG = GameConfig(
    round_of=lambda g: g.round, remaining=rounds_left("round", "rounds"), sigma=19.0,
    rollout=policy, prior=prior, refine=KingsOrderRefiner)
