"""twin_shoot heuristic: bid what the hand can make, then steer toward the bid.

Bidding: for every pair of cards that could be set aside, estimate the tricks
the other ten would take (the sum of each card's chance to win a trick it
leads, from the cards still unseen) and set aside the pair whose suit values
come closest to that estimate, preferring to keep strong cards in hand.

Play: while the player still needs tricks it plays the card most likely to win
the trick (the cheapest of the near-sure winners); once its bid is reached it
plays the card least likely to win, shedding its strongest safe card. After a
missed bid (too many tricks) every trick is worth a point again. It never asks
for an open bid: with a partner it cannot talk to, +30 for every other team on
a miss outweighs the chance of two exact bids.
"""

from __future__ import annotations

import random

from games.twin_shoot import CLOSED, bid_value, deck_for, rank_strength, suit_strength

# Estimated tricks = BASE[players] + SCALE * sum of the kept cards' lead-win
# chances (tuned against random seats: the steering play wins more than the
# lead chances alone suggest when four play, since random followers often
# fail to follow and the leader then wins).
BASE = {4: 2.0, 6: 0.0}
SCALE = 1.0


def unseen_cards(obs: dict) -> list[int]:
    """Cards this player has not seen: in other hands or unseen bid cards."""
    seen = set(obs["hand"]) | set(obs["bid_cards"])
    if obs["partner_bid_cards"]:
        seen.update(obs["partner_bid_cards"])
    for cards in obs["open_bid_cards"]:
        if cards:
            seen.update(cards)
    for _, cards, _ in obs["tricks_played"]:
        seen.update(cards)
    for _, c in obs["trick"]:
        seen.add(c)
    return [c for c in deck_for(obs["num_players"]) if c not in seen]


def _beats(a: int, b: int, mode: str) -> bool:
    """Card a beats card b under a fixed follow mode (both eligible)."""
    if mode == "suit":
        return rank_strength(a) > rank_strength(b)
    return suit_strength(a) > suit_strength(b)


def _survive(beaters: int, share: float) -> float:
    """Chance that none of ``beaters`` unseen cards sits with a later player."""
    share = min(max(share, 0.0), 1.0)
    return (1.0 - share) ** beaters


def lead_power(c: int, unseen: list[int], share: float) -> float:
    """Chance that leading c wins: no stronger card of its suit or its rank
    turns up among the players after the leader."""
    s, r = c // 13, c % 13
    beat = 0
    for u in unseen:
        if u // 13 == s:
            if rank_strength(u) > rank_strength(c):
                beat += 1
        elif u % 13 == r and suit_strength(u) > suit_strength(c):
            beat += 1
    return _survive(beat, share)


def win_chance(obs: dict, c: int, unseen: list[int]) -> float:
    trick = obs["trick"]
    later = obs["trick_order"][len(trick) + 1:]
    sizes = obs["hand_sizes"]
    held = sum(sizes[s] for s in later)
    share = held / max(len(unseen), 1) if later else 0.0
    if not trick:
        return lead_power(c, unseen, share) if later else 1.0
    led = trick[0][1]
    mode = obs["follow_mode"]
    if mode == "none":
        if c // 13 == led // 13:
            mode = "suit"
        elif c % 13 == led % 13:
            mode = "rank"
        else:
            return 0.0  # the choice passes on; the leader or a later follower wins
    eligible = [x for _, x in trick if (x // 13 == led // 13 if mode == "suit" else x % 13 == led % 13)]
    mine_ok = c // 13 == led // 13 if mode == "suit" else c % 13 == led % 13
    if not mine_ok:
        return 0.0
    if any(_beats(x, c, mode) for x in eligible):
        return 0.0
    beat = sum(
        1
        for u in unseen
        if (u // 13 == led // 13 if mode == "suit" else u % 13 == led % 13) and _beats(u, c, mode)
    )
    return _survive(beat, share) if later else 1.0


def _choose_bid(obs: dict, legal: list) -> int:
    hand = list(obs["hand"])
    chosen = list(obs["bid_cards"])
    n = obs["num_players"]
    unseen = [c for c in deck_for(n) if c not in hand and c not in chosen]
    share = (n - 1) * 10 / max(len(unseen), 1)
    power = {c: lead_power(c, unseen, share) for c in hand}
    best = None
    if chosen:
        pairs = [(chosen[0], b) for b in hand]
    else:
        pairs = [(a, b) for i, a in enumerate(hand) for b in hand[i + 1:]]
    total = sum(power.values())
    for a, b in pairs:
        rest = total - sum(power[x] for x in (a, b) if x in power)
        estimate = BASE.get(n, 1.0) + SCALE * rest
        miss = abs(bid_value([a, b]) - estimate)
        key = (round(miss, 3), sum(power.get(x, 0.0) for x in (a, b)))
        if best is None or key < best[0]:
            best = (key, a, b)
    assert best is not None  # pairs is not empty: the bidder still holds cards to bid
    _, a, b = best
    pick = b if chosen else a
    return legal.index(pick)


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    phase = obs["phase"]
    if phase == "open":
        return legal.index(CLOSED)
    if phase == "bid":
        return _choose_bid(obs, legal)
    seat = obs["seat"]
    bid = obs["bids"][seat]
    won = obs["tricks_won"][seat]
    left = 10 - len(obs["tricks_played"])
    need = bid - won
    want_win = need > 0 or need < 0
    if need > left:
        want_win = True
    unseen = unseen_cards(obs)
    share_all = max(len(unseen), 1)
    chances = [(win_chance(obs, c, unseen), c) for c in legal]
    hand = obs["hand"]
    share = (obs["num_players"] - 1) * max(len(hand) - 1, 1) / share_all
    power = {c: lead_power(c, unseen, share) for c in legal}
    if want_win:
        top = max(p for p, _ in chances)
        if top <= 0.0:
            pick = min(legal, key=lambda c: (power[c], c))
        else:
            good = [c for p, c in chances if p >= top - 0.05]
            pick = min(good, key=lambda c: (power[c], c))
    else:
        low = min(p for p, _ in chances)
        safe = [c for p, c in chances if p <= low + 0.05]
        pick = max(safe, key=lambda c: (power[c], c))
    return legal.index(pick)
