"""tenos_square heuristic: keep the row sorted.

Every card has an ideal place in the row (A at the left end, 10 at the right
end, the rest spread between). A play is rated by how many face-up cards it
puts out of order, how far it lands from its ideal place, and what it adds to
the row's score now; ties go to places that give the turn to oneself (or the
partner) rather than to an opponent. An exchange is made only when a face-up
centre card fits clearly better than both hand cards, since it leaves a
one-card hand for the rest of the deal.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from games.tennos import rank_of
from games.tenos_square import next_direction, row_score

INVERSION = 4.0  # per face-up card put out of order
DISTANCE = 1.0  # per place away from the card's ideal place
IMMEDIATE = 0.3  # per point the row scores at once
TEMPO = {"same": 0.6, "partner": 0.3, "left": 0.0, "right": 0.0}
EXCHANGE_MARGIN = 3.0  # how much better a centre card must fit to exchange


def _ideal(rank: int, length: int) -> float:
    return (rank - 1) * (length - 1) / 9


def place_value(row: list, card: int, place: int, num_players: int) -> float:
    """How good laying ``card`` on face-down ``place`` of ``row`` is."""
    r = rank_of(card)
    inversions = 0
    for i, other in enumerate(row):
        if other is None:
            continue
        o = rank_of(other)
        if (i < place and o > r) or (i > place and o < r):
            inversions += 1
    after = list(row)
    after[place] = card
    gain = row_score(after) - row_score(row)
    value = (
        -INVERSION * inversions
        - DISTANCE * abs(place - _ideal(r, len(row)))
        + IMMEDIATE * gain
    )
    direction = next_direction(num_players, place)
    if direction == "partner" and num_players != 4:
        direction = "left"
    return value + TEMPO[direction]


def best_for(row: list, card: int, num_players: int) -> tuple[float, int]:
    return max(
        (place_value(row, card, i, num_players), i) for i, c in enumerate(row) if c is None
    )


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    return decide(obs["phase"], obs["rows"][obs["seat"]], obs["hand"], obs["centre"],
                  obs["playing"], obs["num_players"], legal)


BestFor = Callable[[Any, int, int], "tuple[float, int]"]


def decide(phase: str, row: Sequence[int | None], hand: Sequence[int], centre: Sequence[int],
           playing: int | None, n: int, legal: list, best: BestFor = best_for) -> int:
    """The choice from the parts of the view it reads. ``best(row, card, n)``
    values a card for the row: ``best_for`` here; the search's rollouts pass a
    cached one (bots.search.games.tenos_square), keyed by the row as a tuple."""
    if phase == "centre":
        # give away the card closest to the middle: the ends are the easiest to fit
        cards = [a[1] for a in legal]
        return cards.index(min(cards, key=lambda c: (abs(rank_of(c) - 5.5), c)))
    if phase == "exchange":
        hand_best = max(best(row, c, n)[0] for c in hand)
        centre_best = max((best(row, c, n)[0] for c in centre), default=float("-inf"))
        if centre_best - hand_best > EXCHANGE_MARGIN:
            return legal.index("exchange")
        return legal.index("no_exchange")
    if phase == "put":
        # keep the card that fits best: put the worst first
        values = [best(row, a[1], n)[0] for a in legal]
        return values.index(min(values))
    if phase == "take":
        best_index, best_value = len(legal) - 1, float("-inf")
        for index, action in enumerate(legal):
            if action == "deck":
                continue
            value = best(row, action[1], n)[0]
            if value > best_value:
                best_index, best_value = index, value
        return best_index
    if phase == "play":
        values = [best(row, a[1], n)[0] for a in legal]
        return values.index(max(values))
    # place
    assert playing is not None
    row_list = list(row)
    values = [place_value(row_list, playing, a[1], n) for a in legal]
    return values.index(max(values))
