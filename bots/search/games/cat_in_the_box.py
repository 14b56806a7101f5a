"""cat_in_the_box: the search's settings, and the heuristic's move and its
ratings of the moves (the prior) read from the engine state."""

from __future__ import annotations

import random

from bots.search.core.config import GameConfig, rounds_left

_CAT_WIN_VALUE = {1: 0.0, 2: 0.0, 3: 0.02, 4: 0.05, 5: 0.1, 6: 0.2, 7: 0.35, 8: 0.5}
_CAT_COLOUR = {"red": 0, "blue": 1, "yellow": 2, "green": 3}


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move (``bots/heuristics/cat_in_the_box.py``), read from the state."""
    phase = state.phase
    hand = state.hands[seat]
    if phase == "discard":
        counts: dict[int, int] = {}
        for r in hand:
            counts[r] = counts.get(r, 0) + 1
        best, best_key = 0, None
        for i, action in enumerate(legal):
            rank = action[1]
            key = (counts[rank], -abs(rank - 4.5))
            if best_key is None or key > best_key:
                best, best_key = i, key
        return best
    if phase == "bid":
        expected = sum(_CAT_WIN_VALUE[r] for r in hand)
        return legal.index(("bid", 3 if expected >= 2.6 else 2))
    return _cat_play(state, seat, legal, rng)


def _cat_play(state, seat: int, legal: list, rng: random.Random, scores: bool = False):
    board = state.board  # [colour][rank - 1] = owner or -1
    voids = state.voids[seat]
    trick = state.trick
    n = state.num_players
    hand = state.hands[seat]
    led = trick[0][2] if trick else None
    bid = state.bids[seat]
    won = state.tricks_won[seat]
    want_win = won != bid
    tricks_left = 8 - len(state.history)
    later = n - 1 - len(trick)
    # the best play so far (the heuristic's _beats, in trick order)
    best = None
    for _, r, c in trick:
        if best is None or _cat_beats(r, c, best, led):
            best = (r, c)
    # free cells: in all, and per colour how many free ranks lie above each rank
    free_total = 0
    above = []  # above[c][rank]: free cells of colour c ranked higher than rank
    for c in range(4):
        row = board[c]
        counts_above = [0] * 9
        higher = 0
        for r in range(8, 0, -1):
            counts_above[r] = higher
            if row[r - 1] == -1:
                higher += 1
        counts_above[0] = higher
        above.append(counts_above)
        free_total += higher
    free_red = above[0][0]
    # per distinct rank in hand: the colours it may still be declared on (bitmask)
    counts: dict[int, int] = {}
    for r in hand:
        counts[r] = counts.get(r, 0) + 1
    masks = {}
    for r in counts:
        m = 0
        for c in range(4):
            if not voids[c] and board[c][r - 1] == -1:
                m |= 1 << c
        masks[r] = m
    # cards still playable later: with the led colour still open to this seat,
    # and with it closed by a new void; each action then corrects only its own
    # rank's count (O(1) per action)
    void_clear = ~(1 << led) if led is not None and not voids[led] else -1
    live_kept = sum(k for r, k in counts.items() if masks[r])
    live_void = sum(k for r, k in counts.items() if masks[r] & void_clear)
    needed = tricks_left - 1
    # own[c + 1][r]: 1 where this seat owns colour c, rank r, with a margin of 0s
    own = [[0] * 10]
    for c in range(4):
        own.append([0] + [1 if owner == seat else 0 for owner in board[c]] + [0])
    own.append([0] * 10)
    scored = []
    for index, action in enumerate(legal):
        rank, colour = action[1], _CAT_COLOUR[action[2]]
        lead_colour = colour if led is None else led
        p = 1.0 if _cat_beats(rank, colour, best, led) else 0.0
        if p:
            if free_total:
                if colour == 0:
                    beating = above[0][rank]
                else:  # any red beats it; so does a higher card of the led colour
                    beating = free_red
                    if lead_colour != 0:
                        beating += above[lead_colour][rank]
                threat = beating / free_total
            else:
                threat = 0.0
            p *= (1.0 - threat) ** later
        score = 10.0 * p if want_win else -10.0 * p
        new_void = led is not None and colour != led and not voids[led]
        if new_void:
            score -= 4.0
            clear, live = void_clear, live_void
        else:
            clear, live = -1, live_kept
        m = masks[rank] & clear
        k = counts[rank]
        if m:
            live -= k
        if m & ~(1 << colour):
            live += k - 1
        if live < needed:
            score -= 15.0 * (needed - live)
        row = own[colour + 1]
        score += 1.5 * (own[colour][rank] + own[colour + 2][rank] + row[rank - 1] + row[rank + 1])
        score += rng.random() * 0.01
        scored.append((score, index))
    if scores:
        return [value for value, _ in scored]
    return max(scored)[1]


def _cat_beats(rank: int, colour: int, best, led) -> bool:
    if best is None:
        return True
    best_rank, best_colour = best
    if colour == 0:
        return best_colour != 0 or rank > best_rank
    if best_colour == 0:
        return False
    return colour == led and rank > best_rank


def prior(state, seat: int, legal: list) -> list[float]:
    """The heuristic's score of each card in the play step; 0 elsewhere."""
    if state.phase != "play":
        return [0.0] * len(legal)
    scores = _cat_play(state, seat, legal, random.Random(0), scores=True)
    return scores


CONFIG = GameConfig(
    round_of=lambda g: g.round, remaining=rounds_left("round", "rounds"), sigma=4.5,
    max_candidates=8, rollout=policy, prior=prior)
