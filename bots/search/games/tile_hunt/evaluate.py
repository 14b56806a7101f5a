"""tile_hunt: a fitted chance of finishing ahead of each other player, and
the values of a turn's ends it gives the search's tuned default move.

Each seat gets a strength ``s``, linear in its features, one weight row
per player count and rounds still to play; the chance that seat ``a``
finishes ahead of seat ``b`` is ``logistic(s[a] - s[b])``. Features:
score and chips' points (in hundreds), exposure (its tiles' points, each
times the chance a turn spent on it alone gets it, ``STEAL_ODDS``: what a
steal could take), tiles held, first in the round's order, place in the
order. The weights are fitted on heuristic self-play by pairwise logistic
regression (``python -m bots.search.lab.fitting tile_hunt [--players 3]``
remakes them).

``end_values`` values each way a turn can end before the final round by
the mean chance of finishing ahead at the next round's start: in the early
phase right after the take, in the late phase after each follower (the
seats after this one in the round's order) has played its turn by the
heuristic (``after_followers``, from the exact chances of their turns'
ends). Where the heuristic counts a tile's points, this counts what the
tile adds, what a steal could take back and the place it gives in the next
round's order: 150 points of easily stolen ``2-duo`` are worth less than
two chips. Its fit, held-out log-losses, what else was tried and the
tests that adopted ``FOLLOWERS``: docs/search.md.
"""

from __future__ import annotations

import math
from operator import mul

from bots.heuristics import tile_hunt as heuristic
from bots.search.games.tile_hunt.dice import shared
from games.tile_hunt import CHIP_POINTS, TileHunt, points, scores_of

# a turn spent on this tile alone gets it (three rolls, played exactly)
STEAL_ODDS = {
    "trio": 0.743, "quartet": 0.291, "full house": 0.363, "quintet": 0.046,
    "2-duo": 0.699, "2-trio": 0.355, "3-trio": 0.355, "3-quartet": 0.104,
    "4-trio": 0.355, "4-quartet": 0.104, "5-trio": 0.355, "5-quartet": 0.104,
    "6-quartet": 0.104, "6-quintet": 0.013, "straight 1-5": 0.197, "straight 2-6": 0.197,
}

# per player count, per rounds left (1, 2, ...): weights of
# score chips exposure tiles first place; held-out log-loss (the score alone's)
WEIGHTS: dict[int, tuple[tuple[float, ...], ...]] = {
    3: (
        (0.652, 0.020, -0.176, 0.131, -0.639, -0.066),  # 1 left: 0.480 (0.496)
        (0.321, 0.021, -0.240, 0.172, -0.219, 0.628),  # 2 left: 0.624 (0.696)
        (0.159, 0.035, -0.228, 0.156, -0.110, 0.177),  # 3 left: 0.662 (0.728)
        (0.112, 0.044, -0.207, 0.139, -0.022, 0.154),  # 4 left: 0.675 (0.744)
        (0.091, 0.030, -0.190, 0.094, 0.007, 0.005),  # 5 left: 0.680 (0.721)
        (0.089, 0.034, -0.185, 0.088, 0.009, 0.014),  # 6 left: 0.686 (0.709)
        (0.108, 0.036, -0.113, -0.032, 0.008, 0.026),  # 7 left: 0.689 (0.698)
    ),
    4: (
        (0.787, 0.023, -0.204, 0.148, -0.787, -0.409),  # 1 left: 0.411 (0.429)
        (0.359, 0.051, -0.308, 0.227, -0.177, 0.919),  # 2 left: 0.631 (0.698)
        (0.152, 0.065, -0.262, 0.171, -0.033, 0.179),  # 3 left: 0.673 (0.745)
        (0.109, 0.063, -0.250, 0.181, -0.031, 0.009),  # 4 left: 0.681 (0.715)
        (0.128, 0.054, -0.171, 0.035, -0.033, 0.022),  # 5 left: 0.688 (0.702)
    ),
}
# on in the late phase: valuing the ends after the followers' turns
# (``after_followers``; the test that adopted it: docs/search.md);
# ``python -m bots.search.lab.tuning tile_hunt --no-followers`` measures without it
FOLLOWERS = True
# ends are worth this times the mean chance of finishing ahead: only the order
# of expectations matters, and this keeps the DP's 1e-9 tie margin negligible
VALUE_SCALE = 10_000.0


def strengths(rounds_left: int, owner: dict[str, int | None], chips: list[int],
              scores: list[int], order: list[int]) -> list[float]:
    """Per seat, the strength whose differences are the log-odds of
    finishing ahead, at a round's start with ``order`` its seat order
    (``scores``: ``scores_of(owner, chips)``, which the caller has)."""
    rows = WEIGHTS[len(chips)]
    weights = rows[min(max(rounds_left, 1), len(rows)) - 1]
    return [sum(map(mul, weights, seat)) for seat in features(owner, chips, scores, order)]


def features(owner: dict[str, int | None], chips: list[int], scores: list[int],
             order: list[int]) -> list[list[float]]:
    """Per seat, its features in the order of a ``WEIGHTS`` row (what
    ``bots.search.lab.fitting`` fits them on)."""
    n = len(chips)
    tiles, exposed = [0] * n, [0.0] * n
    for name, seat in owner.items():
        if seat is not None:
            tiles[seat] += 1
            exposed[seat] += points(name) * STEAL_ODDS[name]
    place = {seat: i for i, seat in enumerate(order)}
    return [[scores[s] / 100, CHIP_POINTS * chips[s] / 100, exposed[s] / 100, tiles[s],
             float(place[s] == 0), place[s] / (n - 1)] for s in range(n)]


def chance_ahead(obs: dict, owner: dict[str, int | None], chips: list[int]) -> float:
    """The mean chance of finishing ahead of each other player at the next
    round's start, with these owners and chips (not in the final round)."""
    n, me = obs["num_players"], obs["seat"]
    scores = scores_of(owner, chips)
    order = list(range(n))
    if obs["round"] + 1 >= obs["rounds_per_phase"]:  # the next round is late: by score
        order = TileHunt.late_order(obs["order"], scores)
    s = strengths(obs["total_rounds"] - obs["round"] - 1, owner, chips, scores, order)
    return sum(1 / (1 + math.exp(s[o] - s[me])) for o in range(n) if o != me) / (n - 1)


def end_values(obs: dict, options: list[tuple[str, str, float]]) -> tuple[list, list[float]]:
    """The heuristic's ``options`` (kind, tile, value) revalued by
    ``chance_ahead`` (with ``FOLLOWERS`` set, in the late phase after the
    followers' turns: ``after_followers``), and the chips' values by the
    number of 1s (0-5)."""
    me = obs["seat"]
    owner = {tile["name"]: tile["owner"] for tile in obs["tiles"]}
    chips = list(obs["chips"])
    supply = obs["chip_supply"]
    # the same for every roll of a turn: nothing they depend on changes
    key = (FOLLOWERS, obs["round"], tuple(obs["order"]), obs["turn_position"], me, tuple(owner.items()),
           tuple(chips), supply, tuple(options))
    found = _TURN_VALUES.get(key)
    if found is not None:
        return found
    value_of = after_followers if FOLLOWERS and obs["phase"] == "late" else _no_followers
    valued = []
    for kind, name, value in options:
        if kind in ("take", "steal"):
            value = VALUE_SCALE * value_of(obs, {**owner, name: me}, chips, supply)
        valued.append((kind, name, value))
    chip_values = []
    for ones in range(6):
        after = list(chips)
        got = min(ones, supply)
        after[me] += got
        chip_values.append(VALUE_SCALE * value_of(obs, owner, after, supply - got))
    if len(_TURN_VALUES) > 64:
        _TURN_VALUES.clear()
    _TURN_VALUES[key] = (valued, chip_values)
    return valued, chip_values


_TURN_VALUES: dict[tuple, tuple[list, list[float]]] = {}


def _no_followers(obs: dict, owner: dict[str, int | None], chips: list[int], supply: int) -> float:
    return chance_ahead(obs, owner, chips)


def after_followers(obs: dict, owner: dict[str, int | None], chips: list[int],
                    supply: int) -> float:
    """``chance_ahead`` after the rest of this round: each seat after the
    player in the round's order plays its turn by the heuristic from a fresh
    roll (``dice.TileHuntDice.end_distribution``: its ends' exact chances), one
    at a time from this position, their effects added."""
    dice = shared()
    base = chance_ahead(obs, owner, chips)
    total = base
    order, position = obs["order"], obs["turn_position"]
    for later in range(position + 1, len(order)):
        seat = order[later]
        view = _seat_view(obs, seat, later, owner, chips, supply)
        chip_values = tuple(heuristic.chips_value(view, k) for k in range(6))
        expected = 0.0
        for (kind, name), chance in dice.end_distribution(heuristic.options(view), chip_values,
                                                          supply):
            if kind == "chips":
                gained = list(chips)
                gained[seat] += name
                expected += chance * chance_ahead(obs, owner, gained)
            else:
                expected += chance * chance_ahead(obs, {**owner, name: seat}, chips)
        total += expected - base
    return total


def _seat_view(obs: dict, seat: int, position: int, owner: dict[str, int | None],
               chips: list[int], supply: int) -> dict:
    """What the heuristic reads of ``seat``'s observation at its turn's
    start, with these owners, chips and supply."""
    return {**obs, "seat": seat, "turn_position": position, "chip_supply": supply,
            "scores": scores_of(owner, chips),
            "tiles": [{**tile, "owner": owner[tile["name"]]} for tile in obs["tiles"]]}
