"""Bots as Python functions: matches and small leagues in this process, for
notebooks, self-play and training.

    from harness.local import play, league

    def mine(obs, legal, info):       # info: the match (seat, game, names...) and decision
        return 0                      # an index into legal

    match = play("limit", [mine, "heuristic", "random"], seed=7)
    match.scores, match.ranks, match.faults, print(match.log())
    table = league("limit", {"mine": mine, "heuristic": "heuristic", "random": "random"},
                   deals=10, seed=1)
    print(table)

**This runs your code in this process: no sandbox, no limits** (no
deadline, memory or CPU cap). It is for your own code only; a stranger's
bot belongs in a league, in its sandbox.

A player is a function ``fn(obs, legal, info) -> index``; an SDK
``bots.sdk.Bot`` instance (that one object plays every seat it is given, in
every match: per-seat state belongs in a dict keyed by ``on_start``'s seat);
a ``Bot`` subclass (a fresh instance per seat); or the name of a reference
bot, ``"random"``, ``"heuristic"`` or ``"search"``, played from its Python
class (the search at ``SEARCH_MS``, default 100 ms a decision).

The same match runner that plays bot processes (``harness.match``) plays
these: an :class:`InProcessTransport` stands where a process's pipes would.
Each message (``start``, ``act``, ``end``) goes through a msgpack round trip
on its way in, and the reply on its way out, so a function sees exactly what
a bot process would (lists for tuples, the same keys), its answers are
checked the same way, and it faults the same way: an exception in your code
is that seat's ``crash`` fault (the traceback in ``stderr_tail``), its seat
plays on with random moves and ranks last, as a crashed process would
(``raise_errors=True`` raises it instead, for a debugger). A match of
``play`` has the ID ``league play`` gives the same game, seed and names on
this machine, so ``play(g, ["heuristic", "random", "random"], seed=s)`` is
``league play g heuristic random random --seed s``, move for move.

``league`` plays the schedule a league file would (``harness.league``:
every table, balanced seatings, duplicate deals) and fits the table with the
same model as ``league table`` (``harness.stats.ratings.rating_fit``). With
``seed`` its deal seeds are those of a league file of the same ``name`` and
``seed``; without it, fresh deals each call.
"""

from __future__ import annotations

import hashlib
import operator
import os
import traceback
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Union, cast

import msgpack

from bots.sdk import PROTOCOL_VERSION, Bot, clock_of
from games import get_game
from harness.league import ROTATIONS, League, _copies, play_match_id
from harness.limits import Limits
from harness.match import BotPool, run_match
from harness.proc.botproc import (
    STDERR_TAIL_BYTES,
    BotClient,
    BotCrashed,
    BotError,
    BotTimeout,
    NoPipes,
)
from harness.proc.catalog import BotBundle, BotSpec
from harness.proc.sandbox import Sandbox
from harness.records import MatchResult
from harness.stats.ratings import RatingFit, RatingRow, rating_fit

Function = Callable[[dict[str, Any], list[Any], dict[str, Any]], int]
Player = Union[Function, Bot, type[Bot], str]
MakeBot = Callable[[], Bot]

REFERENCE_BOTS = ("random", "heuristic", "search")


# ---- players -------------------------------------------------------------------------
class FunctionBot(Bot):
    """A function as an SDK bot: ``fn(obs, legal, info)``, where ``info`` is
    the match's ``start`` message (match_id, game, seat, players, names,
    teams, partners, limits) with the decision's ``decision`` and
    ``time_left_ms``."""

    def __init__(self, fn: Function, name: str) -> None:
        self.fn = fn
        self.name = name
        self.match: dict[str, Any] = {}

    def on_start(self, match: dict[str, Any]) -> None:
        self.match = {key: value for key, value in match.items() if key != "type"}

    def act(self, message: dict[str, Any]) -> Any:
        info = {**self.match, "decision": message.get("decision"),
                "time_left_ms": message.get("time_left_ms")}
        return self.fn(message["obs"], message["legal"], info)


def reference_bot(name: str) -> Bot:
    """A fresh instance of a reference bot's Python class."""
    if name == "random":
        from bots.random_bot import RandomBot
        return RandomBot()
    if name == "heuristic":
        from bots.heuristic_bot import HeuristicBot
        return HeuristicBot()
    if name == "search":
        from bots.search_bot import SearchBot
        return SearchBot()
    raise ValueError(f"unknown bot {name!r}: in process, a name is one of "
                     f"{', '.join(REFERENCE_BOTS)}; pass anything else as a function or a Bot")


def _maker(player: Player, name: str) -> MakeBot:
    """How to make the Bot of one seat: a fresh one per seat, except a Bot
    instance, which is the caller's own object."""
    if isinstance(player, str):
        reference_bot(player)  # an unknown name fails here, before any match
        return lambda: reference_bot(player)
    if isinstance(player, Bot):
        return lambda: player
    if isinstance(player, type) and issubclass(player, Bot):
        return player
    if callable(player) and not isinstance(player, type):
        function = cast(Function, player)
        return lambda: FunctionBot(function, name)
    raise TypeError(f"player {name!r} ({type(player).__name__}) cannot play: give a function "
                    f"fn(obs, legal, info) -> index, a bots.sdk.Bot (instance or class), "
                    f"or one of {', '.join(REFERENCE_BOTS)}")


def _name_of(player: Player) -> str:
    if isinstance(player, str):
        return player
    if isinstance(player, Bot) or isinstance(player, type) and issubclass(player, Bot):
        return str(player.name)
    name = getattr(player, "__name__", type(player).__name__)
    return "fn" if name == "<lambda>" else name


def _seat_names(players: Sequence[Player]) -> tuple[list[str], dict[str, MakeBot]]:
    """Names by seat and each name's maker. Seats that hold the same object
    share its name; different objects under one name get ``name#2``, ...
    (two lambdas, say)."""
    names: list[str] = []
    makers: dict[str, MakeBot] = {}
    owner: dict[str, int] = {}  # name -> id() of the object it stands for
    for player in players:
        base = name = _name_of(player)
        key = player if isinstance(player, str) else id(player)
        copy = 1
        while name in owner and owner[name] != key:
            copy += 1
            name = f"{base}#{copy}"
        if name not in owner:
            owner[name] = key  # type: ignore[assignment]
            makers[name] = _maker(player, name)
        names.append(name)
    return names, makers


# ---- the transport -------------------------------------------------------------------
def wire(value: Any) -> Any:
    """A value as it arrives after a pipe: msgpack's round trip, decoded as
    the SDK decodes it."""
    return msgpack.unpackb(msgpack.packb(value), raw=False, strict_map_key=False)


def _as_index(value: Any) -> Any:
    """An int for anything that is one (numpy integers too); anything else
    as it is, for the harness to reject as a bot's bad answer. A value
    msgpack cannot carry goes as its repr, named in the fault."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    try:
        msgpack.packb(value)
    except (TypeError, ValueError, OverflowError):
        return repr(value)
    return value


def answer(bot: Bot, message: dict[str, Any]) -> dict[str, Any] | None:
    """What ``bots.sdk.run`` replies to ``message`` for ``bot`` (None: no
    reply); a FunctionBot's ``act`` gets the whole request."""
    kind = message.get("type")
    if kind == "act":
        if isinstance(bot, FunctionBot):
            index = bot.act(message)
        else:
            bot.clock = clock_of(message)
            index = bot.choose(message["obs"], message["legal"], message["time_left_ms"])
        return {"type": "action", "index": _as_index(index), "decision": message.get("decision")}
    if kind == "start":
        bot.on_start(message)
    elif kind == "end":
        bot.on_end(message)
    elif kind == "hello":
        return {"type": "hello", "protocol": PROTOCOL_VERSION, "name": bot.name}
    return None


def _user_traceback(exc: Exception) -> str:
    """The exception's traceback from the first frame outside this module:
    the bot's own code, not the transport that called it."""
    frames = exc.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename == __file__:
        frames = frames.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, frames))
    return text[-STDERR_TAIL_BYTES:]


class InProcessTransport(NoPipes):
    """A Bot in this process where a bot process's pipes would be (a
    ``harness.proc.botproc.Transport``): each message the harness sends goes
    through msgpack to the bot, as ``bots.sdk.run`` hands it over, and the
    reply back through msgpack. Nothing waits, so deadlines never pass. An
    exception in the bot's code is a crash of this 'process', with the
    traceback as its stderr; ``raise_errors`` lets it through instead."""

    def __init__(self, bot: Bot, raise_errors: bool = False) -> None:
        self.bot = bot
        self.raise_errors = raise_errors
        self.replies: deque[Any] = deque()
        self.closed = False
        self.traceback = ""

    def send(self, message: dict[str, Any], deadline: float = 0.0) -> None:
        if self.closed:
            raise BotCrashed("the in-process bot was closed")
        try:
            reply = answer(self.bot, wire(message))
        except Exception as exc:
            if self.raise_errors:
                raise
            self.traceback = _user_traceback(exc)
            raise BotCrashed(f"{type(exc).__name__}: {exc}"[:500], self.traceback) from None
        if reply is not None:
            self.replies.append(wire(reply))

    def receive(self, deadline: float) -> Any:
        if not self.replies:
            raise BotTimeout("the in-process bot sent no reply")
        return self.replies.popleft()

    def receive_ready(self, ready: Sequence[int]) -> tuple[bool, Any]:
        return True, self.receive(0.0)

    def wait_fds(self) -> tuple[int, ...]:
        return ()  # always ready: a poller never waits on it

    def ensure_quiet(self) -> None:
        pass

    def alive(self) -> bool:
        return not self.closed

    def stderr_tail(self) -> str:
        return self.traceback

    def cpu_seconds(self) -> float:
        return 0.0

    def live_breach(self) -> str:
        return ""

    def close(self, grace_s: float = 0.0) -> None:
        self.closed = True


class LocalPool(BotPool):
    """A BotPool whose ``local`` bots are Python objects in this process
    (InProcessTransport), the others bot processes as ever: ``league play
    --human`` mixes the two. A local name is made anew, by its maker, each
    time the pool would start a process."""

    def __init__(self, local: Mapping[str, MakeBot], limits: Limits | None = None,
                 specs: dict[str, BotSpec] | None = None, sandbox: Sandbox | None = None,
                 raise_errors: bool | Iterable[str] = False,
                 bundles: dict[str, BotBundle] | None = None) -> None:
        specs = specs or {}
        if bundles is None and not specs:
            bundles = {}
        super().__init__(specs, limits or Limits(), sandbox or Sandbox("none"), bundles)
        self.local = dict(local)
        # which local bots' exceptions are let through (True: all)
        self.raising = set(self.local) if raise_errors is True else set(raise_errors or ())

    def begin(self, name: str, deal: Hashable | None = None) -> Future[BotClient]:
        """A local bot is greeted at once, on this thread: its hello costs
        nothing, so it needs no thread of its own."""
        if name not in self.local:
            return super().begin(name, deal)
        future: Future[BotClient] = Future()
        try:
            future.set_result(self.acquire(name, deal))
        except BotError as error:  # a Bot whose name cannot be read, say
            future.set_exception(error)
        return future

    def _spawn(self, name: str) -> BotClient:
        make = self.local.get(name)
        if make is None:
            return super()._spawn(name)
        with self._lock:
            self.starts[name] += 1
        client = BotClient(InProcessTransport(make(), name in self.raising), name)
        client.trace = self.trace
        return client


# ---- results -------------------------------------------------------------------------
@dataclass(repr=False)
class Match(MatchResult):
    """A MatchResult (``harness.records``) that prints its standings, with
    its readable log and replay page."""

    def __repr__(self) -> str:
        title = get_game(self.game).INFO.title
        lines = [f"{title}, seed {self.seed}: {self.decisions} decisions"
                 f"{', CAPPED' if self.capped else ''}"]
        for seat in sorted(range(len(self.bots)), key=lambda s: (self.ranks[s], s)):
            fault = self.faults[seat]
            note = f"  FAULT {fault.kind} at decision {fault.decision}: {fault.detail}" if fault else ""
            lines.append(f"  {self.ranks[seat]}. seat {seat} {self.bots[seat]}  "
                         f"score {self.scores[seat]:g}{note}")
        return "\n".join(lines)

    def log(self) -> str:
        """Every decision and the game's narration, as ``league play -v``
        prints them, faults marked."""
        from harness.replay import replay_lines

        faults = {seat: fault for seat, fault in enumerate(self.faults) if fault}
        return "\n".join(replay_lines(self.replay, faults))

    def write_html(self, path: str | Path) -> Path:
        """The match as one self-contained page to step through (what
        ``league replay --html`` writes for a stored match)."""
        from harness.web.replay_html import replay_page

        row = {"id": self.match_id, "league": None, "game": self.game,
               "rules_version": self.rules_version, "seed": self.seed,
               "status": "faulted" if any(self.faults) else "ok", "capped": int(self.capped),
               "faulted": sum(1 for f in self.faults if f), "decisions": self.decisions,
               "duration_s": self.duration_s}
        page = replay_page(row, _seat_rows(self), self.replay)
        path = Path(path)
        path.write_text(page, encoding="utf-8")
        return path


def _team_of(result: MatchResult) -> dict[int, int]:
    return {seat: index for index, team in enumerate(result.teams or []) for seat in team}


def _seat_rows(result: MatchResult, deal: int | None = None,
               league: str | None = None) -> list[dict[str, Any]]:
    """The match's seat rows, as the store keeps them (what ratings read)."""
    team_of = _team_of(result)
    return [{"match_id": result.match_id, "seat": seat, "bot": bot,
             "team": team_of.get(seat, seat), "score": result.scores[seat],
             "rank": result.ranks[seat], "fault_kind": fault.kind if fault else None,
             "fault_decision": fault.decision if fault else None,
             "fault_detail": fault.detail if fault else None, "deal": deal, "league": league}
            for seat, (bot, fault) in enumerate(zip(result.bots, result.faults))]


def _as_match(result: MatchResult) -> Match:
    return Match(**{f.name: getattr(result, f.name) for f in fields(MatchResult)})


# ---- one match -----------------------------------------------------------------------
def _match_id(game: str, seed: int, names: list[str]) -> str:
    """``league play``'s ID for this match; where its key cannot be kept (a
    read-only home), one from the game, seed and names alone."""
    try:
        return play_match_id(game, seed, names)
    except OSError:
        digest = hashlib.sha256(f"{game}|{seed}|{','.join(names)}".encode()).hexdigest()
        return f"local-{game}-{digest[:16]}"


def play(game: str, players: Sequence[Player], seed: int = 0, *,
         raise_errors: bool = False, limits: Limits | None = None) -> Match:
    """One match of ``game`` in this process, one player per seat (see the
    module doc); no sandbox, no limits: for your own code only.

    Same game, seed and players: the same match, move for move (as long as
    your own code is deterministic: seed any randomness from ``info``'s
    match_id and seat). An exception in a player's code is its seat's
    ``crash`` fault (``match.faults[seat]``, traceback in ``stderr_tail``),
    or, with ``raise_errors``, raised. ``limits`` only says what bots are
    told in ``start`` (the search sizes its thinking by ``decision_ms``)."""
    get_game(game).INFO.check_players(len(players))
    names, makers = _seat_names(players)
    pool = LocalPool(makers, limits, raise_errors=raise_errors)
    try:
        result = run_match(game, seed, names, pool, match_id=_match_id(game, seed, names))
    finally:
        pool.close()
    return _as_match(result)


# ---- a league ------------------------------------------------------------------------
@dataclass
class Table:
    """What ``league()`` returns: the rating table (best first, as ``league
    table`` prints it), the fit its intervals and differences come from,
    and every match."""

    league: League
    fit: RatingFit
    matches: list[Match]

    @property
    def rows(self) -> list[RatingRow]:
        return self.fit.rows

    def difference(self, first: str, second: str) -> Any:
        """Elo of ``first`` minus ``second``, its 95% interval and LOS."""
        return self.fit.difference(first, second)

    def ms_per_move(self) -> dict[str, float]:
        """Each player's mean think time per decision, in milliseconds."""
        total: dict[str, list[float]] = {}
        for match in self.matches:
            for bot, think in zip(match.bots, match.think or []):
                entry = total.setdefault(bot, [0.0, 0.0])
                entry[0] += think.total_ms
                entry[1] += think.moves
        return {bot: ms / moves if moves else 0.0 for bot, (ms, moves) in total.items()}

    def __repr__(self) -> str:
        faulted = sum(1 for m in self.matches if any(m.faults))
        league = self.league
        times = self.ms_per_move()
        header = ["#", "bot", "elo", "95% interval", "games", "avg score", "avg rank", "faults",
                  "ms/move"]
        cells = [[str(i), r.bot, f"{r.elo:.1f}", f"[{r.elo_low:.1f}, {r.elo_high:.1f}]",
                  str(r.games), f"{r.avg_score:.2f}", f"{r.avg_rank:.2f}", str(r.faults),
                  f"{times.get(r.bot, 0.0):.2f}"] for i, r in enumerate(self.rows, 1)]
        widths = [max(len(row[c]) for row in cells + [header]) for c in range(len(header))]
        lines = [f"{league.game}, {league.players} seats, {league.deals} deals: "
                 f"{len(self.matches)} matches ({faulted} with faults)"]
        lines += ["  ".join(cell.ljust(w) if c == 1 else cell.rjust(w)
                            for c, (cell, w) in enumerate(zip(row, widths))).rstrip()
                  for row in [header] + cells]
        return "\n".join(lines)


def default_seats(game: str, players: int) -> int:
    """Everyone at one table where the game allows it: the smallest player
    count the game allows from ``players`` up, else its largest."""
    counts = get_game(game).INFO.player_counts()
    return next((n for n in counts if n >= players), counts[-1])


def _plan(game: str, names: list[str], seats: int, deals: int, seed: int | None, name: str,
          copies: dict[str, int], rotation: str, partners: str, limits: Limits) -> League:
    """The League a league file with these fields would load as, checked as
    ``load_league`` checks one (ValueError, naming the argument)."""
    where = "league()"
    info = get_game(game).INFO
    info.check_players(seats)
    if deals < 1:
        raise ValueError(f"{where}: deals must be at least 1, got {deals}")
    if rotation not in ROTATIONS:
        raise ValueError(f"{where}: rotation must be one of {', '.join(ROTATIONS)}")
    if partners not in ("copies", "mixed"):
        raise ValueError(f"{where}: partners must be \"copies\" or \"mixed\"")
    copies = _copies({"copies": copies}, names, seats, info.teams(seats), where)
    plan = League(name=name, game=game, bots=names, players=seats, deals=deals,
                  rotation=rotation, partners=partners, seed=seed, limits=limits, copies=copies,
                  bundles={n: BotBundle("local", ()) for n in names})
    if plan.table_count() == 0:
        raise ValueError(f"{where}: no table of {seats} seats can be formed from {names}")
    return plan


def league(game: str, players: Mapping[str, Player] | Sequence[Player], *,
           seats: int | None = None, deals: int = 10, seed: int | None = None,
           name: str = "local", copies: Mapping[str, int] | None = None,
           rotation: str = "balanced", partners: str = "copies",
           raise_errors: bool = False, limits: Limits | None = None,
           on_match: Callable[[Match], None] | None = None) -> Table:
    """A small league in this process; no sandbox, no limits: for your own
    code only. ``players``: names to players (a list names them itself).
    Its schedule is a league file's with these fields (``seats`` is the
    file's ``players``; by default all of them at one table where the game
    allows): every table, each deal in balanced seatings. ``seed``: the
    deals of a league file with this ``name`` and public ``seed``; None:
    fresh deals. ``on_match`` sees each match as it ends (self-play data).
    Returns the rating table."""
    if isinstance(players, Mapping):
        names = list(players)
        makers = {n: _maker(p, n) for n, p in players.items()}
    else:
        names, makers = _seat_names(list(dict.fromkeys(players, None)))
    if len(set(names)) < 2:
        raise ValueError(f"a league needs at least 2 players, got {len(set(names))}")
    plan = _plan(game, names, seats or default_seats(game, len(names)), deals, seed, name,
                 dict(copies or {}), rotation, partners, limits or Limits())
    deal_key = os.urandom(32).hex() if seed is None else ""
    names_of = {plan.bot_id(n): n for n in names}
    pool = LocalPool(makers, plan.limits, raise_errors=raise_errors)
    matches: list[Match] = []
    rows: list[dict[str, Any]] = []
    try:
        for scheduled in plan.schedule():
            bots = [names_of[bot_id] for bot_id in scheduled.seats]
            result = _as_match(run_match(game, plan.deal_seed(scheduled.deal, deal_key), bots,
                                         pool, scheduled.match_id))
            matches.append(result)
            rows += _seat_rows(result, scheduled.deal, name)
            if on_match is not None:
                on_match(result)
    finally:
        pool.close()
    return Table(plan, rating_fit(rows), matches)


__all__ = ["FunctionBot", "InProcessTransport", "LocalPool", "Match", "Player", "Table",
           "league", "play", "reference_bot"]
