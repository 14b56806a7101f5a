"""tile_hunt: the search's settings, and its tuned default move.

The search plays the final round alone, by its turn search (``turn.py``:
the ways a turn can end valued by playouts, the dice played exactly for
them); every other step takes the default move. The default move plays
the dice exactly, as the heuristic does, for other values of a turn's
ends: before the final round the fitted chance of finishing ahead
(``evaluate.py``), in the final round the heuristic's values with the
reversal worth a sure lead (``WIN_BONUS``) rather than a million points.
Why, with the figures: docs/search.md.
"""

from __future__ import annotations

import random

from bots.heuristics import tile_hunt as heuristic
from bots.search.core.config import GameConfig, rounds_left
from bots.search.games.tile_hunt.dice import policy, shared
from bots.search.games.tile_hunt.evaluate import end_values
from bots.search.games.tile_hunt.turn import TileHuntTurnSearch


def default_move(obs: dict, legal: list, rng: random.Random) -> int:
    """The dice played exactly for the tuned values of the turn's ends."""
    if obs["final_round"]:
        return heuristic.choose(obs, legal, rng, reversal=heuristic.WIN_BONUS)
    opts, chip_vals = end_values(obs, heuristic.options(obs, heuristic.WIN_BONUS))
    return shared().move(obs, legal, opts, chip_vals)


def _final_round(obs: dict) -> bool:
    """The steps the search plays, all by its turn search."""
    return bool(obs["final_round"])


CONFIG = GameConfig(
    round_of=lambda g: g.round, remaining=rounds_left("round", "total_rounds"), sigma=300.0,
    rollout=policy, search_step=_final_round, turn_search=TileHuntTurnSearch,
    turn_step=_final_round, turn_depth=8, z_final=0.8, base=default_move)
