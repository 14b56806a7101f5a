"""tateyoko: the search's tuned default move, which plays the game as a race.

The heuristic plays the line that leaves the best hand by its end-of-game
penalty. But a game is a race: most games end with a player going out,
and the others then lose a point or two each. The tuned move values the
hand it leaves as a racer would (``leaf``): ``LINE_WEIGHT`` for each turn
the hand still needs to go out (``lines_to_go_out``: a turn lays one line,
a column of one rank or a row of one suit's run), and ``OPEN_WEIGHT`` for
every card nobody has seen that would fit an open cell of the grid it
leaves, so it opens as little room as it can for the other hands; the
penalty is left as little more than a tie-break. Its values are the
search's prior too. The tuning, by weights: docs/search.md.
"""

from __future__ import annotations

import random
from functools import lru_cache

from bots.heuristics.tateyoko import decide, hand_value
from games.tateyoko import cell_options, frontier
from games.tennos import NUM_RANKS

OPEN_WEIGHT = 10.0  # per unseen card that would fit an open cell
LINE_WEIGHT = 60.0  # per line the hand still needs to go out


def _beside(c: int, step: int) -> int:
    """The card of c's suit ``step`` ranks along (K and A are one apart)."""
    suit, rank = divmod(c, NUM_RANKS)
    return suit * NUM_RANKS + (rank + step) % NUM_RANKS


def _longest_line(cards: set[int]) -> list[int]:
    """The largest group of ``cards`` one turn could lay: one rank (a column)
    or a run of one suit (a row; K and A are one apart). Ties: the lowest
    rank's column, then the run found first from the lowest card."""
    by_rank: dict[int, list[int]] = {}
    by_suit: dict[int, list[int]] = {}
    ordered = sorted(cards)
    for c in ordered:
        by_rank.setdefault(c % NUM_RANKS, []).append(c)
        by_suit.setdefault(c // NUM_RANKS, []).append(c)
    whole = [suit for suit in by_suit.values() if len(suit) == NUM_RANKS]
    if whole:
        return whole[0]  # a whole suit is a ring: no run starts, it is one row
    best = max(by_rank.values(), key=len)
    for c in ordered:
        if _beside(c, -1) in cards:
            continue  # not where a run starts
        run = [c]
        nxt = _beside(c, 1)
        while nxt in cards and nxt != c:
            run.append(nxt)
            nxt = _beside(nxt, 1)
        if len(run) > len(best):
            best = run
    return best


def lines_to_go_out(hand: list[int]) -> int:
    """How many turns the hand needs to go out, counted greedily: a turn lays
    one line (a column of one rank or a row of one suit's run), so take the
    longest group left, again and again. The grid may not have room for a
    group; the count ignores that."""
    return _lines(tuple(sorted(hand)))


@lru_cache(maxsize=1 << 16)
def _lines(hand: tuple[int, ...]) -> int:
    # cached: a line search values the same few hands hundreds of times
    left = set(hand)
    lines = 0
    while left:
        left.difference_update(_longest_line(left))
        lines += 1
    return lines


def _open_cards(grid: dict, hand: list[int]) -> int:
    """Cards nobody has seen (not on the grid, not in this hand) that fit
    some open cell: what the others may find room for."""
    fit: set[int] = set()
    for cell in frontier(grid):
        fit.update(cell_options(grid, *cell))
    fit.difference_update(hand)
    fit.difference_update(grid.values())
    return len(fit)


def leaf(hand: list[int], grid: dict) -> float:
    """A hand left as the racer values it: the heuristic's value, less the turns it
    still needs to go out and the unseen cards the grid it leaves would take."""
    if not hand:
        return hand_value(hand)  # out: the game is over, nobody plays on
    return (hand_value(hand) - LINE_WEIGHT * lines_to_go_out(hand)
            - OPEN_WEIGHT * _open_cards(grid, hand))


def default_move(obs: dict, legal: list, rng: random.Random) -> int:
    """The heuristic's line search, valuing the hand it leaves by ``leaf``."""
    if len(legal) == 1:
        return 0
    grid = {(x, y): c for x, y, c in obs["grid"]}
    return decide(grid, list(obs["hand"]), [(x, y) for x, y, _ in obs["turn"]], legal, rng,
                  leaf=leaf, noise=1e-5)
