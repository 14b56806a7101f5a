"""tateyoko heuristic: never pass while a card fits; pick the placement that
starts (or continues) the line leaving the best hand, searching every line
of own cards from it (the hand's end-of-game value, going out worth most)."""

from __future__ import annotations

import random
from collections.abc import Callable

from games.tateyoko import cell_options, next_cells, penalty

OUT_BONUS = 30  # going out also ends the game before the others shed cards


def hand_value(hand: list[int]) -> float:
    if not hand:
        return penalty(hand) + OUT_BONUS
    # the penalty, with a nudge towards fewer cards in hand
    return penalty(hand) - 0.1 * len(hand)


Leaf = Callable[[list[int], dict], float]  # (hand, grid) -> value: a variant's hand_value


def best_line(grid: dict, hand: list[int], turn: list[tuple[int, int]], budget: list[int],
              leaf: Leaf | None = None) -> float:
    """Best value reachable by stopping now or placing more cards in line."""
    best = hand_value(hand) if leaf is None else leaf(hand, grid)
    if not hand or budget[0] <= 0:
        return best
    budget[0] -= 1
    held = set(hand)
    for cell in next_cells(turn):
        for c in cell_options(grid, *cell):
            if c not in held:
                continue
            grid[cell] = c
            rest = list(hand)
            rest.remove(c)
            turn.append(cell)
            value = best_line(grid, rest, turn, budget, leaf)
            turn.pop()
            del grid[cell]
            if value > best:
                best = value
    return best


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    if len(legal) == 1:
        return 0
    grid = {(x, y): c for x, y, c in obs["grid"]}
    return decide(grid, list(obs["hand"]), [(x, y) for x, y, _ in obs["turn"]], legal, rng)


def decide(grid: dict, hand: list, turn: list, legal: list, rng: random.Random,
           leaf: Leaf | None = None, noise: float = 1e-3) -> int:
    """The choice from the grid ({(x, y): card}), the hand and this turn's
    cells (the search's rollouts call it on engine states); ``leaf`` and
    ``noise`` (the random tie-break's size) make variants of it."""
    # index 0 is "pass" (first step) or "stop" (later steps)
    best_index = 0 if turn else None
    best_value = (hand_value(hand) if leaf is None else leaf(hand, grid)) if turn else float("-inf")
    for index, action in enumerate(legal):
        if isinstance(action, str):
            continue
        c, x, y = action
        value = placed_value(grid, hand, turn, c, x, y, leaf) + rng.random() * noise
        if value > best_value:
            best_value, best_index = value, index
    return 0 if best_index is None else best_index


def placed_value(grid: dict, hand: list, turn: list, card: int, x: int, y: int,
                 leaf: Leaf | None = None) -> float:
    """The best line after laying ``card`` at (x, y); ``grid`` and ``turn``
    are left as they were."""
    grid[(x, y)] = card
    rest = list(hand)
    rest.remove(card)
    turn.append((x, y))
    value = best_line(grid, rest, turn, [400], leaf)
    turn.pop()
    del grid[(x, y)]
    return value
