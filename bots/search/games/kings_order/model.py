"""kings_order: the heuristic's model and moves read from the engine state.

The heuristic rates each move by what a rank would fish (the chance an
end card of another hand is of it, and what that is worth) less what the
cards kept would be worth keeping. ``_KingsModel`` is its ``_Model``
computed from the state with prefix sums and a rank table: the same
numbers in a fraction of the time. What it reads of the public record
(rank bounds, unseen counts) is kept on the state and brought up to date
from the new entries only, and the acting seat's model is kept for the
rest of the turn (``model_for``). ``move_values`` are the heuristic's ratings
of the legal moves: the rollout ``policy`` plays the best, the search's
``prior`` keeps the best few, the opponent model (``beliefs.py``) asks
whether a hand explains a play.
"""

from __future__ import annotations

import random
from math import comb

from bots.heuristics.kings_order import CARD_KEEP, TOOL_SHARE
from games.kings_order import narrow_rank_bounds

_KO_RANK = tuple(c % 13 + 1 for c in range(78))


def _ko_bounds(state) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The heuristic's ``_bounds`` (from the round's log), kept on the state
    and brought up to date with the log's new entries only."""
    log = state.log
    cached = state.__dict__.get("_search_bounds")
    if cached is not None and cached[0] == state.round and cached[1] <= len(log):
        _, done, lo, hi = cached
        lo, hi = list(lo), list(hi)
    else:
        done, lo, hi = 0, [1] * state.num_players, [13] * state.num_players
    for i in range(done, len(log)):
        narrow_rank_bounds(lo, hi, log[i], _KO_RANK[log[i][1]])
    lo_t, hi_t = tuple(lo), tuple(hi)
    state.__dict__["_search_bounds"] = (state.round, len(log), lo_t, hi_t)
    return lo_t, hi_t


def _ko_public(state) -> tuple[list[int], list[list[int]]]:
    """Per rank, the cards not yet public (6 less the discard pile and the
    score cards), and every seat's score cards per rank: kept on the state
    and brought up to date with the new cards only (the round's discard
    pile and score cards only grow; kept lists are never changed)."""
    rank = _KO_RANK
    pile = state.discard_pile
    scored = tuple(len(c) for c in state.score_cards)
    cached = state.__dict__.get("_search_public")
    if cached is not None and cached[0] == state.round and cached[1] <= len(pile):
        _, done, unseen, was, counts = cached
        unseen = list(unseen)
    else:
        done, unseen, was, counts = 0, [0] + [6] * 13, None, None
    for i in range(done, len(pile)):
        unseen[rank[pile[i]]] -= 1
    if was != scored:
        if was is not None and all(a <= b for a, b in zip(was, scored)):
            counts = [list(c) for c in counts]
            for seat, cards in enumerate(state.score_cards):
                k = was[seat]
                if len(cards) > k:
                    # score cards are kept sorted: the new ones may lie anywhere
                    mine = [0] * 14
                    for c in cards:
                        mine[rank[c]] += 1
                    for r in range(1, 14):
                        unseen[r] -= mine[r] - counts[seat][r]
                    counts[seat] = mine
        else:
            counts = []
            for cards in state.score_cards:
                mine = [0] * 14
                for c in cards:
                    unseen[rank[c]] -= 1
                    mine[rank[c]] += 1
                counts.append(mine)
    state.__dict__["_search_public"] = (state.round, len(pile), unseen, scored, counts)
    return unseen, counts


class _KingsModel:
    """The kings_order heuristic's ``_Model``, computed from the state with
    prefix sums and a rank table (same numbers, a fraction of the time)."""

    def __init__(self, state, seat: int) -> None:
        self.comb = comb
        self.me = seat
        rank = _KO_RANK
        public, self.counts = _ko_public(state)
        unseen = list(public)
        for c in state.hands[seat]:
            unseen[rank[c]] -= 1
        self.unseen = unseen
        prefix = [0] * 15
        for r in range(1, 14):
            prefix[r + 1] = prefix[r] + unseen[r]
        self.prefix = prefix  # prefix[r] = unseen of ranks < r
        self.lo, self.hi = _ko_bounds(state)
        self.sizes = [len(h) for h in state.hands]
        self.cache: dict[int, float] = {}
        # per other seat holding cards: (seat, h, lo, hi, C(total, h)), the
        # parts of ``end_chance`` that do not depend on the rank
        self.rivals = []
        for other, h in enumerate(self.sizes):
            if other == seat or h == 0:
                continue
            lo, hi = self.lo[other], self.hi[other]
            if lo > hi or self.between(lo, hi) < h:
                lo, hi = 1, 13
            total = self.between(lo, hi)
            if total >= h:
                self.rivals.append((other, h, lo, hi, comb(total, h)))

    def between(self, a: int, b: int) -> int:
        return self.prefix[b + 1] - self.prefix[a] if a <= b else 0

    def end_chance(self, seat: int, rank: int) -> tuple[float, float]:
        h = self.sizes[seat]
        if h == 0:
            return 0.0, 0.0
        lo, hi = self.lo[seat], self.hi[seat]
        if lo > hi or self.between(lo, hi) < h:
            lo, hi = 1, 13
        if not lo <= rank <= hi:
            return 0.0, 0.0
        counts = self.unseen
        total = self.between(lo, hi)
        if total < h or counts[rank] == 0:
            return 0.0, 0.0
        comb = self.comb
        base = comb(total, h)
        ge_r = self.between(rank, hi)
        ge_r1 = ge_r - counts[rank]
        p_min = (comb(ge_r, h) - comb(ge_r1, h)) / base
        le_r = self.between(lo, rank)
        le_r1 = le_r - counts[rank]
        p_max = (comb(le_r, h) - comb(le_r1, h)) / base
        p = min(1.0, p_min + p_max)
        extra = (counts[rank] - 1) * (h - 1) / max(1, min(ge_r, le_r) - 1)
        return p, 1.0 + max(0.0, extra)

    def worth(self, rank: int, k: float) -> float:
        if rank <= 10:
            return rank * k
        mine = self.counts[self.me][rank]
        best_other = max((c[rank] for s, c in enumerate(self.counts) if s != self.me), default=0)
        bonus = rank  # FACE_BONUS: J 11, Q 12, K 13
        before = bonus if mine and mine >= best_other else 0
        after = bonus if mine + k >= best_other else 0
        return after - before + 2.0 * k

    def gain(self, rank: int) -> float:
        found = self.cache.get(rank)
        if found is None:
            # ``end_chance`` and ``worth`` inlined, the same float operations
            best = 0.0
            prefix = self.prefix
            n_rank = self.unseen[rank]
            if n_rank:
                comb = self.comb
                face = rank > 10
                if face:
                    me = self.me
                    mine = self.counts[me][rank]
                    best_other = max((c[rank] for s, c in enumerate(self.counts) if s != me),
                                     default=0)
                    before = rank if mine and mine >= best_other else 0
                for _, h, lo, hi, base in self.rivals:
                    if not lo <= rank <= hi:
                        continue
                    ge_r = prefix[hi + 1] - prefix[rank]
                    ge_r1 = ge_r - n_rank
                    p_min = (comb(ge_r, h) - comb(ge_r1, h)) / base
                    le_r = prefix[rank + 1] - prefix[lo]
                    le_r1 = le_r - n_rank
                    p_max = (comb(le_r, h) - comb(le_r1, h)) / base
                    p = min(1.0, p_min + p_max)
                    extra = (n_rank - 1) * (h - 1) / max(1, min(ge_r, le_r) - 1)
                    k = 1.0 + max(0.0, extra)
                    if face:
                        after = rank if mine + k >= best_other else 0
                        value = p * (after - before + 2.0 * k)
                    else:
                        value = p * (rank * k)
                    if value > best:
                        best = value
            found = self.cache[rank] = best
        return found

    def keep_value(self, card: int) -> float:
        return CARD_KEEP + TOOL_SHARE * self.gain(_KO_RANK[card])


def model_for(state, seat: int) -> _KingsModel:
    """The acting seat's model, kept on the state for the rest of the turn:
    within a turn nothing it reads changes (the played and discarded cards
    go from the seat's own hand to the pile, both seen; score cards, other
    hands and the log change only when the turn ends)."""
    key = (state.round, len(state.log), seat)
    cached = state.__dict__.get("_search_model")
    if cached is not None and cached[0] == key:
        return cached[1]
    model = _KingsModel(state, seat)
    state.__dict__["_search_model"] = (key, model)
    return model


def move_values(state, seat: int, legal: list) -> list[float]:
    """The heuristic's rating of every legal move (``choose`` plays the best)."""
    model = model_for(state, seat)
    phase = state.phase
    hand = state.hands[seat]
    if phase == "play":
        gain, rank = model.gain, _KO_RANK
        keep = [CARD_KEEP + TOOL_SHARE * gain(rank[c]) for c in hand]  # keep_value
        values = []
        last = len(hand) - 1
        for i, card in enumerate(legal):
            index = i if legal is hand or hand[i] == card else hand.index(card)
            value = gain(rank[card]) - keep[index]
            if 0 < index < last:
                # summed in hand order, as the heuristic does (the same floats)
                left = sum(keep[:index])
                right = sum(keep[index + 1:])
                value -= min(left, right)
            values.append(value)
        return values
    if phase == "discard":
        cut = state.pending["left"]
        sides = {"discard_left": hand[:cut], "discard_right": hand[cut:]}
        return [-sum(model.keep_value(c) for c in sides[action]) for action in legal]
    rank = _KO_RANK[state.pending["card"]]
    values = []
    for _, target in legal:
        p, k = model.end_chance(target, rank)
        values.append(p * model.worth(rank, k))
    return values


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move: a best of ``move_values``, ties drawn by the rng as it draws them."""
    if len(legal) == 1:
        return 0
    values = move_values(state, seat, legal)
    top = max(values)
    return rng.choice([i for i, v in enumerate(values) if v >= top - 1e-9])


def prior(state, seat: int, legal: list) -> list[float]:
    """The heuristic's own ratings (``move_values``)."""
    return move_values(state, seat, legal)
