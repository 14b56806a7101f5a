"""What the search infers about target's other hands from how their owners
last played and discarded: an opponent model that deals a sampled world's
other hands again (``GameConfig.refine``), as ``bots.search.games.kings_order.beliefs``
does for kings_order.

The reference heuristic plays a card that follows from its hand (the
cheapest card that beats the best same-suit play, its farthest card of the
target's suit, the closest card, or else its least useful card) and then
discards its least useful cards while they are weak (reach 8 or less, at
most 2). So a player who threw a card away holds nothing less useful, one
who discarded nothing holds few middling ranks, one who could not beat a
play holds no farther card of that suit. For every other seat the refiner
takes its latest play (this round's, else the last round's) and the hand
it held then: the cards it holds now that it did not draw since, the card
it played, the cards it discarded face down since. Which of the cards held
now were drawn since is not public, nor (to this seat) which the discards
were.

A try deals the seat the cards it held after that play (kept and discarded
alike) and the cards it drew since, from its own cards, its face-down
discards since that play and the deck, and keeps them if the heuristic,
holding them and the played card, would have played that card and then
discarded as many as the seat did (which ones follows from the hand).
Every way the seat's cards could have come about is equally likely, so
the worlds kept are those the evidence allows, in proportion. The play
test is one per card: the heuristic picks its play as the least (or most)
of a key per card, so a hand fits exactly when each of its cards, alone
beside the played card, does; the cards held are drawn only from those.
``TRIES`` tries at most, then the world keeps what the rules dealt. A seat
whose play almost no hand explains (a player unlike the heuristic) is left
alone for the rest of the decision.

Not used: the start player's choice of target (the two cards it passed
over are not kept apart in the observation) and anything older than that
latest play. What the model gains and costs: docs/search.md.
"""

from __future__ import annotations

import random
from typing import Any

from bots.search.core.beliefs import FitRecord
from bots.search.games.target.rollout import heuristic_discard, heuristic_play
from games.target import MAX_DISCARD

TRIES = 16


class _Evidence:
    """One seat's latest play and what it did since: the target and the
    plays before it, the card, and how many cards it discarded face down
    since (None: it has not had its discard step since, nor drawn)."""

    def __init__(self, seat: int, target: int, before: list[tuple[int, int]], card: int,
                 discards: int | None) -> None:
        self.seat = seat
        self.target = target
        self.before = before
        self.card = card
        self.discards = discards
        # the cards the seat may have held beside the card: the heuristic
        # picks its play by the least (or most) of a key per card, so a
        # hand fits the play exactly when every card in it fits beside the
        # card alone
        self.may_hold = frozenset(c for c in range(78) if c != card and self._plays_card([c]))

    def _plays_card(self, others: list[int]) -> bool:
        held = sorted([*others, self.card])
        return held[heuristic_play(self.target, self.before, held)] == self.card

    def fit(self, held: list[int]) -> list[int] | None:
        """The cards the heuristic, holding ``held`` and the card, would
        have discarded after playing it (in order), where it would have
        played the card and discarded as many as the seat did; else None."""
        if not self.may_hold.issuperset(held):
            return None
        if self.discards is None:
            return []
        held = list(held)  # the caller's list stays as it was
        discarded: list[int] = []
        while len(discarded) < MAX_DISCARD and held:
            card = heuristic_discard(held)
            if card is None:
                break
            discarded.append(card)
            held.remove(card)
        return discarded if len(discarded) == self.discards else None


def evidence(obs: dict) -> list[_Evidence]:
    """Each other seat's latest play with what followed it (the module's docstring)."""
    n, me, sp = obs["num_players"], obs["seat"], obs["start_player"]
    out = []
    plays = [(s, c) for s, c in obs["plays"]]
    played_now = {s: i for i, (s, _) in enumerate(plays)}
    last = obs["last_round"]
    for seat in range(n):
        if seat == me:
            continue
        if seat in played_now:
            i = played_now[seat]
            discards = None
            if obs["phase"] == "discard" and (seat - sp) % n < (obs["current_player"] - sp) % n:
                discards = obs["discarded"][seat]  # its discard step is done
            out.append(_Evidence(seat, obs["target"], plays[:i], plays[i][1], discards))
        elif last is not None and last["discarded"] is not None:
            before = [(s, c) for s, c in last["plays"]]
            i = [s for s, _ in before].index(seat)
            out.append(_Evidence(seat, last["target"], before[:i], before[i][1],
                                 last["discarded"][seat]))
    return out


class TargetRefiner:
    """Deals a world's other hands again to fit their owners' latest play."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.evidence: list[_Evidence] = []
        self.record = FitRecord()

    def __call__(self, world: Any, obs: dict, rng: random.Random) -> None:
        key = (obs["round"], obs["phase"], len(obs["plays"]), tuple(obs["discarded"]), obs["seat"])
        if key != self.key:
            self.key, self.evidence = key, evidence(obs)
            self.record = FitRecord()
        for ev in self.evidence:
            if not self.record.given_up(ev.seat):
                self.record.add(ev.seat, *_refit(world, ev, rng))


def _own_discards(world: Any, seat: int, count: int) -> list[int] | None:
    """Slots in the world's discard pile of the seat's latest ``count``
    face-down discards (None: a refill has taken them into the deck)."""
    slots = [i for i, (_, owner) in enumerate(world.discard) if owner == seat]
    return slots[len(slots) - count:] if len(slots) >= count else None


def _refit(world: Any, ev: _Evidence, rng: random.Random) -> tuple[int, bool]:
    """Deals the seat's hand and face-down discards again from them and the
    deck until the heuristic would have played and discarded as the seat
    did; (tries, whether one fitted). Which discards a hand leads to
    follows from it, so a try draws the cards held after the play (kept
    and discarded alike) and the cards drawn since: each way the seat's
    cards could have come about is equally likely, and those that fit are
    kept."""
    hand = world.hands[ev.seat]
    count = ev.discards or 0
    slots = _own_discards(world, ev.seat, count)
    if slots is None:
        return 0, False
    drawn = 0 if ev.discards is None else 1 + count  # drawn back to 5 after play and discards
    held = len(hand) - drawn + count  # after the play, before the discards
    if held < count:
        return 0, False
    pool = hand + [world.discard[i][0] for i in slots] + world.deck
    may_hold = [c for c in pool if c in ev.may_hold]
    if len(may_hold) < held:
        return 0, False
    for attempt in range(1, TRIES + 1):
        kept = rng.sample(may_hold, held)
        discarded = ev.fit(kept)
        if discarded is not None:
            chosen = set(kept).difference(discarded)
            rest = [c for c in pool if c not in kept]
            chosen.update(rng.sample(rest, drawn))
            world.hands[ev.seat] = sorted(chosen)
            for i, c in zip(slots, discarded):
                world.discard[i] = (c, ev.seat)
            chosen.update(discarded)
            deck = [c for c in pool if c not in chosen]
            rng.shuffle(deck)
            world.deck = deck
            return attempt, True
    return TRIES, False
