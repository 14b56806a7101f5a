"""tile_hunt: roll dice to claim tiles, then hunt the leaders' tiles (seed 002).

Rules (RULINGS.md, "tile_hunt")
-------------------------------
3-4 players, 5 six-sided dice, 20 bonus chips (50 points each).

Tiles (points; the dice must show the pattern):

* start tiles, face up from the start: ``trio`` 200 (three of a kind),
  ``quartet`` 300 (four of a kind), ``full house`` 300, ``quintet`` 500;
* 12 normal tiles, shuffled face down: ``2-duo`` 150, ``2-trio`` 250,
  ``3-trio`` 300, ``3-quartet`` 400, ``4-trio`` 300, ``4-quartet`` 400,
  ``5-trio`` 350, ``5-quartet`` 450, ``6-quartet`` 500, ``6-quintet`` 800,
  ``straight 1-5`` 350, ``straight 2-6`` 400;
* the ``reversal`` tile (five 1s), only in the final round.

Patterns are "at least": three 4s satisfy ``4-trio`` and ``trio``; five 6s
satisfy ``6-quartet``. ``full house`` is exactly three of one number and two
of another. Straights are exact (1,2,3,4,5 or 2,3,4,5,6).

Early phase: 3 rounds with 4 players, 4 rounds with 3 players (12 turns
either way), in seat order from seat 0; each turn starts by turning the next
normal tile face up. Late phase: as many rounds again, no new tiles. Each
late round's order is by score, highest first; tied players go in the
reverse of their order in the previous round (the later one goes first).
The reversal tile is laid out at the start of the final round.

A turn: roll the 5 dice; up to two rerolls, each of any subset of the dice;
the player may stop early. Then take exactly one of:

* a face-up unowned tile the dice satisfy;
* late phase only: a start or normal tile owned by a player who is earlier
  in this round's order, which the dice satisfy (a steal); in the final round
  only if after the steal the taker is the sole leader;
* bonus chips: one per die showing 1, from the supply of 20 (what is left
  when it runs short); always allowed, even for 0 chips;
* final round only: the reversal tile with five 1s, which wins at once and
  ends the game.

Score = tile points + 50 per chip. Standings: the reversal winner first;
the rest by score, ties broken by the final round's order (earlier ranks
higher).

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* The first roll of a turn is not a decision: it happens (from ``self.rng``)
  as the turn starts, right after the early phase's tile is turned. Rerolls
  are drawn inside ``_apply``.
* Dice are indistinguishable and shown sorted; a reroll names the *values*
  of the dice rerolled. A reroll must reroll at least one die (rerolling
  nothing is "stop"). After the second reroll the player goes straight to
  the take step.
* "Sole leader" compares full scores (tiles + chips) after the steal: the
  taker's score must be strictly above every other player's.
* A stolen tile simply changes owner; it may be stolen again later by a
  player who comes after its new owner in a later round's order.
* Tiles nobody took stay face up and unowned for the rest of the game.
* Tied players at a late round's start go in the reverse of their relative
  order in the previous round (for the first late round, the early phase's
  seat order), even when more than two are tied.
* The reversal winner keeps their score as it is (the tile has no points);
  ``rank_keys`` puts them first. If a match is capped before its end, the
  tie-break uses the order of the round in progress.
* Flow: only public things decide it (dice, tiles, scores, rerolls left);
  the take step is always asked, since bonus chips are always allowed. The
  face-down tile turned at an early turn's start is declared in ``REVEALS``.
* Every player's dice and choice are seen by all: ``log`` keeps each finished
  turn (seat, final dice, what was taken, and every roll of it, first to
  last), since between two of a seat's turns a tile can be taken and stolen
  again, and in the late phase a seat can act twice; ``turn_rolls`` the
  rolls of the turn in progress. Added without a rules-version change: play,
  match IDs and replays are as before (the rolls since Dec 4; the golden
  playthroughs' observation hashes changed with them, their actions did not).

Actions
-------
Roll step (``step == "roll"``, rerolls left > 0): ``"stop"``, then tuples of
the die values to reroll, a non-empty sub-multiset of the dice, sorted,
e.g. ``(2, 5, 5)``; ordered by length, then lexicographically.

Take step (``step == "take"``): ``("take", name)`` for each unowned face-up
tile the dice satisfy (catalogue order: start tiles, then normal tiles as
listed above), then ``("steal", name)`` for each stealable tile (catalogue
order), then ``"chips"``, then ``"reversal"`` when allowed.

Observation layout (everything is public but the face-down tiles' order)
-------------------------------------------------------------------------
``seat``, ``num_players``, ``current_player`` (-1 when over), ``phase``
("early", "late" or "over"), ``round`` (0-based, over both phases),
``rounds_per_phase``, ``total_rounds``, ``final_round`` (bool), ``order``
(this round's seat order), ``previous_order`` (last round's; seat order in
round 0), ``turn_position`` (index into ``order`` of the player to act),
``step`` ("roll", "take" or "over"), ``dice`` (sorted, the current player's
dice), ``rerolls_left``, ``turn_rolls`` (the dice after each roll of the
turn in progress, first to last: the last is ``dice``), ``tiles`` (face-up
start and normal tiles in the order they appeared, each ``{"name", "points",
"owner"}`` with owner a seat or None), ``face_down`` (number of face-down
normal tiles), ``reversal`` ("aside", "face_up" or "taken"), ``winner`` (the
reversal winner's seat or None), ``chips`` (per seat), ``chip_supply``,
``scores`` (per seat: tile points + 50 per chip), ``log`` (every finished
turn, oldest first: [seat, [final dice], "chips" | "reversal" | ["take",
tile] | ["steal", tile], [the dice after each of its rolls, first to
last]]).

From an observation (``from_observation``): the face-down tiles' order is
sampled.
"""

from __future__ import annotations

from itertools import product
from typing import cast

from games.base import Action, Game, GameInfo, Observation, normalize_action, reshuffle
from games.sampling import fit

NUM_DICE = 5
CHIP_POINTS = 50
CHIP_SUPPLY = 20
STOP = "stop"
CHIPS = "chips"
REVERSAL = "reversal"

# name -> (points, kind, face value or 0 for "any", count)
TILES: dict[str, tuple[int, str, int, int]] = {
    # start tiles
    "trio": (200, "kind", 0, 3),
    "quartet": (300, "kind", 0, 4),
    "full house": (300, "full", 0, 0),
    "quintet": (500, "kind", 0, 5),
    # normal tiles
    "2-duo": (150, "kind", 2, 2),
    "2-trio": (250, "kind", 2, 3),
    "3-trio": (300, "kind", 3, 3),
    "3-quartet": (400, "kind", 3, 4),
    "4-trio": (300, "kind", 4, 3),
    "4-quartet": (400, "kind", 4, 4),
    "5-trio": (350, "kind", 5, 3),
    "5-quartet": (450, "kind", 5, 4),
    "6-quartet": (500, "kind", 6, 4),
    "6-quintet": (800, "kind", 6, 5),
    "straight 1-5": (350, "straight", 1, 0),
    "straight 2-6": (400, "straight", 2, 0),
    # the reversal tile: no points, wins at once
    "reversal": (0, "kind", 1, 5),
}
START_TILES: tuple[str, ...] = ("trio", "quartet", "full house", "quintet")
NORMAL_TILES: tuple[str, ...] = (
    "2-duo", "2-trio", "3-trio", "3-quartet", "4-trio", "4-quartet",
    "5-trio", "5-quartet", "6-quartet", "6-quintet", "straight 1-5", "straight 2-6",
)
CATALOGUE: tuple[str, ...] = START_TILES + NORMAL_TILES
CATALOGUE_INDEX = {name: i for i, name in enumerate(CATALOGUE)}


def points(name: str) -> int:
    return TILES[name][0]


def scores_of(owner: dict[str, int | None], chips: list[int]) -> list[int]:
    """Per seat, tile points plus 50 a chip, for these owners and chips."""
    totals = [CHIP_POINTS * c for c in chips]
    for name, seat in owner.items():
        if seat is not None:
            totals[seat] += points(name)
    return totals


def satisfies(name: str, dice) -> bool:
    """Whether the dice (any order) show the tile's pattern."""
    _, kind, value, count = TILES[name]
    counts = [0] * 7
    for d in dice:
        counts[d] += 1
    if kind == "kind":
        if value:
            return counts[value] >= count
        return max(counts) >= count
    if kind == "full":
        return sorted(c for c in counts if c) == [2, 3]
    # straight: exact
    return sorted(dice) == list(range(value, value + NUM_DICE))


_REROLL_OPTIONS: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {}
_SATISFIED: dict[tuple[int, ...], frozenset[str]] = {}


def reroll_options(dice) -> list[tuple[int, ...]]:
    """Every non-empty sub-multiset of the dice, sorted, by length then value."""
    key = tuple(sorted(dice))
    found = _REROLL_OPTIONS.get(key)
    if found is None:
        found = _REROLL_OPTIONS[key] = tuple(_reroll_options(key))
    return list(found)


def satisfied_tiles(dice) -> frozenset[str]:
    """Names of every tile (the reversal included) the dice satisfy; cached
    per sorted dice (252 of them)."""
    key = tuple(sorted(dice))
    found = _SATISFIED.get(key)
    if found is None:
        found = _SATISFIED[key] = frozenset(name for name in TILES if satisfies(name, key))
    return found


def _reroll_options(dice) -> list[tuple[int, ...]]:
    counts: dict[int, int] = {}
    for d in dice:
        counts[d] = counts.get(d, 0) + 1
    values = sorted(counts)
    options = []
    for picks in product(*(range(counts[v] + 1) for v in values)):
        subset = tuple(v for v, k in zip(values, picks) for _ in range(k))
        if subset:
            options.append(subset)
    options.sort(key=lambda s: (len(s), s))
    return options


def remove_values(dice, values) -> list[int]:
    """The dice left after taking out the given values (a sub-multiset)."""
    kept = list(dice)
    for v in values:
        kept.remove(v)
    return kept


def dice_text(dice) -> str:
    return ",".join(str(d) for d in dice)


class TileHunt(Game):
    INFO = GameInfo(
        slug="tile_hunt",
        title="Tile Hunt",
        min_players=3,
        max_players=4,
        rules_version="1",
        max_decisions=1000,
        seed_ref="seed 002",
    )
    REVEALS = {
        "tile turned face up": "RULINGS: each early-phase turn starts by turning "
        "the next normal tile face up",
    }

    def setup(self) -> None:
        n = self.num_players
        self.rounds_per_phase = 3 if n == 4 else 4
        self.total_rounds = 2 * self.rounds_per_phase
        self.face_down = list(NORMAL_TILES)
        self.rng.shuffle(self.face_down)
        self.face_up: list[str] = list(START_TILES)
        self.owner: dict[str, int | None] = {name: None for name in START_TILES}
        self.chips = [0] * n
        self.supply = CHIP_SUPPLY
        self.reversal = "aside"
        self.winner: int | None = None
        self.order = list(range(n))
        self.previous_order = list(range(n))
        self.pos = 0
        self.dice: list[int] = []
        self.rerolls_left = 0
        self.step = "roll"
        self.round = -1
        # the dice after each roll of the turn in progress, first to last
        self.turn_rolls: list[tuple[int, ...]] = []
        # every finished turn: (seat, its final dice, what it took:
        # "chips", "reversal", ("take", tile) or ("steal", tile), its rolls)
        self.log: list[tuple[int, tuple[int, ...], Action, tuple[tuple[int, ...], ...]]] = []
        self._start_round()

    # ---- flow ------------------------------------------------------------
    def is_late(self) -> bool:
        return self.round >= self.rounds_per_phase

    def is_final_round(self) -> bool:
        return self.round == self.total_rounds - 1

    @staticmethod
    def late_order(previous_order: list[int], totals: list[int]) -> list[int]:
        """By score, highest first; ties: later in the previous order goes first."""
        position = {seat: i for i, seat in enumerate(previous_order)}
        return sorted(previous_order, key=lambda s: (-totals[s], -position[s]))

    def _start_round(self) -> None:
        self.round += 1
        if self.round >= self.total_rounds:
            self._end_game()
            return
        self.previous_order = list(self.order)
        if self.is_late():
            self.order = self.late_order(self.previous_order, self.scores_int())
        else:
            self.order = list(range(self.num_players))
        if self.is_final_round():
            self.reversal = "face_up"
        self.pos = 0
        if self.events is not None:
            phase = "late" if self.is_late() else "early"
            final = ", final round: the reversal tile is laid out" if self.is_final_round() else ""
            self.narrate(
                f"round {self.round + 1}/{self.total_rounds} ({phase}){final}; "
                f"order {self.order}; scores {self.scores_int()}"
            )
        self._start_turn()

    def _start_turn(self) -> None:
        seat = self.order[self.pos]
        if not self.is_late() and self.face_down:
            tile = self.face_down.pop()
            self.face_up.append(tile)
            self.owner[tile] = None
            if self.events is not None:
                self.narrate(f"seat {seat} turns {tile} ({points(tile)}) face up")
        # randint(1, 6) is 1 + _randbelow(6): the same numbers, less overhead
        roll = self.rng._randbelow  # type: ignore[attr-defined]  # private, not in typeshed
        self.dice = sorted([roll(6) + 1 for _ in range(NUM_DICE)])
        self.turn_rolls = [tuple(self.dice)]
        self.rerolls_left = 2
        self.step = "roll"
        if self.events is not None:
            self.narrate(f"seat {seat} rolls {dice_text(self.dice)}")

    def _end_turn(self) -> None:
        self.pos += 1
        if self.pos >= self.num_players:
            self._start_round()
        else:
            self._start_turn()

    def _end_game(self) -> None:
        self.step = "over"
        self.rerolls_left = 0
        if self.winner is not None:
            self.narrate(f"seat {self.winner} takes the reversal tile and wins; scores {self.scores_int()}")
        else:
            self.narrate(f"game over; scores {self.scores_int()}")

    # ---- rules helpers ---------------------------------------------------
    def scores_int(self) -> list[int]:
        return scores_of(self.owner, self.chips)

    def take_actions(self) -> list[Action]:
        seat = self.order[self.pos]
        dice = self.dice
        actions: list[Action] = []
        face_up = sorted(self.face_up, key=CATALOGUE_INDEX.__getitem__)
        shown = satisfied_tiles(dice)
        owner = self.owner
        for name in face_up:
            if owner[name] is None and name in shown:
                actions.append(("take", name))
        if self.is_late():
            earlier = set(self.order[: self.pos])
            totals = self.scores_int() if self.is_final_round() else None
            for name in face_up:
                victim = self.owner[name]
                if victim is None or victim not in earlier or name not in shown:
                    continue
                if totals is not None:
                    gain = points(name)
                    after = list(totals)
                    after[seat] += gain
                    after[victim] -= gain
                    if any(after[s] >= after[seat] for s in range(self.num_players) if s != seat):
                        continue
                actions.append(("steal", name))
        actions.append(CHIPS)
        if self.reversal == "face_up" and REVERSAL in shown:
            actions.append(REVERSAL)
        return actions

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        if self.step == "over":
            return -1
        return self.order[self.pos]

    def is_terminal(self) -> bool:
        return self.step == "over"

    def legal_actions(self) -> list[Action]:
        if self.step == "over":
            return []
        if self.step == "roll":
            return [STOP, *reroll_options(self.dice)]
        return self.take_actions()

    def _apply(self, action: Action) -> None:
        seat = self.order[self.pos]
        if self.step == "roll":
            if action == STOP:
                self.step = "take"
                return
            kept = remove_values(self.dice, action)
            roll = self.rng._randbelow  # type: ignore[attr-defined]  # as randint(1, 6), see _start_turn
            kept.extend([roll(6) + 1 for _ in action])
            self.dice = sorted(kept)
            self.turn_rolls.append(tuple(self.dice))
            self.rerolls_left -= 1
            if self.events is not None:
                self.narrate(f"seat {seat} rerolls {dice_text(action)}: {dice_text(self.dice)}")
            if self.rerolls_left == 0:
                self.step = "take"
            return
        # take step
        self.log.append((seat, self.turn_rolls[-1], action, tuple(self.turn_rolls)))
        if action == CHIPS:
            gained = min(self.dice.count(1), self.supply)
            self.chips[seat] += gained
            self.supply -= gained
            if self.events is not None:
                self.narrate(f"seat {seat} takes {gained} bonus chips")
        elif action == REVERSAL:
            self.reversal = "taken"
            self.winner = seat
            self._end_game()
            return
        else:
            verb, name = action
            victim = self.owner[name]
            self.owner[name] = seat
            if self.events is None:
                pass
            elif verb == "steal":
                self.narrate(f"seat {seat} steals {name} ({points(name)}) from seat {victim}")
            else:
                self.narrate(f"seat {seat} takes {name} ({points(name)})")
        self._end_turn()

    def observation(self, player: int) -> Observation:
        return {
            "seat": player,
            "num_players": self.num_players,
            "current_player": self.current_player(),
            "phase": "over" if self.step == "over" else ("late" if self.is_late() else "early"),
            "round": self.round,
            "rounds_per_phase": self.rounds_per_phase,
            "total_rounds": self.total_rounds,
            "final_round": self.is_final_round(),
            "order": list(self.order),
            "previous_order": list(self.previous_order),
            "turn_position": self.pos,
            "step": self.step,
            "dice": list(self.dice),
            "rerolls_left": self.rerolls_left,
            "turn_rolls": [list(dice) for dice in self.turn_rolls],
            "tiles": [
                {"name": name, "points": points(name), "owner": self.owner[name]}
                for name in self.face_up
            ],
            "face_down": len(self.face_down),
            "reversal": self.reversal,
            "winner": self.winner,
            "chips": list(self.chips),
            "chip_supply": self.supply,
            "scores": self.scores_int(),
            "log": list(self.log),  # tuples pack as arrays; copied, not rebuilt
        }

    def reveals(self, action: Action, player: int) -> tuple | None:
        """Only the face-down tiles are hidden; the next turn may turn one up."""
        after = self._peek(action)
        turned = tuple(name for name in after.face_up if name not in self.face_up)
        return ("tile turned face up", turned) if turned else None

    def scores(self) -> list[float]:
        return cast("list[float]", self.scores_int())  # ints are valid float scores

    def rank_keys(self) -> list:
        totals = self.scores_int()
        position = {seat: i for i, seat in enumerate(self.order)}
        return [
            (1 if self.winner == s else 0, totals[s], -position[s])
            for s in range(self.num_players)
        ]

    def clone(self) -> TileHunt:
        twin = self._shallow_twin()
        twin.face_down = list(self.face_down)
        twin.face_up = list(self.face_up)
        twin.owner = dict(self.owner)
        twin.chips = list(self.chips)
        twin.order = list(self.order)
        twin.previous_order = list(self.previous_order)
        twin.dice = list(self.dice)
        twin.turn_rolls = list(self.turn_rolls)  # tuples, never mutated
        twin.log = list(self.log)  # entries are tuples, never mutated
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> TileHunt:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        g.rounds_per_phase = obs["rounds_per_phase"]
        g.total_rounds = obs["total_rounds"]
        g.face_up = [t["name"] for t in obs["tiles"]]
        g.owner = {t["name"]: t["owner"] for t in obs["tiles"]}
        g.face_down = [name for name in NORMAL_TILES if name not in g.owner]
        fit(g.face_down, obs["face_down"], "tile_hunt")
        rng.shuffle(g.face_down)
        g.chips = list(obs["chips"])
        g.supply = obs["chip_supply"]
        g.reversal = obs["reversal"]
        g.winner = obs["winner"]
        g.order = list(obs["order"])
        g.previous_order = list(obs["previous_order"])
        g.pos = obs["turn_position"]
        g.dice = list(obs["dice"])
        g.rerolls_left = obs["rerolls_left"]
        g.step = obs["step"]
        g.round = obs["round"]
        g.turn_rolls = [tuple(dice) for dice in obs["turn_rolls"]]
        g.log = [(seat, tuple(dice), taken if isinstance(taken, str) else tuple(taken),
                  tuple(tuple(roll) for roll in rolls))
                 for seat, dice, taken, rolls in obs["log"]]
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> TileHunt:
        state = self._fresh_copy_for_redeal(seed)
        # the only hidden thing; future dice reseeded
        (state.face_down,) = reshuffle(state.rng, [state.face_down])
        return state

    # ---- people ------------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        action = normalize_action(action)
        seat = self.current_player()
        who = f"seat {seat}"
        if action == STOP:
            return f"{who} stops with {dice_text(self.dice)}"
        if action == CHIPS:
            gained = min(self.dice.count(1), self.supply)
            return f"{who} takes {gained} bonus chips ({gained * CHIP_POINTS})"
        if action == REVERSAL:
            return f"{who} takes the reversal tile (five 1s) and wins"
        if isinstance(action, tuple) and action and action[0] in ("take", "steal"):
            name = action[1]
            if action[0] == "steal":
                return f"{who} steals {name} ({points(name)}) from seat {self.owner[name]}"
            return f"{who} takes {name} ({points(name)})"
        kept = remove_values(self.dice, action)
        keeping = f" keeping {dice_text(kept)}" if kept else " (all dice)"
        return f"{who} rerolls {dice_text(action)}{keeping}"
