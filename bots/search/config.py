"""Per-game settings of the search: where playouts stop and how a stopped
playout is scored.

``round_of(state)`` counts the match's rounds (deals, hands, games): a
playout stops once it has crossed ``depth`` round boundaries (or the match
ends); without it a playout runs to the end. A stopped playout is scored
from ``estimate(state)`` (default: the scores as they stand; target and
seven_peak add what the hands are still worth, fitted on heuristic
self-play): against each other player (team), the chance of finishing
ahead, as a logistic of the estimated score difference over ``sigma`` (the
spread of one round's score difference between two players, measured in
heuristic self-play) times the square root of the rounds still to come
(``remaining``). Finished matches score by their real standings (1 for
each player or team finished ahead of, 0.5 for a tie, averaged).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _rounds_left(attr: str, total: str) -> Callable[[Any], float]:
    return lambda g: getattr(g, total) - getattr(g, attr)


@dataclass(frozen=True)
class GameConfig:
    round_of: Callable[[Any], int] | None = None  # None: play out to the end
    remaining: Callable[[Any], float] = lambda g: 1.0
    # estimated final scores at a stop (default: the scores as they stand)
    estimate: Callable[[Any], list[float]] | None = None
    sigma: float = 1.0
    depth: int = 1
    policy: str = "heuristic"
    # search only these steps (obs -> bool); others take the heuristic's move
    search_step: Callable[[dict], bool] | None = None
    z_prune: float = 2.0  # prune a candidate this many standard errors behind
    z_final: float = 1.3  # leave the heuristic's move only this clearly
    min_worlds: int = 5
    # with more legal moves than this, only the heuristic's move and the ones
    # its prior (bots.search.fast.PRIORS) rates best are searched (4 rather
    # than 8 measured better in kings_order, tateyoko, grazia and all_aboard:
    # more worlds for the moves that matter)
    max_candidates: int = 4
    # plays a state on with the heuristic at every seat, faster than stepping
    # the rollout policy through the engine but to the same state (only with
    # policy "heuristic"; the playout steps on from where it stops)
    fast_playout: Callable[[Any], None] | None = None


def _target_estimate(g) -> list[float]:
    """Targets held plus what the hand is worth in targets, fitted (logistic
    regression of winning the match) on heuristic self-play at round starts:
    per target 0.79; per point of the hand's mean reach (a card's largest
    distance to any target, 6..12) 0.40, of its best card 0.37, per suit
    held 0.19. Cards kept for later rounds are what a playout cut after two
    rounds would otherwise not see."""
    out = []
    for s, hand in enumerate(g.hands):
        reach = [max(c % 13, 12 - c % 13) for c in hand]
        mean = sum(reach) / len(reach) if reach else 0.0
        top = max(reach, default=0)
        suits = len({c // 13 for c in hand})
        out.append(len(g.targets[s]) + (0.40 * mean + 0.37 * top + 0.19 * suits) / 0.79)
    return out


def _grazia_playout(g) -> None:
    from bots.search.fast import grazia_playout

    grazia_playout(g)


def _target_left(g) -> float:
    return max(1.0, (5 - max(len(t) for t in g.targets)) * 1.5)


def _twin_left(g) -> float:
    return max(1.0, min(40 - g.hand_number, (100 - max(g.team_total)) / 15))


def _seven_peak_estimate(g) -> list[float]:
    """Scores plus the points each hand may still bring, fitted on heuristic
    self-play at round boundaries (R^2 0.75, residual sd 4.3 points): from
    the heuristic's hand value hv, the hand's size hs and the smallest hand
    mn (how soon the game ends)."""
    from bots.search.fast import seven_peak_hand_value

    counts = [len(p) for p in g.area]
    scores = g.scores()
    smallest = min(len(h) for h in g.hands)
    out = []
    for s, hand in enumerate(g.hands):
        sets = g.sets[s]
        ctx = {"last": g.last_set[s], "max_set": max((n for n, _ in sets), default=0),
               "joker_used": any(c // 6 == 4 for _, cards in sets for c in cards)}
        hv = seven_peak_hand_value(hand, counts, ctx)
        hs = len(hand)
        gain = 0.841 + 0.736 * hv + 0.109 * hs - 2.2 * smallest - 0.055 * hv * smallest \
            + 0.4 * hs * smallest
        out.append(scores[s] + (max(gain, 0.0) if not g.ending else 0.0))
    return out


CONFIGS: dict[str, GameConfig] = {
    "limit": GameConfig(
        round_of=lambda g: g.round, remaining=_rounds_left("round", "rounds"), sigma=7.5, depth=2),
    "cat_in_the_box": GameConfig(
        round_of=lambda g: g.round, remaining=_rounds_left("round", "rounds"), sigma=4.5,
        max_candidates=8),
    # the heuristic plays the dice exactly for the turn's expected value: the
    # dice are searched only in the late phase (steals, the race to lead), and
    # then only the rerolls it rates best
    "tile_hunt": GameConfig(
        round_of=lambda g: g.round, remaining=_rounds_left("round", "total_rounds"), sigma=300.0,
        search_step=lambda obs: obs["step"] == "take" or obs["phase"] == "late"),
    "grazia": GameConfig(sigma=3.0, fast_playout=_grazia_playout),
    "target": GameConfig(
        round_of=lambda g: g.round, remaining=_target_left, sigma=0.7, depth=2,
        estimate=_target_estimate),
    # z_final 0.8 rather than 1.3: +100 [+69, +132] against +70 [+36, +106] Elo
    # at 205 playouts on the same 60 deals (leaves the heuristic's move in 21%
    # of searches rather than 17%)
    "all_aboard": GameConfig(
        round_of=lambda g: g.round, remaining=_rounds_left("round", "rounds"), sigma=10.7,
        z_final=0.8),
    "tenos_square": GameConfig(
        round_of=lambda g: g.deal, remaining=_rounds_left("deal", "deals"), sigma=43.0),
    "twin_shoot": GameConfig(
        round_of=lambda g: g.hand_number, remaining=_twin_left, sigma=13.0),
    "tateyoko": GameConfig(
        round_of=lambda g: g.game_index, remaining=_rounds_left("game_index", "games"), sigma=5.5),
    "kings_order": GameConfig(
        round_of=lambda g: g.round, remaining=_rounds_left("round", "rounds"), sigma=19.0),
    "seven_peak": GameConfig(
        round_of=lambda g: g.round, estimate=_seven_peak_estimate, sigma=6.0, depth=1),
}


def config_for(slug: str) -> GameConfig:
    return CONFIGS[slug]
