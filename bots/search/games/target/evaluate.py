"""target: a fitted chance of finishing ahead of each other player, the
score of a playout cut at a round start (``GameConfig.estimate``).

Each seat gets a strength ``s``; the chance that seat ``a`` finishes ahead
of seat ``b`` is ``logistic(s[a] - s[b])`` (the search's scoring with
``sigma`` 1.7 and ``remaining`` 1 applies exactly that). ``s`` is linear
in the seat's features, one weight row per stage of the match (the most
targets anyone holds, 0-4): a target is worth far more near the end.
Features (``features``): targets held (one-hot), start player, the hand's
mean and best reach (a card's largest distance to any target), suits,
cards of reach 11-12 and 6-8, most cards in one suit, and against the
target the start player's heuristic would choose: holding its suit, the
farthest same-suit distance, the nearest distance without it. The hand
features overlap: read their weights together. Fitted on heuristic
self-play by pairwise logistic regression (``python -m
bots.search.lab.fitting target`` remakes them; the fit: docs/search.md).
"""

from __future__ import annotations

from operator import mul
from typing import Any

from bots.search.games.target.rollout import TARGET_REACH, heuristic_target, target_distances
from games.tennos import SUIT_OF

# per stage (most targets held by anyone, 0-4): weights of
# t1 t2 t3 t4 sp mean top suits has_suit far near high mid max_suit
WEIGHTS = (
    (0.000, 0.000, 0.000, 0.000, 0.036, 0.261, 0.098, 0.041, -0.110, 0.078, 0.023, 0.148, 0.198, -0.010),
    (0.715, 0.000, 0.000, 0.000, -0.037, 0.475, 0.161, 0.059, -0.116, 0.065, -0.005, 0.077, 0.265, -0.037),
    (0.789, 1.520, 0.000, 0.000, -0.049, 0.602, 0.155, 0.053, -0.114, 0.074, -0.016, 0.030, 0.312, -0.041),
    (0.885, 1.716, 2.581, 0.000, -0.025, 0.619, 0.132, 0.048, -0.168, 0.097, -0.017, 0.023, 0.322, -0.044),
    (1.251, 2.324, 3.406, 4.464, -0.000, 0.533, 0.128, 0.074, -0.354, 0.166, -0.040, 0.012, 0.280, -0.004),
)


def next_target(g: Any) -> int:
    """The target the start player's heuristic would choose (-1: none)."""
    if g.target >= 0:
        return g.target
    if not g.revealed:
        return -1
    return g.revealed[heuristic_target(g.revealed, g.hands[g.sp])]


def features(g: Any, seat: int, target: int) -> list[float]:
    """The seat's features, in the order of a ``WEIGHTS`` row."""
    hand = g.hands[seat]
    held = len(g.targets[seat])
    per_suit = [0] * 6
    total = top = high = mid = 0
    for c in hand:
        per_suit[SUIT_OF[c]] += 1
        r = TARGET_REACH[c]
        total += r
        top = max(top, r)
        high += r >= 11
        mid += r <= 8
    same = far = near = 0
    if target >= 0 and hand:
        far, near = target_distances(hand, target)
        if far >= 0:
            same, near = 1, 0
        else:
            far = 0
    return [
        held == 1, held == 2, held == 3, held >= 4, seat == g.sp,
        total / len(hand) if hand else 0.0, top, 6 - per_suit.count(0),
        same, far, near, high, mid, max(per_suit),
    ]


def stage(g: Any) -> int:
    """The match's stage, a ``WEIGHTS`` row: the most targets anyone holds (0-4)."""
    return min(max(len(t) for t in g.targets), 4)


def target_strengths(g: Any) -> list[float]:
    """Per seat, the strength whose differences are the log-odds of
    finishing ahead."""
    weights = WEIGHTS[stage(g)]
    target = next_target(g)
    return [sum(map(mul, weights, features(g, s, target))) for s in range(g.num_players)]
