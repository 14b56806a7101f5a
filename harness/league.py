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
    seed = 2026
    [limits]
    decision_ms = 1000            # per-decision deadline, wall clock
    startup_ms = 15000            # process start + handshake deadline

Tables are every combination of ``players`` bots (for team games with
``partners = "copies"``, every combination of one bot per team). With fewer
bots than seats, bots repeat: every multiset of bots that holds at least two
different bots. Each table plays the same ``deals`` in every distinct seat
rotation, so each bot meets the same cards from each seat. The schedule is a
generator; match IDs derive from (league, game, rules version, seats, deal).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from games import UnknownGameError, get_game
from harness.catalog import BotSpec, ManifestError, UnknownBotError, resolve
from harness.match import Limits

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
    seed: int
    limits: Limits
    path: Path | None = None
    specs: dict[str, BotSpec] = field(default_factory=dict, repr=False)
    versions: dict[str, str] = field(default_factory=dict, repr=False)

    # ---- identity ------------------------------------------------------
    def bot_id(self, name: str) -> str:
        return f"{name}@{self.versions[name]}"

    def config(self) -> dict[str, Any]:
        return {
            "name": self.name, "game": self.game, "bots": self.bots, "players": self.players,
            "deals": self.deals, "rotation": self.rotation, "partners": self.partners,
            "seed": self.seed, "decision_ms": int(self.limits.decision_s * 1000),
            "startup_ms": int(self.limits.startup_s * 1000),
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
        size = len(self._units())
        if len(self.bots) >= size:
            yield from itertools.combinations(self.bots, size)
            return
        for table in itertools.combinations_with_replacement(self.bots, size):
            if len(set(table)) > 1:
                yield table

    def table_count(self) -> int:
        size, bots = len(self._units()), len(self.bots)
        if bots >= size:
            return math.comb(bots, size)
        return math.comb(bots + size - 1, size) - bots

    def seatings(self, table: Sequence[str]) -> list[tuple[str, ...]]:
        """Distinct seat assignments of one table, by cyclic rotation."""
        units = self._units()
        shifts = range(len(units)) if self.rotation == "cyclic" else range(1)
        seatings: list[tuple[str, ...]] = []
        for shift in shifts:
            seats = [""] * self.players
            for index, unit in enumerate(units):
                for seat in unit:
                    seats[seat] = table[(index + shift) % len(units)]
            if tuple(seats) not in seatings:
                seatings.append(tuple(seats))
        return seatings

    def deal_seed(self, deal: int) -> int:
        digest = hashlib.sha256(f"{self.name}|{self.seed}|{deal}".encode()).digest()
        return int.from_bytes(digest[:6], "big")

    def match_id(self, seats: Sequence[str], deal: int) -> str:
        rules = get_game(self.game).INFO.rules_version
        key = f"{self.name}|{self.game}|{rules}|{','.join(seats)}|{deal}"
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
             "description"}
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
    seed = _require(data, "seed", int, where) if "seed" in data else 0
    limits_data = data.get("limits", {})
    if not isinstance(limits_data, dict):
        raise LeagueFileError(f"{where}: field 'limits' must be a table")
    bad_limits = sorted(set(limits_data) - {"decision_ms", "startup_ms"})
    if bad_limits:
        raise LeagueFileError(f"{where}: unknown field(s) limits.{', limits.'.join(bad_limits)}")
    decision_ms = _positive(limits_data, "decision_ms", f"{where} [limits]", 1000)
    startup_ms = _positive(limits_data, "startup_ms", f"{where} [limits]", 15000)
    specs: dict[str, BotSpec] = {}
    for bot in bots:
        try:
            spec = resolve(bot, bot_dirs)
        except (UnknownBotError, ManifestError) as exc:
            raise LeagueFileError(f"{where}: field 'bots': {exc}") from exc
        if not spec.plays(game):
            raise LeagueFileError(f"{where}: field 'bots': bot {bot!r} does not play {game}")
        specs[spec.name] = spec
    names = [resolve(b, bot_dirs).name for b in bots]
    league = League(
        name=name, game=game, bots=names, players=players, deals=deals, rotation=rotation,
        partners=partners, seed=seed,
        limits=Limits(decision_s=decision_ms / 1000, startup_s=startup_ms / 1000),
        path=path, specs=specs, versions={n: s.version_hash() for n, s in specs.items()},
    )
    if league.table_count() == 0:
        raise LeagueFileError(f"{where}: field 'bots': no table can be formed")
    return league
