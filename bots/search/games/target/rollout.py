"""target: the heuristic's moves read from the engine state, a move at a
time (``policy``) and a round at a time (``playout``, the search's
``fast_playout``).

``playout`` keeps its own copy of the choose, play and discard steps and
calls the engine's ``judge_round`` and ``end_discards`` for the rest: the
same moves, state, decision count and rng draws as stepping ``policy``
through the engine. It mirrors the engine's rules at
``MIRRORS_RULES_VERSION``, which tests/test_target_fast_path.py holds
against the engine's.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from bots.search.games.target.hand import discard as tuned_discard
from games.target import FACE_UP, MAX_DISCARD

MIRRORS_RULES_VERSION = "1"


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move (``bots/heuristics/target.py``), read from the state."""
    phase = state.phase
    if phase == "choose":
        return heuristic_target(legal, state.hands[seat])
    if phase == "play":
        return heuristic_play(state.target, state.plays, legal)
    card = heuristic_discard(legal[1:])
    return 0 if card is None else legal.index(card)


# a card's largest distance to any target (the heuristic's ``usefulness``)
TARGET_REACH = tuple(max(c % 13, 12 - c % 13) for c in range(78))


def heuristic_discard(hand: list) -> int | None:
    """The card the heuristic discards from ``hand`` (None: it stops), as
    ``choose_discard``: the least reach, less 2 for a suit held twice, ties
    to the smallest card; only a card of reach 8 or less goes."""
    suits = [c // 13 for c in hand]
    worst, worst_key = None, (99, 99)
    for c in hand:
        key = (TARGET_REACH[c] - (2 if suits.count(c // 13) > 1 else 0), c)
        if key < worst_key:
            worst, worst_key = c, key
    return worst if worst is not None and TARGET_REACH[worst] <= 8 else None


def target_distances(cards: Iterable[int], target: int) -> tuple[int, int]:
    """(the farthest rank distance to ``target`` of a card of its suit, -1
    with none; the nearest rank distance of any card, 99 with no cards)."""
    t_suit, t_rank = target // 13, target % 13
    far, near = -1, 99
    for c in cards:
        d = abs(c % 13 - t_rank)
        if c // 13 == t_suit and d > far:
            far = d
        if d < near:
            near = d
    return far, near


def heuristic_play(target: int, plays: list, hand: list) -> int:
    """The index in ``hand`` that ``choose_play`` picks, ties broken alike
    (the first of equal keys), on table lookups instead of helper calls."""
    reach = TARGET_REACH
    t_suit, t_rank = target // 13, target % 13
    # the farthest same-suit play so far; the closest play of all
    need, closest = target_distances((c for _, c in plays), target)
    best, best_key = -1, (99, 99)
    if need >= 0:  # beat the farthest same-suit play as cheaply as possible
        for i, c in enumerate(hand):
            d = abs(c % 13 - t_rank)
            if c // 13 == t_suit and d > need and (d, reach[c]) < best_key:
                best, best_key = i, (d, reach[c])
        return best if best >= 0 else _target_cheapest(hand)
    far = -1
    for i, c in enumerate(hand):  # the farthest same-suit card
        d = abs(c % 13 - t_rank)
        if c // 13 == t_suit and d > far:
            best, far = i, d
    if best >= 0:
        return best
    for i, c in enumerate(hand):  # close enough to lead, closest first
        d = abs(c % 13 - t_rank)
        if d <= closest and (d, reach[c]) < best_key:
            best, best_key = i, (d, reach[c])
    return best if best >= 0 else _target_cheapest(hand)


def heuristic_target(revealed: list, hand: list) -> int:
    """The index in ``revealed`` that ``choose_target`` picks: a suit the
    hand holds, farthest first (20 + distance), else the nearest rank."""
    best_index, best_value = 0, -99
    for index, t in enumerate(revealed):
        far, near = target_distances(hand, t)
        value = 20 + far if far >= 0 else -near if hand else 0
        if value > best_value:
            best_index, best_value = index, value
    return best_index


def _target_cheapest(hand: list) -> int:
    """The heuristic's throw-away: least reach, then the smallest card."""
    return min(range(len(hand)), key=lambda i: (TARGET_REACH[hand[i]], hand[i]))


def playout(state, stop_round: int, hero: int = -1) -> None:
    """Plays ``state`` on with the heuristic at every seat until the round
    ``stop_round`` has begun or the match ends, one decision at a time on
    the engine's fields (its own judging, refilling and round start): the
    same moves, state, decision count and rng draws as stepping
    ``policy`` through the engine, without building legal lists or
    dispatching actions. It stops at the cap on decisions (the caller's
    loop sees it) and leaves a state with events alone. The seat ``hero``
    (if any) discards by the search's tuned model instead (``hand.discard``)."""
    if state.events is not None:
        return
    n = state.num_players
    hands = state.hands  # the discard pile is replaced at a refill: never aliased
    cap = state.INFO.max_decisions
    while state.to_act >= 0 and state.round < stop_round and state.decisions < cap:
        state.decisions += 1
        seat = state.to_act
        hand = hands[seat]
        phase = state.phase
        if phase == "choose":
            revealed = state.revealed
            target = revealed[heuristic_target(revealed, hand) if len(revealed) > 1 else 0]
            state.discard.extend((c, FACE_UP) for c in revealed if c != target)
            state.target, state.revealed, state.phase = target, [], "play"
        elif phase == "play":
            i = heuristic_play(state.target, state.plays, hand) if len(hand) > 1 else 0
            state.plays.append((seat, hand.pop(i)))
            nxt = (seat + 1) % n
            if nxt == state.sp:
                state.judge_round()
            else:
                state.to_act = nxt
        else:
            if not hand:
                card = None
            elif seat == hero:
                card = tuned_discard(hand, n)
            else:
                card = heuristic_discard(hand)
            if card is None:
                state.end_discards(seat)
                continue
            hand.remove(card)
            state.discard.append((card, seat))
            state.discarded[seat] += 1
            if state.discarded[seat] >= MAX_DISCARD or not hand:
                state.end_discards(seat)
