"""twin_shoot: the search's settings, the heuristic's move and its ratings
of the moves (the prior), read from the engine state."""

from __future__ import annotations

import random

from bots.heuristics import twin_shoot as heuristic
from bots.search.core.config import GameConfig
from games.twin_shoot import bid_value, deck_for

# the engine rules (games/twin_shoot.py INFO.rules_version) whose observation
# ``_observation`` copies: tests/test_twin_shoot_fast_path.py checks it
MIRRORS_RULES_VERSION = "2"


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move, on the observation keys it reads."""
    if len(legal) == 1:
        return 0
    return heuristic.choose(_observation(state, seat), legal, rng)


def _observation(state, seat: int) -> dict:
    """The keys of the engine's observation the heuristic reads, built from
    the state without copying its lists."""
    n = state.num_players
    partner = seat ^ 1
    done = state.phase != "bid"
    bids = [None] * n
    bids[seat] = state.bid_vals[seat]
    if done:
        bids[partner] = state.bid_vals[partner]
    open_cards = [None] * n
    if state.open_team is not None:
        for s in (2 * state.open_team, 2 * state.open_team + 1):
            open_cards[s] = state.bid_cards[s]
            bids[s] = state.bid_vals[s]
    return {
        "seat": seat, "num_players": n, "phase": state.phase, "hand": state.hands[seat],
        "hand_sizes": [len(h) for h in state.hands], "bid_cards": state.bid_cards[seat],
        "partner_bid_cards": state.bid_cards[partner] if done else None, "bids": bids,
        "open_bid_cards": open_cards, "trick": state.trick, "trick_order": state.order,
        "follow_mode": state.mode, "tricks_won": state.tricks_won,
        "tricks_played": state.played_view,
    }


def prior(state, seat: int, legal: list) -> list[float]:
    """Bids: how close the best pair holding the card comes to the hand's
    estimated tricks (the heuristic's own measure); plays: the chance to win
    the trick, for or against as the bid needs (and lead power to break ties)."""
    obs = _observation(state, seat)
    n = state.num_players
    if state.phase == "bid":
        hand = list(state.hands[seat])
        chosen = list(state.bid_cards[seat])
        unseen = [c for c in deck_for(n) if c not in hand and c not in chosen]
        share = (n - 1) * 10 / max(len(unseen), 1)
        power = {c: heuristic.lead_power(c, unseen, share) for c in hand}
        total = sum(power.values())

        def miss(a: int, b: int) -> float:
            rest = total - sum(power[x] for x in (a, b) if x in power)
            return abs(bid_value([a, b]) - (heuristic.BASE.get(n, 1.0) + heuristic.SCALE * rest))

        if chosen:
            return [-miss(chosen[0], b) for b in legal]
        return [-min(miss(a, b) for b in hand if b != a) for a in legal]
    if state.phase != "play":
        return [0.0] * len(legal)
    unseen = heuristic.unseen_cards(obs)
    bid = state.bid_vals[seat]
    won = state.tricks_won[seat]
    need = bid - won
    left = 10 - len(state.played_view)
    want_win = need != 0 or need > left
    share = (n - 1) * max(len(state.hands[seat]) - 1, 1) / max(len(unseen), 1)
    values = []
    for c in legal:
        p = heuristic.win_chance(obs, c, unseen)
        strength = heuristic.lead_power(c, unseen, share)  # not `power`, the bid branch's dict
        values.append(p - 0.01 * strength if want_win else -p + 0.01 * strength)
    return values


def _twin_left(g) -> float:
    return max(1.0, min(40 - g.hand_number, (100 - max(g.team_total)) / 15))


CONFIG = GameConfig(
    round_of=lambda g: g.hand_number, remaining=_twin_left, sigma=13.0, rollout=policy,
    prior=prior)
