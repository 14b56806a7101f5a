"""tateyoko: whole games of the heuristic on the engine's fields, the
search's ``fast_playout``.

``playout(state, rng)`` reaches exactly the state (and draws exactly the
random numbers) that stepping the rollout policy through the engine with
``rng`` would, to the end of the current game. What it saves: building the
legal actions and the open-cell index by card at every step, the engine's
per-step checks, and the heuristic's list copies and penalty recounts in
its line search (suit counts are kept up to date instead; a card with no
possible neighbour in the hand is valued without laying it). About twice
as fast as stepping.

It keeps its own copy of a turn's transitions (place, pass, stop, go out)
on the engine's open-cell table (``open_table``) and ends the game by the
engine's ``end_game``; it mirrors the engine's rules at
``MIRRORS_RULES_VERSION``, which tests/test_tateyoko_fast_path.py holds
against the engine's.
"""

from __future__ import annotations

import random
from typing import overload

from bots.heuristics.tateyoko import OUT_BONUS
from games.tateyoko import CELL_OPTIONS, cell_options

MIRRORS_RULES_VERSION = "2"
NUM_RANKS = 13
LINE_BUDGET = 400  # the heuristic's node budget per line search (placed_value)
OUT_VALUE = 5 + OUT_BONUS  # hand_value of an empty hand


def _partners(c: int) -> frozenset[int]:
    """The cards that may ever lie next to c: its rank in another suit
    (above, below), its suit one rank apart (left, right)."""
    suit, rank = divmod(c, NUM_RANKS)
    same_rank = {s * NUM_RANKS + rank for s in range(6) if s != suit}
    beside = {suit * NUM_RANKS + (rank + d) % NUM_RANKS for d in (-1, 1)}
    return frozenset(same_rank | beside)


PARTNERS = tuple(_partners(c) for c in range(6 * NUM_RANKS))


def hand_value(counts: list[int], size: int) -> float:
    """The heuristic's hand_value from the hand's cards per suit (same float)."""
    if not size:
        return OUT_VALUE
    return -max(counts) * (6 - counts.count(0)) - 0.1 * size


def line_value(grid: dict, held: set, counts: list[int], size: int,
               last: tuple[int, int], prev: tuple[int, int] | None, budget: list[int]) -> float:
    """The heuristic's best_line after a card was laid on ``last`` (``prev``:
    the cell before it in the turn, None for the turn's first card), in the
    same order and with the same node budget, so the same value. ``grid``,
    ``held`` and ``counts`` are left as they were."""
    best = hand_value(counts, size)
    if not size or budget[0] <= 0:
        return best
    budget[0] -= 1
    x, y = last
    if held.isdisjoint(PARTNERS[grid[last]]):
        return best  # no card held may go next to the last one (most lines)
    if prev is None:
        cells: tuple[tuple[int, int], ...] = ((x, y + 1), (x, y - 1), (x + 1, y), (x - 1, y))  # NEIGHBOURS' order
    else:
        cells = ((2 * x - prev[0], 2 * y - prev[1]),)
    get = grid.get
    for cell in cells:
        if cell in grid:
            continue
        cx, cy = cell
        # cell_options, inlined (the hot spot): cached by the four neighbours
        key = (get((cx, cy + 1)), get((cx, cy - 1)), get((cx + 1, cy)), get((cx - 1, cy)))
        options = CELL_OPTIONS.get(key)
        if options is None:
            options = cell_options(grid, cx, cy)
        for c in options:
            if c not in held:
                continue
            grid[cell] = c
            held.discard(c)
            counts[c // NUM_RANKS] -= 1
            value = line_value(grid, held, counts, size - 1, cell, last, budget)
            counts[c // NUM_RANKS] += 1
            held.add(c)
            del grid[cell]
            if value > best:
                best = value
    return best


def placed_value(grid: dict, held: set, counts: list[int], size: int,
                 prev: tuple[int, int] | None, c: int, x: int, y: int) -> float:
    """The heuristic's placed_value of laying ``c`` on (x, y)."""
    cell = (x, y)
    grid[cell] = c
    held.discard(c)
    counts[c // NUM_RANKS] -= 1
    value = line_value(grid, held, counts, size - 1, cell, prev, [LINE_BUDGET])
    counts[c // NUM_RANKS] += 1
    held.add(c)
    del grid[cell]
    return value


# For the type checker: with stop_value None (a turn's first step) the pick is
# always a placement (callers pass moves that are not empty).
@overload
def _pick(grid: dict, hand: list[int], turn: list, moves: list, rng: random.Random,
          stop_value: None) -> tuple[int, int, int]: ...
@overload
def _pick(grid: dict, hand: list[int], turn: list, moves: list, rng: random.Random,
          stop_value: float) -> tuple[int, int, int] | None: ...
def _pick(grid: dict, hand: list[int], turn: list, moves: list, rng: random.Random,
          stop_value: float | None) -> tuple[int, int, int] | None:
    """The heuristic's ``decide`` over ``moves`` (sorted placements): None
    for "stop" (``stop_value`` is the hand's value then; None at a turn's
    first step, where it always places)."""
    held = set(hand)
    counts = [0] * 6
    for c in hand:
        counts[c // NUM_RANKS] += 1
    size = len(hand)
    prev = turn[-1] if turn else None
    best_move = None
    best_value = float("-inf") if stop_value is None else stop_value
    alone: dict[int, float] = {}  # the hand's value less a card of suit s, by s
    for move in moves:
        c = move[0]
        if size == 1 or held.isdisjoint(PARTNERS[c]):
            # no line can go on from c: the value is the hand's without it
            suit = c // NUM_RANKS
            value = alone.get(suit)
            if value is None:
                counts[suit] -= 1
                value = alone[suit] = hand_value(counts, size - 1)
                counts[suit] += 1
        else:
            value = placed_value(grid, held, counts, size, prev, *move)
        value += rng.random() * 1e-3
        if value > best_value:
            best_value, best_move = value, move
    return best_move


def _next_cells(turn: list) -> tuple:
    x, y = turn[-1]
    if len(turn) == 1:
        return ((x, y + 1), (x, y - 1), (x + 1, y), (x - 1, y))
    px, py = turn[-2]
    return ((2 * x - px, 2 * y - py),)


def _place(grid: dict, table: dict, c: int, x: int, y: int) -> None:
    """The engine's ``_place`` on the open-cell table alone (no index by card)."""
    grid[(x, y)] = c
    table.pop((x, y), None)
    for cell in ((x, y + 1), (x, y - 1), (x + 1, y), (x - 1, y)):
        if cell not in grid:
            options = cell_options(grid, *cell)
            if options:
                table[cell] = options
            else:
                table.pop(cell, None)


def playout(state, rng: random.Random) -> None:
    """Plays the current game of ``state`` to its end (scored, the next one
    dealt, as the engine does) with the heuristic at every seat, or until the
    cap on decisions; the same moves, random numbers and final state as
    stepping ``policy`` (whose engine caches are rebuilt on use)."""
    if state.to_act < 0:
        return
    grid, hands, deck, log = state.grid, state.hands, state.deck, state.log
    table = state.open_table()  # edited in place: the grown grid marks it stale
    n = state.num_players
    cap = state.INFO.max_decisions
    on_grid = set(grid.values())
    seat, turn, passes, decisions = state.to_act, list(state.turn), state.passes, state.decisions
    over = False
    move: tuple[int, int, int] | None  # None: "stop"
    while decisions < cap:
        hand = hands[seat]
        held = set(hand)
        decisions += 1
        if not turn:
            moves = sorted((c, x, y) for (x, y), opts in table.items()
                           if not held.isdisjoint(opts) for c in opts if c in held)
            if not moves:  # "pass", the only action
                log.append((seat, ()))
                passes += 1
                if deck:
                    hand.append(deck.pop())
                if passes >= n:
                    over = True
                    break
                seat = (seat + 1) % n
                continue
            move = _pick(grid, hand, turn, moves, rng, None)
        else:
            moves = sorted((c, x, y) for x, y in _next_cells(turn)
                           for c in table.get((x, y), ()) if c in held)
            move = None
            if moves:
                counts = [0] * 6
                for c in hand:
                    counts[c // NUM_RANKS] += 1
                move = _pick(grid, hand, turn, moves, rng, hand_value(counts, len(hand)))
            if move is None:  # "stop"
                log.append((seat, tuple([grid[cell] for cell in turn])))
                turn = []
                seat = (seat + 1) % n
                continue
        c, x, y = move
        hand.remove(c)
        _place(grid, table, c, x, y)
        on_grid.add(c)
        turn.append((x, y))
        passes = 0
        if not hand:
            log.append((seat, tuple([grid[cell] for cell in turn])))
            over = True
            break
        if not any(o not in on_grid for cell in _next_cells(turn) for o in table.get(cell, ())):
            log.append((seat, tuple([grid[cell] for cell in turn])))
            turn = []
            seat = (seat + 1) % n
    state.to_act, state.turn, state.passes, state.decisions = seat, turn, passes, decisions
    if over:
        state.end_game()
