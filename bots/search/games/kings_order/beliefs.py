"""What the search infers about the other hands from how their owners
played, beyond what the rules make public (``games.determinize`` keeps only
that): an opponent model, used to deal the sampled worlds again.

kings_order: the reference heuristic plays the card its model rates best
(the rank's fishing gain less what the card and the cheaper side are worth
keeping) and discards the side it values least. Its model reads only the
public record and its own hand. So for every turn a player took this
round, the bot rebuilds what that player saw then (the log up to that
turn) and the hand they held (their hand now, the cards they played and
discarded since, the cards handed over from their ends since: hands only
shrink), and asks whether the heuristic, holding it, would have played
that card from that position and discarded that side. A hand for which it
would not is dealt again (``TRIES`` times at most, then the world keeps the
hand the rules dealt it): a player who plays otherwise costs the search
accuracy, never a move. A world's hands are dealt again one seat at a time (Gibbs-like, the
others held fixed), from that seat's hand and the set-aside cards, within
the rank bounds the public record shows.
"""

from __future__ import annotations

import random
from typing import Any

from bots.search.core.beliefs import FitRecord
from bots.search.games.kings_order.model import model_for, move_values
from games.kings_order import HAND_SIZE, kings_order_bounds, sort_hand
from games.tennos import rank_of

TRIES = 16
EPSILON = 1e-9  # the heuristic's own tie tolerance


class _View:
    """What a seat saw at the start of one of its turns, shaped like the
    engine's state as the fast model (``model.py``) reads it (the
    other hands by their sizes only); the public part of the model is kept
    on it across the hands tried."""

    def __init__(self, obs: dict, t: int, pile: list[int], scored: list[list[int]],
                 sizes: list[int]) -> None:
        self.phase = "play"
        self.round = obs["round"]
        self.num_players = obs["num_players"]
        self.log = obs["log"][:t]
        self.discard_pile = list(pile)
        self.score_cards = [list(c) for c in scored]
        self.hands: list[list[int]] = [[0] * size for size in sizes]


class _Turn:
    """One turn of another seat this round: what it saw, what it did, and
    the cards its hand has lost since (to add back to its hand now)."""

    def __init__(self, seat: int, view: _View, card: int, left: int, side: str | None,
                 lost_since: list[int]) -> None:
        self.seat = seat
        self.view = view
        self.card = card
        self.left = left
        self.side = side
        self.lost_since = lost_since

    def model(self, held: list[int]) -> Any:
        """The heuristic's model for this seat holding ``held`` then."""
        self.view.hands[self.seat] = held
        self.view.__dict__.pop("_search_model", None)  # keyed on the turn, not the hand
        return model_for(self.view, self.seat)


def _turns(obs: dict) -> dict[int, list[_Turn]]:
    """Per other seat, its turns this round, the latest first."""
    n, me = obs["num_players"], obs["seat"]
    log = obs["log"]
    sizes = [HAND_SIZE] * n
    pile: list[int] = []
    scored: list[list[int]] = [[] for _ in range(n)]
    turns: dict[int, list[_Turn]] = {}
    for t, entry in enumerate(log):
        seat, card, left, _right, side, discarded, named, handed, _end = entry
        if seat != me:
            # the cards it held then and has lost since: this turn's, then later ones
            lost: list[int] = [card, *discarded]
            for later in log[t + 1:]:
                if later[0] == seat:
                    lost.extend((later[1], *later[5]))
                if later[6] == seat:
                    lost.extend(later[7])
            view = _View(obs, t, pile, scored, sizes)
            turns.setdefault(seat, []).insert(0, _Turn(seat, view, card, left, side, lost))
        pile.append(card)
        pile.extend(discarded)
        sizes[seat] -= 1 + len(discarded)
        if handed:
            sizes[named] -= len(handed)
            scored[seat] = sort_hand(scored[seat] + list(handed))
    return turns


def played_like(turns: list[_Turn], hand: list[int]) -> bool:
    """Would the heuristic, holding what ``hand`` makes of each turn's hand,
    have played as the seat did in every one of ``turns``?"""
    helds = []
    for turn in turns:  # where the card lay first: the record says, and it is cheap
        held = sort_hand(list(hand) + turn.lost_since)
        if turn.left >= len(held) or held[turn.left] != turn.card:
            return False
        helds.append(held)
    for turn, held in zip(turns, helds):
        model = turn.model(held)
        values = move_values(turn.view, turn.seat, turn.view.hands[turn.seat])
        if values[turn.left] < max(values) - EPSILON:
            return False
        if turn.side is not None:
            rest = held[:turn.left] + held[turn.left + 1:]
            gone, kept = (rest[:turn.left], rest[turn.left:]) if turn.side == "left" \
                else (rest[turn.left:], rest[:turn.left])
            if sum(map(model.keep_value, gone)) > sum(map(model.keep_value, kept)) + EPSILON:
                return False
    return True


class KingsOrderRefiner:
    """Deals a world's other hands again to fit their owners' play. A seat
    whose play almost no hand explains (a player unlike the heuristic) is
    left as the rules deal it for the rest of the decision."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.turns: dict[int, list[_Turn]] = {}
        self.bounds: tuple[list[int], list[int]] = ([], [])
        self.record = FitRecord()

    def __call__(self, world: Any, obs: dict, rng: random.Random) -> None:
        key = (obs["round"], len(obs["log"]), obs["seat"])
        if key != self.key:
            self.key, self.turns, self.bounds = key, _turns(obs), kings_order_bounds(obs)
            self.record = FitRecord()
        lo, hi = self.bounds
        for seat, turns in self.turns.items():
            hand = world.hands[seat]
            if not hand or self.record.given_up(seat):
                continue
            fitted = played_like(turns, hand)
            attempts = 1
            if not fitted:  # the cards it may be dealt from: only when needed
                pool = hand + world.set_aside
                fits = [c for c in pool if lo[seat] <= rank_of(c) <= hi[seat]]
            while not fitted and attempts < TRIES and len(fits) >= len(hand):
                candidate = rng.sample(fits, len(hand))
                attempts += 1
                if played_like(turns, candidate):
                    fitted = True
                    chosen = set(candidate)
                    world.hands[seat] = sort_hand(candidate)
                    world.set_aside = [c for c in pool if c not in chosen]
            self.record.add(seat, attempts, fitted)
