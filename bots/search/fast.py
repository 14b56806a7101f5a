"""Fast rollout policies: the heuristics (``bots/heuristics``) rewritten to
read the engine state directly instead of an observation on the wire.

Each ``policy(state, seat, legal, rng) -> index`` reads only what ``seat``
may know (its own hand, public cards, the record of play), exactly as the
heuristic does from its observation, and picks the same move: the tests
compare both on many states. What they save is building the observation,
the msgpack round trip and, for the slower heuristics, repeated work
(precomputed tables, counts kept per call instead of per legal move;
kings_order keeps the acting seat's model on the state for the turn and
the public card counts up to date from the new cards only).

``grazia_playout`` goes further: it plays whole turns of the heuristic on
the engine's fields (``GameConfig.fast_playout``), reaching the same state
as stepping ``grazia_policy`` through the engine. ``target_playout`` does the
same for target a decision at a time, a round per call.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any, cast

from bots.heuristics.kings_order import CARD_KEEP, TOOL_SHARE
from bots.search import target_hand
from games.determinize import narrow_rank_bounds

FastPolicy = Callable[[Any, int, list, random.Random], int]
FAST: dict[str, FastPolicy] = {}


def fast(slug: str) -> Callable[[FastPolicy], FastPolicy]:
    def register(fn: FastPolicy) -> FastPolicy:
        FAST[slug] = fn
        return fn
    return register


# ---- limit -----------------------------------------------------------------------
@fast("limit")
def limit_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    room = state.limit_card[0] - sum(v for _, v in state.basket)
    if room in state.hands[seat] and room not in state.blocked[seat] and room in legal:
        return legal.index(room)
    others_left = sum(sum(h) for s, h in enumerate(state.hands) if s != seat)
    margin = min(room - 1, others_left // 6)
    safe = [c for c in legal if c != 0 and c <= room - margin]
    if safe:
        # the heuristic's "mine <= leader" always holds (the leader's sum is a max
        # over every seat, this one included), so it plays the largest safe card
        return legal.index(max(safe))
    return 0


# ---- grazia ------------------------------------------------------------------------
def grazia_values(state, seat: int, legal: list) -> list[float | None]:
    """The heuristic's ``play_value`` of every run start in ``legal`` (None for
    the moves it does not rate), counting stranded cards by bisection."""
    from bisect import bisect_left

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
    each rated at its lowest card as ``grazia_values`` does (the same
    floats, the first best kept)."""
    from bisect import bisect_left

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


@fast("grazia")
def grazia_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    if legal[0] == "stop":
        return len(legal) - 1
    hand = state.hands[seat]
    if len(legal) == len(hand) + 1:  # "pass", then the hand (sorted, no card twice)
        return _grazia_best(hand, state.field) + 1
    best_index, best_value = 0, 0.5
    for index, value in enumerate(grazia_values(state, seat, legal)):
        if value is not None and value > best_value:
            best_index, best_value = index, value
    return best_index


def grazia_playout(state) -> None:
    """Plays ``state`` on with the heuristic at every seat, a whole turn at a
    time on the engine's fields: the same moves, the same state and decision
    count as stepping ``grazia_policy`` through the engine (about twice as
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
        state._end_turn(seat, played)  # the engine's own end of turn: log, pile, turn count, end
        seat = state.to_act
    state.to_act = seat
    state.decisions = decisions
    if not run:
        state.run = []
        state.run_penalised = False


# ---- target ----------------------------------------------------------------------
@fast("target")
def target_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    phase = state.phase
    if phase == "choose":
        return target_choose(legal, state.hands[seat])
    if phase == "play":
        return _target_play(state.target, state.plays, legal)
    card = _target_discard(legal[1:])
    return 0 if card is None else legal.index(card)


# a card's largest distance to any target (the heuristic's ``usefulness``)
TARGET_REACH = tuple(max(c % 13, 12 - c % 13) for c in range(78))


def _target_discard(hand: list) -> int | None:
    """The card the heuristic discards from ``hand`` (None: it stops), as
    ``choose_discard``: the least reach, less 2 for a suit held twice, ties
    to the smallest card; only a card of reach 8 or less goes."""
    suits = [c // 13 for c in hand]
    worst, worst_key = None, (99, 99)
    for c in hand:
        key = (TARGET_REACH[c] - (2 if suits.count(c // 13) > 1 else 0), c)
        if key < worst_key:
            worst, worst_key = c, key
    return worst if worst is not None and TARGET_REACH[worst] <= 8 else None


def target_distances(cards: Iterable[int], target: int) -> tuple[int, int]:
    """(the farthest rank distance to ``target`` of a card of its suit, -1
    with none; the nearest rank distance of any card, 99 with no cards)."""
    t_suit, t_rank = target // 13, target % 13
    far, near = -1, 99
    for c in cards:
        d = abs(c % 13 - t_rank)
        if c // 13 == t_suit and d > far:
            far = d
        if d < near:
            near = d
    return far, near


def _target_play(target: int, plays: list, hand: list) -> int:
    """The index in ``hand`` that ``choose_play`` picks, ties broken alike
    (the first of equal keys), on table lookups instead of helper calls."""
    reach = TARGET_REACH
    t_suit, t_rank = target // 13, target % 13
    # the farthest same-suit play so far; the closest play of all
    need, closest = target_distances((c for _, c in plays), target)
    best, best_key = -1, (99, 99)
    if need >= 0:  # beat the farthest same-suit play as cheaply as possible
        for i, c in enumerate(hand):
            d = abs(c % 13 - t_rank)
            if c // 13 == t_suit and d > need and (d, reach[c]) < best_key:
                best, best_key = i, (d, reach[c])
        return best if best >= 0 else _target_cheapest(hand)
    far = -1
    for i, c in enumerate(hand):  # the farthest same-suit card
        d = abs(c % 13 - t_rank)
        if c // 13 == t_suit and d > far:
            best, far = i, d
    if best >= 0:
        return best
    for i, c in enumerate(hand):  # close enough to lead, closest first
        d = abs(c % 13 - t_rank)
        if d <= closest and (d, reach[c]) < best_key:
            best, best_key = i, (d, reach[c])
    return best if best >= 0 else _target_cheapest(hand)


def target_choose(revealed: list, hand: list) -> int:
    """The index in ``revealed`` that ``choose_target`` picks: a suit the
    hand holds, farthest first (20 + distance), else the nearest rank."""
    best_index, best_value = 0, -99
    for index, t in enumerate(revealed):
        far, near = target_distances(hand, t)
        value = 20 + far if far >= 0 else -near if hand else 0
        if value > best_value:
            best_index, best_value = index, value
    return best_index


def _target_cheapest(hand: list) -> int:
    """The heuristic's throw-away: least reach, then the smallest card."""
    return min(range(len(hand)), key=lambda i: (TARGET_REACH[hand[i]], hand[i]))


def target_playout(state, stop_round: int, hero: int = -1) -> None:
    """Plays ``state`` on with the heuristic at every seat until the round
    ``stop_round`` has begun or the match ends, one decision at a time on
    the engine's fields (its own judging, refilling and round start): the
    same moves, state, decision count and rng draws as stepping
    ``target_policy`` through the engine, without building legal lists or
    dispatching actions. It stops at the cap on decisions (the caller's
    loop sees it) and leaves a state with events alone. The seat ``hero``
    (if any) discards by the search's tuned model instead
    (``bots.search.target_hand``)."""
    from games.target import FACE_UP, MAX_DISCARD

    if state.events is not None:
        return
    n = state.num_players
    hands = state.hands  # the discard pile is replaced at a refill: never aliased
    cap = state.INFO.max_decisions
    while state.to_act >= 0 and state.round < stop_round and state.decisions < cap:
        state.decisions += 1
        seat = state.to_act
        hand = hands[seat]
        phase = state.phase
        if phase == "choose":
            revealed = state.revealed
            target = revealed[target_choose(revealed, hand) if len(revealed) > 1 else 0]
            state.discard.extend((c, FACE_UP) for c in revealed if c != target)
            state.target, state.revealed, state.phase = target, [], "play"
        elif phase == "play":
            i = _target_play(state.target, state.plays, hand) if len(hand) > 1 else 0
            state.plays.append((seat, hand.pop(i)))
            nxt = (seat + 1) % n
            if nxt == state.sp:
                state._judge()
            else:
                state.to_act = nxt
        else:
            if not hand:
                card = None
            elif seat == hero:
                card = target_hand.discard(hand, n)
            else:
                card = _target_discard(hand)
            if card is None:
                state._refill_and_next(seat)
                continue
            hand.remove(card)
            state.discard.append((card, seat))
            state.discarded[seat] += 1
            if state.discarded[seat] >= MAX_DISCARD or not hand:
                state._refill_and_next(seat)


# ---- cat_in_the_box ----------------------------------------------------------------
_CAT_WIN_VALUE = {1: 0.0, 2: 0.0, 3: 0.02, 4: 0.05, 5: 0.1, 6: 0.2, 7: 0.35, 8: 0.5}
_CAT_COLOUR = {"red": 0, "blue": 1, "yellow": 2, "green": 3}


@fast("cat_in_the_box")
def cat_policy(state, seat: int, legal: list, rng: random.Random) -> int:
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


def _listed(legal: list) -> list:
    """Actions as a heuristic gets them on the wire (tuples become lists)."""
    return [list(a) if isinstance(a, tuple) else a for a in legal]


# ---- all_aboard ----------------------------------------------------------------------
# The heuristic's turn planner, memoized across calls: a plan's value less the
# certificates already earned depends only on (hand, field, room), room being
# the certificates the deck can still pay (capped: a hand of k cards earns at
# most k, so any room above k + 1 plans alike). A turn's later decisions are
# subproblems of its first.
_ABOARD_PLANS: dict[tuple, float] = {}


def _aboard_end(hand: tuple, field: int, room: int) -> float:
    from games.all_aboard import _RED

    reds = sum(1 for c in hand if _RED[c])
    value: float = -2 * reds + (20 if reds == len(hand) else 0)
    if room > 0 and _RED[field]:
        value += 1.0  # the heuristic's RED_FIELD_BONUS: the next player faces red
    return value


def _aboard_best(hand: tuple, field: int, room: int) -> float:
    from games.all_aboard import legal_plays

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
    from games.all_aboard import _RED, _SUIT

    if _RED[field] and _RED[play]:
        suit = _SUIT[play]
        rest = [c for c in hand if c < 78 and _SUIT[c] == suit and _RED[c]]
        remaining = tuple(c for c in hand if c not in rest)
        return _aboard_end(remaining, play, room)
    remaining = tuple(c for c in hand if c != play)
    if _RED[field]:
        return _aboard_best(remaining, play, min(room, len(remaining) + 1))
    if _RED[play]:
        return _aboard_end(remaining, play, room)
    room -= 1
    if room <= 0:
        return 1 + _aboard_end(remaining, play, room)
    return 1 + _aboard_best(remaining, play, min(room, len(remaining) + 1))


def all_aboard_values(state, seat: int, legal: list) -> list[float]:
    hand = tuple(sorted(state.hands[seat]))
    room = min(len(state.deck), len(hand) + 1)
    return [_aboard_after(hand, state.field, card, room) for card in legal]


@fast("all_aboard")
def all_aboard_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    if len(legal) == 1:
        return 0
    values = all_aboard_values(state, seat, legal)
    top = max(values)
    best = [i for i, v in enumerate(values) if v >= top - 1e-9]
    return rng.choice(best)


# ---- kings_order ---------------------------------------------------------------------
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
        from math import comb

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


def _ko_model(state, seat: int) -> _KingsModel:
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


def kings_order_values(state, seat: int, legal: list) -> list[float]:
    """The heuristic's rating of every legal move (``choose`` plays the best)."""
    model = _ko_model(state, seat)
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


@fast("kings_order")
def kings_order_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    if len(legal) == 1:
        return 0
    values = kings_order_values(state, seat, legal)
    top = max(values)
    return rng.choice([i for i, v in enumerate(values) if v >= top - 1e-9])


# ---- seven_peak ----------------------------------------------------------------------
_SP_HAND_VALUES: dict[tuple, float] = {}


def seven_peak_hand_value(hand, counts, ctx) -> float:
    """The heuristic's ``hand_value``, from set values computed on suit counts
    and cached (the same hands come back in every playout of a decision)."""
    key = (tuple(sorted(hand)), tuple(counts), ctx["last"], ctx["max_set"], ctx["joker_used"])
    found = _SP_HAND_VALUES.get(key)
    if found is not None:
        return found
    best = 0.0
    rest = len(hand)
    for n in range(max(ctx["last"], 2), 8):
        value = seven_peak_best_value(hand, n, counts, ctx["joker_used"], ctx["max_set"])
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


@fast("seven_peak")
def seven_peak_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The seven_peak heuristic's ``choose``, step for step, with the cached
    hand values above."""
    from bots.heuristics import seven_peak as h

    if len(legal) == 1:
        return 0
    step = state.step
    own = seat == state.to_act and step in ("value", "cards")
    hand = state._free_hand() if own else state.hands[seat]
    counts = [len(p) for p in state.area]
    sets = state.sets[seat]
    ctx = {
        "last": state.last_set[seat],
        "max_set": max((n for n, _ in sets), default=0),
        "joker_used": any(c // 6 == 4 for _, cards in sets for c in cards),
    }
    if step == "turn":
        if "play" not in legal:
            return legal.index("pass")
        left = _sp_turns_left(state, seat)
        best = None
        for n in range(max(1, ctx["last"]), 8):
            value = seven_peak_best_value(hand, n, counts, ctx["joker_used"], ctx["max_set"])
            if value is None:
                continue
            if len(hand) - n == 0:
                value += 2
            if best is None or value > best[0]:
                best = (value, n)
        return legal.index(h.play_or_pass(best, len(hand), left))
    if step == "value":
        left = _sp_turns_left(state, seat)
        best = None
        for i, action in enumerate(legal):
            n = action[1]
            value = seven_peak_best_value(hand, n, counts, ctx["joker_used"], ctx["max_set"])
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
        found = h.best_set(hand, n, counts, ctx, fixed=fixed)
        if found:
            for c in found[1][len(fixed):]:
                if ("card", c) in legal:
                    return legal.index(("card", c))
        return 0
    piles = state.area
    if step == "put":
        card = h._best_first(hand, counts, piles, ctx, seven_peak_hand_value)
        return legal.index(("put", card))
    if step == "more":
        stop_score = seven_peak_hand_value(hand, counts, ctx) + h._peak_vp(counts)
        second = h._best_second(hand, counts, piles, ctx, value=seven_peak_hand_value)
        if second and second[0] > stop_score + 0.3:
            return legal.index(("put", second[1]))
        return legal.index("stop")
    if step == "take":
        take = h._best_take(hand, counts, piles, ctx, seven_peak_hand_value)
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


# ---- tenos_square --------------------------------------------------------------------
_TENOS_BEST: dict[tuple, tuple[float, int]] = {}


def _tenos_best_for(row: tuple, card: int, n: int) -> tuple[float, int]:
    from bots.heuristics.tenos_square import best_for

    key = (row, card, n)
    found = _TENOS_BEST.get(key)
    if found is None:
        if len(_TENOS_BEST) > 200_000:
            _TENOS_BEST.clear()
        found = _TENOS_BEST[key] = best_for(list(row), card, n)
    return found


@fast("tenos_square")
def tenos_square_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The tenos_square heuristic's ``choose`` with its row valuations cached
    (a row changes once per turn; every playout asks about the same rows)."""
    from bots.heuristics.tenos_square import decide

    if len(legal) == 1:
        return 0
    return decide(state.phase, tuple(state._visible_row(seat)), state.hands[seat], state.centre,
                  state.playing, state.num_players, legal, _tenos_best_for)


# ---- tile_hunt -----------------------------------------------------------------------
def tile_hunt_obs(state, seat: int) -> dict:
    """The keys of the observation the tile_hunt heuristic reads."""
    from games.tile_hunt import points

    return {
        "seat": seat, "num_players": state.num_players,
        "phase": "over" if state.step == "over" else ("late" if state.is_late() else "early"),
        "final_round": state.is_final_round(), "order": state.order,
        "turn_position": state.pos, "step": state.step, "dice": state.dice,
        "rerolls_left": state.rerolls_left,
        "tiles": [{"name": name, "points": points(name), "owner": state.owner[name]}
                  for name in state.face_up],
        "reversal": state.reversal, "chip_supply": state.supply, "scores": state.scores_int(),
    }


class TileHuntDice:
    """The tile_hunt heuristic with its dice DP vectorized and memoized per
    turn situation (the same tiles and values come back in every playout of
    a decision): the heuristic's state values (the best way to stop with each
    of the 252 sorted dice) from per-tile masks instead of a Python loop, and
    its reroll expectations per *kept* dice (210 of them) instead of per
    (dice, reroll) pair (4,116 rows): what a reroll is worth depends only on
    the dice it keeps."""

    def __init__(self) -> None:
        import numpy as np

        from bots.heuristics import tile_hunt as h
        from games.tile_hunt import TILES, remove_values, satisfied_tiles

        self.np = np
        self.h = h
        self.masks = {name: np.array([name in satisfied_tiles(st) for st in h.STATES])
                      for name in TILES}
        self.catalogue = {name: i for i, name in enumerate(TILES)}
        self.ones = np.array([st.count(1) for st in h.STATES])
        kept_index: dict[tuple[int, ...], int] = {}
        rows: list[np.ndarray] = []
        row_kept = np.zeros(len(h.ROW_STATE), dtype=np.int64)
        for (state, option), row in h.OPTION_ROWS.items():
            kept = tuple(remove_values(state, option))
            if kept not in kept_index:
                kept_index[kept] = len(rows)
                rows.append(h.TRANSITIONS[row])
            row_kept[row] = kept_index[kept]
        self.kept_matrix = np.array(rows)
        self.row_kept = row_kept
        self.kept_index = kept_index
        # per sorted dice, the kept-dice rows of its rerolls (rows are grouped by dice)
        ends = [*h.STATE_STARTS[1:], len(row_kept)]
        self.blocks = [row_kept[start:end] for start, end in zip(h.STATE_STARTS, ends)]
        self.cache: dict[tuple, tuple] = {}
        self.end_cache: dict[tuple, list[tuple[tuple, float]]] = {}

    def _inputs(self, obs: dict) -> tuple[list, tuple]:
        """The heuristic's options (kind, tile, value) and its chips' values
        by the number of 1s: what the dice tables are built from."""
        h = self.h
        return h.options(obs), tuple(h.chips_value(obs, k) for k in range(6))

    def tables(self, obs: dict) -> tuple:
        return self._tables(*self._inputs(obs))

    def _tables(self, opts: list, chip_vals: tuple) -> tuple:
        h, np = self.h, self.np
        key = (tuple(opts), chip_vals)
        found = self.cache.get(key)
        if found is None:
            v0 = np.asarray(chip_vals, dtype=float)[self.ones]
            for _, name, value in opts:
                v0 = np.where(self.masks[name] & (value > v0), value, v0)
            expect0 = self.kept_matrix @ v0
            best = np.maximum.reduceat(expect0[self.row_kept], h.STATE_STARTS)
            v1 = np.maximum(v0, best)
            found = (v0, expect0, self.kept_matrix @ v1)
            if len(self.cache) > 4096:
                self.cache.clear()
            self.cache[key] = found
        return found

    def roll_policy(self, v0, expected):
        """Per sorted dice, the index of the best roll-step action (legal
        order: stop, then the rerolls as their rows run): the first reroll of
        the highest expectation, or stop (0) unless a reroll beats it, as the
        heuristic chooses; ``_roll_choice`` for every dice at once."""
        h, np = self.h, self.np
        rows = expected[self.row_kept]
        block_max = np.maximum.reduceat(rows, h.STATE_STARTS)
        index = np.arange(len(rows))
        first = np.minimum.reduceat(
            np.where(rows == block_max[h.ROW_STATE], index, len(rows)), h.STATE_STARTS)
        return np.where(block_max > v0 + 1e-9, first - h.STATE_STARTS + 1, 0)

    def end_distribution(self, opts: list, chip_vals: tuple, supply: int) -> list[tuple[tuple, float]]:
        """(end, probability) of a turn from a fresh roll played by the DP
        for these values: ends are (kind, tile) or ("chips", k), k the chips
        the supply gives. Exact: the fresh roll's distribution is pushed
        through the DP's stop-or-reroll choice twice."""
        h, np = self.h, self.np
        key = (tuple(opts), chip_vals, supply)
        cached = self.end_cache.get(key)
        if cached is not None:
            return cached
        v0, expect0, expect1 = self._tables(opts, chip_vals)
        # the take step's choice (``best_take``): the first of the highest
        # value in legal order, takes then steals by the catalogue, chips last
        ends: list[tuple] = [("chips", min(k, supply)) for k in range(6)]
        best_end = np.zeros(len(h.STATES), dtype=np.int64)
        best_val = np.full(len(h.STATES), -np.inf)
        for kind, name, value in sorted(opts, key=lambda o: (o[0] != "take", self.catalogue[o[1]])):
            ends.append((kind, name))
            better = self.masks[name] & (value > best_val)
            best_end = np.where(better, len(ends) - 1, best_end)
            best_val = np.where(better, value, best_val)
        chips_better = np.asarray(chip_vals, dtype=float)[self.ones] > best_val
        best_end = np.where(chips_better, self.ones, best_end)
        held = self.kept_matrix[self.kept_index[()]]  # the fresh roll
        stopped = np.zeros(len(h.STATES))
        for expected in (expect1, expect0):  # two rerolls left, then one
            choice = self.roll_policy(v0, expected)
            stopped += np.where(choice > 0, 0.0, held)
            live = np.nonzero((choice > 0) & (held > 0))[0]
            rows = h.STATE_STARTS[live] + choice[live] - 1
            held = held[live] @ self.kept_matrix[self.row_kept[rows]]
        stopped += held
        mass = np.bincount(best_end, weights=stopped, minlength=len(ends))
        merged: dict[tuple, float] = {}
        for end, m in zip(ends, mass.tolist()):
            if m > 1e-12:
                merged[end] = merged.get(end, 0.0) + m  # chips capped by the supply
        found = list(merged.items())
        if len(self.end_cache) > 4096:
            self.end_cache.clear()
        self.end_cache[key] = found
        return found

    def turn(self, state, seat: int) -> tuple:
        """The turn's ``tables``, its options' values by (kind, tile) and its
        chips' values by the number of 1s, kept on the state: nothing they
        depend on (tiles, owners, scores, order, chip supply) changes before
        the turn's take step."""
        key = (state.round, state.pos, len(state.face_up))
        cached = state.__dict__.get("_search_turn")
        if cached is not None and cached[0] == key:
            return cached[1]
        opts, chip_vals = self._inputs(tile_hunt_obs(state, seat))
        found = (self._tables(opts, chip_vals),
                 {(kind, name): value for kind, name, value in opts}, chip_vals)
        state.__dict__["_search_turn"] = (key, found)
        return found

    def take(self, state, seat: int, legal: list) -> int:
        """The heuristic's take step (``choose``), from the turn's values."""
        _, values, chip_vals = self.turn(state, seat)
        return self.h.best_take(legal, values, chip_vals[state.dice.count(1)])

    def values(self, obs: dict, legal: list) -> list[float]:
        """The heuristic's expected value of every roll-step action (the
        tests' reference for ``policy``)."""
        h = self.h
        v0, expect0, expect1 = self.tables(obs)
        dice = tuple(obs["dice"])
        expected = expect0 if obs["rerolls_left"] <= 1 else expect1
        kept = self.row_kept
        return [float(v0[h.STATE_INDEX[dice]]) + 1e-9 if action == h.STOP
                else float(expected[kept[h.OPTION_ROWS[(dice, tuple(action))]]])
                for action in legal]

    def move(self, obs: dict, legal: list, opts: list, chip_vals: list[float]) -> int:
        """The heuristic's move (the dice played exactly, the take of the
        highest value) for other values of the turn's ends: ``opts`` as
        ``h.options`` gives them, ``chip_vals`` by the number of 1s."""
        h = self.h
        if obs["step"] == "take":
            values = {(kind, name): value for kind, name, value in opts}
            return h.best_take(legal, values, chip_vals[obs["dice"].count(1)])
        v0, expect0, expect1 = self._tables(opts, tuple(chip_vals))
        dice = h.STATE_INDEX[tuple(obs["dice"])]
        return self._roll_choice(dice, v0, expect0 if obs["rerolls_left"] <= 1 else expect1)

    def _roll_choice(self, dice: int, v0, expected) -> int:
        """Stop (0) unless a reroll's expectation beats the dice's value; the
        dice's rerolls are its block of rows, in legal order after "stop"."""
        rerolls = expected[self.blocks[dice]]
        best = int(rerolls.argmax())
        return best + 1 if rerolls[best] > v0[dice] + 1e-9 else 0

    def policy(self, state, seat: int, legal: list, rng: random.Random) -> int:
        if state.step == "take":
            return self.take(state, seat, legal)
        v0, expect0, expect1 = self.turn(state, seat)[0]
        dice = self.h.STATE_INDEX[tuple(state.dice)]
        return self._roll_choice(dice, v0, expect0 if state.rerolls_left <= 1 else expect1)

_TILE_HUNT: TileHuntDice | None = None


def _tile_hunt() -> TileHuntDice:
    global _TILE_HUNT
    if _TILE_HUNT is None:
        _TILE_HUNT = TileHuntDice()
    return _TILE_HUNT


@fast("tile_hunt")
def tile_hunt_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    return _tile_hunt().policy(state, seat, legal, rng)


# ---- twin_shoot ----------------------------------------------------------------------
@fast("twin_shoot")
def twin_shoot_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    from bots.heuristics.twin_shoot import choose

    if len(legal) == 1:
        return 0
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
    obs = {
        "seat": seat, "num_players": n, "phase": state.phase, "hand": state.hands[seat],
        "hand_sizes": [len(h) for h in state.hands], "bid_cards": state.bid_cards[seat],
        "partner_bid_cards": state.bid_cards[partner] if done else None, "bids": bids,
        "open_bid_cards": open_cards, "trick": state.trick, "trick_order": state.order,
        "follow_mode": state.mode, "tricks_won": state.tricks_won,
        "tricks_played": state.played_view,
    }
    return choose(obs, legal, rng)


# ---- tateyoko ------------------------------------------------------------------------
@fast("tateyoko")
def tateyoko_policy(state, seat: int, legal: list, rng: random.Random) -> int:
    from bots.heuristics.tateyoko import decide

    if len(legal) == 1:
        return 0
    return decide(dict(state.grid), list(state.hands[seat]), list(state.turn), legal, rng)


# ---- seven_peak: the heuristic's set valuation, without building the sets ---------
def seven_peak_best_value(hand, n: int, counts, joker_used: bool, max_set: int) -> float | None:
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


# ---- priors: the heuristics' own ratings of every legal move ------------------------
# ``prior(state, seat, legal) -> list[float]`` (higher is better), used by the
# search to keep the few moves the heuristic rates best when there are many.
Prior = Callable[[Any, int, list], list[float]]
PRIORS: dict[str, Prior] = {}


def prior(slug: str) -> Callable[[Prior], Prior]:
    def register(fn: Prior) -> Prior:
        PRIORS[slug] = fn
        return fn
    return register


@prior("tateyoko")
def tateyoko_prior(state, seat: int, legal: list) -> list[float]:
    from bots.heuristics.tateyoko import placed_value
    from bots.search.tuned import _tateyoko_leaf

    grid = dict(state.grid)
    hand = list(state.hands[seat])
    turn = list(state.turn)
    return [_tateyoko_leaf(hand, grid) if isinstance(action, str)
            else placed_value(grid, hand, turn, *cast("tuple[int, int, int]", action), leaf=_tateyoko_leaf)
            for action in legal]


@prior("kings_order")
def kings_order_prior(state, seat: int, legal: list) -> list[float]:
    return kings_order_values(state, seat, legal)


@prior("grazia")
def grazia_prior(state, seat: int, legal: list) -> list[float]:
    from bots.heuristics.grazia import play_value

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


@prior("all_aboard")
def all_aboard_prior(state, seat: int, legal: list) -> list[float]:
    from bots.search.tuned import all_aboard_values as tuned_values

    return tuned_values(sorted(state.hands[seat]), state.field, len(state.deck),
                        state.num_players, legal)


@prior("cat_in_the_box")
def cat_prior(state, seat: int, legal: list) -> list[float]:
    if state.phase != "play":
        return [0.0] * len(legal)
    scores = _cat_play(state, seat, legal, random.Random(0), scores=True)
    return scores


def _twin_obs(state, seat: int) -> dict:
    n = state.num_players
    partner = seat ^ 1
    done = state.phase != "bid"
    return {
        "seat": seat, "num_players": n, "phase": state.phase, "hand": state.hands[seat],
        "hand_sizes": [len(h) for h in state.hands], "bid_cards": state.bid_cards[seat],
        "partner_bid_cards": state.bid_cards[partner] if done else None,
        "open_bid_cards": [state.bid_cards[s] if state.open_team is not None
                           and s // 2 == state.open_team else None for s in range(n)],
        "trick": state.trick, "trick_order": state.order, "follow_mode": state.mode,
        "tricks_won": state.tricks_won, "tricks_played": state.played_view,
    }


@prior("twin_shoot")
def twin_shoot_prior(state, seat: int, legal: list) -> list[float]:
    """Bids: how close the best pair holding the card comes to the hand's
    estimated tricks (the heuristic's own measure); plays: the chance to win
    the trick, for or against as the bid needs (and lead power to break ties)."""
    from bots.heuristics import twin_shoot as h
    from games.twin_shoot import bid_value, deck_for

    obs = _twin_obs(state, seat)
    n = state.num_players
    if state.phase == "bid":
        hand = list(state.hands[seat])
        chosen = list(state.bid_cards[seat])
        unseen = [c for c in deck_for(n) if c not in hand and c not in chosen]
        share = (n - 1) * 10 / max(len(unseen), 1)
        power = {c: h.lead_power(c, unseen, share) for c in hand}
        total = sum(power.values())

        def miss(a: int, b: int) -> float:
            rest = total - sum(power[x] for x in (a, b) if x in power)
            return abs(bid_value([a, b]) - (h.BASE.get(n, 1.0) + h.SCALE * rest))

        if chosen:
            return [-miss(chosen[0], b) for b in legal]
        return [-min(miss(a, b) for b in hand if b != a) for a in legal]
    if state.phase != "play":
        return [0.0] * len(legal)
    unseen = h._unseen(obs)
    bid = state.bid_vals[seat]
    won = state.tricks_won[seat]
    need = bid - won
    left = 10 - len(state.played_view)
    want_win = need != 0 or need > left
    share = (n - 1) * max(len(state.hands[seat]) - 1, 1) / max(len(unseen), 1)
    values = []
    for c in legal:
        p = h.win_chance(obs, c, unseen)
        strength = h.lead_power(c, unseen, share)  # not `power`, the bid branch's dict
        values.append(p - 0.01 * strength if want_win else -p + 0.01 * strength)
    return values


@prior("seven_peak")
def seven_peak_prior(state, seat: int, legal: list) -> list[float]:
    """The heuristic's own scores of the hand after each put or take."""
    from bots.heuristics import seven_peak as h

    step = state.step
    hand = state.hands[seat]
    counts = [len(p) for p in state.area]
    sets = state.sets[seat]
    ctx = {
        "last": state.last_set[seat],
        "max_set": max((n for n, _ in sets), default=0),
        "joker_used": any(c // 6 == 4 for _, cards in sets for c in cards),
    }
    piles = state.area
    if step in ("put", "more"):
        values = []
        for action in legal:
            if action == "stop":
                values.append(seven_peak_hand_value(hand, counts, ctx) + h._peak_vp(counts))
                continue
            rest, area, _ = h._put(hand, counts, piles, action[1])
            values.append(seven_peak_hand_value(rest, area, ctx) + h._peak_vp(area)
                          - h._danger(area, action[1]))
        return values
    if step == "take":
        return [h._after_take(hand, counts, x, card, ctx, seven_peak_hand_value)
                for _, x, card in legal]
    return [0.0] * len(legal)
