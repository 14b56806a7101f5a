"""The ladder file: what a ``league serve`` site accepts and checks.

::

    name = "demo"
    games = { limit = [2, 3], target = [3] }   # slug -> the player counts entered
    signup = "invite"        # "invite": the organiser makes accounts (league users add);
                             # "open": anyone may make one on the site
    [limits]                 # a league file's [limits] (docs/leagues.md)
    decision_ms = 1000
    [quotas]
    submissions_per_day = 20 # per account, over the last 24 hours
    bots_per_account = 3     # bot names one account may own
    upload_bytes = 8388608   # one upload, counted as it streams in
    [validation]
    workers = 1              # validations at once (each runs the bot in the sandbox)
    sandbox = "bwrap"        # "none" only for a trusted site: uploaded code runs as you
    [play]                   # the ladder's matches (harness.serve.ladder_run)
    bosses = ["random", "heuristic", "search"]   # reference bots, always in: the levels
    rotation = "balanced"    # the seat design of a group: "balanced", "cyclic" or "none"
    engine = "auto"          # "ray" (embedded, or `address`; what auto picks), "inline" (threads here)
    address = ""             # an existing Ray cluster ("auto": the one on this machine)
    workers = 0              # match workers; 0: one per CPU (of the cluster, on Ray)
    groups_per_worker = 2    # groups a worker holds at once (matches in flight: x seatings)
    placement = 1            # groups a new version plays first: the nearest boss, then its level
    refit_s = 20             # how often the official table is refitted while results arrive
    paused = false           # true: validate uploads, play nothing (a season's pause)

Every mistake is a LadderFileError that names the file and the field.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games import get_game, implemented_games
from harness.league import LeagueFileError, parse_limits
from harness.limits import Limits
from harness.proc.sandbox import MODES
from harness.suggest import did_you_mean, unknown_keys

SIGNUP_MODES = ("invite", "open")
KNOWN = ("name", "games", "signup", "limits", "quotas", "validation", "play", "description")
ROTATIONS = ("balanced", "cyclic", "none")
ENGINES = ("auto", "inline", "ray")
BOSSES = ("random", "heuristic", "search")
PLAY_DEFAULTS: dict[str, Any] = {"bosses": list(BOSSES), "rotation": "balanced", "engine": "auto",
                                 "address": "", "workers": 0, "groups_per_worker": 2,
                                 "placement": 1, "refit_s": 20, "paused": False}
QUOTA_DEFAULTS = {"submissions_per_day": 20, "bots_per_account": 3, "upload_bytes": 8 << 20}
QUOTA_CEILINGS = {"submissions_per_day": 100_000, "bots_per_account": 10_000,
                  "upload_bytes": 64 << 20}
VALIDATION_DEFAULTS: dict[str, Any] = {"workers": 1, "sandbox": "bwrap"}


class LadderFileError(ValueError):
    """A ladder file that cannot be used; the message names the file and field."""


@dataclass(frozen=True)
class Quotas:
    submissions_per_day: int = QUOTA_DEFAULTS["submissions_per_day"]
    bots_per_account: int = QUOTA_DEFAULTS["bots_per_account"]
    upload_bytes: int = QUOTA_DEFAULTS["upload_bytes"]


@dataclass(frozen=True)
class Play:
    bosses: tuple[str, ...] = BOSSES
    rotation: str = "balanced"
    engine: str = "auto"
    address: str = ""
    workers: int = 0
    groups_per_worker: int = 2
    placement: int = 1
    refit_s: float = 20
    paused: bool = False


@dataclass(frozen=True)
class Ladder:
    name: str
    games: dict[str, tuple[int, ...]]
    signup: str = "invite"
    description: str = ""
    limits: Limits = field(default_factory=Limits)
    quotas: Quotas = field(default_factory=Quotas)
    validation_workers: int = 1
    sandbox: str = "bwrap"
    play: Play = field(default_factory=Play)
    path: Path | None = None

    def pools(self) -> list[tuple[str, int]]:
        """Each (game, player count): a table of its own, rated apart."""
        return [(slug, count) for slug, counts in self.games.items() for count in counts]

    def plays(self, games: tuple[str, ...] | None) -> list[str]:
        """The ladder's games that a bot declaring ``games`` (None: every game) plays."""
        return [slug for slug in self.games if games is None or slug in games]


def load_ladder(path: Path | str) -> Ladder:
    path = Path(path)
    where = str(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise LadderFileError(f"no ladder file {where}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LadderFileError(f"{where}: {exc}") from exc
    unknown = sorted(set(data) - set(KNOWN))
    if unknown:
        raise LadderFileError(f"{where}: unknown field(s) {unknown_keys(unknown, KNOWN)} "
                              f"(known: {', '.join(KNOWN)})")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        raise LadderFileError(f"{where}: field 'name' must be a string of 1 to 64 characters")
    signup = data.get("signup", "invite")
    if signup not in SIGNUP_MODES:
        raise LadderFileError(f"{where}: field 'signup' = {signup!r}: use one of "
                              f"{', '.join(map(repr, SIGNUP_MODES))}")
    try:
        limits = parse_limits(data.get("limits", {}), where)
    except LeagueFileError as exc:
        raise LadderFileError(str(exc)) from exc
    if limits.bots:
        raise LadderFileError(f"{where}: [limits.bots.*]: a ladder gives every bot the same "
                              "times")
    validation = _table(data, "validation", VALIDATION_DEFAULTS, where)
    workers = validation["workers"]
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= 64:
        raise LadderFileError(f"{where}: [validation] workers must be an integer from 1 to 64, "
                              f"got {workers!r}")
    if validation["sandbox"] not in MODES:
        raise LadderFileError(f"{where}: [validation] sandbox = {validation['sandbox']!r}: use "
                              f"one of {', '.join(map(repr, MODES))}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise LadderFileError(f"{where}: field 'description' must be a string")
    return Ladder(name=name, games=_games(data.get("games"), where), signup=signup,
                  description=description, limits=limits, quotas=_quotas(data, where),
                  validation_workers=workers, sandbox=validation["sandbox"],
                  play=_play(data, where), path=path)


def _table(data: dict[str, Any], key: str, defaults: dict[str, Any], where: str
           ) -> dict[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise LadderFileError(f"{where}: field '{key}' must be a table")
    unknown = sorted(set(table) - set(defaults))
    if unknown:
        raise LadderFileError(f"{where}: [{key}] unknown field(s) "
                              f"{unknown_keys(unknown, defaults)} (known: {', '.join(defaults)})")
    return {**defaults, **table}


def _play(data: dict[str, Any], where: str) -> Play:
    table = _table(data, "play", PLAY_DEFAULTS, where)
    bosses = table["bosses"]
    if not isinstance(bosses, list) or not all(isinstance(b, str) for b in bosses):
        raise LadderFileError(f"{where}: [play] bosses must be a list of bot names")
    unknown = [b for b in bosses if b not in BOSSES]
    if unknown:
        raise LadderFileError(f"{where}: [play] bosses: {unknown[0]!r} is not a reference bot "
                              f"({', '.join(BOSSES)})")
    for key, allowed in (("rotation", ROTATIONS), ("engine", ENGINES)):
        if table[key] not in allowed:
            raise LadderFileError(f"{where}: [play] {key} = {table[key]!r}: use one of "
                                  f"{', '.join(map(repr, allowed))}")
    for key, low, high in (("workers", 0, 1024), ("groups_per_worker", 1, 16),
                           ("placement", 0, 100)):
        value = table[key]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise LadderFileError(f"{where}: [play] {key} must be an integer from {low} to "
                                  f"{high}, got {value!r}")
    refit = table["refit_s"]
    if not isinstance(refit, (int, float)) or isinstance(refit, bool) or not 1 <= refit <= 3600:
        raise LadderFileError(f"{where}: [play] refit_s must be from 1 to 3600 seconds, "
                              f"got {refit!r}")
    if not isinstance(table["address"], str) or not isinstance(table["paused"], bool):
        raise LadderFileError(f"{where}: [play] address must be a string and paused true or "
                              "false")
    return Play(bosses=tuple(dict.fromkeys(bosses)), rotation=table["rotation"],
                engine=table["engine"], address=table["address"], workers=table["workers"],
                groups_per_worker=table["groups_per_worker"], placement=table["placement"],
                refit_s=float(refit), paused=table["paused"])


def _quotas(data: dict[str, Any], where: str) -> Quotas:
    table = _table(data, "quotas", QUOTA_DEFAULTS, where)
    for key, value in table.items():
        ceiling = QUOTA_CEILINGS[key]
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= ceiling:
            raise LadderFileError(f"{where}: [quotas] {key} must be an integer from 1 to "
                                  f"{ceiling:,}, got {value!r}")
    return Quotas(**table)


def _games(value: Any, where: str) -> dict[str, tuple[int, ...]]:
    if not isinstance(value, dict) or not value:
        raise LadderFileError(f"{where}: field 'games' must be a table of game = [player "
                              "counts], like games = { limit = [2, 3] }")
    known = implemented_games()
    games: dict[str, tuple[int, ...]] = {}
    for slug, counts in value.items():
        if slug not in known:
            raise LadderFileError(f"{where}: games: unknown game {slug!r}"
                                  f"{did_you_mean(slug, known)}; known: {', '.join(known)}")
        allowed = get_game(slug).INFO.player_counts()
        if counts == "*":
            counts = list(allowed)
        if not isinstance(counts, list) or not counts or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in counts):
            raise LadderFileError(f"{where}: games.{slug} must be a list of player counts "
                                  f"(from {', '.join(map(str, allowed))}) or \"*\"")
        wrong = [n for n in counts if n not in allowed]
        if wrong:
            raise LadderFileError(f"{where}: games.{slug}: {slug} is played by "
                                  f"{', '.join(map(str, allowed))} players, not {wrong[0]}")
        games[slug] = tuple(sorted(set(counts)))
    return games
