"""kings_order heuristic: fish where the odds are best.

From the public record it works out which cards are unseen and, per other
player, the range of ranks their hand can still hold (a player who kept the
right side of a 5 holds nothing below 5; a player who handed over their left
end 3s holds nothing below 4...). Treating each hand as a random draw from
the unseen cards in that range, it estimates the chance that a player's left
or right end has a given rank. A play is worth the expected points of the
best player to name for its rank, less the value of the cards it gives up
(the played card and any discarded side).
"""

from __future__ import annotations

import random
from math import comb

from games.kings_order import kings_order_log_bounds
from games.tennos import rank_of

FACE_BONUS = {11: 11, 12: 12, 13: 13}
CARD_KEEP = 1.0  # a card in hand is a future turn
TOOL_SHARE = 0.3  # ... and a future chance to fish its rank


def _bounds(obs: dict) -> tuple[list[int], list[int]]:
    return kings_order_log_bounds(obs["num_players"], obs["log"])


class _Model:
    def __init__(self, obs: dict) -> None:
        self.obs = obs
        self.me = obs["seat"]
        seen = set(obs["hand"]) | set(obs["discard_pile"])
        for cards in obs["score_cards"]:
            seen.update(cards)
        self.unseen = [0] * 14
        for c in range(78):
            if c not in seen:
                self.unseen[rank_of(c)] += 1
        self.lo, self.hi = _bounds(obs)
        self.counts = [[0] * 14 for _ in range(obs["num_players"])]
        for seat, cards in enumerate(obs["score_cards"]):
            for c in cards:
                self.counts[seat][rank_of(c)] += 1
        self.cache: dict[int, float] = {}

    def end_chance(self, seat: int, rank: int) -> tuple[float, float]:
        """(chance that ``seat`` has ``rank`` at an end, expected cards handed)."""
        h = self.obs["hand_sizes"][seat]
        if h == 0:
            return 0.0, 0.0
        lo, hi = self.lo[seat], self.hi[seat]
        if lo > hi or sum(self.unseen[lo:hi + 1]) < h:
            lo, hi = 1, 13  # the record and the model disagree: forget the range
        if not lo <= rank <= hi:
            return 0.0, 0.0
        counts = self.unseen
        total = sum(counts[lo:hi + 1])
        if total < h or counts[rank] == 0:
            return 0.0, 0.0
        base = comb(total, h)
        ge_r = sum(counts[rank:hi + 1])
        ge_r1 = ge_r - counts[rank]
        p_min = (comb(ge_r, h) - comb(ge_r1, h)) / base
        le_r = sum(counts[lo:rank + 1])
        le_r1 = le_r - counts[rank]
        p_max = (comb(le_r, h) - comb(le_r1, h)) / base
        p = min(1.0, p_min + p_max)
        extra = (counts[rank] - 1) * (h - 1) / max(1, min(ge_r, le_r) - 1)
        return p, 1.0 + max(0.0, extra)

    def worth(self, rank: int, k: float) -> float:
        """Points for receiving ``k`` cards of ``rank`` now."""
        if rank <= 10:
            return rank * k
        mine = self.counts[self.me][rank]
        best_other = max(
            (c[rank] for s, c in enumerate(self.counts) if s != self.me), default=0
        )
        before = FACE_BONUS[rank] if mine and mine >= best_other else 0
        after = FACE_BONUS[rank] if mine + k >= best_other else 0
        return after - before + 2.0 * k

    def best_target(self, rank: int) -> tuple[float, int]:
        best = (0.0, -1)
        for seat, size in enumerate(self.obs["hand_sizes"]):
            if seat == self.me or size == 0:
                continue
            p, k = self.end_chance(seat, rank)
            value = p * self.worth(rank, k)
            if value > best[0]:
                best = (value, seat)
        return best

    def gain(self, rank: int) -> float:
        if rank not in self.cache:
            self.cache[rank] = self.best_target(rank)[0]
        return self.cache[rank]

    def keep_value(self, card: int) -> float:
        return CARD_KEEP + TOOL_SHARE * self.gain(rank_of(card))


def _play_value(model: _Model, hand: list[int], index: int) -> float:
    card = hand[index]
    value = model.gain(rank_of(card)) - model.keep_value(card)
    left, right = hand[:index], hand[index + 1:]
    if left and right:
        value -= min(sum(model.keep_value(c) for c in side) for side in (left, right))
    return value


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    if len(legal) == 1:
        return 0
    model = _Model(obs)
    phase = obs["phase"]
    if phase == "play":
        hand = obs["hand"]
        values = [_play_value(model, hand, hand.index(card)) for card in legal]
    elif phase == "discard":
        pending = obs["pending"]
        hand = obs["hand"]
        cut = pending["left"]
        sides = {"discard_left": hand[:cut], "discard_right": hand[cut:]}
        values = [-sum(model.keep_value(c) for c in sides[action]) for action in legal]
    else:
        rank = rank_of(obs["pending"]["card"])
        values = []
        for _, seat in legal:
            p, k = model.end_chance(seat, rank)
            values.append(p * model.worth(rank, k))
    top = max(values)
    best = [i for i, v in enumerate(values) if v >= top - 1e-9]
    return rng.choice(best)
