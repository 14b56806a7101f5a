"""tile_hunt: search the ways a turn can end, and play the dice exactly.

A tile_hunt turn is dice, then one take. The heuristic already plays the
dice exactly (a DP over the 252 sorted dice) for fixed values of the ways
the turn can end; flat search over the rerolls would spend its playouts on
the dice, which the DP handles without noise. This search spends them on
the ends instead: in every sampled world each way the turn can end (each
unowned tile, each steal within reach, 0-5 chips, the reversal) is applied
and played on with the heuristic at every seat, with the same rollout
random numbers for every end, ``GameConfig.turn_depth`` rounds (to the
match's end). The dice are then played by the heuristic's DP over those
values, and the take is the end of the best value.

The values are gathered over the whole turn: a later reroll adds worlds to
the same estimates; at the take only the ends the dice allow are left. The
heuristic's move is kept unless the DP's move is better by ``z_final``
standard errors of the paired difference. A world is a dozen playouts, so
the deadline is checked between them and a world it cuts short is dropped.

It plays the final round's steps only (``GameConfig.turn_step``), where the
default move falls furthest short of exact play; the measurements that
chose this: docs/search.md.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

from bots.search.games.tile_hunt.dice import shared
from games.determinize import from_observation

CHIP_COUNTS = range(6)


@dataclass
class _Turn:
    key: tuple
    ends: list[tuple[str, Any]]  # ("take"/"steal", tile), ("chips", k), ("reversal", "reversal")
    values: list[list[float]] = field(default_factory=list)  # per world, per end


def possible_ends(obs: dict, options: list) -> list[tuple[str, Any]]:
    """Every way a turn can end: the heuristic's options (takes, steals, the
    reversal) and each number of chips the supply can give."""
    ends: list[tuple[str, Any]] = [(kind, name) for kind, name, _ in options]
    supply = obs["chip_supply"]
    ends.extend(("chips", k) for k in CHIP_COUNTS if k <= supply)
    return ends


class TileHuntTurnSearch:
    """The turn search for one seat of one match (``Searcher.turn_search``):
    it keeps the values of the turn being played."""

    def __init__(self, searcher: Any) -> None:
        self.searcher = searcher
        self.dice = shared()
        self.h = self.dice.h
        self.turn: _Turn | None = None

    # ---- playouts --------------------------------------------------------
    def _world_values(self, world: Any, ends: list, rollout_seed: int,
                      deadline: float | None = None) -> list[float] | None:
        """Every end's value in ``world``; None if the deadline passes first
        (a world is many playouts: the budget is kept to within one)."""
        dice_for = self._dice_for
        values = []
        for kind, name in ends:
            if deadline is not None and time.perf_counter() >= deadline:
                return None
            if kind == "reversal":  # wins at once: ahead of everyone
                values.append(1.0)
                continue
            state = world.clone()
            state.step = "take"
            if kind == "chips":
                state.dice = [1] * name + [6] * (5 - name)
                state.apply_unchecked("chips")
            else:
                state.dice = list(dice_for(name))
                state.apply_unchecked((kind, name))
            values.append(self.searcher.playout(state, random.Random(rollout_seed),
                                                self.searcher.config.turn_depth))
        return values

    def _dice_for(self, name: str) -> tuple[int, ...]:
        masks = self.dice.masks[name]
        return self.h.STATES[int(masks.argmax())]

    # ---- one decision ----------------------------------------------------
    def choose(self, obs: dict, legal: list, budget: Any, decisions: int,
               heuristic: int) -> tuple[int, int, int]:
        """(index to play, playouts, worlds) for a tile_hunt decision."""
        s = self.searcher
        key = (obs["round"], obs["turn_position"])
        if self.turn is None or self.turn.key != key:
            self.turn = _Turn(key, possible_ends(obs, self.h.options(obs)))
        turn = self.turn
        if obs["step"] == "take":
            # only the ends the dice allow are left: the worlds so far, and
            # new ones for those ends alone
            ends = [self.end_of(obs, action) for action in legal]
            if not set(ends) <= set(turn.ends):  # never expected: the turn's options
                return heuristic, 0, 0  # (the heuristic's) differ from the engine's
            where = [turn.ends.index(end) for end in ends]
            rows = [[w[i] for i in where] for w in turn.values]
        else:
            ends, rows = turn.ends, turn.values
        playouts = worlds = 0
        while not budget.exhausted():
            world = from_observation(s.slug, obs, s.rng.getrandbits(48), decisions)
            values = self._world_values(world, ends, s.rng.getrandbits(32), budget.deadline)
            if values is None:
                break
            rows.append(values)
            playouts += len(ends)
            worlds += 1
            budget.spend(len(ends))
        if len(rows) < s.config.min_worlds:
            return heuristic, playouts, worlds
        k = len(rows)
        mean = [sum(w[i] for w in rows) / k for i in range(len(ends))]
        weights = self.end_weights(obs, legal, ends, mean)
        return self._decide(heuristic, rows, mean, weights), playouts, worlds

    def end_of(self, obs: dict, action: Any) -> tuple[str, Any]:
        if action == "chips":
            return ("chips", min(obs["dice"].count(1), obs["chip_supply"]))
        if action == "reversal":
            return ("reversal", "reversal")
        return (action[0], action[1])

    def _decide(self, heuristic: int, rows: list[list[float]], mean: list[float],
                weights: list[list[float]]) -> int:
        """The action of the best expectation, if it beats the heuristic's
        move by ``z_final`` standard errors of their paired difference."""
        worth = [sum(p * v for p, v in zip(row, mean)) for row in weights]
        best = max(range(len(weights)), key=lambda a: (worth[a], a == heuristic))
        if best == heuristic:
            return heuristic
        k = len(rows)
        diffs = [sum((pb - ph) * v for pb, ph, v in zip(weights[best], weights[heuristic], w))
                 for w in rows]
        d = sum(diffs) / k
        var = sum((x - d) ** 2 for x in diffs) / (k - 1)
        if d <= self.searcher.config.z_final * math.sqrt(var / k):
            return heuristic
        return best

    def end_weights(self, obs: dict, legal: list, ends: list, mean: list[float]) -> list[list[float]]:
        """Per legal action, the chance of each end when the DP (over the
        ends' mean values) plays the rest of the turn."""
        np = self.dice.np
        h = self.h
        index = {end: i for i, end in enumerate(ends)}
        n = len(ends)
        if obs["step"] == "take":
            rows = []
            for action in legal:
                row = [0.0] * n
                row[index[self.end_of(obs, action)]] = 1.0
                rows.append(row)
            return rows
        # the best end for each sorted dice: its index and its one-hot weights
        value_of = np.array(mean)
        best_end = np.full(len(h.STATES), -1)
        best_val = np.full(len(h.STATES), -np.inf)
        for i, (kind, name) in enumerate(ends):
            if kind == "chips":
                mask = self.dice.ones == name if name < obs["chip_supply"] else \
                    self.dice.ones >= name
            else:
                mask = self.dice.masks[name]
            better = mask & (value_of[i] > best_val)
            best_end = np.where(better, i, best_end)
            best_val = np.where(better, value_of[i], best_val)
        stop = np.zeros((len(h.STATES), n))
        stop[np.arange(len(h.STATES)), best_end] = 1.0
        # one reroll left: reroll to the kept dice of the best expectation, else stop
        kept_matrix, row_kept = self.dice.kept_matrix, self.dice.row_kept
        after0 = kept_matrix @ stop  # per kept dice: end weights after one roll
        v0 = best_val
        e0 = kept_matrix @ v0
        choice1 = self.dice.roll_policy(v0, e0)
        one_left = np.where((choice1 == 0)[:, None], stop,
                            after0[row_kept[h.STATE_STARTS + np.maximum(choice1 - 1, 0)]])
        dice = tuple(obs["dice"])
        state = h.STATE_INDEX[dice]
        # stopping takes the best end now; a reroll leads to one reroll less
        then = after0 if obs["rerolls_left"] <= 1 else kept_matrix @ one_left
        rows = []
        for action in legal:
            if action == h.STOP:
                rows.append(stop[state].tolist())
            else:
                rows.append(then[row_kept[h.OPTION_ROWS[(dice, tuple(action))]]].tolist())
        return rows
