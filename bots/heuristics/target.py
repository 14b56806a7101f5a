"""target heuristic.

* As start player, choose the revealed card whose suit the hand can answer
  with the rank farthest from it (failing that, the one the hand comes
  closest to).
* Play: win the round as cheaply as possible: a same-suit card just far
  enough to beat the best same-suit play so far, or, when nobody has the
  suit and the hand lacks it too, a card close enough to lead. When the
  round cannot be won, throw the least useful card.
* Discard up to 2 weak cards (ranks near the middle, which can never be far
  from a target), keeping the hand's suits varied.
"""

from __future__ import annotations

import random

from games.tennos import NUM_RANKS

STOP = "stop"


def _rank(c: int) -> int:
    return c % NUM_RANKS + 1


def _suit(c: int) -> int:
    return c // NUM_RANKS


def usefulness(c: int) -> int:
    """The largest distance this card can reach from any target (6..12)."""
    r = _rank(c)
    return max(r - 1, NUM_RANKS - r)


def choose_target(revealed: list[int], hand: list[int]) -> int:
    best_index, best_value = 0, -99.0
    for index, t in enumerate(revealed):
        same = [abs(_rank(c) - _rank(t)) for c in hand if _suit(c) == _suit(t)]
        if same:
            value = 20 + max(same)
        else:
            value = -min(abs(_rank(c) - _rank(t)) for c in hand) if hand else 0
        if value > best_value:
            best_index, best_value = index, value
    return best_index


def choose_play(obs: dict, legal: list) -> int:
    target = obs["target"]
    ts, tr = _suit(target), _rank(target)
    plays = obs["plays"]
    hand = legal
    cheapest = min(range(len(hand)), key=lambda i: (usefulness(hand[i]), hand[i]))
    same_played = [abs(_rank(c) - tr) for _, c in plays if _suit(c) == ts]
    mine_same = [i for i, c in enumerate(hand) if _suit(c) == ts]
    if same_played:
        need = max(same_played)  # must be strictly farther: earlier wins ties
        winners = [i for i in mine_same if abs(_rank(hand[i]) - tr) > need]
        if winners:
            return min(winners, key=lambda i: (abs(_rank(hand[i]) - tr), usefulness(hand[i])))
        return cheapest
    if mine_same:
        # the farthest same-suit card: later players need a strictly farther one
        return max(mine_same, key=lambda i: abs(_rank(hand[i]) - tr))
    # closest wins, later wins ties
    best_other = min((abs(_rank(c) - tr) for _, c in plays), default=99)
    close = [i for i, c in enumerate(hand) if abs(_rank(c) - tr) <= best_other]
    if close:
        return min(close, key=lambda i: (abs(_rank(hand[i]) - tr), usefulness(hand[i])))
    return cheapest


def choose_discard(obs: dict, legal: list) -> int:
    hand = [c for c in legal if c != STOP]
    if not hand:
        return 0
    suits = [_suit(c) for c in hand]
    worst = min(
        hand,
        key=lambda c: (usefulness(c) - (2 if suits.count(_suit(c)) > 1 else 0), c),
    )
    if usefulness(worst) <= 8:  # ranks 5..9
        return legal.index(worst)
    return 0


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    phase = obs["phase"]
    if phase == "choose":
        return choose_target(legal, obs["hand"])
    if phase == "play":
        return choose_play(obs, legal)
    return choose_discard(obs, legal)
