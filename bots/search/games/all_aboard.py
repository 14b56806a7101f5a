"""all_aboard: the search's settings, the heuristic's move read from the
engine state, and the search's tuned default move.

The heuristic plans each turn as if the round ended with it. Its planner
is memoized here (``_aboard_best``): a plan's value less the certificates
already earned depends only on (hand, field, room), room being the
certificates the deck can still pay, capped at the hand's size plus one.

The tuned default move (``default_move``) plans with ``_KeepingPlanner``:
while the deck holds more than ``KEEP_ABOVE`` cards the round goes on and
the hand is refilled, so the cards kept are also what the next turns are
played with (black cards, jokers), and the all-red bonus counts only once
the deck is down to ``all_red_within(players)`` cards. Its values are the
search's prior too. How it was tuned and what it gains: docs/search.md.
"""

from __future__ import annotations

import random

from bots.heuristics import all_aboard as heuristic
from bots.heuristics.all_aboard import Planner
from bots.search.core.config import GameConfig, rounds_left
from games.all_aboard import RED, SUIT, legal_plays

_ABOARD_PLANS: dict[tuple, float] = {}


def _aboard_end(hand: tuple, field: int, room: int) -> float:
    reds = sum(1 for c in hand if RED[c])
    value: float = -2 * reds + (20 if reds == len(hand) else 0)
    if room > 0 and RED[field]:
        value += 1.0  # the heuristic's RED_FIELD_BONUS: the next player faces red
    return value


def _aboard_best(hand: tuple, field: int, room: int) -> float:
    key = (hand, field, room)
    found = _ABOARD_PLANS.get(key)
    if found is None:
        options = legal_plays(list(hand), field)
        if not options:
            found = _aboard_end(hand, field, room)
        else:
            found = max(_aboard_after(hand, field, c, room) for c in options)
        if len(_ABOARD_PLANS) > 300_000:
            _ABOARD_PLANS.clear()
        _ABOARD_PLANS[key] = found
    return found


def _aboard_after(hand: tuple, field: int, play: int, room: int) -> float:
    if RED[field] and RED[play]:
        suit = SUIT[play]
        rest = [c for c in hand if c < 78 and SUIT[c] == suit and RED[c]]
        remaining = tuple(c for c in hand if c not in rest)
        return _aboard_end(remaining, play, room)
    remaining = tuple(c for c in hand if c != play)
    if RED[field]:
        return _aboard_best(remaining, play, min(room, len(remaining) + 1))
    if RED[play]:
        return _aboard_end(remaining, play, room)
    room -= 1
    if room <= 0:
        return 1 + _aboard_end(remaining, play, room)
    return 1 + _aboard_best(remaining, play, min(room, len(remaining) + 1))


def heuristic_values(state, seat: int, legal: list) -> list[float]:
    """The heuristic's value of each legal card: its turn planner, memoized."""
    hand = tuple(sorted(state.hands[seat]))
    room = min(len(state.deck), len(hand) + 1)
    return [_aboard_after(hand, state.field, card, room) for card in legal]


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move: a best-valued card, ties drawn by the rng as it draws them."""
    if len(legal) == 1:
        return 0
    values = heuristic_values(state, seat, legal)
    top = max(values)
    best = [i for i, v in enumerate(values) if v >= top - 1e-9]
    return rng.choice(best)


JOKER_KEEP = 4.0
BLACK_KEEP = 0.5
KEEP_ABOVE = 12  # deck size
ALL_RED_BONUS = 20.0  # the heuristic's bonus for an empty or all-red hand at the round's end


def all_red_within(num_players: int) -> int:
    """The largest deck at which the all-red bonus still counts: the more
    players refill before this one's next turn, the sooner the round may
    end (tuned at 3, 4 and 6 players: 15, 18 and 24 cards)."""
    return 6 + 3 * num_players


class _KeepingPlanner(Planner):
    def end(self, hand: tuple[int, ...], field: int, certs: int) -> float:
        value = super().end(hand, field, certs)
        if self.deck_size > KEEP_ABOVE:
            blacks = sum(1 for c in hand if not RED[c])
            jokers = sum(1 for c in hand if c >= 78)
            value += BLACK_KEEP * blacks + JOKER_KEEP * jokers
        if self.deck_size > all_red_within(self.num_players) and all(RED[c] for c in hand):
            value -= ALL_RED_BONUS  # the hand is refilled before the round can end
        return value


def tuned_values(hand: list[int], field: int, deck_size: int, num_players: int,
                 legal: list) -> list[float]:
    """The tuned planner's value of each legal card (``hand`` sorted)."""
    planner = _KeepingPlanner(deck_size, num_players)
    return [planner.value_after(tuple(hand), field, card, 0) for card in legal]


def default_move(obs: dict, legal: list, rng: random.Random) -> int:
    """The tuned default move: the heuristic planning with ``_KeepingPlanner``."""
    return heuristic.choose(obs, legal, rng, planner_class=_KeepingPlanner)


def prior(state, seat: int, legal: list) -> list[float]:
    """The tuned planner's value of each legal card."""
    return tuned_values(sorted(state.hands[seat]), state.field, len(state.deck),
                        state.num_players, legal)


CONFIG = GameConfig(
    round_of=lambda g: g.round, remaining=rounds_left("round", "rounds"), sigma=10.7,
    z_final=0.8, rollout=policy, prior=prior, base=default_move)
