"""seven_peak: the search's settings, the heuristic's move and its ratings
of the moves (the prior) read from the engine state, with its set values
computed from suit counts and cached, and the estimate of a cut playout."""

from __future__ import annotations

import random

from bots.heuristics import seven_peak as heuristic
from bots.search.core.config import GameConfig


def best_value(hand, n: int, counts, joker_used: bool, max_set: int) -> float | None:
    """``best_set(hand, n, counts, ctx)[0]`` of the seven_peak heuristic (no
    fixed cards), or None: the same candidates (all suits different; one suit
    topped up with jokers, or with other cards), valued from suit counts."""
    usable = []
    for c in hand:
        x = c % 6 + 1
        if x <= n <= x + counts[x - 1]:
            usable.append(c)
    if len(usable) < n:
        return None
    usable.sort(key=lambda c: (c % 6 + 1 + counts[c % 6], c))
    suits = [c // 6 for c in usable]
    per_suit = [0, 0, 0, 0, 0]
    for s in suits:
        per_suit[s] += 1
    jokers = per_suit[4]
    penalty = 0.0 if joker_used else 2.0 * max(n, max_set, 4)
    best = None
    # all different suits: non-jokers first, a joker only to complete
    distinct = sum(1 for s in range(4) if per_suit[s])
    if distinct >= n:
        best = float(n * n)
    elif distinct + (1 if jokers else 0) >= n:
        best = n * n - penalty
    for s in range(4):
        a = min(n, per_suit[s])
        rem = n - a
        others = len(suits) - per_suit[s] - jokers
        for jokers_first in (True, False):
            if jokers_first:
                j = min(rem, jokers)
                o = min(rem - j, others)
            else:
                o = min(rem, others)
                j = min(rem - o, jokers)
            if a + j + o != n:
                continue
            # the first o cards of other suits, in usable order
            counts_o = [0, 0, 0, 0]
            if o:
                taken = 0
                for t in suits:
                    if t != s and t != 4:
                        counts_o[t] += 1
                        taken += 1
                        if taken == o:
                            break
            counts_o[s] += a
            if j + sum(1 for k in counts_o if k) == n and max(counts_o) <= 1 and j <= 1:
                value = float(n * n)
            else:
                value = float(n * (max(counts_o) + j))
            if j:
                value -= penalty
            if best is None or value > best:
                best = value
    return best


_SP_HAND_VALUES: dict[tuple, float] = {}


def hand_value(hand, counts, ctx) -> float:
    """The heuristic's ``hand_value``, from set values computed on suit counts
    and cached (the same hands come back in every playout of a decision)."""
    key = (tuple(sorted(hand)), tuple(counts), ctx["last"], ctx["max_set"], ctx["joker_used"])
    found = _SP_HAND_VALUES.get(key)
    if found is not None:
        return found
    best = 0.0
    rest = len(hand)
    for n in range(max(ctx["last"], 2), 8):
        value = best_value(hand, n, counts, ctx["joker_used"], ctx["max_set"])
        if value is not None:
            best = max(best, value + 1.5 * (rest - n))
    flex = sum(min(c % 6 + 1 + counts[c % 6], 6) for c in hand) / 20.0
    suits = [0] * 5
    for c in hand:
        suits[c // 6] += 1
    shape = max(suits[:4]) * 0.6 + sum(1 for k in suits[:4] if k) * 0.6
    value = best + flex + shape
    if len(_SP_HAND_VALUES) > 200_000:
        _SP_HAND_VALUES.clear()
    _SP_HAND_VALUES[key] = value
    return value


def _context(state, seat: int) -> dict:
    """What the heuristic's set values read besides the hand and the piles:
    the seat's last set size, its largest set, whether it has used a joker."""
    sets = state.sets[seat]
    return {
        "last": state.last_set[seat],
        "max_set": max((n for n, _ in sets), default=0),
        "joker_used": any(c // 6 == 4 for _, cards in sets for c in cards),
    }


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The seven_peak heuristic's ``choose``, step for step, with the cached
    hand values above."""
    if len(legal) == 1:
        return 0
    step = state.step
    own = seat == state.to_act and step in ("value", "cards")
    hand = state.free_hand() if own else state.hands[seat]
    counts = [len(p) for p in state.area]
    ctx = _context(state, seat)
    if step == "turn":
        if "play" not in legal:
            return legal.index("pass")
        left = _sp_turns_left(state, seat)
        best = None
        for n in range(max(1, ctx["last"]), 8):
            value = best_value(hand, n, counts, ctx["joker_used"], ctx["max_set"])
            if value is None:
                continue
            if len(hand) - n == 0:
                value += 2
            if best is None or value > best[0]:
                best = (value, n)
        return legal.index(heuristic.play_or_pass(best, len(hand), left))
    if step == "value":
        left = _sp_turns_left(state, seat)
        best = None
        for i, action in enumerate(legal):
            n = action[1]
            value = best_value(hand, n, counts, ctx["joker_used"], ctx["max_set"])
            if value is None:
                continue
            if left > 1.5:
                value = value / n * 3 + value / 4
            if best is None or value > best[0]:
                best = (value, i)
        return best[1] if best else 0
    if step == "cards":
        n = state.pending_value
        fixed = sorted(state.pending_cards)
        found = heuristic.best_set(hand, n, counts, ctx, fixed=fixed)
        if found:
            for c in found[1][len(fixed):]:
                if ("card", c) in legal:
                    return legal.index(("card", c))
        return 0
    piles = state.area
    if step == "put":
        card = heuristic._best_first(hand, counts, piles, ctx, hand_value)
        return legal.index(("put", card))
    if step == "more":
        stop_score = hand_value(hand, counts, ctx) + heuristic.peak_vp(counts)
        second = heuristic._best_second(hand, counts, piles, ctx, value=hand_value)
        if second and second[0] > stop_score + 0.3:
            return legal.index(("put", second[1]))
        return legal.index("stop")
    if step == "take":
        take = heuristic._best_take(hand, counts, piles, ctx, hand_value)
        return legal.index(("take", take[1], take[2]))
    return rng.randrange(len(legal))


def _sp_turns_left(state, seat: int) -> float:
    if state.ending:
        return 1.0
    best = 99.0
    for s in range(state.num_players):
        if s == seat:
            continue
        turns = len(state.hands[s]) / 1.7
        best = min(best, turns + (1 if s < seat else 0))
    return max(1.0, best)


def prior(state, seat: int, legal: list) -> list[float]:
    """The heuristic's own scores of the hand after each put or take."""
    step = state.step
    hand = state.hands[seat]
    counts = [len(p) for p in state.area]
    ctx = _context(state, seat)
    piles = state.area
    if step in ("put", "more"):
        values = []
        for action in legal:
            if action == "stop":
                values.append(hand_value(hand, counts, ctx) + heuristic.peak_vp(counts))
                continue
            rest, area, _ = heuristic._put(hand, counts, piles, action[1])
            values.append(hand_value(rest, area, ctx) + heuristic.peak_vp(area)
                          - heuristic._danger(area, action[1]))
        return values
    if step == "take":
        return [heuristic._after_take(hand, counts, x, card, ctx, hand_value)
                for _, x, card in legal]
    return [0.0] * len(legal)


def estimate(g) -> list[float]:
    """Scores plus the points each hand may still bring, fitted on heuristic
    self-play at round boundaries (R^2 0.75, residual sd 4.3 points): from
    the heuristic's hand value hv, the hand's size hs and the smallest hand
    mn (how soon the game ends)."""
    counts = [len(p) for p in g.area]
    scores = g.scores()
    smallest = min(len(h) for h in g.hands)
    out = []
    for s, hand in enumerate(g.hands):
        hv = hand_value(hand, counts, _context(g, s))
        hs = len(hand)
        gain = 0.841 + 0.736 * hv + 0.109 * hs - 2.2 * smallest - 0.055 * hv * smallest \
            + 0.4 * hs * smallest
        out.append(scores[s] + (max(gain, 0.0) if not g.ending else 0.0))
    return out


CONFIG = GameConfig(
    round_of=lambda g: g.round, estimate=estimate, sigma=6.0, depth=1, rollout=policy,
    prior=prior)
