"""A game's settings of the search (``GameConfig``), and where they are found.

Each game keeps its settings in ``bots.search.games.<slug>`` as ``CONFIG``,
beside the parts they name (its fast rollout policy, prior, playout,
opponent model, evaluation, default move). ``config_for`` imports that
package by its slug when the game is first asked for: the search knows no
game, and no module imports every game.

A playout stops once it has crossed ``depth`` round boundaries
(``round_of``) or the match ends, and is scored against each other player
(team) as the chance of finishing ahead: a logistic of the estimated score
difference over ``sigma`` (the spread of one round's score difference in
heuristic self-play) times the square root of the rounds still to come
(``remaining``). A finished match scores by its real standings. Why each
game's values are what they are: docs/search.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from bots.search.core.policies import Prior, RolloutPolicy

GAMES_PACKAGE = "bots.search.games"


def rounds_left(attr: str, total: str) -> Callable[[Any], float]:
    """``remaining`` for a match of ``total`` rounds counted by ``attr``."""
    return lambda g: getattr(g, total) - getattr(g, attr)


@dataclass(frozen=True)
class GameConfig:
    round_of: Callable[[Any], int] | None = None  # None: play out to the end
    remaining: Callable[[Any], float] = lambda g: 1.0
    # estimated final scores at a stop (default: the scores as they stand)
    estimate: Callable[[Any], list[float]] | None = None
    sigma: float = 1.0
    depth: int = 1
    # the rollout policy by name (core.policies: "heuristic", "wire", "random")
    policy: str = "heuristic"
    # rollout(state, seat, legal, rng): the heuristic's move read from the
    # engine state, the same move as the heuristic's on the wire, faster;
    # policy "heuristic" plays it where there is one
    rollout: RolloutPolicy | None = None
    # prior(state, seat, legal): the default move's own ratings of the moves
    prior: Prior | None = None
    # search only these steps (obs -> bool); others take the default move
    search_step: Callable[[dict], bool] | None = None
    z_prune: float = 2.0  # prune a candidate this many standard errors behind
    z_final: float = 1.3  # leave the default move (base) only this clearly
    min_worlds: int = 5
    # with more legal moves than this, only the default move and the ones
    # its prior rates best are searched: more worlds for the moves that matter
    max_candidates: int = 4
    # fast_playout(state, rng, seat) plays a state on with the heuristic at every
    # seat on the engine's fields: to the same state, drawing the same rollout
    # random numbers, as stepping the rollout policy would, only faster. It
    # plays the current round (with round_of) or on to the end, and may stop
    # short (near the cap on decisions); the playout steps on from there
    # (only with policy "heuristic")
    fast_playout: Callable[[Any, Any, int], None] | None = None
    # playout_base: the fast playout plays the searching seat (``seat``
    # above; -1 when off) by the default move where it can (target's
    # discards), the other seats as the heuristic
    playout_base: bool = False
    # turn_search(searcher): a game's own search for the steps it takes
    # (turn_step(obs)), in place of the flat search over candidates
    turn_search: Callable[[Any], Any] | None = None
    turn_step: Callable[[dict], bool] | None = None
    turn_depth: int = 1  # rounds the turn search's playouts run
    # refine(): a callable (world, obs, rng) that deals a sampled world's
    # other hands again to fit how their owners played (an opponent model);
    # one per search, it may keep what it read from obs
    refine: Callable[[], Callable[[Any, dict, Any], None]] | None = None
    # base(obs, legal, rng) -> index: the search's own default move, kept
    # unless a rival beats it clearly; None: the heuristic's
    base: Callable[[dict, list, Any], int] | None = None


@cache
def config_for(slug: str) -> GameConfig:
    """``CONFIG`` of ``bots.search.games.<slug>``, imported on first use
    (importlib: the game is named at run time, by the match)."""
    config = importlib.import_module(f"{GAMES_PACKAGE}.{slug}").CONFIG
    assert isinstance(config, GameConfig), f"{GAMES_PACKAGE}.{slug}.CONFIG"
    return config
