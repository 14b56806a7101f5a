"""The match runner: one match between bot processes, faults recorded.

A bot that fails to start, times out, crashes, sends something that is not a
valid message, or picks an illegal action is *faulted*: the fault (kind,
decision number, detail, stderr tail) is recorded, the process is killed with
its process group, its seat plays on with seeded random legal moves so the
others' game stays meaningful, and it is ranked last (in team games its whole
team is). A match that reaches the game's hard cap on decisions ends, is
scored as it stands, and is marked capped.
"""

from __future__ import annotations

import os
import random
import select
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Generator, Hashable, Iterable, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_all
from typing import Any

import msgpack

from games import Game, get_game, ranks_by_unit
from harness.clock import SeatClock
from harness.limits import Limits
from harness.proc.botproc import (
    STDERR_TAIL_BYTES,
    BotClient,
    BotError,
    BotStartupError,
    Tracer,
    dropped_note,
)
from harness.proc.catalog import BotBundle, BotCache, BotSpec, ManifestError
from harness.proc.sandbox import Sandbox
from harness.records import DecisionStderr, EndFault, Fault, MatchResult, ThinkTime
from harness.replay import decision_line, drain_event_lines, fault_line, stderr_lines

EventSink = Callable[[str], None]
STDERR_MATCH_BYTES = 64 << 10  # per bot per match, where each decision's stderr is kept


_MATERIALISING = threading.Lock()  # BotCache.materialise redirects sys.stdout while it compiles


class BotPool:
    """Persistent bot processes, reused across matches: one process plays many
    matches in a row. A faulted process is killed and a fresh one started the
    next time that bot is needed. Each process runs from the materialised
    copy of its version (``bundles``, built by the caller once) inside the
    sandbox.

    :meth:`begin` spawns a process on the caller's thread (milliseconds: the
    harness's own work), then waits for its hello, which takes as long as the
    bot likes up to the start-up limit, on a thread of its own: a worker
    plays its matches in flight on one thread, and a bot that takes seconds
    to start must hold up only its own match, not the others' replies (nor
    count in their think times). The spawn stays on the caller's thread
    because bubblewrap's ``--die-with-parent`` (PR_SET_PDEATHSIG) kills the
    sandbox when the *thread* that forked it ends.

    No process plays a deal twice: each remembers the deals it was handed
    (``deal``: any key, match_deal() for a match), and one that has seen a
    match's deal is never handed to it: a bot that remembers one seating of
    a duplicate deal would know, in the next, the cards its opponents held.
    It goes on to other deals instead, so a worker ends up with about as
    many processes of a bot as it plays seatings of one deal, each playing
    every deal once (runner._spread_deals orders the schedule so that a
    worker plays few seatings of any one deal).

    A process that fails after its match's ``end`` (it dies, or writes to
    stdout, before it has read anything of its next ``start``) is seen at its
    next use: taken for a match, or closed. That fault is the ended match's
    (BotClient._ended_match): the pool keeps it as an EndFault for whoever
    stores that match (``take_end_faults``), and the next match gets a
    fresh process with no fault."""

    def __init__(self, specs: dict[str, BotSpec], limits: Limits,
                 sandbox: Sandbox | None = None,
                 bundles: dict[str, BotBundle] | None = None,
                 cache: BotCache | None = None) -> None:
        self.specs = specs
        self.limits = limits
        self.sandbox = sandbox or Sandbox()
        self.bundles = bundles if bundles is not None else {n: s.bundle() for n, s in specs.items()}
        self.cache = cache or BotCache()
        self.trace: Tracer | None = None  # sees every protocol message (play --trace)
        # keep each decision's stderr in results (play --stderr, [logs] stderr = "all")
        self.keep_stderr = False
        self.idle: dict[str, list[BotClient]] = {}
        self.starts: Counter[str] = Counter()
        # the deals each live process was handed; a closed one drops out
        self.seen: weakref.WeakKeyDictionary[BotClient, set[Hashable]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()  # handshakes run on threads of their own
        self._greeters: set[threading.Thread] = set()
        self._end_faults: list[EndFault] = []

    def note_end_fault(self, bot: str, error: BotError | None) -> None:
        """Keep the fault a process made after its match's end (``error``
        names the match in ``after_match``; None: there was none)."""
        if error is None or error.after_match is None:
            return
        match_id, seat = error.after_match
        with self._lock:
            self._end_faults.append(EndFault(match_id, seat, bot, error.kind, error.detail,
                                             error.stderr_tail[-STDERR_TAIL_BYTES:]))

    def take_end_faults(self) -> list[EndFault]:
        """The end faults seen since the last call."""
        with self._lock:
            taken, self._end_faults = self._end_faults, []
        return taken

    def _close(self, client: BotClient) -> None:
        """Close a process; a fault it made after its last match's end is kept."""
        self.note_end_fault(client.label, client.close())

    def total_starts(self) -> int:
        return sum(self.starts.values())

    def _take_idle(self, name: str, deal: Hashable | None) -> BotClient | None:
        """The idle process of ``name`` released last that has not seen
        ``deal`` (None: any), marked as having seen it; the dead ones met on
        the way are closed (outside the lock: a close waits for the quit)."""
        dead: list[BotClient] = []
        taken = None
        with self._lock:
            idle = self.idle.setdefault(name, [])
            for position in range(len(idle) - 1, -1, -1):
                client = idle[position]
                if not client.usable:  # died after its end: that match's fault, if it was one
                    del idle[position]
                    dead.append(client)
                    continue
                seen = self.seen.setdefault(client, set())
                if deal is None or deal not in seen:
                    del idle[position]
                    if deal is not None:
                        seen.add(deal)
                    taken = client
                    break
        for client in dead:
            self._close(client)
        return taken

    def acquire(self, name: str, deal: Hashable | None = None) -> BotClient:
        """An idle process of ``name`` that has not seen ``deal``, else a
        new one, started and greeted on this thread."""
        client = self._take_idle(name, deal)
        if client is None:
            client = self._spawn_for(name, deal)
            self._greet(client)
        return client

    def _spawn_for(self, name: str, deal: Hashable | None) -> BotClient:
        """A new process of ``name``, not yet greeted, marked as dealt ``deal``."""
        client = self._spawn(name)
        with self._lock:
            self.seen[client] = set() if deal is None else {deal}
        return client

    def _spawn(self, name: str) -> BotClient:
        """A new process of ``name``, not yet greeted."""
        with self._lock:
            self.starts[name] += 1
        spec = self.specs[name]
        try:
            with _MATERIALISING:
                bot_dir = self.cache.materialise(name, self.bundles[name])
        except (OSError, ManifestError) as exc:
            raise BotStartupError(f"cannot prepare the bot's files: {exc}") from exc
        transport = self.sandbox.spawn(bot_dir, spec.argv(), spec.env, self.limits.resources,
                                       spec.protocol)
        client = BotClient(transport, name, cpu_limit_s=self.limits.resources.cpu_s)
        client.trace = self.trace
        if self.keep_stderr:
            transport.keep_stderr_log()
        return client

    def _greet(self, client: BotClient) -> None:
        try:
            client.handshake(self.limits.startup_ms / 1000)
        except BotError:
            client.close()
            raise

    def begin(self, name: str, deal: Hashable | None = None) -> Future[BotClient]:
        """A process of ``name`` for a match of ``deal``: an idle one that
        has not seen that deal at once, else a new one, greeted on a thread
        of its own. The future holds the client, or the BotError of a failed
        start (or a harness error)."""
        future: Future[BotClient] = Future()
        idle = self._take_idle(name, deal)
        if idle is not None:
            future.set_result(idle)
            return future
        try:
            client = self._spawn_for(name, deal)
        except Exception as exc:  # noqa: BLE001 - the match that waits gets it
            future.set_exception(exc)
            return future
        greeter = threading.Thread(target=self._greet_into, args=(client, future), daemon=True,
                                   name=f"hello {name}")
        with self._lock:
            self._greeters.add(greeter)
        greeter.start()
        return future

    def _greet_into(self, client: BotClient, future: Future[BotClient]) -> None:
        try:
            self._greet(client)
        except BaseException as exc:  # noqa: BLE001 - the match that waits gets it
            future.set_exception(exc)
        else:
            future.set_result(client)
        finally:
            with self._lock:
                self._greeters.discard(threading.current_thread())

    def abandon(self, future: Future[BotClient]) -> None:
        """A start whose match was stopped before it could use it (Ctrl-C):
        the process, if it starts, is closed, like those of the matches
        stopped mid-play."""
        def settle(done: Future[BotClient]) -> None:
            if done.exception() is None:
                self._close(done.result())
        future.add_done_callback(settle)

    def release(self, client: BotClient) -> None:
        if client.usable:
            with self._lock:
                self.idle.setdefault(client.label, []).append(client)
        else:
            self._close(client)

    def close(self) -> None:
        """Close every idle process, once the handshakes under way have ended
        (each within the start-up limit)."""
        with self._lock:
            greeters = list(self._greeters)
        for greeter in greeters:
            greeter.join()
        with self._lock:
            clients = [c for idle in self.idle.values() for c in idle]
            self.idle.clear()
        for client in clients:
            self._close(client)


def ranks_with_faults(
    ranks: Sequence[int], faulted: set[int], teams: Sequence[Sequence[int]] | None
) -> list[int]:
    """Faulted seats (with their whole team) go last, sharing the last rank;
    the others keep their order."""
    losers = set(faulted)
    if teams:
        for team in teams:
            if losers.intersection(team):
                losers.update(team)
    if not losers:
        return list(ranks)
    keys = [(0, 0) if seat in losers else (1, -rank) for seat, rank in enumerate(ranks)]
    return ranks_by_unit(keys, teams)


class _Seat:
    """One seat's bot during a match, or its random stand-in after a fault."""

    def __init__(self, seat: int, bot: str, fallback_seed: str) -> None:
        self.seat = seat
        self.bot = bot
        self.client: BotClient | None = None
        self.fault: Fault | None = None
        self.fallback = random.Random(fallback_seed)

    def record(self, error: BotError, decision: int, started: bool = True) -> None:
        self.fault = Fault(error.kind, decision, error.detail,
                           error.stderr_tail[-STDERR_TAIL_BYTES:], started)
        if self.client is not None:
            self.client.close()  # kills the process group


def match_deal(game_slug: str, seed: int) -> Hashable:
    """What makes two matches the same deal, for BotPool: the game and the
    seed (the seatings of a duplicate deal differ only in who sits where).
    Not the players: limit deals the same cards to 3 players and to 4."""
    return (game_slug, seed)


def run_match(
    game_slug: str,
    seed: int,
    bots: Sequence[str],
    pool: BotPool,
    match_id: str,
    on_event: EventSink | None = None,
) -> MatchResult:
    """Play one match; the deadlines are the pool's limits, which the bots are told."""
    steps = match_steps(game_slug, seed, bots, pool, match_id, on_event)
    try:
        waited = next(steps)
        while True:
            if isinstance(waited, Starting):
                waited.wait()
                outcome: int | BotError | None = None
            else:
                try:
                    outcome = waited.await_answer()
                except BotError as error:
                    outcome = error
            waited = steps.send((outcome, time.perf_counter()))
    except StopIteration as stop:
        result: MatchResult = stop.value
        return result


class Starting:
    """What a match waits for before its first decision: the starts of its
    seats' bot processes still under way (BotPool.begin)."""

    __slots__ = ("futures",)

    def __init__(self, futures: Sequence[Future[BotClient]]) -> None:
        self.futures = futures

    def done(self) -> bool:
        return all(future.done() for future in self.futures)

    def wait(self) -> None:
        wait_all(self.futures)

    def notify(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` (from the starting thread) as each start ends."""
        for future in self.futures:
            future.add_done_callback(lambda _: wake())


# What a match is sent back: the answer (an index or the BotError it raised;
# None after Starting) and when its driver saw it (time.perf_counter).
Sent = tuple["int | BotError | None", float]
MatchSteps = Generator["BotClient | Starting", Sent, MatchResult]


def match_steps(
    game_slug: str,
    seed: int,
    bots: Sequence[str],
    pool: BotPool,
    match_id: str,
    on_event: EventSink | None = None,
) -> MatchSteps:
    """One match as a generator: first, if some of its bots are still
    starting, it yields their Starting and is sent (None, time) once they
    have; then it yields each client it has just asked for a decision and is
    sent back that client's answer (the index, or the BotError it raised)
    with the time its driver saw it; it returns the MatchResult. run_match()
    drives one at a time; play_interleaved() drives several on one thread.
    A seat's think time runs from the request to the moment the driver saw
    the reply (for play_interleaved, the poll that reported it), so the
    harness's turns at the other matches woken by the same poll are not
    counted; nor is the deadline: a reply that arrived in time counts,
    whenever it is read. Each seat's deadlines come from its SeatClock
    (harness.clock: decision_ms, or its clock and bank), charged with that
    think time after each reply."""
    limits = pool.limits
    game_class = get_game(game_slug)
    game: Game = game_class.new(len(bots), seed, narrate=on_event is not None)
    teams = game.teams()
    seats = [_Seat(s, name, f"{match_id}:{s}") for s, name in enumerate(bots)]
    started_at = time.time()
    clock = time.perf_counter()
    actions: list[Any] = []
    times_ms: list[int | None] = []
    think = [ThinkTime() for _ in bots]
    stderr = _StderrLog(len(bots)) if getattr(pool, "keep_stderr", False) else None
    deal = match_deal(game_slug, seed)
    starts = [pool.begin(name, deal) for name in bots]
    try:
        if not all(future.done() for future in starts):
            yield Starting(starts)
        _claim_starts(seats, starts)
        yield from _start_all(game, seats, seats, pool, match_id, teams, starts, deal)
        _report_start_faults(seats, on_event)
        _flush_events(game, on_event)
        cap = game.INFO.max_decisions
        clocks = [SeatClock(limits.for_name(name)) for name in bots]
        perf_counter = time.perf_counter
        while not game.is_terminal() and game.decisions < cap:
            seat = seats[game.current_player()]
            legal = game.legal_actions()
            client = seat.client
            said = ""  # this decision's stderr, where kept
            if seat.fault is None and client is not None:
                seat_clock = clocks[seat.seat]
                asked = perf_counter()
                try:  # the usual case: a bot chooses
                    client.ask(game.observation(seat.seat), legal, game.decisions,
                               seat_clock.allowed_ms(), seat_clock)
                except BotError as error:
                    outcome: int | BotError | None = error
                else:
                    outcome, seen = yield client
                if stderr is not None and not getattr(outcome, "after_match", None):
                    # after a reply, with what is still in the pipe; after a fault, what was read
                    said = stderr.add(game.decisions, seat.seat,
                                      client.take_stderr(settle=type(outcome) is int))
                if type(outcome) is int:
                    index = outcome
                    took_ms = (seen - asked) * 1000
                    think[seat.seat].add(took_ms)
                    seat_clock.charge(took_ms)
                    elapsed_ms: int | None = round(took_ms)
                else:
                    assert isinstance(outcome, BotError)
                    if outcome.after_match is not None:  # its last match's fault, not this one's
                        pool.note_end_fault(seat.bot, outcome)
                        yield from _fresh_processes([seat], pool, deal, starts)
                        yield from _start_all(game, seats, [seat], pool, match_id, teams, starts,
                                              deal)
                        continue  # the same decision, asked of the fresh process
                    index, elapsed_ms = _after_fault(game, seat, outcome, legal, on_event)
            else:
                index, elapsed_ms = seat.fallback.randrange(len(legal)), None
            action = legal[index]
            if on_event is not None:
                on_event(decision_line(game, action, elapsed_ms))
                for line in stderr_lines(seat.seat, seat.bot, said):
                    on_event(line)
                game.apply_unchecked(action)
                _flush_events(game, on_event)
            else:
                game.apply_unchecked(action)
            actions.append(action)
            times_ms.append(elapsed_ms)
        _check_seats_at_end(game, seats, on_event)
        capped = not game.is_terminal()
        ranks = ranks_with_faults(
            game.standings(), {s.seat for s in seats if s.fault}, teams)
        result = MatchResult(
            match_id=match_id, game=game_slug, rules_version=game.INFO.rules_version,
            seed=seed, bots=list(bots), scores=list(game.scores()), ranks=ranks,
            faults=[s.fault for s in seats], capped=capped, decisions=game.decisions,
            started_at=started_at, duration_s=time.perf_counter() - clock,
            teams=[list(t) for t in teams] if teams else None,
            replay={"game": game_slug, "rules_version": game.INFO.rules_version,
                    "players": len(bots), "seed": seed, "bots": list(bots),
                    "actions": msgpack.unpackb(msgpack.packb(actions)),
                    "times_ms": times_ms},
            think=think,
            stderr=stderr.entries() if stderr is not None else [],
        )
        _end_seats(game, seats, result, pool)
        return result
    finally:
        for seat, start in zip(seats, starts):
            if seat.client is not None:
                pool.release(seat.client)
            elif seat.fault is None:  # ended (closed) before it claimed its start
                pool.abandon(start)


class _StderrLog:
    """A match's per-decision stderr (DecisionStderr), each bot's within
    STDERR_MATCH_BYTES: the decision that reaches the cap keeps what fits
    and a marker that says how many bytes were dropped from there to the
    end of the match. Lines a bot writes between its decisions arrive
    with its next decision's: those of its start-up and ``start`` with its
    first, those of ``end`` with its first in the next match it plays (one
    process plays many)."""

    def __init__(self, seats: int) -> None:
        self.kept: list[DecisionStderr] = []
        self.room = [STDERR_MATCH_BYTES] * seats
        self.dropped = [0] * seats
        self.cut_at: list[int | None] = [None] * seats  # the decision a seat's room ran out at

    def add(self, decision: int, seat: int, text: str) -> str:
        """Keep a decision's text, cut to what is left of the seat's room; returns what was kept."""
        if not text:
            return ""
        data = text.encode("utf-8", "surrogateescape")
        if len(data) > self.room[seat]:
            self.dropped[seat] += len(data) - self.room[seat]
            if self.cut_at[seat] is None:
                self.cut_at[seat] = decision
            data = data[:self.room[seat]]
        self.room[seat] -= len(data)
        kept = data.decode("utf-8", "replace")
        if kept:
            self.kept.append(DecisionStderr(decision, seat, kept))
        return kept

    def entries(self) -> list[DecisionStderr]:
        """What was kept, each seat's count of dropped bytes appended to its
        entry of the decision its room ran out at (one entry a decision a seat)."""
        for seat, dropped in enumerate(self.dropped):
            decision = self.cut_at[seat]
            if decision is None:
                continue
            note = (f"{dropped_note(dropped)} (this decision's and the rest of the match's: "
                    f"the cap is {STDERR_MATCH_BYTES // 1024} KiB of stderr a bot a match)")
            entry = next((e for e in self.kept if e.seat == seat and e.decision == decision), None)
            if entry is None:
                self.kept.append(DecisionStderr(decision, seat, note))
            else:
                entry.text += ("" if entry.text.endswith("\n") else "\n") + note
        return self.kept


def _claim_starts(seats: list[_Seat], starts: list[Future[BotClient]]) -> None:
    """Each seat's started process, or its start-up fault. A harness error
    in a start (not a BotError) ends the match as one."""
    for seat, start in zip(seats, starts):
        try:
            seat.client = start.result()
        except BotError as error:
            seat.record(error, 0, started=False)


StartSteps = Generator[Starting, Sent, None]


def _start_all(game: Game, seats: list[_Seat], pending: list[_Seat], pool: BotPool,
               match_id: str, teams: Sequence[Sequence[int]] | None,
               starts: list[Future[BotClient]], deal: Hashable) -> StartSteps:
    """Send the ``pending`` seats' processes their start. A process found to
    have failed after its last match's end (dead, or output pending) is that
    match's fault, kept by the pool: its seat gets a fresh process, started
    here (yielding Starting while it starts), and no fault."""
    while pending:
        pending = _start_seats(game, seats, pending, pool, match_id, teams)
        yield from _fresh_processes(pending, pool, deal, starts)


def _fresh_processes(seats: list[_Seat], pool: BotPool, deal: Hashable,
                     starts: list[Future[BotClient]]) -> StartSteps:
    """Another process for each of these seats (kept in ``starts``, whose
    unclaimed ones are abandoned if the match is closed meanwhile)."""
    if not seats:
        return
    for seat in seats:
        seat.client = None
        starts[seat.seat] = pool.begin(seat.bot, deal)
    futures = [starts[seat.seat] for seat in seats]
    if not all(future.done() for future in futures):
        yield Starting(futures)
    _claim_starts(seats, futures)


def _start_seats(game: Game, seats: list[_Seat], pending: list[_Seat], pool: BotPool,
                 match_id: str, teams: Sequence[Sequence[int]] | None) -> list[_Seat]:
    """Start the match for the ``pending`` seats; the seats whose process
    failed after its previous match's end (its fault kept by the pool)."""
    names = [s.bot for s in seats]
    replace = []
    for seat in pending:
        if seat.client is None:
            continue
        team = next((list(t) for t in teams or () if seat.seat in t), None)
        info = {
            "match_id": match_id, "game": game.INFO.slug,
            "rules_version": game.INFO.rules_version, "seat": seat.seat,
            "players": len(seats), "names": names,
            "teams": [list(t) for t in teams] if teams else None,
            "partners": [s for s in team if s != seat.seat] if team else [],
            "limits": pool.limits.for_name(seat.bot).for_bot(),
        }
        try:
            seat.client.start_match(info, pool.limits.decision_ms / 1000)
        except BotError as error:
            if error.after_match is not None:
                pool.note_end_fault(seat.bot, error)
                replace.append(seat)
            else:
                seat.record(error, 0)
    return replace


def _after_fault(game: Game, seat: _Seat, error: BotError, legal: list[Any],
                 on_event: EventSink | None) -> tuple[int, None]:
    """Record the seat's fault; its random stand-in chooses (no bot time: None)."""
    _record_fault(seat, error, game.decisions, on_event)
    return seat.fallback.randrange(len(legal)), None


def _record_fault(seat: _Seat, error: BotError, decision: int,
                  on_event: EventSink | None) -> None:
    seat.record(error, decision)
    if on_event is not None:
        on_event(fault_line(seat.seat, seat.bot, seat.fault))


def _report_start_faults(seats: list[_Seat], on_event: EventSink | None) -> None:
    if on_event is not None:
        for seat in seats:
            if seat.fault is not None:
                on_event(fault_line(seat.seat, seat.bot, seat.fault))


def _check_seats_at_end(game: Game, seats: list[_Seat], on_event: EventSink | None) -> None:
    """Limits are read at most every 20 ms during play, so a breach in a
    match's last moments (a fork bomb at its last decision) would otherwise be
    seen only after the result was built, and lost. Recorded at the decision
    number after the last one."""
    for seat in seats:
        if seat.fault is None and seat.client is not None:
            try:
                seat.client.check_limits()
            except BotError as error:
                _record_fault(seat, error, game.decisions, on_event)


def _end_seats(game: Game, seats: list[_Seat], result: MatchResult, pool: BotPool) -> None:
    """Each seat still playing gets the result and its view of the final
    state: what happened after its last decision (the last trick, the last
    turns) it sees nowhere else. A bot that fails now (dead, output
    pending, a limit broken) made an end fault: recorded beside the result,
    which stands; its process is replaced."""
    limits = pool.limits
    message = {"match_id": result.match_id, "scores": result.scores, "ranks": result.ranks,
               "capped": result.capped}
    for seat in seats:
        if seat.fault is None and seat.client is not None:
            final = {**message, "seat": seat.seat, "obs": game.observation(seat.seat)}
            try:
                seat.client.end_match(final, limits.decision_ms / 1000)
            except BotError as error:
                ended = error.after_match or (result.match_id, seat.seat)
                if ended[0] == result.match_id:
                    result.end_faults.append(EndFault(
                        result.match_id, seat.seat, seat.bot, error.kind, error.detail,
                        error.stderr_tail[-STDERR_TAIL_BYTES:]))
                else:  # it had not read this match's start: its previous match's
                    pool.note_end_fault(seat.bot, error)
                seat.client.close()


def _flush_events(game: Game, on_event: EventSink | None) -> None:
    if on_event is not None:
        for line in drain_event_lines(game):
            on_event(line)


Ended = tuple[int, "MatchResult | Exception"]  # a match's position and its result


def play_interleaved(matches: Iterable[Callable[[], MatchSteps]],
                     in_flight: int) -> Generator[Ended, None, None]:
    """Several matches at once on this thread: each waits for its bot on one
    shared poll, and whichever bot answers first moves its match on. No
    threads, so no lock hand-offs; while one bot thinks the others' replies
    are handled, and one wake-up often finds several replies ready. A match
    whose bots are still starting (on threads of their own: BotPool.begin)
    waits aside until they have; the poll wakes for it. Yields (position in
    ``matches``, result) as each match ends; an exception a match raised (a
    harness or engine bug) is yielded as its result, and the others play on.
    Matches still in play when the caller stops (Ctrl-C) are closed: their
    bots are released, which ends the ones mid-match."""
    table = _Interleaved()
    queue = enumerate(matches)
    in_flight = max(1, in_flight)
    try:
        while True:
            while table.finished:
                yield table.finished.pop()
            while len(table.playing) < in_flight and (item := next(queue, None)):
                table.start(*item)
            if table.finished:  # matches that ended without waiting for a bot
                continue
            if not table.playing:
                return
            table.wait_once()
    finally:
        for entry in table.playing:
            entry.steps.close()  # runs the match's own clean-up: its bots released
        table.close()


class _Waiting:
    """A match in play_interleaved(): its steps, and the client it waits on."""

    __slots__ = ("position", "steps", "client", "deadline", "fds", "starting")

    def __init__(self, position: int, steps: MatchSteps) -> None:
        self.position = position
        self.steps = steps
        self.client: BotClient
        self.deadline = 0.0
        self.fds: tuple[int, ...] = ()
        self.starting: Starting | None = None


STARTING_POLL_MS = 1000  # the longest a wait for starts alone sleeps between checks


class _Interleaved:
    """The matches in play on one thread, and the poll their bots share. A
    pipe of its own wakes the poll when a bot start ends on its thread."""

    def __init__(self) -> None:
        self.poller = select.poll()
        self.waiting: dict[int, _Waiting] = {}  # by descriptor: each of a waiting client's
        self.playing: set[_Waiting] = set()
        self.ready: list[_Waiting] = []  # waiting on fake transports, which never block
        self.starting: list[_Waiting] = []  # waiting for their bots to start
        self.finished: list[Ended] = []
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._wake_lock = threading.Lock()  # no wake-up written after close()
        self.poller.register(self._wake_read, select.POLLIN)

    def _wake(self) -> None:
        """From a starting thread: wake the poll."""
        with self._wake_lock:
            if self._wake_write < 0:
                return
            try:
                os.write(self._wake_write, b"!")
            except BlockingIOError:  # full: the poll is woken already
                pass

    def close(self) -> None:
        with self._wake_lock:
            os.close(self._wake_write)
            os.close(self._wake_read)
            self._wake_write = self._wake_read = -1

    def start(self, position: int, start: Callable[[], MatchSteps]) -> None:
        try:
            entry = _Waiting(position, start())
        except Exception as exc:  # noqa: BLE001 - as in _advance()
            self.finished.append((position, exc))
            return
        self.playing.add(entry)
        self._advance(entry, None)

    def _advance(self, entry: _Waiting, sent: Sent | None) -> None:
        """Send the outcome in (None: start the match); park the match on its
        next client or its bots' starts, or record its end."""
        try:
            waited = next(entry.steps) if sent is None else entry.steps.send(sent)
        except StopIteration as stop:
            self._end(entry, stop.value)
            return
        except Exception as exc:  # noqa: BLE001 - one match's bug must not end the others
            self._end(entry, exc)
            return
        if isinstance(waited, Starting):
            entry.starting = waited
            self.starting.append(entry)
            waited.notify(self._wake)
            return
        entry.client, entry.deadline, entry.fds = waited, waited.deadline, waited.wait_fds()
        if not entry.fds:
            self.ready.append(entry)
        self._park(entry)

    def _end(self, entry: _Waiting, result: MatchResult | Exception) -> None:
        self.playing.discard(entry)
        self.finished.append((entry.position, result))

    def _park(self, entry: _Waiting) -> None:
        for fd in entry.fds:
            self.waiting[fd] = entry
            self.poller.register(fd, select.POLLIN)

    def _settle(self, entry: _Waiting, fds: Sequence[int] | None, seen: float) -> None:
        """Read what the entry's bot sent (``fds``: its descriptors poll
        reported, at ``seen``; None: past the deadline) and move its match on."""
        for fd in entry.fds:
            del self.waiting[fd]
            self.poller.unregister(fd)
        try:
            outcome: int | BotError | None = entry.client.answer(fds)
        except BotError as error:
            outcome = error
        if outcome is None:  # part of a reply: wait for the rest
            self._park(entry)
        else:
            self._advance(entry, (outcome, seen))

    def _started(self) -> None:
        """Move on the matches whose bots have all started (or failed to)."""
        try:
            os.read(self._wake_read, 4096)
        except BlockingIOError:  # woken by the timeout: nothing written
            pass
        now = time.perf_counter()
        for entry in [e for e in self.starting if e.starting is not None and e.starting.done()]:
            self.starting.remove(entry)
            entry.starting = None
            self._advance(entry, (None, now))

    def _timeout_ms(self, entries: set[_Waiting]) -> int:
        """Up to the first deadline; a wait for starts alone is woken by them."""
        if not entries:
            return STARTING_POLL_MS
        first_deadline = min(e.deadline for e in entries)
        return max(0, int((first_deadline - time.monotonic()) * 1000) + 1)

    def wait_once(self) -> None:
        """One wait on the shared poll, up to the first deadline; every bot
        that answered, and every one past its deadline, moves its match on,
        as does every match whose bots have started. A reply's think time
        ends at the poll that reported it."""
        while self.ready:
            self._settle(self.ready.pop(), (), time.perf_counter())
        if not self.waiting and not self.starting:
            return
        entries = set(self.waiting.values())
        events = self.poller.poll(self._timeout_ms(entries))
        seen = time.perf_counter()
        answered: dict[_Waiting, list[int]] = {}
        woken = False
        for fd, _ in events:
            if fd == self._wake_read:
                woken = True
            else:
                answered.setdefault(self.waiting[fd], []).append(fd)
        for entry, fds in answered.items():
            self._settle(entry, fds, seen)
        if woken or (self.starting and not events):
            self._started()
        now = time.monotonic()
        for entry in entries - answered.keys():
            if entry.deadline <= now:
                self._settle(entry, None, time.perf_counter())  # a timeout, unless the reply is whole
