"""tile_hunt: the heuristic's dice play, vectorized, for the search.

The heuristic values the ways a turn can end and plays the dice exactly
for those values (a DP over the 252 sorted dice). ``TileHuntDice`` computes
the same DP with numpy and memoizes it per turn situation (every playout
of a decision meets the same tiles and values): the rollout policy
(``policy``), the tuned default move and the turn search all play the
dice through it. ``observation`` copies the keys of the engine's
observation that the heuristic reads; it mirrors the engine's rules at
``MIRRORS_RULES_VERSION`` (tests/test_tile_hunt_fast_path.py).
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np

from bots.heuristics import tile_hunt as heuristic
from games.tile_hunt import TILES, points, remove_values, satisfied_tiles

MIRRORS_RULES_VERSION = "1"


def observation(state, seat: int) -> dict:
    """The keys of the observation the tile_hunt heuristic reads."""
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
        self.np = np
        self.h = h = heuristic
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
        opts, chip_vals = self._inputs(observation(state, seat))
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


@cache
def shared() -> TileHuntDice:
    """The process's one ``TileHuntDice``, built on first use (its tables
    take a while, and its memos serve every search)."""
    return TileHuntDice()


def policy(state, seat: int, legal: list, rng: random.Random) -> int:
    """The heuristic's move, from the shared dice tables."""
    return shared().policy(state, seat, legal, rng)
