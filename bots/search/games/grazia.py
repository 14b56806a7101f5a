"""grazia: the search's settings, and the heuristic's moves read from the
engine state: a move at a time (``policy``), whole turns at a time
(``playout``, the search's ``fast_playout``, about twice as fast), and its
ratings of the moves (``prior``).

``playout`` keeps its own copy of a turn's transitions (a run laid card by
card, its penalty) and ends the turn by the engine's ``end_turn``; it
mirrors the engine's rules at ``MIRRORS_RULES_VERSION``, which
tests/test_grazia_fast_path.py holds against the engine's.
"""

from __future__ import annotations

import random
from bisect import bisect_left

from bots.heuristics.grazia import play_value
from bots.search.core.config import GameConfig

MIRRORS_RULES_VERSION = "2"


def heuristic_values(state, seat: int, legal: list) -> list[float | None]:
    """The heuristic's ``play_value`` of every run start in ``legal`` (None for
    the moves it does not rate), counting stranded cards by bisection."""
    hand = state.hands[seat]
    held = set(hand)
    by_suit: list[list[int]] = [[], [], [], [], [], []]
    for c in hand:  # the hand is sorted, so each suit's list is too
        by_suit[c // 13].append(c)
    tops = [p[-1] if p else -1 for p in state.field]
    values: list[float | None] = []
    for action in legal:
        if action == "pass" or action == "stop" or (action - 1) in held and action % 13 > 0:
            values.append(None)
            continue
        suit = action // 13
        length, high = 1, action
        while high % 13 < 12 and high + 1 in held:
            high += 1
            length += 1
        top = tops[suit]
        penalised = top >= 0 and action % 13 != top % 13 + 1
        cards = by_suit[suit]
        stranded = bisect_left(cards, action)
        if top >= 0:
            stranded -= bisect_left(cards, top)
        values.append(length - 2.05 * penalised - 0.6 * stranded)
    return values


def _grazia_best(hand: list, field: list) -> int:
    """The heuristic's play from a sorted hand: the position in ``hand`` of
    the run start it plays, or -1 to pass. One pass over the hand's runs,
    each rated at its lowest card as ``heuristic_values`` does (the same
    floats, the first best kept)."""
    best_index, best_value = -1, 0.5
    n = len(hand)
    i = 0
    suit = -1
    first = below_top = top = 0
    while i < n:
        c = hand[i]
        if c // 13 != suit:
            suit = c // 13
            first = i
            pile = field[suit]
            top = pile[-1] if pile else -1
            below_top = bisect_left(hand, top) - first if top >= 0 else 0
        j = i
        while j + 1 < n and hand[j + 1] == hand[j] + 1 and hand[j] % 13 < 12:
            j += 1
        penalised = top >= 0 and c % 13 != top % 13 + 1
        value = (j - i + 1) - 2.05 * penalised - 0.6 * ((i - first) - below_top)
        if value > best_value:
            best_index, best_value = i, value
        i = j + 1
    return best_index


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move (``bots/heuristics/grazia.py``), read from the state."""
    if legal[0] == "stop":
        return len(legal) - 1
    hand = state.hands[seat]
    if len(legal) == len(hand) + 1:  # "pass", then the hand (sorted, no card twice)
        return _grazia_best(hand, state.field) + 1
    best_index, best_value = 0, 0.5
    for index, value in enumerate(heuristic_values(state, seat, legal)):
        if value is not None and value > best_value:
            best_index, best_value = index, value
    return best_index


def playout(state) -> None:
    """Plays ``state`` on with the heuristic at every seat, a whole turn at a
    time on the engine's fields: the same moves, the same state and decision
    count as stepping ``policy`` through the engine (about twice as
    fast). It stops at the end, or a turn before the cap on decisions could
    be reached (a turn is at most 14 decisions; the caller steps on)."""
    hands, field = state.hands, state.field
    out = state.out_of_play
    penalties = state.penalties
    last_safe = state.INFO.max_decisions - 14
    seat = state.to_act
    decisions = state.decisions
    run = state.run
    while seat >= 0 and decisions < last_safe:
        hand = hands[seat]
        passed = False
        if run:
            penalised = state.run_penalised
            last = run[-1]
            start = len(field[last // 13]) - len(run)  # where the turn's cards begin
        else:
            i = _grazia_best(hand, field)
            decisions += 1
            if i < 0:
                passed = True
            else:
                last = hand.pop(i)
                pile = field[last // 13]
                penalised = bool(pile) and last % 13 != pile[-1] % 13 + 1
                start = len(pile)
                pile.append(last)
        played: tuple[int, ...] = ()
        if not passed:
            # the heuristic extends the run while it holds the next card; a
            # step ("stop" or the next card) is asked while the run may go on
            # as far as everyone can see
            pile = field[last // 13]
            while last % 13 < 12 and last + 1 not in pile and last + 1 not in out:
                decisions += 1
                nxt = last + 1
                if nxt not in hand:
                    break  # "stop"
                hand.remove(nxt)
                pile.append(nxt)
                last = nxt
            if penalised:
                penalties[seat] += 1
            run = []
            played = tuple(pile[start:])
        state.end_turn(seat, played)  # the engine's own end of turn: log, pile, turn count, end
        seat = state.to_act
    state.to_act = seat
    state.decisions = decisions
    if not run:
        state.run = []
        state.run_penalised = False


def prior(state, seat: int, legal: list) -> list[float]:
    """The heuristic's ``play_value`` of each run start; pass 0.5, stop 0, a run's next card 1."""
    hand = set(state.hands[seat])
    tops = [p[-1] if p else -1 for p in state.field]
    values = []
    for action in legal:
        if action == "pass":
            values.append(0.5)
        elif action == "stop":
            values.append(0.0)
        elif state.run:
            values.append(1.0)
        else:
            values.append(play_value(action, hand, tops))
    return values


def _grazia_playout(g, rng, seat: int) -> None:
    """The heuristic plays grazia without the rng."""
    playout(g)


CONFIG = GameConfig(sigma=3.0, rollout=policy, prior=prior, fast_playout=_grazia_playout)
