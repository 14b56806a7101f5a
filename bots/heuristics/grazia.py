"""grazia heuristic: play the longest run that is free of penalty; accept a
penalty only for a run long enough to pay for it (3+ cards: each card shed is
worth 1, the penalty costs 2); never leave one's own cards stranded below a
new top; once a play is started, extend it as far as the hand allows."""

from __future__ import annotations

import random

from games.tennos import NUM_RANKS

STOP = "stop"
PASS = "pass"


def _rank(c: int) -> int:
    return c % NUM_RANKS + 1


def _suit(c: int) -> int:
    return c // NUM_RANKS


def play_value(card: int, hand: set[int], tops: list[int]) -> float:
    """Net points of playing the run starting at ``card`` as far as it goes."""
    suit = _suit(card)
    length = 1
    high = card
    while _rank(high) < NUM_RANKS and high + 1 in hand:
        high += 1
        length += 1
    top = tops[suit]
    penalised = top >= 0 and _rank(card) != _rank(top) + 1
    # own cards of the suit left below the new top can only be played with a penalty
    stranded = sum(1 for c in hand if _suit(c) == suit and c < card)
    if top >= 0:
        stranded -= sum(1 for c in hand if _suit(c) == suit and c < top)  # already stranded
    return length - 2.05 * penalised - 0.6 * stranded  # free plays win ties


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    if legal[0] == STOP:
        # extending a started play never costs anything more; ["stop"] alone
        # when the next card is not held
        return len(legal) - 1
    hand = set(obs["hand"])
    tops = obs["tops"]
    best_index, best_value = 0, 0.5  # pass unless a play gains something
    for index, action in enumerate(legal):
        if action == PASS or (action - 1) in hand and _rank(action) > 1:
            continue  # only runs started at their lowest card
        value = play_value(action, hand, tops)
        if value > best_value:
            best_index, best_value = index, value
    return best_index
