"""What a bot receives, declared as data: every game's ``obs`` keys and actions.

Why this module exists: the layout of ``obs`` and ``legal`` used to live only
in each engine's docstring, in prose that nothing checked. Here every
observation key is declared once, with its type and its meaning, and every
step of a turn with the actions it offers. From that one declaration come:

* a JSON Schema (draft 2020-12) per game for ``obs`` and for an action, as
  they look on the wire (msgpack turns tuples into arrays): see
  :func:`schema_for`, which ``league games GAME --schema`` prints;
* the bot authors' pages ``docs/games/<slug>.md`` (``python -m games.docs``);
* the tests (``tests/test_game_docs.py``): seeded random games must validate,
  so an engine whose observation changes without its declaration fails.

A declaration is a function of a :class:`Kit` (the game's player counts give
the seat ranges and per-seat list lengths) returning a :class:`GameSpec`.
The types are small frozen dataclasses that know their JSON Schema and the
short label the docs print; named types (``card``, ``seat``...) are listed
with their meaning on each page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from games.base import GameInfo
from games.registry import get_game

DIALECT = "https://json-schema.org/draft/2020-12/schema"
Schema = dict[str, Any]


# ---- value types ---------------------------------------------------------------
def either(words: list[str]) -> str:
    """'a', 'a or b', 'a, b or c': labels people read."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


class Type:
    """A value type: its JSON Schema, its label in the docs, its named parts."""

    name: str = ""
    doc: str = ""

    def schema(self) -> Schema:
        raise NotImplementedError

    def label(self) -> str:
        raise NotImplementedError

    def children(self) -> tuple[Type, ...]:
        return ()

    def named(self) -> Iterator[Type]:
        """Every named type inside this one (for the legend of a page)."""
        if self.name and self.doc:
            yield self
        for child in self.children():
            yield from child.named()


@dataclass(frozen=True)
class Int(Type):
    """An integer, optionally bounded, or one of a few values."""

    lo: int | None = None
    hi: int | None = None
    values: tuple[int, ...] = ()
    name: str = ""
    doc: str = ""

    def schema(self) -> Schema:
        if self.values:
            return {"enum": list(self.values)}
        out: Schema = {"type": "integer"}
        if self.lo is not None:
            out["minimum"] = self.lo
        if self.hi is not None:
            out["maximum"] = self.hi
        return out

    def label(self) -> str:
        if self.name:
            return self.name
        if self.values:
            return either([str(v) for v in self.values])
        if self.lo is not None and self.hi is not None:
            return f"int {self.lo}..{self.hi}"
        if self.lo is not None:
            return f"int ≥ {self.lo}"
        if self.hi is not None:
            return f"int ≤ {self.hi}"
        return "int"


@dataclass(frozen=True)
class Bool(Type):
    def schema(self) -> Schema:
        return {"type": "boolean"}

    def label(self) -> str:
        return "bool"


@dataclass(frozen=True)
class Str(Type):
    """A string from a fixed set (every string in these games is an enum)."""

    values: tuple[str, ...]
    name: str = ""
    doc: str = ""

    def schema(self) -> Schema:
        return {"const": self.values[0]} if len(self.values) == 1 else {"enum": list(self.values)}

    def label(self) -> str:
        return self.name or either([json.dumps(v) for v in self.values])


def const(value: str) -> Str:
    return Str((value,))


@dataclass(frozen=True)
class Maybe(Type):
    """The inner type or null."""

    inner: Type

    def schema(self) -> Schema:
        return {"anyOf": [self.inner.schema(), {"type": "null"}]}

    def label(self) -> str:
        inner = self.inner.label()
        return f"({inner}) or null" if ":" in inner or " or " in inner else f"{inner} or null"

    def children(self) -> tuple[Type, ...]:
        return (self.inner,)


@dataclass(frozen=True)
class OneOf(Type):
    options: tuple[Type, ...]
    name: str = ""
    doc: str = ""

    def schema(self) -> Schema:
        return {"anyOf": [o.schema() for o in self.options]}

    def label(self) -> str:
        return self.name or either([o.label() for o in self.options])

    def children(self) -> tuple[Type, ...]:
        return self.options


@dataclass(frozen=True)
class ListOf(Type):
    """An array of one item type; ``caption`` replaces the default label."""

    item: Type
    min_items: int | None = None
    max_items: int | None = None
    unique: bool = False
    caption: str = ""

    def schema(self) -> Schema:
        out: Schema = {"type": "array", "items": self.item.schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.unique:
            out["uniqueItems"] = True
        return out

    def label(self) -> str:
        if self.caption:
            return self.caption
        size = ""
        if self.min_items is not None and self.min_items == self.max_items:
            size = f" × {self.min_items}"
        return f"list[{self.item.label()}]{size}"

    def children(self) -> tuple[Type, ...]:
        return (self.item,)


@dataclass(frozen=True)
class Tup(Type):
    """A fixed-length array (a tuple in the engine)."""

    items: tuple[Type, ...]

    def schema(self) -> Schema:
        n = len(self.items)
        return {
            "type": "array",
            "prefixItems": [t.schema() for t in self.items],
            "items": False,
            "minItems": n,
            "maxItems": n,
        }

    def label(self) -> str:
        return "[" + ", ".join(t.label() for t in self.items) + "]"

    def children(self) -> tuple[Type, ...]:
        return self.items


@dataclass(frozen=True)
class Field:
    """One key of a map: observation keys and the keys of nested records."""

    key: str
    type: Type
    text: str
    optional: bool = False


def with_previous(log: Field, unit: str) -> tuple[Field, Field]:
    """``log`` and ``previous_log``: the previous round's (game's, deal's)
    log, whole, so what came after a seat's last decision in it is seen."""
    return log, Field("previous_log", log.type,
                      f"The previous {unit}'s `log`, whole ([] in the first): what happened after a seat's "
                      f"last decision in it.")


@dataclass(frozen=True)
class Record(Type):
    """A map with fixed keys; its fields are documented as ``parent.key`` rows."""

    fields: tuple[Field, ...]
    name: str = "object"

    def schema(self) -> Schema:
        return object_schema(self.fields)

    def label(self) -> str:
        return self.name

    def children(self) -> tuple[Type, ...]:
        return tuple(f.type for f in self.fields)


def record(*fields: Field) -> Record:
    return Record(tuple(fields))


def object_schema(fields: tuple[Field, ...]) -> Schema:
    """A strict object: every non-optional key required, nothing else allowed."""
    return {
        "type": "object",
        "properties": {f.key: {"description": f.text, **f.type.schema()} for f in fields},
        "required": [f.key for f in fields if not f.optional],
        "additionalProperties": False,
    }


# ---- the shared vocabulary -------------------------------------------------------
NONNEG = Int(lo=0)
BOOL = Bool()
SCORE = Int()
TENNOS_DOC = (
    "a TENNOS card id, suit * 13 + rank - 1, suits spade, heart, diamond, club, "
    "leaf, cross (0..5), ranks 1..13 (A = 1, J = 11, Q = 12, K = 13)"
)
CARD = Int(0, 77, name="card", doc=TENNOS_DOC + "; no jokers in this game (0..77)")
CARD_OR_JOKER = Int(0, 81, name="card", doc=TENNOS_DOC + "; jokers are 78..81")


@dataclass(frozen=True)
class Kit:
    """Types that depend on a game's player counts (seats, per-seat lists)."""

    info: GameInfo

    @property
    def counts(self) -> list[int]:
        return self.info.player_counts()

    @property
    def most(self) -> int:
        return max(self.counts)

    @property
    def num_players(self) -> Int:
        if self.info.only_counts:
            return Int(values=tuple(self.counts))
        return Int(min(self.counts), self.most)

    @property
    def seat(self) -> Int:
        return Int(0, self.most - 1, name="seat", doc="a seat number, 0..num_players-1")

    @property
    def actor(self) -> Int:
        return Int(-1, self.most - 1, name="seat or -1")

    def per_seat(self, item: Type, caption: str = "") -> ListOf:
        """A list with one entry per seat, in seat order."""
        return ListOf(item, min(self.counts), self.most,
                      caption=caption or f"per seat: {item.label()}")

    def common(self) -> tuple[Field, ...]:
        """The keys every observation starts with."""
        return (
            Field("seat", self.seat, "Your seat (the observation is this seat's view)."),
            Field("num_players", self.num_players, "Number of players in the match."),
        )

    def current_player(self, when_over: str = "-1 once the game is over") -> Field:
        return Field("current_player", self.actor, f"Seat to act now; {when_over}.")

    def scores(self, text: str) -> Field:
        return Field("scores", self.per_seat(SCORE), text)


# ---- steps and actions -----------------------------------------------------------
@dataclass(frozen=True)
class Alt:
    """One kind of action offered at a step, with its meaning."""

    type: Type
    text: str


@dataclass(frozen=True)
class Step:
    """A step of a turn: when it is asked (a condition on the actor's ``obs``)
    and the actions it offers, in the order ``legal`` lists them."""

    name: str
    when_text: str
    when: Schema
    alts: tuple[Alt, ...]
    text: str = ""

    def when_schema(self) -> Schema:
        return {"type": "object", "properties": self.when, "required": sorted(self.when)}

    def action_schema(self) -> Schema:
        return union([a.type.schema() for a in self.alts])


def key_is(key: str, *values: str) -> Schema:
    """Condition: the actor's ``obs[key]`` is one of the values."""
    return {key: {"const": values[0]} if len(values) == 1 else {"enum": list(values)}}


def empty(key: str) -> Schema:
    return {key: {"type": "array", "maxItems": 0}}


def non_empty(key: str) -> Schema:
    return {key: {"type": "array", "minItems": 1}}


ALWAYS: Schema = {}


def union(schemas: list[Schema]) -> Schema:
    """anyOf of distinct schemas (one schema stays as it is)."""
    seen: dict[str, Schema] = {}
    for s in schemas:
        seen.setdefault(json.dumps(s, sort_keys=True), s)
    unique = list(seen.values())
    return unique[0] if len(unique) == 1 else {"anyOf": unique}


@dataclass(frozen=True)
class GameSpec:
    """Everything declared about one game's observation and actions."""

    slug: str
    obs: tuple[Field, ...]
    steps: tuple[Step, ...]
    obs_note: str = ""
    action_note: str = ""
    # Random moves from the start for the docs' example state.
    example_moves: int = 8

    def named_types(self) -> list[Type]:
        """Named types used anywhere, first use first, each once."""
        roots = [f.type for f in self.obs] + [a.type for s in self.steps for a in s.alts]
        found: dict[str, Type] = {}
        for t in roots:
            for named in t.named():
                found.setdefault(named.name, named)
        return list(found.values())


SPECS: dict[str, Callable[[Kit], GameSpec]] = {}


def declare(slug: str) -> Callable[[Callable[[Kit], GameSpec]], Callable[[Kit], GameSpec]]:
    def register(fn: Callable[[Kit], GameSpec]) -> Callable[[Kit], GameSpec]:
        SPECS[slug] = fn
        return fn
    return register


def spec_for(slug: str) -> GameSpec:
    """The declaration of a game (``UnknownGameError`` for an unknown slug)."""
    info = get_game(slug).INFO
    if slug not in SPECS:
        raise KeyError(f"games/schemas.py declares no schema for {slug!r}")
    return SPECS[slug](Kit(info))


def obs_schema(slug: str) -> Schema:
    """JSON Schema of ``obs`` (``game.observation(seat)`` after msgpack)."""
    spec = spec_for(slug)
    return {
        "$schema": DIALECT,
        "title": f"{slug} observation",
        "description": spec.obs_note or f"What one seat sees in {slug}.",
        **object_schema(spec.obs),
    }


def action_schema(slug: str) -> Schema:
    """JSON Schema of one element of ``legal`` (every step's actions together)."""
    spec = spec_for(slug)
    body = union([a.type.schema() for s in spec.steps for a in s.alts])
    return {
        "$schema": DIALECT,
        "title": f"{slug} action",
        "description": "One element of `legal`; tuples travel as arrays.",
        **body,
    }


def step_schemas(slug: str) -> list[Schema]:
    """Per step: the condition on the actor's obs and that step's action schema."""
    return [
        {
            "step": s.name,
            "description": s.when_text,
            "when": s.when_schema(),
            "action": s.action_schema(),
        }
        for s in spec_for(slug).steps
    ]


def schema_for(slug: str) -> Schema:
    """Both schemas of a game, as ``docs/schemas/<slug>.json`` holds them.

    ``{"game", "rules_version", "obs", "action", "steps"}``: ``obs`` and
    ``action`` are standalone draft 2020-12 schemas; ``steps`` says, for each
    step of a turn, which observations ask it (``when``, a schema of the
    actor's obs) and which actions it offers. For ``league games GAME --schema``.
    """
    info = get_game(slug).INFO
    return {
        "game": slug,
        "rules_version": info.rules_version,
        "obs": obs_schema(slug),
        "action": action_schema(slug),
        "steps": step_schemas(slug),
    }

# ---- the eleven games ----------------------------------------------------------------
# Each text says what the key holds *as the engine fills it*; read the engine's
# observation() before changing one.


@declare("limit")
def _limit(k: Kit) -> GameSpec:
    value = Int(1, 9, name="value", doc="a card value 1..9 (every player owns one card of each value)")
    values = ListOf(value, max_items=9, unique=True)
    limit_card = Tup((Int(21, 51), Int(10, 20), Int(6, 12)))
    basket = ListOf(Tup((k.seat, value)))
    points = k.per_seat(NONNEG)
    return GameSpec(
        "limit",
        obs=(
            *k.common(),
            Field("round", Int(0, 11), "This round, 0-based."),
            Field("rounds", Int(values=(10, 12)), "Rounds in the match: 12 with 3-4 players, 10 with 5."),
            Field("start_player", k.seat, "This round's start player (seat round mod n)."),
            k.current_player(),
            Field("limit", limit_card,
                  "This round's limit card: [limit, 1st-place points, 2nd-place points]."),
            Field("basket", basket,
                  "The cards put into the basket this round, in play order, as [owner seat, value]. "
                  "Public, so the running sum is known; it may pass the limit (judging comes at the end)."),
            Field("hands", k.per_seat(values),
                  "Per seat, the sorted values in hand and available: neither in this round's "
                  "basket nor blocked. Public."),
            Field("blocked", k.per_seat(values),
                  "Per seat, the values that seat put into the basket last round: out of hand and "
                  "unavailable until this round ends (not listed in `hands`)."),
            Field("passes", Int(0, k.most),
                  "Passes in a row this round (a player with no available card passes automatically); "
                  "n passes in a row end the round."),
            k.scores("Per seat, total points so far."),
            Field("last_round", points, "Per seat, points of the previous round (zeros before the first)."),
            Field("last_rounds", ListOf(Tup((limit_card, basket, points)), max_items=2),
                  "The rounds the last round end closed, oldest first, as [limit card, basket, points], "
                  "each as `limit`, `basket` and `last_round`: the previous round whole, with what was put "
                  "in after a seat's last decision of it, and the empty round after it when that one ended "
                  "at once (nobody held an available card); [] before the first round ends."),
            Field("unrevealed_limits", ListOf(Int(21, 51), max_items=14, unique=True),
                  "Sorted limits of the limit cards still in the deck."),
        ),
        steps=(
            Step("turn", "Every decision.", ALWAYS, (
                Alt(Int(values=(0,)), "pass (it does not end your round: you may play again later)"),
                Alt(value, "put your card of that value into the basket; values ascending"),
            )),
        ),
        obs_note="Everything is public except the order of the limit deck.",
        example_moves=7,
    )


@declare("cat_in_the_box")
def _cat_in_the_box(k: Kit) -> GameSpec:
    rank = Int(1, 8, name="rank", doc="a card rank 1..8 (cards have no colour; five copies of each rank)")
    colour = Str(("red", "blue", "yellow", "green"), name="colour",
                 doc='a board row, in board order: "red" (trump), "blue", "yellow", "green"')
    play = Tup((k.seat, rank, colour))
    board_row = ListOf(Maybe(k.seat), 8, 8, caption="list[seat or null] × 8")

    def tricks(winner: Type, winner_text: str) -> ListOf:
        return ListOf(record(
            Field("leader", k.seat, "Seat that led the trick."),
            Field("plays", ListOf(play, max_items=4), "[seat, rank, declared colour] in play order."),
            Field("winner", winner, winner_text),
        ), max_items=8, caption="list[object]")

    return GameSpec(
        "cat_in_the_box",
        obs=(
            *k.common(),
            Field("round", Int(0, 3), "This round, 0-based."),
            Field("rounds", Int(3, 4), "Rounds in the match: one per player."),
            Field("start_player", k.seat,
                  "This round's start player (seat round mod n): first to discard, to bid and to lead."),
            Field("phase", Str(("discard", "bid", "play", "over")), "The phase of the round."),
            k.current_player(),
            Field("hand", ListOf(rank, max_items=10), "Your cards' ranks, sorted (copies repeat)."),
            Field("my_discard", Maybe(rank), "Rank of the card you discarded face down this round; null before you discard."),
            Field("discarded", k.per_seat(BOOL), "Per seat, whether that player has discarded this round (the card stays secret)."),
            Field("hand_sizes", k.per_seat(Int(0, 10)), "Per seat, cards in hand."),
            Field("set_aside", Int(values=(0, 10)), "Cards set aside unseen this round: 10 with 3 players, else 0."),
            Field("bids", k.per_seat(Maybe(Int(1, 3))), "Per seat, the public bid (1-3 tricks); null until made."),
            Field("board", Record(tuple(
                Field(c, board_row, f"Owners of the {c} spaces for ranks 1..8 (null = empty).")
                for c in ("red", "blue", "yellow", "green")
            ), name="board"), "The board: for each colour row, the seat whose chip marks each rank's space."),
            Field("voids", k.per_seat(ListOf(colour, max_items=4, unique=True)),
                  "Per seat, the colours that seat is void in this round (may not declare), in board order."),
            Field("leader", k.seat, "Seat leading the current trick (the start player before the play phase)."),
            Field("led_colour", Maybe(colour), "The colour declared by the current trick's leader; null before the lead."),
            Field("trick", ListOf(play, max_items=4), "The current trick so far: [seat, rank, declared colour] in play order."),
            Field("tricks", tricks(k.seat, "Seat that won the trick."), "This round's finished tricks."),
            Field("trick_number", Int(0, 8), "Tricks finished this round (the current trick's 0-based index)."),
            Field("tricks_won", k.per_seat(Int(0, 8)), "Per seat, tricks won this round."),
            k.scores("Per seat, cumulative points of the finished rounds (a round in progress adds nothing)."),
            Field("last_round", Maybe(k.per_seat(SCORE)), "Per seat, points of the previous round; null before the first."),
            Field("last_dobon", Maybe(k.seat), "Seat that caused dobon in the previous round, or null."),
            Field("last_tricks", tricks(Maybe(k.seat), "Seat that won the trick; null for the trick dobon voided."),
                  "The previous round's tricks, whole ([] before the first), the trick voided by dobon "
                  "(if any) last: what happened after a seat's last decision in it."),
        ),
        steps=(
            Step("discard", '`phase` is "discard": each player, from the start player in seat order.',
                 key_is("phase", "discard"),
                 (Alt(Tup((const("discard"), rank)), "discard one card of that rank face down; ranks ascending"),)),
            Step("bid", '`phase` is "bid": each player, from the start player in seat order.',
                 key_is("phase", "bid"),
                 (Alt(Tup((const("bid"), Int(1, 3))), "bid 1, 2 or 3 tricks (public)"),)),
            Step("play", '`phase` is "play".', key_is("phase", "play"),
                 (Alt(Tup((const("play"), rank, colour)),
                      "play a card of that rank declared as that colour, onto the free space (colour, rank); "
                      "ordered by rank, then colour in board order (at most 32)"),)),
        ),
        obs_note="Discards, the card kept unplayed and the set-aside cards are never revealed.",
        example_moves=10,
    )


@declare("tile_hunt")
def _tile_hunt(k: Kit) -> GameSpec:
    from games.tile_hunt import CATALOGUE, TILES

    die = Int(1, 6, name="die", doc="a die value 1..6")
    tile = Str(CATALOGUE, name="tile", doc="a tile name: " + ", ".join(
        f'"{name}" ({TILES[name][0]})' for name in CATALOGUE))
    seats = ListOf(k.seat, min(k.counts), k.most, unique=True)
    taken = OneOf((const("chips"), const("reversal"), Tup((const("take"), tile)), Tup((const("steal"), tile))))
    return GameSpec(
        "tile_hunt",
        obs=(
            *k.common(),
            k.current_player(),
            Field("phase", Str(("early", "late", "over")), "The phase of the game."),
            Field("round", Int(0, 8),
                  "This round, 0-based over both phases; once the game is over it is `total_rounds` "
                  "if it ended after the last round."),
            Field("rounds_per_phase", Int(values=(3, 4)), "Rounds in each phase: 4 with 3 players, 3 with 4."),
            Field("total_rounds", Int(values=(6, 8)), "Rounds in the game (both phases)."),
            Field("final_round", BOOL, "Whether this is the final round (the reversal tile is out)."),
            Field("order", seats, "This round's seat order (seat order in the early phase, by score in the late one)."),
            Field("previous_order", seats, "Last round's seat order (seat order in round 0)."),
            Field("turn_position", Int(0, k.most),
                  "Index into `order` of the player to act (num_players once the game has ended after the last turn)."),
            Field("step", Str(("roll", "take", "over")), "The current player's step."),
            Field("dice", ListOf(die, 5, 5), "The current player's five dice, sorted (the last turn's dice once over)."),
            Field("rerolls_left", Int(0, 2), "Rerolls the current player has left this turn."),
            Field("turn_rolls", ListOf(ListOf(die, 5, 5), 1, 3, caption="list[list[die]]"),
                  "The dice (sorted) after each roll of the turn in progress, first to last: the last is "
                  "`dice` (the last turn's once over)."),
            Field("tiles", ListOf(record(
                Field("name", tile, "The tile."),
                Field("points", Int(150, 800), "Its points."),
                Field("owner", Maybe(k.seat), "Seat owning it, or null if unowned."),
            ), max_items=16, caption="list[object]"),
                  "The face-up start and normal tiles, in the order they appeared (start tiles first)."),
            Field("face_down", Int(0, 12), "Number of normal tiles still face down."),
            Field("reversal", Str(("aside", "face_up", "taken")), "Where the reversal tile is."),
            Field("winner", Maybe(k.seat), "Seat that took the reversal tile (and won), or null."),
            Field("chips", k.per_seat(Int(0, 20)), "Per seat, bonus chips held (50 points each)."),
            Field("chip_supply", Int(0, 20), "Bonus chips left in the supply."),
            Field("scores", k.per_seat(NONNEG), "Per seat, tile points + 50 per chip."),
            Field("log", ListOf(Tup((k.seat, ListOf(die, 5, 5), taken, ListOf(ListOf(die, 5, 5), 1, 3))),
                                caption='list[[seat, list[die], "chips" or "reversal" or ["take", tile] or '
                                        '["steal", tile], list[list[die]]]]'),
                  "Every finished turn, oldest first: the seat, its final dice (sorted), what it took, and "
                  "the dice after each of its rolls, first to last."),
        ),
        steps=(
            Step("roll", '`step` is "roll" (the first roll is automatic; up to two rerolls).',
                 key_is("step", "roll"), (
                     Alt(const("stop"), "keep the dice and go to the take step"),
                     Alt(ListOf(die, 1, 5, caption="list[die]"),
                         "reroll dice showing these values (a non-empty sub-multiset of the dice, sorted), "
                         "e.g. [2, 5, 5]; ordered by length, then lexicographically. After the second "
                         "reroll the take step follows by itself"),
                 )),
            Step("take", '`step` is "take".', key_is("step", "take"), (
                Alt(Tup((const("take"), tile)), "take that unowned face-up tile the dice satisfy (catalogue order)"),
                Alt(Tup((const("steal"), tile)),
                    "late phase: steal that tile from a player earlier in this round's order (catalogue order; "
                    "in the final round only if you become the sole leader)"),
                Alt(const("chips"), "take one bonus chip per die showing 1 (always offered, even for 0 chips)"),
                Alt(const("reversal"), "final round, five 1s: take the reversal tile and win at once"),
            )),
        ),
        obs_note="Everything is public except the order of the face-down tiles.",
        example_moves=5,
    )


@declare("grazia")
def _grazia(k: Kit) -> GameSpec:
    cards = ListOf(CARD, unique=True)
    return GameSpec(
        "grazia",
        obs=(
            *k.common(),
            k.current_player("-1 at the end"),
            Field("hand", cards, "Your cards, sorted."),
            Field("pile_size", NONNEG, "Cards in your own face-down draw pile (unseen even by you)."),
            Field("hand_sizes", k.per_seat(NONNEG), "Per seat, cards in hand."),
            Field("pile_sizes", k.per_seat(NONNEG), "Per seat, cards in the draw pile."),
            Field("field", ListOf(ListOf(CARD, max_items=13, unique=True), 6, 6, caption="per suit: list[card]"),
                  "Per suit (spade..cross), the cards played on that pile, oldest first."),
            Field("tops", ListOf(Int(-1, 77), 6, 6, caption="per suit: card or -1"),
                  "Per suit, the pile's top card, or -1 while it is empty."),
            Field("out_of_play", ListOf(CARD, max_items=k.most - 1, unique=True),
                  "The face-up remainder of the deal (out of play), sorted."),
            Field("penalties", k.per_seat(NONNEG), "Per seat, number of penalised plays (2 points each)."),
            Field("scores", k.per_seat(Int(hi=0)),
                  "Per seat, as it stands: -(cards in hand and pile) - 2 x penalties."),
            Field("run", ListOf(CARD, max_items=13, unique=True),
                  "Cards placed so far in the play being made, in order; [] between plays."),
            Field("log", ListOf(Tup((k.seat, ListOf(CARD, max_items=13, unique=True,
                                                     caption="list[card]"))),
                                caption="list[[seat, list[card]]]"),
                  "Every finished turn, oldest first: the seat and the cards it played, in order; "
                  "[] for a pass. The play in progress is `run`."),
            Field("run_penalised", BOOL, "Whether the play being made costs a penalty."),
            Field("end_triggered", BOOL, "Whether a player has passed with an empty pile (the final turns are on)."),
            Field("trigger_seat", Int(-1, k.most - 1), "Seat that triggered the end, or -1."),
            Field("final_turns_left", Int(-1, k.most - 1), "Turns still to come once the end is triggered, else -1."),
            Field("turn", NONNEG, "Turns completed so far."),
            Field("first_turn_order", ListOf(k.seat, min(k.counts), k.most, unique=True),
                  "Seats in the order of their first turn (always 0, 1, ..., n-1): the tie-break, later is better."),
        ),
        steps=(
            Step("start", "Start of a turn: `run` is empty.", empty("run"), (
                Alt(const("pass"), "pass (then draw from your pile; with an empty pile this triggers the end)"),
                Alt(CARD, "play this card from hand as the lowest card of a play; cards ascending"),
            )),
            Step("run", "A play is open: `run` is not empty.", non_empty("run"), (
                Alt(const("stop"), "end the play (then draw from your pile)"),
                Alt(CARD, "add the next card of the run (same suit, rank + 1), offered only if you hold it"),
            ), text="This step is asked even when you do not hold the next card (then `\"stop\"` is the only "
                    "action), so the flow of the game reveals nothing about your hand. It is skipped only "
                    "when everyone can see the run cannot go on: after a K, or when the next card is face up."),
        ),
        example_moves=8,
    )


@declare("target")
def _target(k: Kit) -> GameSpec:
    play = Tup((k.seat, CARD))
    return GameSpec(
        "target",
        obs=(
            *k.common(),
            k.current_player("-1 at the end"),
            Field("phase", Str(("choose", "play", "discard", "over")), "The phase of the round."),
            Field("start_player", k.seat, "This round's start player (SP): the previous round's winner."),
            Field("round", NONNEG, "This round, 0-based."),
            Field("revealed", ListOf(CARD, max_items=3, unique=True),
                  "The 3 revealed cards while the SP chooses the target (sorted), else []."),
            Field("target", Int(-1, 77), "This round's target card, or -1 before it is chosen."),
            Field("plays", ListOf(play), "This round's plays, [seat, card] in play order."),
            Field("hand", ListOf(CARD, max_items=5, unique=True), "Your cards, sorted."),
            Field("hand_sizes", k.per_seat(Int(0, 5)), "Per seat, cards in hand."),
            Field("targets", k.per_seat(ListOf(CARD, max_items=5, unique=True)),
                  "Per seat, the target cards held (public), sorted."),
            Field("scores", k.per_seat(Int(0, 5)), "Per seat, targets held; 5 wins."),
            Field("deck_size", NONNEG, "Cards in the face-down deck."),
            Field("discard_size", NONNEG, "Cards in the discard pile (face up and face down)."),
            Field("discard_face_up", ListOf(CARD, unique=True), "The face-up cards in the discard pile, sorted."),
            Field("my_face_down", ListOf(CARD, unique=True),
                  "The cards you discarded face down that are still in the discard pile, sorted."),
            Field("discarded", k.per_seat(Int(0, 2)), "Per seat, cards that player discarded face down this round."),
            Field("refills", NONNEG, "Times the deck was rebuilt from the discard pile."),
            Field("last_round", Maybe(record(
                Field("target", CARD, "The target card."),
                Field("plays", ListOf(play), "[seat, card] in play order."),
                Field("winner", k.seat, "Seat that won the target."),
                Field("discarded", Maybe(k.per_seat(Int(0, 2))),
                      "Per seat, cards discarded face down after that round; null while those "
                      "discards are still being made (see `discarded`) or when the game ended there."),
            )), "The previous round (the one just judged, during the discards), or null before the first is judged."),
        ),
        steps=(
            Step("choose", '`phase` is "choose": the start player picks the target.', key_is("phase", "choose"),
                 (Alt(CARD, "choose this revealed card as the target; ascending"),)),
            Step("play", '`phase` is "play": each player from the SP clockwise.', key_is("phase", "play"),
                 (Alt(CARD, "play this card from hand face up; ascending"),)),
            Step("discard", '`phase` is "discard": each player from the SP clockwise, up to two discards, '
                 "then an automatic draw back to 5.", key_is("phase", "discard"), (
                     Alt(const("stop"), "stop discarding and draw back to 5 cards"),
                     Alt(CARD, "discard this card face down; after the second the player stops by itself"),
                 )),
        ),
        example_moves=6,
    )


@declare("all_aboard")
def _all_aboard(k: Kit) -> GameSpec:
    return GameSpec(
        "all_aboard",
        obs=(
            *k.common(),
            Field("round", Int(0, 5), "This round, 0-based."),
            Field("rounds", Int(2, 6), "Rounds in the match: one per player."),
            Field("start_player", k.seat, "This round's start player (seat round mod n)."),
            k.current_player(),
            Field("field", CARD_OR_JOKER, "The field card (the last card played onto the field)."),
            Field("field_red", BOOL, "Whether the field card is red (a red signal)."),
            Field("hand", ListOf(CARD_OR_JOKER, max_items=8, unique=True), "Your cards, sorted."),
            Field("hand_sizes", k.per_seat(Int(0, 8)), "Per seat, cards in hand."),
            Field("certificates", k.per_seat(NONNEG),
                  "Per seat, certificates earned this round (face down, unseen by all; 1 point each)."),
            Field("deck_size", NONNEG, "Cards left in the deck; the round ends when it is empty."),
            Field("passes", Int(0, k.most), "Passes in a row (passing is automatic); n end the round."),
            Field("turn_plays", NONNEG, "Cards the current player has played so far this turn."),
            Field("played", ListOf(CARD_OR_JOKER, 1, unique=True),
                  "Cards played onto the field this round, in order, the starting field card first."),
            *with_previous(Field("log", ListOf(Tup((k.seat, ListOf(CARD_OR_JOKER, unique=True, caption="list[card]"))),
                                caption="list[[seat, list[card]]]"),
                  "This round's finished turns, oldest first: the seat and the cards it laid, in order; "
                  "[] for a pass (a seat with no legal card is skipped without being asked)."), "round"),
            k.scores("Per seat, total of the completed rounds (the round in progress depends on hidden hands)."),
            Field("last_round", k.per_seat(SCORE), "Per seat, points of the previous round (zeros before the first)."),
        ),
        steps=(
            Step("play", "Every decision (a player with no legal card passes automatically).", ALWAYS, (
                Alt(CARD_OR_JOKER,
                    "play this card now; ascending. On a red field a red card means option (i): play every "
                    "card of that card's suit, this card last; any other card is a single play. Only the "
                    "lowest joker in hand is offered"),
            )),
        ),
        obs_note="Hands, the deck and certificates are hidden; everything played is public.",
        example_moves=6,
    )


@declare("tenos_square")
def _tenos_square(k: Kit) -> GameSpec:
    card = Int(0, 74, name="card", doc=TENNOS_DOC + "; only ranks A..10 are used (60 cards)")
    return GameSpec(
        "tenos_square",
        obs=(
            *k.common(),
            k.current_player(),
            Field("phase", Str(("centre", "exchange", "put", "take", "play", "place", "over")),
                  "The step of the seat to act (see Actions)."),
            Field("deal", Int(0, 3), "This deal, 0-based."),
            Field("deals", Int(3, 4), "Deals in the game: one per player."),
            Field("dealer", k.seat, "This deal's dealer (seat deal mod n)."),
            Field("start_player", k.seat,
                  "This deal's start player: the dealer's left neighbour in the first deal, later the "
                  "player with the lowest individual total (ties: the first from the dealer's left)."),
            Field("partner", Maybe(k.seat), "Your partner's seat (opposite) with 4 players; null with 3."),
            Field("hand", ListOf(card, max_items=3, unique=True), "Your cards, sorted."),
            Field("hand_sizes", k.per_seat(Int(0, 3)), "Per seat, cards in hand."),
            Field("rows", k.per_seat(ListOf(Maybe(card), 8, 9), caption="per seat: list[card or null]"),
                  "Per seat, per place left to right: the card if face up, null if face down "
                  "(your own face-down cards are unknown to you too)."),
            Field("row_scores", k.per_seat(NONNEG), "Per seat, the row's score as it stands (face-down places ignored)."),
            Field("centre", ListOf(card, unique=True), "The face-up centre cards, sorted."),
            Field("centre_put", k.per_seat(BOOL), "Per seat, whether that player has put their secret centre card this deal."),
            Field("my_centre_card", Maybe(card), "Your own secret centre card this deal, or null."),
            Field("exchange_put", ListOf(card, max_items=2, unique=True),
                  "Cards put so far in the exchange in progress."),
            Field("playing", Maybe(card), "The card being played (public once chosen), or null."),
            *with_previous(Field("log", ListOf(OneOf((
                      Tup((k.seat, const("exchange"), ListOf(card, 2, 2, unique=True), OneOf((card, const("deck"))))),
                      Tup((k.seat, const("place"), card, Int(0, 8))))),
                      caption='list[[seat, "exchange", [card, card], card or "deck"] or [seat, "place", card, place]]'),
                  "This deal's public steps since the centre was revealed, oldest first: an exchange (the two "
                  "cards put, then the centre card taken, or \"deck\" for the deck's top card taken blind) "
                  "and a card laid face up on a place (0-based) of that seat's row."), "deal"),
            Field("deck_size", NONNEG, "Cards in the deck (its top card is a blind exchange candidate)."),
            Field("scores", k.per_seat(NONNEG), "Per seat; with 4 players the team total (own + partner)."),
            Field("totals", k.per_seat(NONNEG), "Per seat, individual cumulative score of finished deals."),
            Field("last_deal_points", Maybe(k.per_seat(NONNEG)), "Per seat, points of the last finished deal, or null."),
            Field("went_out", ListOf(k.seat, max_items=4), "Seat that went out in each finished deal, in order."),
        ),
        steps=(
            Step("centre", '`phase` is "centre": set-up, each player in seat order from the start player.',
                 key_is("phase", "centre"),
                 (Alt(Tup((const("centre"), card)), "put that hand card face down in the centre (secret)"),)),
            Step("exchange", '`phase` is "exchange": start of a turn with 2+ cards in hand.',
                 key_is("phase", "exchange"), (
                     Alt(const("no_exchange"), "go straight to playing"),
                     Alt(const("exchange"), "put 2 hand cards face up in the centre, then take 1 candidate"),
                 )),
            Step("put", '`phase` is "put": only when the cards still to put are not the whole hand. '
                 "A player exchanges with exactly 2 cards in hand, which are then put without a "
                 "decision, so in practice this step is never asked.",
                 key_is("phase", "put"),
                 (Alt(Tup((const("put"), card)), "put that hand card face up in the centre"),)),
            Step("take", '`phase` is "take": the end of an exchange.', key_is("phase", "take"), (
                Alt(Tup((const("take"), card)), "take that face-up centre card (the two just put included); ascending"),
                Alt(const("deck"), "take the deck's top card blind"),
            )),
            Step("play", '`phase` is "play": only with 2+ cards in hand (one card is played automatically).',
                 key_is("phase", "play"),
                 (Alt(Tup((const("play"), card)), "play that hand card (it is public from now on)"),)),
            Step("place", '`phase` is "place".', key_is("phase", "place"),
                 (Alt(Tup((const("place"), Int(0, 8))),
                      "lay the played card face up on your face-down place i (0-based, left to right) and take "
                      "the card that was there into hand; the place decides who moves next"),)),
        ),
        example_moves=6,
    )


@declare("twin_shoot")
def _twin_shoot(k: Kit) -> GameSpec:
    card = Int(0, 77, name="card", doc=TENNOS_DOC + "; 4 players use ranks 7..K and A, 6 players 3..K and A")
    team = Int(0, k.most // 2 - 1, name="team", doc="a team index: team t is seats 2t and 2t+1")
    per_team = ListOf(NONNEG, min(k.counts) // 2, k.most // 2, caption="per team: int")
    pair = ListOf(card, 2, 2, unique=True)
    tricks_played = ListOf(Tup((k.seat, ListOf(card, min(k.counts), k.most), k.seat)), max_items=10)
    return GameSpec(
        "twin_shoot",
        obs=(
            *k.common(),
            Field("team", team, "Your team (seat // 2)."),
            Field("partner", k.seat, "Your partner's seat (seat xor 1)."),
            Field("hand_number", Int(0, 40), "This hand, 0-based (hands scored so far)."),
            Field("max_hands", Int(values=(40,)), "The game ends after at most this many hands."),
            Field("phase", Str(("bid", "open", "play", "over")), "The phase of the hand."),
            Field("opening_leader", k.seat, "This hand's opening leader."),
            k.current_player(),
            Field("hand", ListOf(card, max_items=12, unique=True), "Your cards, sorted (without your bid cards)."),
            Field("hand_sizes", k.per_seat(Int(0, 12)), "Per seat, cards in hand."),
            Field("bid_cards", ListOf(card, max_items=2, unique=True), "Your bid cards so far, sorted."),
            Field("bid_card_counts", k.per_seat(Int(0, 2)), "Per seat, bid cards set aside (they lie face down: public)."),
            Field("partner_bid_cards", Maybe(pair), "Your partner's bid cards, sorted; null until every player has bid."),
            Field("bids", k.per_seat(Maybe(Int(0, 10))),
                  "Per seat, predicted tricks where you know them, else null: your own once both cards are set "
                  "aside, your partner's after bidding, an open team's members for everyone."),
            Field("open_question_team", Maybe(team), "Team asked whether to bid open this hand, or null."),
            Field("open_answers", k.per_seat(Maybe(BOOL)),
                  "Per seat, answers to the open-bid question (true = open); shown for your own team only, null otherwise."),
            Field("open_team", Maybe(team), "Team whose bid is open this hand, or null."),
            Field("open_bid_cards", k.per_seat(Maybe(pair)), "Per seat, an open team member's bid cards, else null."),
            Field("trick", ListOf(Tup((k.seat, card)), max_items=6), "The current trick, [seat, card] in play order."),
            Field("trick_leader", k.seat, "Seat leading the current trick."),
            Field("trick_order", ListOf(k.seat, min(k.counts), k.most, unique=True),
                  "Seats in playing order for this trick (the leader, then their partner, ...)."),
            Field("led_card", Maybe(card), "The card led to the current trick, or null."),
            Field("follow_mode", Str(("none", "suit", "rank")), "The follow fixed so far in this trick."),
            Field("tricks_won", k.per_seat(Int(0, 10)), "Per seat, tricks won this hand."),
            Field("tricks_played", tricks_played,
                  "This hand's completed tricks as [leader, [cards in play order], winner]; the cards' seats "
                  "follow the trick order of that leader."),
            Field("scores", k.per_seat(NONNEG), "Per seat, the team's total."),
            Field("team_scores", per_team, "Per team, the total."),
            Field("last_hand", Maybe(record(
                Field("bid_cards", k.per_seat(pair), "Per seat, the bid cards (revealed at scoring)."),
                Field("bids", k.per_seat(Int(0, 10)), "Per seat, predicted tricks."),
                Field("tricks", k.per_seat(Int(0, 10)), "Per seat, tricks won."),
                Field("points", per_team, "Per team, points of the hand."),
                Field("open_team", Maybe(team), "The open team, or null."),
                Field("tricks_played", tricks_played,
                      "Its tricks, whole, as in `tricks_played`: what happened after a seat's last card."),
            )), "The previous hand, revealed; null before the first scoring."),
        ),
        steps=(
            Step("bid", '`phase` is "bid": each player in seat order from the opening leader, two steps each.',
                 key_is("phase", "bid"),
                 (Alt(card, "set this card aside face down as a bid card; ascending"),)),
            Step("open", '`phase` is "open": the members of the team alone in last place are asked, one at '
                 "a time, whether to bid open; the bid is open only if both say yes.", key_is("phase", "open"), (
                Alt(const("open"), "yes, bid open"),
                Alt(const("closed"), "no, keep the bid closed"),
            )),
            Step("play", '`phase` is "play".', key_is("phase", "play"),
                 (Alt(card, "play this card (only the cards the follow rules allow); ascending"),)),
        ),
        example_moves=11,
    )


@declare("tateyoko")
def _tateyoko(k: Kit) -> GameSpec:
    x = Int(name="x", doc="a grid column; the first card is at (0, 0) and x grows to the right")
    y = Int(name="y", doc="a grid row; y grows upwards")
    placed = Tup((x, y, CARD))
    place = Tup((CARD, x, y))
    return GameSpec(
        "tateyoko",
        obs=(
            *k.common(),
            k.current_player(),
            Field("game", Int(0, 6), "The current game, 0-based."),
            Field("games", Int(3, 7), "Games in the match: one per player."),
            Field("start_player", k.seat, "This game's start player (seat game mod n)."),
            Field("hand", ListOf(CARD, unique=True), "Your cards, sorted."),
            Field("hand_sizes", k.per_seat(NONNEG), "Per seat, cards in hand."),
            Field("deck_size", NONNEG, "Cards in the face-down deck."),
            Field("grid", ListOf(placed, 1, caption="list[[x, y, card]]"),
                  "Every card on the grid as [x, y, card], sorted by x then y."),
            Field("turn", ListOf(placed, caption="list[[x, y, card]]"),
                  "Cards placed so far in the current turn, in order; [] between turns."),
            *with_previous(Field("log", ListOf(Tup((k.seat, ListOf(CARD, unique=True, caption="list[card]"))),
                                caption="list[[seat, list[card]]]"),
                  "This game's finished turns, oldest first: the seat and the cards it placed, "
                  "in order (`grid` says where each lies); [] for a pass. The turn in progress is `turn`."), "game"),
            Field("passes", Int(0, k.most), "Passes in a row; n end the game."),
            k.scores("Per seat, cumulative totals of the finished games."),
            Field("last_game", k.per_seat(SCORE), "Per seat, points of the previous game (zeros before the first)."),
            Field("game_over", BOOL, "Whether the match has ended."),
        ),
        steps=(
            Step("first", "First step of a turn: `turn` is empty.", empty("turn"), (
                Alt(const("pass"), "pass: draw a card if the deck has any"),
                Alt(place, "place that card on cell (x, y), any legal cell; sorted by (card, x, y)"),
            )),
            Step("more", "After a placement: `turn` is not empty.", non_empty("turn"), (
                Alt(const("stop"), "end the turn"),
                Alt(place, "place that card on a cell the line rule allows next; sorted by (card, x, y)"),
            ), text="The turn ends by itself when your hand is empty (the game ends) or when no card that "
                    "is not already on the grid fits the next cell(s) of the line, a fact everyone sees. "
                    "Otherwise this step is asked even when you hold no card that fits (then `\"stop\"` "
                    "is the only action), so the end of your turn tells nobody what you hold."),
        ),
        example_moves=6,
    )


@declare("kings_order")
def _kings_order(k: Kit) -> GameSpec:
    side = Str(("left", "right"))
    cards = ListOf(CARD, unique=True)
    entry = Tup((k.seat, CARD, NONNEG, NONNEG, Maybe(side), cards, k.seat, cards, Maybe(side)))
    return GameSpec(
        "kings_order",
        obs=(
            *k.common(),
            Field("round", Int(0, 2), "This round, 0-based."),
            Field("rounds", Int(values=(3,)), "Rounds in the match."),
            Field("start_player", k.seat, "This round's start player (seat round mod n)."),
            k.current_player(),
            Field("phase", Str(("play", "discard", "name", "over")), "The step of the turn in progress."),
            Field("hand", ListOf(CARD, max_items=13, unique=True), "Your cards, by rank then suit (left end first)."),
            Field("hand_sizes", k.per_seat(Int(0, 13)), "Per seat, cards in hand."),
            Field("pending", Maybe(record(
                Field("seat", k.seat, "The player whose turn it is."),
                Field("card", CARD, "The card played."),
                Field("left", NONNEG, "Cards that lay left of it in hand."),
                Field("right", NONNEG, "Cards that lay right of it in hand."),
                Field("discard", Maybe(side), "The side discarded, or null (none yet, or an end card)."),
            )), "The current turn so far, or null between turns."),
            Field("discard_pile", cards, "Every card played or discarded this round, in order."),
            *with_previous(Field("log", ListOf(entry, caption="list[[seat, card, left, right, side, cards, seat, cards, side]]"),
                  "This round's finished turns: [seat, card played, cards left of it, cards right of it, "
                  "discarded side or null, discarded cards, named seat, handed cards, end handed from "
                  "(\"left\"/\"right\") or null]."), "round"),
            Field("score_cards", k.per_seat(ListOf(CARD, unique=True)), "Per seat, score cards (public), by rank then suit."),
            Field("set_aside", Int(0, 39), "Cards set aside unseen this round."),
            Field("round_points", k.per_seat(NONNEG), "Per seat, this round's points as they stand (zeros once over)."),
            Field("scores", k.per_seat(NONNEG), "Per seat, total as it stands (finished rounds + this round)."),
            Field("last_round", k.per_seat(NONNEG), "Per seat, points of the previous round (zeros before the first)."),
        ),
        steps=(
            Step("play", '`phase` is "play".', key_is("phase", "play"),
                 (Alt(CARD, "play this card; in hand order (by rank, then suit)"),)),
            Step("discard", '`phase` is "discard": only after a card from the middle of the hand.',
                 key_is("phase", "discard"), (
                     Alt(const("discard_left"), "discard every card left of the played card"),
                     Alt(const("discard_right"), "discard every card right of the played card"),
                 )),
            Step("name", '`phase` is "name".', key_is("phase", "name"),
                 (Alt(Tup((const("name"), k.seat)),
                      "name that player (another seat still holding cards; ascending): if an end of their "
                      "hand has the played rank, that block is handed to you"),)),
        ),
        obs_note="Hands and the set-aside cards are hidden; everything played, discarded or handed over is public.",
        example_moves=7,
    )


@declare("seven_peak")
def _seven_peak(k: Kit) -> GameSpec:
    card = Int(0, 29, name="card", doc=(
        "a 7 Peak card: suit * 6 + rank - 1, suits 0 spade, 1 diamond, 2 club, 3 heart, 4 joker, "
        "ranks 1..6 (24..29 are the jokers); the copies of a card share its code"))
    value = Int(1, 7, name="N", doc="a set's value and size, 1..7")
    pile = Int(1, 6, name="pile", doc="an area pile, named by its rank 1..6")
    cards = ListOf(card)
    six = ListOf(NONNEG, 6, 6, caption="per rank 1..6: int")
    return GameSpec(
        "seven_peak",
        obs=(
            *k.common(),
            Field("start_player", Int(values=(0,)), "The start player (always seat 0)."),
            k.current_player(),
            Field("round", NONNEG, "This round, 0-based."),
            Field("step", Str(("turn", "put", "more", "take", "value", "cards", "over")),
                  'The actor\'s step; others see "turn" while the actor is in "value"/"cards" (a play is private until complete).'),
            Field("hand", ListOf(card, max_items=12),
                  "Your cards, sorted (copies repeat); during your own play step without the cards already chosen."),
            Field("selecting", Maybe(record(
                Field("value", Maybe(value), "The chosen N, or null before it is chosen."),
                Field("cards", ListOf(card, max_items=7), "The cards chosen so far, sorted."),
            )), "Your play in progress (your own observation only), else null."),
            Field("hand_sizes", k.per_seat(Int(0, 12)), "Per seat, cards in hand (chosen-but-unplayed cards included)."),
            Field("known", k.per_seat(cards),
                  "Per seat, sorted cards publicly known to be in that hand (taken from the area)."),
            Field("sets", k.per_seat(ListOf(Tup((value, ListOf(card, 1, 7))), caption="list[[N, list[card]]]"),
                                     caption="per seat: list[[N, list[card]]]"),
                  "Per seat, the sets played, as [N, sorted cards], in play order."),
            Field("last_set", k.per_seat(Int(0, 7)), "Per seat, the previous set's size (0 if none): the next N must be at least this."),
            Field("area", ListOf(cards, 6, 6, caption="per rank 1..6: list[card]"), "The area piles of ranks 1..6, sorted."),
            Field("counts", six, "c[1..6]: the size of each pile."),
            Field("reach", ListOf(Int(lo=1), 6, 6, caption="per rank 1..6: int"),
                  "x + c[x] per rank: the highest value a card of rank x can be used as."),
            Field("vp", k.per_seat(NONNEG), "Per seat, VP from scored area piles."),
            Field("scored", k.per_seat(cards), "Per seat, the sorted cards won from the area (one VP each)."),
            Field("log", ListOf(OneOf((Tup((k.seat, const("put"), card)),
                                       Tup((k.seat, const("take"), pile, card)),
                                       Tup((k.seat, const("set"), ListOf(card, 1, 7))))),
                                caption='list[[seat, "put", card] or [seat, "take", pile, card] or [seat, "set", list[card]]]'),
                  "Every public step of the game so far, oldest first: a card put into the area, a card "
                  "taken from it, a set played (its cards sorted). The choices of a play in progress are not shown."),
            Field("scores", k.per_seat(NONNEG), "Per seat, total as it stands."),
            Field("ending", BOOL, "A hand has emptied: the round in progress is the last."),
            Field("set_aside", NONNEG, "Number of unseen set-aside cards."),
        ),
        steps=(
            Step("turn", '`step` is "turn".', key_is("step", "turn"), (
                Alt(const("pass"), "pass: put 1 card (or 2 and take 1) into the area"),
                Alt(const("play"), "play a set (offered only when one can be completed)"),
            )),
            Step("put", '`step` is "put": the first card of a pass.', key_is("step", "put"),
                 (Alt(Tup((const("put"), card)), "put a card of that kind onto its rank's pile"),)),
            Step("more", '`step` is "more": after the first card of a pass.', key_is("step", "more"), (
                Alt(const("stop"), "end the pass with one card"),
                Alt(Tup((const("put"), card)), "put a second card (then take one)"),
            )),
            Step("take", '`step` is "take": after a second card.', key_is("step", "take"),
                 (Alt(Tup((const("take"), pile, card)),
                      "take a card of that kind from the pile of that rank (1..6) into hand"),)),
            Step("value", '`step` is "value": the start of a play.', key_is("step", "value"),
                 (Alt(Tup((const("value"), value)),
                      "play a set of N, each card used as N (N at least your previous set's size)"),)),
            Step("cards", '`step` is "cards": choosing the set\'s cards one by one.', key_is("step", "cards"),
                 (Alt(Tup((const("card"), card)),
                      "add a hand card of that kind usable as N; the N-th completes the set and ends the turn"),)),
        ),
        example_moves=6,
    )
