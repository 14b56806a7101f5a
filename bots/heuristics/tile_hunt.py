"""tile_hunt heuristic: value every way the turn can end (tiles, steals,
chips, reversal) and play the dice to maximize the expected value of the
turn, exactly (dynamic programming over the 252 sorted dice states).

Values: an unowned tile is worth its points; a steal counts the points twice
against the strongest rival (they lose what we gain), 1.5x against others;
chips 50 each (what the supply still holds); the reversal tile wins. In the
final round, an option that leaves us ahead of everyone gets a large bonus
(strictly ahead when someone still plays after us or precedes us in order).
"""

from __future__ import annotations

import random
from itertools import combinations_with_replacement
from math import factorial

import numpy as np

from games.tile_hunt import CHIP_POINTS, STOP, TILES, remove_values, reroll_options, satisfies

STATES: list[tuple[int, ...]] = list(combinations_with_replacement(range(1, 7), 5))
STATE_INDEX = {s: i for i, s in enumerate(STATES)}


def _outcomes(k: int) -> list[tuple[tuple[int, ...], float]]:
    """Sorted results of rolling k dice with their probabilities."""
    result = []
    for combo in combinations_with_replacement(range(1, 7), k):
        ways = factorial(k)
        for v in set(combo):
            ways //= factorial(combo.count(v))
        result.append((combo, ways / 6**k))
    return result


OUTCOMES = {k: _outcomes(k) for k in range(1, 6)}


def _build_transitions():
    """Rows: (state, reroll option); columns: next state; entries: probability.
    A row depends only on the dice kept, so each is summed once (the bots
    build this table before they answer ``hello``)."""
    rows: list[np.ndarray] = []
    row_state = []
    option_rows: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
    by_kept: dict[tuple[int, ...], np.ndarray] = {}
    for si, state in enumerate(STATES):
        for option in reroll_options(state):
            kept = remove_values(state, option)
            row = by_kept.get(tuple(kept))
            if row is None:
                row = np.zeros(len(STATES))
                for combo, p in OUTCOMES[len(option)]:
                    row[STATE_INDEX[tuple(sorted(kept + list(combo)))]] += p
                by_kept[tuple(kept)] = row
            option_rows[(state, option)] = len(rows)
            rows.append(row)
            row_state.append(si)
    return np.array(rows), np.array(row_state), option_rows


TRANSITIONS, ROW_STATE, OPTION_ROWS = _build_transitions()
# rows are grouped by state, in order: the start of each state's block
STATE_STARTS = np.searchsorted(ROW_STATE, np.arange(len(STATES)))

WIN_BONUS = 5000.0
REVERSAL_VALUE = 1e6  # above any turn: the final round's dice are rolled for five 1s


def options(obs: dict, reversal: float = REVERSAL_VALUE) -> list[tuple[str, str, float]]:
    """(kind, tile name, value) of every way the current turn may end but chips
    (``reversal``: the reversal tile's value, for variants)."""
    seat = obs["seat"]
    scores = obs["scores"]
    n = obs["num_players"]
    late = obs["phase"] == "late"
    final = obs["final_round"]
    order = obs["order"]
    pos = obs["turn_position"]
    earlier = set(order[:pos])
    rivals = [s for s in range(n) if s != seat]
    top_rival = max(rivals, key=lambda s: scores[s])
    result = []
    for tile in obs["tiles"]:
        name, pts, owner = tile["name"], tile["points"], tile["owner"]
        if owner is None:
            after = list(scores)
            after[seat] += pts
            result.append(("take", name, pts + _final_bonus(obs, after)))
        elif late and owner != seat and owner in earlier:
            after = list(scores)
            after[seat] += pts
            after[owner] -= pts
            if final and any(after[s] >= after[seat] for s in rivals):
                continue
            weight = 2.0 if owner == top_rival else 1.5
            result.append(("steal", name, weight * pts + _final_bonus(obs, after)))
    if obs["reversal"] == "face_up":
        result.append(("reversal", "reversal", reversal))
    return result


def _final_bonus(obs: dict, after: list[int]) -> float:
    if not obs["final_round"]:
        return 0.0
    seat = obs["seat"]
    if all(after[seat] > after[s] for s in range(obs["num_players"]) if s != seat):
        # the later players may still catch up; the last player wins outright
        later = len(obs["order"]) - 1 - obs["turn_position"]
        return WIN_BONUS / (1 + later)
    return 0.0


def chips_value(obs: dict, ones: int) -> float:
    gained = min(ones, obs["chip_supply"])
    after = list(obs["scores"])
    after[obs["seat"]] += gained * CHIP_POINTS
    return gained * CHIP_POINTS + _final_bonus(obs, after)


def state_values(obs: dict, reversal: float = REVERSAL_VALUE) -> np.ndarray:
    """Best value of stopping with each dice state."""
    opts = options(obs, reversal)
    chip_vals = [chips_value(obs, k) for k in range(6)]
    values = np.empty(len(STATES))
    for i, state in enumerate(STATES):
        best = chip_vals[state.count(1)]
        for _, name, value in opts:
            if value > best and satisfies(name, state):
                best = value
        values[i] = best
    return values


def _one_more_roll(v0: np.ndarray) -> np.ndarray:
    """Value of each state with one reroll left, playing optimally."""
    expected = TRANSITIONS @ v0
    best_reroll = np.maximum.reduceat(expected, STATE_STARTS)
    return np.maximum(v0, best_reroll)


def best_take(legal: list, values: dict, chips: float, reversal: float = REVERSAL_VALUE) -> int:
    """The take step's choice: the action of the highest value, from the
    options' values by (kind, tile) and the chips' value."""
    best_index, best_value = 0, -1.0
    for i, action in enumerate(legal):
        if action == "chips":
            value = chips
        elif action == "reversal":
            value = reversal
        else:
            value = values.get((action[0], action[1]), TILES[action[1]][0])
        if value > best_value:
            best_index, best_value = i, value
    return best_index


def choose(obs: dict, legal: list, rng: random.Random,
           reversal: float = REVERSAL_VALUE) -> int:
    """``reversal``: the reversal tile's value (the search's tuned move)."""
    if obs["step"] == "take":
        values = {(kind, name): value for kind, name, value in options(obs, reversal)}
        return best_take(legal, values, chips_value(obs, obs["dice"].count(1)), reversal)
    # roll step: stop or reroll, maximizing the expected value of the turn
    state = tuple(obs["dice"])
    v0 = state_values(obs, reversal)
    after = v0 if obs["rerolls_left"] <= 1 else _one_more_roll(v0)
    best_index, best_value = 0, v0[STATE_INDEX[state]] + 1e-9  # stop on ties
    for i, action in enumerate(legal):
        if action == STOP:
            continue
        value = float(TRANSITIONS[OPTION_ROWS[(state, tuple(action))]] @ after)
        if value > best_value:
            best_index, best_value = i, value
    return best_index
