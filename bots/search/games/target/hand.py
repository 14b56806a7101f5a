"""target: the hand-value model of the search's tuned discards (its default
move, and its own seat's discards in its playouts).

A hand is worth, over the 78 possible next targets, the chance that its
farthest card of the target's suit is not beaten: taken as the chance that
none of ``unseen`` cards, each any of the 78, is of that suit and farther
from the target. Only the farthest card of a suit counts, so the value is
a sum over suits, each cached by its ranks. ``discard`` throws the card
whose place one drawn card fills best, while one gains.
"""

from __future__ import annotations

from functools import cache, lru_cache

from games.tennos import NUM_RANKS

# unseen cards per other player, tuned: the cards another hand really holds,
# 5, rate middling distances too highly (docs/search.md)
UNSEEN_PER_PLAYER = 20


@cache
def _odds(unseen: int) -> tuple[tuple[float, ...], ...]:
    """[target rank][distance]: the chance that none of ``unseen`` cards,
    each any of the 78, is of the target's suit and farther from it."""
    odds = []
    for t in range(NUM_RANKS):
        row = []
        for d in range(NUM_RANKS):
            farther = sum(1 for r in range(NUM_RANKS) if abs(r - t) > d)
            row.append((1 - farther / 78) ** unseen)
        odds.append(tuple(row))
    return tuple(odds)


@lru_cache(maxsize=1 << 14)
def _suit_value(ranks: tuple[int, ...], unseen: int) -> float:
    """What a suit's cards (0-based ranks) are worth to the next target:
    summed over the suit's 13 targets (of 78), the odds of the farthest."""
    if not ranks:
        return 0.0
    odds = _odds(unseen)
    return sum(odds[t][max(abs(r - t) for r in ranks)] for t in range(NUM_RANKS)) / 78


@lru_cache(maxsize=1 << 14)
def _draw_gain(ranks: tuple[int, ...], unseen: int) -> float:
    """The suit's value gained by each of its 13 cards drawn, summed."""
    now = _suit_value(ranks, unseen)
    return sum(_suit_value(tuple(sorted({*ranks, r})), unseen) - now
               for r in range(NUM_RANKS))


def _suits(hand: list[int]) -> list[tuple[int, ...]]:
    """Each suit's ranks in the hand, ascending (a hand's cards are distinct)."""
    suits: list[list[int]] = [[] for _ in range(6)]
    for c in sorted(hand):
        suits[c // NUM_RANKS].append(c % NUM_RANKS)
    return [tuple(ranks) for ranks in suits]


def hand_value(hand: list[int], unseen: int) -> float:
    """What ``hand`` is worth to the next target, with ``unseen`` cards out."""
    return sum(_suit_value(ranks, unseen) for ranks in _suits(hand))


def discard(hand: list[int], num_players: int) -> int | None:
    """The card whose place one drawn card (any of the 78) fills best: the
    hand's value after it goes and a card is drawn, against its value now;
    None where no card gains."""
    unseen = UNSEEN_PER_PLAYER * (num_players - 1)
    now = hand_value(hand, unseen)
    best, best_gain = None, 0.0
    for card in hand:
        suits = _suits([c for c in hand if c != card])
        after = sum(_suit_value(ranks, unseen) for ranks in suits)
        after += sum(_draw_gain(ranks, unseen) for ranks in suits) / 78
        if after - now > best_gain:
            best, best_gain = card, after - now
    return best
