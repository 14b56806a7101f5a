"""League files and their schedule.

A league file (TOML, in ``leagues/``)::

    name = "demo"                 # unique; results are stored under it
    game = "limit"                # a registered game slug
    bots = ["random", "heuristic"]
    players = 3                   # seats per match
    deals = 20                    # seeded deals; every table plays each of them
    rotation = "balanced"         # the default: each deal in a balanced set of
                                  # seatings (see below); "cyclic": every seat
                                  # rotation of each table in one fixed cyclic
                                  # order (biased with 3+ seats: a bot always
                                  # sits after the same neighbour); "none": one
                                  # seating
    copies = { heuristic = 3 }    # optional, games without teams: seats a bot
                                  # takes at each of its tables (default 1)
    partners = "copies"           # team games only: "copies" (a bot partners a
                                  # copy of itself) or "mixed" (bots sit by seat,
                                  # so different bots partner)
    seed = 2026                   # optional: a PUBLIC seed makes the deals reproducible
                                  # (and computable by anyone who reads this file);
                                  # without it, deals derive from a secret key kept
                                  # beside the results database (results.db.secret),
                                  # which bots cannot read
    [limits]
    decision_ms = 1000            # per-decision deadline, wall clock
    startup_ms = 15000            # process start + handshake deadline
    memory_mb = 1024              # per bot slot (all its processes)
    cpu_s = 60                    # CPU seconds per match, all of a bot's processes
    processes = 64                # processes and threads per bot slot
    file_mb = 64                  # largest file, and the size of its private /tmp
    open_files = 256
    clock_ms = 0                  # a match clock per bot (0: none); each decision
                                  # may take at most what is left of it
    increment_ms = 0              # added to the clock after each decision
    bank_ms = 0                   # overage per bot per match: a decision may run
                                  # over decision_ms, the excess drawn from it
                                  # the defaults shown (harness/limits.py, which
                                  # the commands' options share); each limit has a
                                  # minimum and a maximum (LIMIT_BOUNDS there);
                                  # outside them the file is refused
    [logs]
    stderr = "faults"             # or "all": each decision's stderr too, within caps
                                  # (harness.match._StderrLog); "faults": a faulted
                                  # bot's last 4 KiB only
    [limits.bots.search]          # optional: one bot's own times (docs/leagues.md)
    time_odds = 0.5               # half of every league time; or its own
                                  # decision_ms, clock_ms, increment_ms, bank_ms.
                                  # Part of the league's identity (config()).

Tables are every combination of ``players`` bots (for team games with
``partners = "copies"``, every combination of one bot per team). With fewer
bots than seats, bots repeat: every multiset of bots that holds at least two
different bots. With ``copies``, a table is every set of at least two bots
whose seats (``copies``, else 1) fill ``players``; its copies are one bot,
rated in one row. Each table plays the same ``deals`` in each of its
seatings (duplicate deals), so each bot meets the same cards from each seat.

Seatings. With 3 or more seats, seat order matters: who plays directly after
whom. ``rotation = "balanced"`` (the default) plays each deal at each table in
a set of seatings over its n units (seats, or teams of copies) in which every
bot takes every seat equally often and sits directly after (and k seats after,
for every k) every other bot equally often, around the table: every distinct
arrangement where there are at most n(n - 1) of them (a table with copies or
repeated bots; 2 and 3 seats), else ``balanced_orders(n)``, n(n - 1) orders
(the fewest that balance both seat and neighbour: 4 seats 12, 5 seats 20,
6 seats 30, 7 seats 42). With mixed partners, every distinct arrangement
(every partnership, every seat; 24 at 4 seats). Balanced leagues sort their
bots, so the order of ``bots`` changes nothing. ``rotation = "cyclic"`` (the
rule before "balanced", kept for leagues played with it) plays the n
rotations of the table in the order of ``bots``: each bot then always sits
after the same neighbour, which moves ratings (a bot under a second name was
rated 162 Elo above itself at limit). The schedule is a generator; match IDs
derive from (league, game, rules version, seats, deal), with a tag where a
balanced set seats a table with repeated bots the same way twice.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import os
import tomllib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from games import UnknownGameError, get_game
from harness.limits import (
    LIMIT_BOUNDS,
    LIMIT_FIELDS,
    TIME_FIELDS,
    TIME_ODDS_BOUNDS,
    BotTime,
    Limits,
    ResourceLimits,
)
from harness.proc.catalog import BotBundle, BotSpec, Catalog, ManifestError, UnknownBotError
from harness.suggest import unknown_keys

LEAGUE_DIR = Path(__file__).resolve().parent.parent / "leagues"
ROTATIONS = ("balanced", "cyclic", "none")
MAX_BALANCED_UNITS = 7  # the most seats any game has; balanced_orders knows up to here

# Balanced orders of 4 and 6 labels (n(n - 1) of them), found by integer
# programming (HiGHS) under the constraints that balanced_orders states;
# tests/test_fair_tables.py checks them. Neither is a set of rotations: 4 and
# 6 are the two sizes whose complete directed graph has no decomposition into
# Hamiltonian cycles (Tillson, 1980).
_FOUND_ORDERS = {
    4: "0132 0213 0321 1023 1203 1320 2031 2130 2301 3012 3102 3210",
    6: "014325 043512 045213 053124 053241 124503 125403 140523 145302 152034 "
       "204315 210354 234105 245130 253401 301542 302451 315042 320154 351420 "
       "410235 413250 421035 432051 432510 501234 502413 521340 530142 534021",
}


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1))


@cache
def balanced_orders(n: int) -> tuple[tuple[int, ...], ...]:
    """n(n - 1) orders of the labels 0..n-1 (n >= 2) in which each label
    takes each position n - 1 times and, around the table, each label sits k
    places after each other label n times, for every k (so directly after:
    k = 1). No smaller set balances both: positions need a multiple of n
    orders, neighbours a multiple of n - 1. For prime n: every rotation of
    the cycles 0, a, 2a, ... (mod n), a = 1..n-1 (k places after a label x
    sits x + ka, and ka runs over every non-zero step as a does); for 4 and
    6, orders found by search (_FOUND_ORDERS)."""
    if n in _FOUND_ORDERS:
        return tuple(tuple(map(int, order)) for order in _FOUND_ORDERS[n].split())
    if not _is_prime(n):
        raise ValueError(f"no balanced set of seatings is known for {n} seats")
    return tuple(tuple(a * (i + shift) % n for i in range(n))
                 for a in range(1, n) for shift in range(n))


def arrangement_count(labels: Sequence[str]) -> int:
    """How many distinct orders a multiset of labels has: n! / prod(k!)."""
    count = math.factorial(len(labels))
    for k in Counter(labels).values():
        count //= math.factorial(k)
    return count


def arrangements(labels: Sequence[str]) -> list[tuple[str, ...]]:
    """Every distinct order of a multiset of labels, in sorted order."""
    left = Counter(labels)
    keys = sorted(left)
    found: list[tuple[str, ...]] = []
    prefix: list[str] = []

    def extend() -> None:
        if len(prefix) == len(labels):
            found.append(tuple(prefix))
            return
        for key in keys:
            if left[key]:
                left[key] -= 1
                prefix.append(key)
                extend()
                prefix.pop()
                left[key] += 1

    extend()
    return found


class LeagueFileError(ValueError):
    """A league file that cannot be run; the message names the field."""


@dataclass(frozen=True)
class ScheduledMatch:
    """One match of a schedule; its cards are those of ``League.deal_seed(deal, key)``."""

    match_id: str
    deal: int
    seats: tuple[str, ...]  # bot ids (name@version) by seat


@dataclass(frozen=True)
class League:
    """A league, as its file says (load_league); never changed once made.
    A copy with other deals, ``dataclasses.replace(league, deals=n)``, is
    the same league extended or cut short: the same tables, seatings, deal
    seeds and match IDs for the deals both have (the benchmarks size a
    league so). It holds no secret: a league without a public seed deals
    from the key its results database keeps, which whoever deals
    (run_league) passes to ``deal_seed``."""

    name: str
    game: str
    bots: list[str]
    players: int
    deals: int
    rotation: str
    partners: str
    seed: int | None  # public; None: deals come from the results database's secret key
    limits: Limits
    format: str = "round_robin"  # or "gauntlet": only tables holding a challenger
    challengers: tuple[str, ...] = ()
    copies: dict[str, int] = field(default_factory=dict)  # seats a bot takes (default 1)
    path: Path | None = None
    specs: dict[str, BotSpec] = field(default_factory=dict, repr=False)
    bundles: dict[str, BotBundle] = field(default_factory=dict, repr=False)
    left_out: tuple[str, ...] = ()  # why each bot of the file that is not playing is out
    # [logs] stderr: "faults" keeps a faulted bot's stderr tail, "all" each decision's too
    # (not part of config(): what is logged changes no result)
    stderr: str = "faults"
    _seatings: dict[Any, list[tuple[str, ...]]] = field(default_factory=dict, init=False,
                                                         repr=False, compare=False)

    @property
    def versions(self) -> dict[str, str]:
        return {name: bundle.version for name, bundle in self.bundles.items()}

    # ---- identity ------------------------------------------------------
    def bot_id(self, name: str) -> str:
        return f"{name}@{self.bundles[name].version}"

    def config(self) -> dict[str, Any]:
        """What the store records; its identity fields must not change under
        one name. A balanced schedule does not depend on the order of
        ``bots``, so it records them sorted: reordering is the same league.
        (Cyclic and single seatings follow the order: recorded as written.)"""
        bots = sorted(self.bots) if self.rotation == "balanced" else self.bots
        config = {
            "name": self.name, "game": self.game, "bots": bots, "players": self.players,
            "deals": self.deals, "rotation": self.rotation, "partners": self.partners,
            "seed": self.seed, "limits": self.limits.for_bot(),
        }
        if self.copies:  # absent otherwise, as in leagues stored before copies
            config["copies"] = dict(sorted(self.copies.items()))
        if self.limits.bots:  # a bot's own times tilt its results: part of the identity
            config["time_odds"] = dict(sorted(self.limits.odds().items()))
        return config

    # ---- schedule ------------------------------------------------------
    def teams(self) -> tuple[tuple[int, ...], ...] | None:
        return get_game(self.game).INFO.teams(self.players)

    def _units(self) -> list[tuple[int, ...]]:
        """Groups of seats that one bot fills: a team in "copies" mode, else one seat."""
        teams = self.teams()
        if teams and self.partners == "copies":
            return [tuple(t) for t in teams]
        return [(seat,) for seat in range(self.players)]

    def tables(self) -> Iterator[tuple[str, ...]]:
        for table in self._all_tables():
            if self.format != "gauntlet" or set(self.challengers).intersection(table):
                yield table

    def _all_tables(self) -> Iterator[tuple[str, ...]]:
        size = len(self._units())
        bots = sorted(self.bots) if self.rotation == "balanced" else self.bots
        if self.copies:  # every set of 2+ bots whose seats fill the table
            for count in range(2, min(len(bots), size) + 1):
                for group in itertools.combinations(bots, count):
                    if sum(self.copies.get(bot, 1) for bot in group) == size:
                        yield tuple(bot for bot in group for _ in range(self.copies.get(bot, 1)))
            return
        if len(bots) >= size:
            yield from itertools.combinations(bots, size)
            return
        for table in itertools.combinations_with_replacement(bots, size):
            if len(set(table)) > 1:
                yield table

    def table_count(self) -> int:
        size, bots = len(self._units()), len(self.bots)
        if self.format == "gauntlet" or self.copies:
            return sum(1 for _ in self.tables())
        if bots >= size:
            return math.comb(bots, size)
        return math.comb(bots + size - 1, size) - bots

    def seatings(self, table: Sequence[str]) -> list[tuple[str, ...]]:
        """The seat assignments of one table that each deal is played in
        (bot names by seat): balanced (the default), cyclic or one."""
        key = (tuple(table), self.rotation, self.partners, self.game, self.players)
        found = self._seatings.get(key)
        if found is None:
            if len(self._seatings) > 4096:
                self._seatings.clear()
            found = self._seatings[key] = (self._balanced(table) if self.rotation == "balanced"
                                           else self._rotations(table))
        return list(found)

    def _balanced(self, table: Sequence[str]) -> list[tuple[str, ...]]:
        """A set of seatings balanced for seat and neighbour (module
        docstring): the table's units (seats, or teams of copies) take the
        table's bots in every distinct arrangement, or in the orders of
        ``balanced_orders`` when those are fewer. With repeated bots, those
        orders may seat the table the same way twice: both are played (a
        tag tells their match IDs apart), or the set would not be balanced."""
        units = self._units()
        labels = tuple(sorted(table))
        mixed = self.teams() is not None and self.partners == "mixed"
        if mixed or arrangement_count(labels) <= len(units) * (len(units) - 1):
            orders = arrangements(labels)
        else:
            orders = [tuple(labels[i] for i in order) for order in balanced_orders(len(units))]
        seatings = []
        for arranged in orders:
            seats = [""] * self.players
            for unit, bot in zip(units, arranged, strict=True):
                for seat in unit:
                    seats[seat] = bot
            seatings.append(tuple(seats))
        return seatings

    def unbalanced_tables(self, most: int = 1000) -> int:
        """How many of the first ``most`` tables are seated so that some bot
        sits directly after one bot more often than after another (or takes
        one seat more often than another), beyond what the table's repeated
        bots make unavoidable: 0 for balanced, and for cyclic rotation of
        two bots at three seats; most tables of cyclic rotation otherwise."""
        units = self._units()
        n = len(units)
        found = 0
        for table in itertools.islice(self.tables(), most):
            seatings = [tuple(seating[unit[0]] for unit in units) for seating in self.seatings(table)]
            count, total = Counter(table), len(seatings)
            seats = Counter((s, bot) for order in seatings for s, bot in enumerate(order))
            after = Counter((order[s - 1], order[s]) for order in seatings for s in range(n))
            if any(seats[(s, b)] * n != count[b] * total for s in range(n) for b in count) or any(
                    after[(a, b)] * (n - 1) != count[a] * (count[b] - (a == b)) * total
                    for a in count for b in count):
                found += 1
        return found

    def _rotations(self, table: Sequence[str]) -> list[tuple[str, ...]]:
        """Distinct seat assignments of one table, by cyclic rotation; with
        mixed partners, in every distinct partnership too (a rotation alone
        never changes who partners whom)."""
        units = self._units()
        shifts = range(len(units)) if self.rotation == "cyclic" else range(1)
        seatings: list[tuple[str, ...]] = []
        for arranged in self._partnerships(table):
            for shift in shifts:
                seats = [""] * self.players
                for index, unit in enumerate(units):
                    for seat in unit:
                        seats[seat] = arranged[(index + shift) % len(units)]
                if tuple(seats) not in seatings:
                    seatings.append(tuple(seats))
        return seatings

    def _partnerships(self, table: Sequence[str]) -> list[tuple[str, ...]]:
        """The table laid out seat by seat once per distinct way of pairing its
        bots into the game's teams (just the table when there are no teams to
        mix)."""
        teams = self.teams()
        if not teams or self.partners != "mixed":
            return [tuple(table)]
        layouts: list[tuple[str, ...]] = []
        seen: set[frozenset[tuple[str, ...]]] = set()
        for order in itertools.permutations(range(len(table))):
            seats = [""] * self.players
            for position, seat in enumerate(s for team in teams for s in team):
                seats[seat] = table[order[position]]
            key = frozenset(tuple(sorted(seats[s] for s in team)) for team in teams)
            if key not in seen:
                seen.add(key)
                layouts.append(tuple(seats))
        return layouts

    def deal_seed(self, deal: int, deal_key: str) -> int:
        """The seed of deal ``deal``. A public seed gives reproducible deals
        (``deal_key`` unused); otherwise an HMAC of the deal number under
        ``deal_key``, the league's secret (hex) kept beside its results database
        (Store.league_secret) where no bot can read it."""
        if self.seed is not None:
            digest = hashlib.sha256(f"{self.name}|{self.seed}|{deal}".encode()).digest()
        else:
            digest = hmac.new(bytes.fromhex(deal_key), f"{self.name}|{deal}".encode(),
                              hashlib.sha256).digest()
        return int.from_bytes(digest[:6], "big")

    def match_id(self, seats: Sequence[str], deal: int, tag: str = "") -> str:
        """Stable across runs; ``tag`` tells apart matches a schedule plays
        twice with the same seats on the same deal (a paired test's twins)."""
        rules = get_game(self.game).INFO.rules_version
        key = f"{self.name}|{self.game}|{rules}|{','.join(seats)}|{deal}" + (f"|{tag}" if tag else "")
        return hashlib.sha256(key.encode()).hexdigest()[:20]

    def schedule(self) -> Iterator[ScheduledMatch]:
        """Every match of the league, lazily, deal by deal (match IDs and
        seats: what the deal's cards are, deal_seed says)."""
        for deal in range(self.deals):
            for table in self.tables():
                played: Counter[tuple[str, ...]] = Counter()
                for seating in self.seatings(table):
                    seats = tuple(self.bot_id(name) for name in seating)
                    again = played[seats]
                    played[seats] += 1
                    yield ScheduledMatch(self.match_id(seats, deal, f"again{again}" if again else ""),
                                         deal, seats)

    def size(self) -> int:
        """How many matches the schedule holds, without generating it."""
        return self.deals * sum(len(self.seatings(table)) for table in self.tables())


# ---- loading ----------------------------------------------------------------
def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise LeagueFileError(f"{where}: missing field '{key}'")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise LeagueFileError(f"{where}: field '{key}' must be {expected}, got {value!r}")
    return value


def _positive(data: dict[str, Any], key: str, where: str, default: int | None = None) -> int:
    if key not in data and default is not None:
        return default
    value = _require(data, key, int, where)
    if value <= 0:
        raise LeagueFileError(f"{where}: field '{key}' must be a positive integer, got {value}")
    return value


def find_league_file(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.is_file():
        return path
    candidate = LEAGUE_DIR / f"{name_or_path}.toml"
    if candidate.is_file():
        return candidate
    known = ", ".join(sorted(p.stem for p in LEAGUE_DIR.glob("*.toml")))
    raise LeagueFileError(f"no league file {name_or_path!r} (leagues/: {known})")


def load_league(name_or_path: str, bot_dirs: list[Path] | None = None) -> League:
    """Load and check a league file; every problem names its field."""
    path = find_league_file(name_or_path)
    where = str(path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise LeagueFileError(f"{where}: not valid TOML: {exc}") from exc
    known = {"name", "game", "bots", "players", "deals", "rotation", "partners", "seed", "limits",
             "description", "format", "challengers", "copies", "logs"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise LeagueFileError(f"{where}: unknown field(s) {unknown_keys(unknown, known)}; a "
                              f"league file may hold {', '.join(sorted(known))}")
    name = _require(data, "name", str, where)
    if not name.strip():
        raise LeagueFileError(f"{where}: field 'name' is empty")
    game = _require(data, "game", str, where)
    try:
        info = get_game(game).INFO
    except UnknownGameError as exc:
        raise LeagueFileError(f"{where}: field 'game': {exc}") from exc
    bots = _require(data, "bots", list, where)
    if len(bots) < 2 or not all(isinstance(b, str) for b in bots):
        raise LeagueFileError(f"{where}: field 'bots' must list at least two bot names")
    if len(set(bots)) != len(bots):
        raise LeagueFileError(f"{where}: field 'bots' names a bot twice")
    players = _positive(data, "players", where)
    if players not in info.player_counts():
        raise LeagueFileError(
            f"{where}: field 'players': {game} allows {info.player_counts()} players, not {players}")
    deals = _positive(data, "deals", where)
    rotation = data.get("rotation", "balanced")
    if rotation not in ROTATIONS:
        raise LeagueFileError(f"{where}: field 'rotation' must be \"balanced\" (the default), "
                              "\"cyclic\" or \"none\"")
    partners = data.get("partners", "copies")
    if partners not in ("copies", "mixed"):
        raise LeagueFileError(f"{where}: field 'partners' must be \"copies\" or \"mixed\"")
    copies = _copies(data, bots, players, info.teams(players), where)
    seed = _require(data, "seed", int, where) if "seed" in data else None
    limits = parse_limits(data.get("limits", {}), where)
    specs, bundles, named, left_out = _load_bots(bots, game, bot_dirs, where)
    unlisted = [bot for bot, _ in limits.bots if bot not in bots]
    if unlisted:
        raise LeagueFileError(f"{where}: [limits.bots.{unlisted[0]}]: {unlisted[0]!r} is not "
                              f"in 'bots' ({', '.join(bots)})")
    limits = _named_times(limits, named)
    league_format, challengers = _format(data, bots, where)
    if league_format == "gauntlet" and not any(c in named for c in challengers):
        raise LeagueFileError(f"{where}: field 'challengers': every challenger was left out: "
                              f"{'; '.join(left_out)}")
    league = League(
        name=name, game=game, bots=list(specs), players=players, deals=deals, rotation=rotation,
        partners=partners, seed=seed, limits=limits, path=path, specs=specs, bundles=bundles,
        format=league_format, challengers=tuple(named[c] for c in challengers if c in named),
        copies={bot: n for bot, n in copies.items() if bot in named},
        left_out=tuple(left_out), stderr=_logs(data.get("logs", {}), where),
    )
    if set(copies) - set(league.bots):
        raise LeagueFileError(f"{where}: field 'copies': name the bots as their manifests do "
                              f"({', '.join(league.bots)})")
    if rotation == "balanced" and not (league.teams() and partners == "mixed"):
        try:
            balanced_orders(len(league._units()))
        except ValueError as exc:
            raise LeagueFileError(f"{where}: field 'rotation': {exc}") from exc
    if league.table_count() == 0:
        raise LeagueFileError(f"{where}: field 'bots': no table can be formed")
    return league


def _load_bots(bots: list[str], game: str, bot_dirs: list[Path] | None, where: str
               ) -> tuple[dict[str, BotSpec], dict[str, BotBundle], dict[str, str], list[str]]:
    """The league's bots by manifest name with their bundles, which manifest
    name each entry of ``bots`` became, and a message for each bot left out.

    An entrant whose manifest or files cannot be used (a bad field, files
    outside its folder or over the caps, a name another manifest claims) is
    left out, so that one broken entrant does not stop the others; the
    league then is a league of the others (League.left_out). A name that no
    manifest claims is the league file's mistake, unless some manifest could
    not even say its name (it may be that bot's): only then is it left out."""
    catalog = Catalog(bot_dirs)
    specs: dict[str, BotSpec] = {}
    bundles: dict[str, BotBundle] = {}
    named: dict[str, str] = {}
    left_out: list[str] = []
    for bot in bots:
        try:
            spec = catalog.resolve(bot)
            if spec.plays(game) and spec.name not in specs:
                bundles[spec.name] = spec.bundle()
        except UnknownBotError as exc:
            if not exc.unnamed:
                raise LeagueFileError(f"{where}: field 'bots': {exc}") from exc
            left_out.append(f"bot {bot!r} left out: {exc}")
            continue
        except (OSError, ManifestError) as exc:
            left_out.append(f"bot {bot!r} left out: {exc}")
            continue
        if not spec.plays(game):
            raise LeagueFileError(f"{where}: field 'bots': bot {bot!r} does not play {game}")
        if spec.name in specs:
            raise LeagueFileError(f"{where}: field 'bots': {bot!r} is bot {spec.name!r} "
                                  f"({spec.manifest}), named twice")
        specs[spec.name], named[bot] = spec, spec.name
    if len(specs) < 2:
        raise LeagueFileError(f"{where}: field 'bots': fewer than two bots can play"
                              + "".join(f"; {message}" for message in left_out))
    return specs, bundles, named, left_out


def _copies(data: dict[str, Any], bots: list[str], players: int,
            teams: tuple[tuple[int, ...], ...] | None, where: str) -> dict[str, int]:
    """``copies = { bot = k }``: the bot takes k seats at each of its tables
    (individual games only), so one bot can face k copies of another."""
    copies = data.get("copies", {})
    if not isinstance(copies, dict):
        raise LeagueFileError(f"{where}: field 'copies' must be a table of bot = seats, "
                              "like copies = { heuristic = 3 }")
    if not copies:
        return {}
    if teams:
        raise LeagueFileError(f"{where}: field 'copies': a team game seats teams, not copies "
                              "(partners = \"copies\" seats a bot's copies as its partners)")
    unknown = [bot for bot in copies if bot not in bots]
    if unknown:
        raise LeagueFileError(f"{where}: field 'copies': {', '.join(unknown)} not in 'bots'")
    for bot, count in copies.items():
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count < players:
            raise LeagueFileError(f"{where}: field 'copies': {bot} = {count!r} must be a whole "
                                  f"number of seats from 1 to {players - 1} (players = {players}: "
                                  "a table needs another bot)")
    seats = [copies.get(bot, 1) for bot in bots]
    reach = {(0, 0)}  # (seats filled, bots seated, counted up to 2) of some set of bots
    for n in seats:
        reach |= {(total + n, min(count + 1, 2)) for total, count in reach if total + n <= players}
    if (players, 2) not in reach:
        raise LeagueFileError(
            f"{where}: field 'copies': no two or more bots fill the {players} seats "
            f"({', '.join(f'{bot} {n}' for bot, n in zip(bots, seats, strict=True))} seats each)")
    return {bot: count for bot, count in copies.items() if count > 1}


def _format(data: dict[str, Any], bots: list[str], where: str) -> tuple[str, tuple[str, ...]]:
    league_format = data.get("format", "round_robin")
    if league_format not in ("round_robin", "gauntlet"):
        raise LeagueFileError(f"{where}: field 'format' must be \"round_robin\" or \"gauntlet\"")
    challengers = data.get("challengers", [])
    if not isinstance(challengers, list) or not all(isinstance(c, str) for c in challengers):
        raise LeagueFileError(f"{where}: field 'challengers' must list bot names")
    if league_format == "gauntlet" and not challengers:
        raise LeagueFileError(f"{where}: field 'challengers': a gauntlet needs at least one")
    if league_format != "gauntlet" and challengers:
        raise LeagueFileError(f"{where}: field 'challengers' is for format = \"gauntlet\"")
    missing = [c for c in challengers if c not in bots]
    if missing:
        raise LeagueFileError(f"{where}: field 'challengers': {', '.join(missing)} not in 'bots'")
    return league_format, tuple(challengers)


def _bounded(data: dict[str, Any], key: str, where: str) -> int:
    """The limit ``key`` (its default when absent), within LIMIT_BOUNDS."""
    low, high = LIMIT_BOUNDS[key]
    if low == 0:  # a time that may be left out: 0 is none (clock_ms, increment_ms, bank_ms)
        value = _require(data, key, int, where) if key in data else LIMIT_FIELDS[key]
    else:
        value = _positive(data, key, where, LIMIT_FIELDS[key])
    if not low <= value <= high:
        side = f"below its minimum {low}" if value < low else f"above its maximum {high}"
        raise LeagueFileError(f"{where}: field '{key}' = {value} is {side} "
                              f"(allowed: {low} to {high})")
    return value


STDERR_LOGS = ("faults", "all")


def _logs(data: Any, where: str) -> str:
    """``[logs] stderr``: which stderr a run keeps (STDERR_LOGS)."""
    if not isinstance(data, dict):
        raise LeagueFileError(f"{where}: field 'logs' must be a table, like [logs] with "
                              'stderr = "all"')
    unknown = sorted(set(data) - {"stderr"})
    if unknown:
        raise LeagueFileError(f"{where}: unknown field(s) {unknown_keys(unknown, ['stderr'], 'logs.')} "
                              "(known: stderr)")
    stderr = data.get("stderr", "faults")
    if stderr not in STDERR_LOGS:
        raise LeagueFileError(f"{where}: [logs] stderr must be \"faults\" (the default: a "
                              "faulted bot's last 4 KiB) or \"all\" (each decision's too), "
                              f"not {stderr!r:.40}")
    return str(stderr)


def parse_limits(data: Any, where: str) -> Limits:
    """A league or ladder file's ``[limits]`` table (``where``: the file, for messages)."""
    if not isinstance(data, dict):
        raise LeagueFileError(f"{where}: field 'limits' must be a table")
    known = [*LIMIT_FIELDS, "bots"]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise LeagueFileError(f"{where}: unknown field(s) "
                              f"{unknown_keys(unknown, known, 'limits.')} (known: "
                              f"{', '.join(known)})")
    values = {key: _bounded(data, key, f"{where} [limits]") for key in LIMIT_FIELDS}
    resources = ResourceLimits(memory_mb=values["memory_mb"], cpu_s=float(values["cpu_s"]),
                               processes=values["processes"], file_mb=values["file_mb"],
                               open_files=values["open_files"])
    limits = Limits(decision_ms=values["decision_ms"], startup_ms=values["startup_ms"],
                    resources=resources, clock_ms=values["clock_ms"],
                    increment_ms=values["increment_ms"], bank_ms=values["bank_ms"])
    _check_clock(limits, f"{where} [limits]")
    return replace(limits, bots=_bot_times(data.get("bots", {}), limits, where))


def _check_clock(limits: Limits, where: str) -> None:
    if limits.increment_ms and not limits.clock_ms:
        raise LeagueFileError(f"{where}: increment_ms = {limits.increment_ms} is added to a "
                              "match clock: set clock_ms too (or use bank_ms, overage on top "
                              "of decision_ms)")


def _bot_times(data: Any, limits: Limits, where: str) -> tuple[tuple[str, BotTime], ...]:
    """``[limits.bots.NAME]``: ``time_odds = x`` (the league's times times x) or
    times of its own (TIME_FIELDS), checked as the league's are."""
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise LeagueFileError(f"{where}: field 'limits.bots' must hold a table per bot, like "
                              "[limits.bots.search] with time_odds = 0.5")
    found = []
    for bot, table in data.items():
        here = f"{where} [limits.bots.{bot}]"
        unknown = sorted(set(table) - {"time_odds", *TIME_FIELDS})
        if unknown:
            raise LeagueFileError(f"{here}: unknown field(s) {', '.join(unknown)} (known: "
                                  f"time_odds, {', '.join(TIME_FIELDS)})")
        if "time_odds" in table and len(table) > 1:
            raise LeagueFileError(f"{here}: give time_odds or times of its own, not both")
        if not table:
            raise LeagueFileError(f"{here}: empty: give time_odds or times of its own "
                                  f"({', '.join(TIME_FIELDS)})")
        if "time_odds" in table:
            odds = table["time_odds"]
            low, high = TIME_ODDS_BOUNDS
            if isinstance(odds, bool) or not isinstance(odds, (int, float)) \
                    or not low <= odds <= high:
                raise LeagueFileError(f"{here}: time_odds = {odds!r} must be a number from "
                                      f"{low:g} to {high:g} (0.5: half the league's times)")
            own = BotTime(time_odds=float(odds))
        else:
            own = BotTime(own=tuple((key, _bounded(table, key, here)) for key in TIME_FIELDS
                                    if key in table))
        applied = own.applied(limits)
        for key in TIME_FIELDS:
            bound_low, bound_high = LIMIT_BOUNDS[key]
            value = getattr(applied, key)
            if not bound_low <= value <= bound_high:
                raise LeagueFileError(f"{here}: its {key} would be {value}, outside "
                                      f"{bound_low} to {bound_high}")
        _check_clock(applied, here)
        found.append((bot, own))
    return tuple(found)


def _named_times(limits: Limits, named: dict[str, str]) -> Limits:
    """The per-bot times under the bots' manifest names (``named``: each
    entry of ``bots`` that plays); those of bots left out are dropped."""
    return replace(limits, bots=tuple((named[bot], own) for bot, own in limits.bots
                                      if bot in named))


def local_key() -> bytes:
    """This machine's secret for `league play` IDs, kept beside the bot cache
    (out of every sandbox's reach): IDs are reproducible here, and say
    nothing about the seed to a bot."""
    from harness.proc.catalog import default_cache_dir

    path = default_cache_dir().parent / "play.key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True)
        key = os.urandom(32)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(key.hex())
        return key


def play_match_id(game: str, seed: int, bots: Sequence[str]) -> str:
    digest = hmac.new(local_key(), f"{game}|{seed}|{','.join(bots)}".encode(), hashlib.sha256)
    return f"play-{game}-{digest.hexdigest()[:16]}"
