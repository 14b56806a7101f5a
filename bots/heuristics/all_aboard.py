"""all_aboard heuristic: plan the rest of the turn over the own hand.

Every legal card is tried by a small search over the own hand that follows
the rules (forced red cards, the turn ending on a red signal, the round
ending when the certificates empty the deck) and values the turn's end as
certificates earned plus the hand's score as if the round ended now (-2 per
red card, +20 for an empty or all-red hand; weighting it by the deck's size
did worse against random play), plus a point for leaving a red signal to
the next player.
"""

from __future__ import annotations

import random

from games.all_aboard import legal_plays
from games.tennos import is_red, suit_of

RED_FIELD_BONUS = 1.0


def _hand_value(hand: tuple[int, ...]) -> float:
    reds = sum(1 for c in hand if is_red(c))
    return -2 * reds + (20 if reds == len(hand) else 0)


class Planner:
    def __init__(self, deck_size: int, num_players: int) -> None:
        self.deck_size = deck_size
        self.num_players = num_players
        self.memo: dict[tuple, float] = {}

    def end(self, hand: tuple[int, ...], field: int, certs: int) -> float:
        value = certs + _hand_value(hand)
        if certs < self.deck_size and is_red(field):
            value += RED_FIELD_BONUS  # the round goes on: the next player faces a red signal
        return value

    def value_after(self, hand: tuple[int, ...], field: int, play: int, certs: int) -> float:
        """Value of playing ``play`` from ``hand`` on ``field``, then the best continuation."""
        if is_red(field) and is_red(play):
            suit = suit_of(play)
            rest = tuple(c for c in hand if c < 78 and suit_of(c) == suit and is_red(c))
            remaining = tuple(c for c in hand if c not in rest)
            return self.end(remaining, play, certs)
        remaining = tuple(c for c in hand if c != play)
        if is_red(field):
            return self.best(remaining, play, certs)  # cleared: no certificate
        if is_red(play):
            return self.end(remaining, play, certs)
        certs += 1
        if certs >= self.deck_size:
            return self.end(remaining, play, certs)
        return self.best(remaining, play, certs)

    def best(self, hand: tuple[int, ...], field: int, certs: int) -> float:
        key = (hand, field, certs)
        if key in self.memo:
            return self.memo[key]
        options = legal_plays(list(hand), field)
        if not options:
            value = self.end(hand, field, certs)
        else:
            value = max(self.value_after(hand, field, c, certs) for c in options)
        self.memo[key] = value
        return value


def choose(obs: dict, legal: list, rng: random.Random,
           planner_class: type[Planner] = Planner) -> int:
    """``planner_class``: a variant of the planner (the search's tuned move)."""
    if len(legal) == 1:
        return 0
    hand = tuple(sorted(obs["hand"]))
    planner = planner_class(obs["deck_size"], obs["num_players"])
    values = [planner.value_after(hand, obs["field"], card, 0) for card in legal]
    top = max(values)
    best = [i for i, v in enumerate(values) if v >= top - 1e-9]
    return rng.choice(best)
