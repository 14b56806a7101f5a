"""League files and their schedule.

A league file (TOML, in ``leagues/``)::

    name = "demo"                 # unique; results are stored under it
    game = "limit"                # a registered game slug
    bots = ["random", "heuristic"]
    players = 3                   # seats per match
    deals = 20                    # seeded deals; every table plays each of them
    rotation = "cyclic"           # "cyclic": every seat rotation of each table
                                  # (duplicate deals); "none": one seating
    partners = "copies"           # team games only: "copies" (a bot partners a
                                  # copy of itself) or "mixed" (bots sit by seat,
                                  # so different bots partner)
    seed = 2026                   # optional: a PUBLIC seed makes the deals reproducible
                                  # (and computable by anyone who reads this file);
                                  # without it, deals derive from a secret key kept in
                                  # the results database, which bots cannot read
    [limits]
    decision_ms = 1000            # per-decision deadline, wall clock
    startup_ms = 15000            # process start + handshake deadline
    memory_mb = 1024              # per bot slot (all its processes)
    cpu_s = 60                    # CPU seconds per match, all of a bot's processes
    processes = 64                # processes and threads per bot slot
    file_mb = 64                  # largest file, and the size of its private /tmp
    open_files = 256

Tables are every combination of ``players`` bots (for team games with
``partners = "copies"``, every combination of one bot per team). With fewer
bots than seats, bots repeat: every multiset of bots that holds at least two
different bots. Each table plays the same ``deals`` in every distinct seat
rotation, so each bot meets the same cards from each seat. The schedule is a
generator; match IDs derive from (league, game, rules version, seats, deal).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
import os
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games import UnknownGameError, get_game
from harness.catalog import BotBundle, BotSpec, ManifestError, UnknownBotError, resolve
from harness.match import Limits
from harness.sandbox import ResourceLimits

LEAGUE_DIR = Path(__file__).resolve().parent.parent / "leagues"


class LeagueFileError(ValueError):
    """A league file that cannot be run; the message names the field."""


@dataclass(frozen=True)
class ScheduledMatch:
    match_id: str
    deal: int
    seed: int
    seats: tuple[str, ...]  # bot ids (name@version) by seat


@dataclass
class League:
    name: str
    game: str
    bots: list[str]
    players: int
    deals: int
    rotation: str
    partners: str
    seed: int | None  # None: deals come from ``secret``
    limits: Limits
    format: str = "round_robin"  # or "gauntlet": only tables holding a challenger
    challengers: tuple[str, ...] = ()
    path: Path | None = None
    specs: dict[str, BotSpec] = field(default_factory=dict, repr=False)
    bundles: dict[str, BotBundle] = field(default_factory=dict, repr=False)
    secret: str | None = field(default=None, repr=False)

    @property
    def versions(self) -> dict[str, str]:
        return {name: bundle.version for name, bundle in self.bundles.items()}

    # ---- identity ------------------------------------------------------
    def bot_id(self, name: str) -> str:
        return f"{name}@{self.bundles[name].version}"

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name, "game": self.game, "bots": self.bots, "players": self.players,
            "deals": self.deals, "rotation": self.rotation, "partners": self.partners,
            "seed": self.seed, "limits": self.limits.for_bot(),
        }

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
        if len(self.bots) >= size:
            yield from itertools.combinations(self.bots, size)
            return
        for table in itertools.combinations_with_replacement(self.bots, size):
            if len(set(table)) > 1:
                yield table

    def table_count(self) -> int:
        size, bots = len(self._units()), len(self.bots)
        if self.format == "gauntlet":
            return sum(1 for _ in self.tables())
        if bots >= size:
            return math.comb(bots, size)
        return math.comb(bots + size - 1, size) - bots

    def seatings(self, table: Sequence[str]) -> list[tuple[str, ...]]:
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

    def deal_seed(self, deal: int) -> int:
        """A public seed gives reproducible deals; otherwise an HMAC of the
        deal number under the league's secret key, which no bot can read."""
        if self.seed is not None:
            digest = hashlib.sha256(f"{self.name}|{self.seed}|{deal}".encode()).digest()
        elif self.secret:
            digest = hmac.new(bytes.fromhex(self.secret), f"{self.name}|{deal}".encode(),
                              hashlib.sha256).digest()
        else:
            raise LeagueFileError(f"league {self.name!r} has no public seed and no secret key yet")
        return int.from_bytes(digest[:6], "big")

    def match_id(self, seats: Sequence[str], deal: int, tag: str = "") -> str:
        """Stable across runs; ``tag`` tells apart matches a schedule plays
        twice with the same seats on the same deal (a paired test's twins)."""
        rules = get_game(self.game).INFO.rules_version
        key = f"{self.name}|{self.game}|{rules}|{','.join(seats)}|{deal}" + (f"|{tag}" if tag else "")
        return hashlib.sha256(key.encode()).hexdigest()[:20]

    def schedule(self) -> Iterator[ScheduledMatch]:
        """Every match of the league, lazily, deal by deal."""
        for deal in range(self.deals):
            seed = self.deal_seed(deal)
            for table in self.tables():
                for seating in self.seatings(table):
                    seats = tuple(self.bot_id(name) for name in seating)
                    yield ScheduledMatch(self.match_id(seats, deal), deal, seed, seats)

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
             "description", "format", "challengers"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise LeagueFileError(f"{where}: unknown field(s) {', '.join(unknown)}")
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
    rotation = data.get("rotation", "cyclic")
    if rotation not in ("cyclic", "none"):
        raise LeagueFileError(f"{where}: field 'rotation' must be \"cyclic\" or \"none\"")
    partners = data.get("partners", "copies")
    if partners not in ("copies", "mixed"):
        raise LeagueFileError(f"{where}: field 'partners' must be \"copies\" or \"mixed\"")
    seed = _require(data, "seed", int, where) if "seed" in data else None
    limits = _limits(data.get("limits", {}), where)
    specs: dict[str, BotSpec] = {}
    for bot in bots:
        try:
            spec = resolve(bot, bot_dirs)
        except (UnknownBotError, ManifestError) as exc:
            raise LeagueFileError(f"{where}: field 'bots': {exc}") from exc
        if not spec.plays(game):
            raise LeagueFileError(f"{where}: field 'bots': bot {bot!r} does not play {game}")
        specs[spec.name] = spec
    try:
        bundles = {name: spec.bundle() for name, spec in specs.items()}
    except (OSError, ManifestError) as exc:
        raise LeagueFileError(f"{where}: field 'bots': {exc}") from exc
    league_format, challengers = _format(data, bots, where)
    league = League(
        name=name, game=game, bots=list(specs), players=players, deals=deals, rotation=rotation,
        partners=partners, seed=seed, limits=limits, path=path, specs=specs, bundles=bundles,
        format=league_format,
        challengers=tuple(specs[n].name if n in specs else n for n in challengers),
    )
    if league.table_count() == 0:
        raise LeagueFileError(f"{where}: field 'bots': no table can be formed")
    return league


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


LIMIT_FIELDS = {"decision_ms": 1000, "startup_ms": 15000, "memory_mb": 1024, "cpu_s": 60,
                "processes": 64, "file_mb": 64, "open_files": 256}


def _limits(data: Any, where: str) -> Limits:
    if not isinstance(data, dict):
        raise LeagueFileError(f"{where}: field 'limits' must be a table")
    unknown = sorted(set(data) - set(LIMIT_FIELDS))
    if unknown:
        raise LeagueFileError(f"{where}: unknown field(s) limits.{', limits.'.join(unknown)} "
                              f"(known: {', '.join(LIMIT_FIELDS)})")
    values = {key: _positive(data, key, f"{where} [limits]", default)
              for key, default in LIMIT_FIELDS.items()}
    resources = ResourceLimits(memory_mb=values["memory_mb"], cpu_s=float(values["cpu_s"]),
                               processes=values["processes"], file_mb=values["file_mb"],
                               open_files=values["open_files"])
    return Limits(decision_s=values["decision_ms"] / 1000, startup_s=values["startup_ms"] / 1000,
                  resources=resources)


def local_key() -> bytes:
    """This machine's secret for `league play` IDs, kept beside the bot cache
    (out of every sandbox's reach): IDs are reproducible here, and say
    nothing about the seed to a bot."""
    from harness.catalog import default_cache_dir

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
