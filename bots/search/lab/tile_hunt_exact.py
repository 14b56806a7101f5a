"""tile_hunt: the final round valued exactly, for the last seats to play.

In the late phase nothing is hidden (every normal tile is face up), so what
is left of the final round is dice and the other players' choices. The
other players are modelled as the heuristic, whose turn is a function of
the public state and its dice: it plays the dice by its DP over its own
values of the ends and takes the end of the highest value. So the chance
of each way another player's turn ends is exact: the first roll's
distribution over the 252 sorted dice, moved through the heuristic's two
reroll choices (each a kept set of dice and its outcome distribution),
then its take for every final dice. Applying each end and recursing over
the players left gives, for every way the searching seat's turn can end,
its exact expected score against each other player (the search's
scoring: 1 ahead, 1/2 level, 0 behind).

The cost grows as the number of ends to the power of the players left:
valuing every end of a turn takes about 1 ms with no seat after it, 6 ms
with one, 50 ms with two and over 2 s with three.

It is a probe, not part of the bot: ``python -m
bots.search.lab.tile_hunt_exact --deals N`` plays the arena's matches (the search at one seat, the
heuristic at the others) and, at each of the search's final-round
decisions with at most ``--followers`` seats after it, compares the exact
value of its move, and of the default move's, with the best move's (the
DP over the exact values of the ends). Their mean shortfall per match, in
the search's scoring, is what exact play there would gain (measured:
docs/search.md).
"""

from __future__ import annotations

import argparse
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bots.heuristics import load
from bots.local_match import play_match
from bots.search.games.tile_hunt import default_move
from bots.search.games.tile_hunt.dice import TileHuntDice
from bots.search.games.tile_hunt.turn import TileHuntTurnSearch, possible_ends
from bots.search_bot import SearchBot
from games import get_game
from games.tile_hunt import CATALOGUE_INDEX, CHIP_POINTS, CHIPS, REVERSAL, points

End = tuple[str, Any]  # ("take"/"steal", tile), ("chips", gained), ("reversal", "reversal")
# ``FinalRound.last_turn`` ranks a finished match by its own copy of the
# engine's standings, as at this rules version (tests/test_tile_hunt_fast_path.py)
MIRRORS_RULES_VERSION = "1"


class FinalRound:
    """Exact values of the final round's states, the other seats playing
    the heuristic (``TileHuntDice``, the same moves as the bot)."""

    def __init__(self, dice: TileHuntDice, value: Callable[[Any], float], seat: int,
                 opponents: list[int]) -> None:
        self.dice = dice
        self.h = dice.h
        self.value = value  # the search's score of a finished match
        self.seat = seat
        self.opponents = opponents
        h = self.h
        self.first_roll = dice.kept_matrix[dice.kept_index[()]]
        self.row_index = np.arange(len(h.ROW_STATE))
        self.all_ones = dice.masks[REVERSAL]
        self.cache: dict[tuple, list[tuple[End, float]]] = {}

    # ---- one player's turn -------------------------------------------------
    def _reroll(self, p: np.ndarray, v0: np.ndarray, expected: np.ndarray) -> np.ndarray:
        """The dice distribution after one of the heuristic's roll steps:
        per dice, the first reroll of the highest expectation if it beats
        stopping (``TileHuntDice._roll_choice``), else the dice stay."""
        h, d = self.h, self.dice
        rows = expected[d.row_kept]
        block_max = np.maximum.reduceat(rows, h.STATE_STARTS)
        first = np.minimum.reduceat(np.where(rows == block_max[h.ROW_STATE], self.row_index,
                                             len(rows)), h.STATE_STARTS)
        reroll = block_max > v0 + 1e-9
        kept = d.row_kept[np.minimum(first, len(rows) - 1)]
        moved = np.bincount(kept[reroll], weights=p[reroll], minlength=len(d.kept_matrix))
        return np.where(reroll, 0.0, p) + moved @ d.kept_matrix

    def _takes(self, state: Any, values: dict, chip_vals: tuple) -> tuple[list[End], np.ndarray]:
        """The ends the heuristic's take step can reach and, per final dice,
        the index of the one it takes (``best_take``: the first action of
        the highest value, in the engine's legal order)."""
        h, d = self.h, self.dice
        ranked = sorted(values, key=lambda kn: (kn[0] != "take", CATALOGUE_INDEX.get(kn[1], 99)))
        ends: list[End] = []
        best_val = np.full(len(h.STATES), -1.0)
        best = np.full(len(h.STATES), -1)
        for kind, name in ranked:
            if kind == REVERSAL:
                continue
            better = d.masks[name] & (values[(kind, name)] > best_val)
            best, best_val = np.where(better, len(ends), best), np.where(better, values[(kind, name)],
                                                                            best_val)
            ends.append((kind, name))
        gained = np.minimum(d.ones, state.supply)
        chips = np.asarray(chip_vals, dtype=float)[d.ones]
        better = chips > best_val
        best, best_val = np.where(better, len(ends) + gained, best), np.where(better, chips,
                                                                              best_val)
        ends.extend(("chips", k) for k in range(6))
        if (REVERSAL, REVERSAL) in values:
            better = self.all_ones & (values[(REVERSAL, REVERSAL)] > best_val)
            best = np.where(better, len(ends), best)
            ends.append((REVERSAL, REVERSAL))
        return ends, best

    def turn_ends(self, state: Any) -> list[tuple[End, float]]:
        """Each way the turn starting in ``state`` can end, with its chance,
        the seat to play playing the heuristic from its first roll on."""
        seat = state.order[state.pos]
        tables, values, chip_vals = self.dice.turn(state, seat)
        # the same values come back often: another seat's end seldom changes them
        key = (tuple(values.items()), chip_vals, state.supply)
        found = self.cache.get(key)
        if found is None:
            v0, expect0, expect1 = tables
            p = self._reroll(self.first_roll, v0, expect1)
            p = self._reroll(p, v0, expect0)
            ends, best = self._takes(state, values, chip_vals)
            chance = np.bincount(best, weights=p, minlength=len(ends))
            found = [(ends[i], float(chance[i])) for i in np.flatnonzero(chance > 0)]
            if len(self.cache) > 4096:
                self.cache.clear()
            self.cache[key] = found
        return found

    # ---- the rest of the round ---------------------------------------------
    def after(self, state: Any, end: End) -> Any:
        """A copy of ``state`` (at a turn of the final round) with its turn
        ended by ``end``."""
        nxt = state.clone()
        nxt.step = "take"
        kind, name = end
        if kind == "chips":
            nxt.dice = [1] * name + [6] * (5 - name)
            nxt.apply_unchecked(CHIPS)
        elif kind == REVERSAL:
            nxt.dice = [1] * 5
            nxt.apply_unchecked(REVERSAL)
        else:
            nxt.dice = list(self.h.STATES[int(self.dice.masks[name].argmax())])
            nxt.apply_unchecked((kind, name))
        return nxt

    def worth(self, state: Any) -> float:
        """The exact expected score of ``state``: over, or at the start of a
        final-round turn (its first roll, already drawn, is ignored)."""
        if state.is_terminal():
            return self.value(state)
        if state.pos == len(state.order) - 1:
            return self.last_turn(state)
        return sum(chance * self.worth(self.after(state, end))
                   for end, chance in self.turn_ends(state))

    def last_turn(self, state: Any) -> float:
        """``worth`` of the match's last turn, its ends scored without
        playing them: the standings (reversal winner, score, then earlier
        in this round's order) against the searching seat's opponents."""
        totals = state.scores_int()
        last = state.order[-1]
        position = {seat: i for i, seat in enumerate(state.order)}
        total = 0.0
        for (kind, name), chance in self.turn_ends(state):
            after = list(totals)
            if kind == "chips":
                after[last] += CHIP_POINTS * name
            elif kind != REVERSAL:
                after[last] += points(name)
                if kind == "steal":
                    after[state.owner[name]] -= points(name)
            won = last if kind == REVERSAL else -1
            keys = {s: (s == won, after[s], -position[s]) for s in position}
            mine = keys[self.seat]
            total += chance * sum(mine > keys[o] for o in self.opponents) / len(self.opponents)
        return total

    @staticmethod
    def followers(obs: dict) -> int:
        """The seats still to play after this one in the final round."""
        return len(obs["order"]) - 1 - obs["turn_position"]


# ---- the probe -----------------------------------------------------------------
@dataclass
class Shortfall:
    """The search's final-round decisions with the same number of seats
    after them: how many, and what its moves and the default's fell short
    of the best move's exact value, summed."""

    decisions: int = 0
    search: float = 0.0
    default: float = 0.0
    left: int = 0  # decisions where the search left the default move


def exact_worths(exact: FinalRound, turns: TileHuntTurnSearch, game: Any, obs: dict,
                 legal: list) -> list[float]:
    """The exact value of each legal action of a final-round decision: the
    turn's ends valued exactly, the rest of the turn played by the DP."""
    if obs["step"] == "take":
        ends = [turns.end_of(obs, action) for action in legal]
    else:
        ends = possible_ends(obs, turns.h.options(obs))
    values = [1.0 if kind == REVERSAL else exact.worth(exact.after(game, (kind, name)))
              for kind, name in ends]
    weights = turns.end_weights(obs, legal, ends, values)
    return [sum(p * v for p, v in zip(row, values)) for row in weights]


def probe(seed: int, hero: int, ms: float, followers: int,
          found: dict[int, Shortfall]) -> None:
    """One arena match (``arena.play``'s seeds and seats), the search's
    final-round decisions measured into ``found``."""
    game = get_game("tile_hunt").new(4, seed)
    match_id = f"arena:tile_hunt:4:{seed}:{(hero,)}:"
    bot = SearchBot(ms=ms, share=1.0)
    bot.on_start({"match_id": match_id, "game": "tile_hunt", "seat": hero, "players": 4,
                  "teams": None, "limits": {"decision_ms": 1000, "cpu_s": None}})
    assert bot.searcher is not None
    turns = bot.searcher.turn_search
    assert isinstance(turns, TileHuntTurnSearch)
    exact = FinalRound(turns.dice, bot.searcher.value, hero, bot.searcher.opponents)
    rngs = [random.Random(zlib.crc32(f"{match_id}:{s}".encode())) for s in range(4)]

    def searching(obs: dict, legal: list, rng: random.Random) -> int:
        measured = (obs["final_round"] and len(legal) > 1
                    and FinalRound.followers(obs) <= followers)
        if measured:
            worth = exact_worths(exact, turns, game, obs, legal)
            default = default_move(obs, legal, random.Random(0))
        index = bot.choose(obs, legal, 1000)
        if measured:
            row = found.setdefault(FinalRound.followers(obs), Shortfall())
            row.decisions += 1
            row.search += max(worth) - worth[index]
            row.default += max(worth) - worth[default]
            row.left += index != default
        return index

    heuristic = load("tile_hunt")
    play_match(game, [searching if s == hero else heuristic for s in range(4)], rngs,
               capped=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--first-deal", type=int, default=13000)
    parser.add_argument("--ms", type=float, default=100.0)
    parser.add_argument("--followers", type=int, default=2, help="at most this many seats after")
    args = parser.parse_args()
    found: dict[int, Shortfall] = {}
    for deal in range(args.first_deal, args.first_deal + args.deals):
        for hero in range(4):
            probe(10000 + deal, hero, args.ms, args.followers, found)
    matches = 4 * args.deals
    print(f"tile_hunt, {matches} matches, the search at {args.ms:g} ms: shortfall of the "
          f"exact value a match (the search's scoring)")
    for after, row in sorted(found.items()):
        print(f"  {after} seats after: {row.decisions} decisions, search {row.search / matches:.4f},"
              f" default move {row.default / matches:.4f}, the search left the default "
              f"{row.left} times")


if __name__ == "__main__":
    main()
