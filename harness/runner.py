"""Running a league: the schedule goes out in batches to long-lived workers
that keep their bot processes alive between matches; results stream back and
are stored one match per transaction as they arrive.

Engines: ``ray`` (an embedded local Ray, or an existing cluster with
``address``), ``inline`` (the same worker code in this process) and ``auto``
(the default), which picks by a fixed rule (``first_engine``, ``HAND_OVER``):
Ray where ``address`` names a cluster or ``workers`` asks for more than one;
otherwise the run plays inline, and hands what is left to an embedded Ray only
where that can pay: on a machine of more than INLINE_CORES CPUs, once the
matches left would take more than INLINE_BUDGET_S inline at the rate of those
played so far. Ray's start-up (6-44 s on 2 busy cores) is then never paid for
a small schedule, nor on a machine where one worker keeps the cores busy:
inline, one worker keeps INLINE_CORES matches in flight (matches_in_flight),
and on 2 cores the demo league played at 20.7 matches/s inline against 16.8
on Ray's 2 workers. Either engine plays the same matches with the same seeds,
stores them as they come, and keeps the deal-memory rule (a fresh pool of bot
processes per worker; a hand-over closes the inline pool first).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import signal
import socket
import sys
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from harness.league import League, ScheduledMatch
from harness.match import (
    BotPool,
    Limits,
    MatchResult,
    MatchSteps,
    match_steps,
    play_interleaved,
    run_match,
)
from harness.proc.catalog import BotBundle, BotSpec
from harness.proc.sandbox import Sandbox
from harness.records import EndFault
from harness.store import Store

log = logging.getLogger(__name__)

BATCH_SIZE = 4
BATCHES_IN_FLIGHT_PER_WORKER = 2
# Matches in a row in which a bot faulted (any kind: it never started, timed
# out, crashed, sent garbage or an illegal action, broke a limit) that mark
# it broken for the rest of a run: its remaining matches are left for a later
# run. Three: one fault can be bad luck, three in a row is a bot that cannot
# play this league, and each more would cost every table it sits at (a start
# can take the whole start-up limit) for nothing.
BROKEN_AFTER = 3
ENGINES = ("auto", "ray", "inline")
# auto: the CPUs that one inline worker keeps busy (two matches in flight, each
# waiting on a bot process), beyond which Ray's workers can add any speed
INLINE_CORES = 2
# auto: matches left that would take longer than this inline go to Ray (on more
# than INLINE_CORES CPUs). Ray's start-up took 6-44 s on 2 cores; 60 s left
# inline is where a few more workers begin to win that back.
INLINE_BUDGET_S = 60.0


@dataclass(frozen=True)
class WorkerSetup:
    """Everything a worker needs, sent once when it starts: the bots travel
    as bundles of their files, so a node needs only the project installed."""

    game: str
    specs: dict[str, BotSpec]
    bundles: dict[str, BotBundle]
    limits: Limits
    sandbox: Sandbox
    concurrency: int | None = 1  # None: matches_in_flight() decides when the workers start
    keep_stderr: bool = False  # each decision's stderr in results (the league's [logs] stderr)

    @classmethod
    def of(cls, league: League, sandbox: Sandbox, concurrency: int | None = 1) -> WorkerSetup:
        return cls(league.game, league.specs, league.bundles, league.limits, sandbox, concurrency,
                   keep_stderr=league.stderr == "all")

    def with_workers(self, workers: int, cpus: float) -> WorkerSetup:
        if self.concurrency is not None:
            return self
        return replace(self, concurrency=matches_in_flight(workers, cpus))


def matches_in_flight(workers: int, cpus: float) -> int:
    """Matches a worker plays at once when the user did not say: 2 while the
    workers leave CPUs idle, else 1. Measured on 2 cores with the demo
    league's bots, the harness alone (``python -m harness.bench.decisions``,
    interleaved on one thread): one worker went from 13.3k to 16.0k
    decisions/s with 2 in flight and 17.7k with 3; two workers fell from
    20.3k to 16.7k with 2 each. With a worker per core the cores are busy
    already, and a second match only adds switches between bots."""
    return 2 if workers < cpus else 1


@dataclass(frozen=True)
class BatchItem:
    match_id: str
    seed: int
    bots: tuple[str, ...]  # bot names by seat


@dataclass
class MatchError:
    """A match the harness itself failed to play (a bug, not a bot fault):
    not stored, so the next run tries it again."""

    match_id: str
    traceback: str


@dataclass
class BatchReply:
    results: list[MatchResult | MatchError]
    starts: int  # bot processes this worker has started so far
    pid: int
    node: str = ""  # the Ray node ID (or host name) where the batch was played
    # faults bots made after the end of matches played so far (stored as amendments)
    end_faults: list[EndFault] = field(default_factory=list)


def _node_name() -> str:
    """The Ray node this process runs on (several nodes can share a host)."""
    # not imported here: an inline run has no Ray and need not pay for its import
    ray = sys.modules.get("ray")
    try:
        if ray is not None and ray.is_initialized():
            return str(ray.get_runtime_context().get_node_id())
    except Exception:  # noqa: BLE001 - no Ray, or not inside it: the host will do
        pass
    return socket.gethostname()


class MatchWorker:
    """Plays batches of matches with a persistent pool of bot processes,
    ``concurrency`` matches at a time, interleaved on one thread
    (match.play_interleaved): while one match waits for a bot, the others
    use the core (a lone ping-pong leaves cores idle between wake-ups)."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.pool = BotPool(setup.specs, setup.limits, setup.sandbox, setup.bundles)
        self.pool.keep_stderr = setup.keep_stderr
        self.game = setup.game
        self.node = _node_name()
        self.concurrency = setup.concurrency or 1

    def _play_one(self, item: BatchItem) -> MatchResult | MatchError:
        try:
            return run_match(self.game, item.seed, item.bots, self.pool, item.match_id)
        except Exception:  # noqa: BLE001 - an engine or harness bug must not end the run
            return MatchError(item.match_id, traceback.format_exc(limit=8))

    def play(self, batch: list[BatchItem]) -> BatchReply:
        if self.concurrency == 1:
            results = [self._play_one(item) for item in batch]
        else:
            results = self._play_interleaved(batch)
        return BatchReply(results, self.pool.total_starts(), os.getpid(), self.node,
                          self.pool.take_end_faults())

    def _play_interleaved(self, batch: list[BatchItem]) -> list[MatchResult | MatchError]:
        def starter(item: BatchItem) -> Callable[[], MatchSteps]:
            return lambda: match_steps(self.game, item.seed, item.bots, self.pool, item.match_id)
        results: list[MatchResult | MatchError | None] = [None] * len(batch)
        for position, outcome in play_interleaved(map(starter, batch), self.concurrency):
            if isinstance(outcome, Exception):  # an engine or harness bug must not end the run
                text = "".join(traceback.format_exception(outcome, limit=8))
                results[position] = MatchError(batch[position].match_id, text)
            else:
                results[position] = outcome
        return [r for r in results if r is not None]

    def close(self) -> tuple[int, list[EndFault]]:
        """Close the bots: the processes started, and the end faults seen
        (among them those of bots that died of their last ``end``)."""
        self.pool.close()
        return self.pool.total_starts(), self.pool.take_end_faults()


@dataclass
class RunSummary:
    scheduled: int
    already_done: int
    played: int
    faulted: int
    process_starts: int
    elapsed_s: float
    interrupted: bool
    errors: int = 0
    startup_s: float = 0.0  # starting the engine (Ray) and the workers
    unplayed: int = 0  # left for a later run: a bot in them did not start, or was broken
    broken: list[str] = field(default_factory=list)  # bot ids marked broken (BROKEN_AFTER)
    broken_why: dict[str, str] = field(default_factory=dict)  # by bot id, in a few words
    left: dict[str, int] = field(default_factory=dict)  # unplayed, by the bot id that left them
    # the last line of each harness error's traceback (the first few), to say what went wrong
    error_lines: list[str] = field(default_factory=list)
    workers: int = 0  # 0: none started (nothing to play)
    in_flight: int = 0  # matches each worker played at once
    engine: str = ""  # what played: "inline", "ray", or "inline, then ray" (a hand-over)
    stored_elsewhere: int = 0  # the league's stored matches its schedule does not hold

    @property
    def rate(self) -> float:
        """Matches per second of this run, engine start-up left out."""
        playing = self.elapsed_s - self.startup_s
        return self.played / playing if playing > 0 else 0.0


Progress = Callable[["RunProgress"], None]


class _Pending:
    """The schedule minus what is stored, checked chunk by chunk (the
    schedule is never loaded whole); counts the stored ones it passes."""

    def __init__(self, league: League, store: Store) -> None:
        self.skipped = 0
        self._matches = self._scan(league, store)

    def _scan(self, league: League, store: Store) -> Iterator[ScheduledMatch]:
        schedule = league.schedule()
        while True:
            chunk = list(itertools.islice(schedule, 500))
            if not chunk:
                return
            done = store.done_ids([m.match_id for m in chunk])
            self.skipped += len(done)
            yield from (m for m in chunk if m.match_id not in done)

    def __iter__(self) -> Iterator[ScheduledMatch]:
        return self._matches


def _spread_deals(matches: Iterable[ScheduledMatch], window: int) -> Iterator[ScheduledMatch]:
    """The same matches, ``window`` deals at a time, one seating of each in
    turn: the first seating of each deal of the window, then the second of
    each, and so on. A batch of ``window`` matches then holds ``window``
    different deals, and a deal's seatings go out in different batches, so
    to different workers as often as not. A bot process plays a deal once
    (BotPool), so a worker needs a process of a bot for each seating of
    one deal it plays: spread over the workers, the seatings of a deal
    need fewer processes on each (the demo league on 2 Ray workers: 18
    starts in all, where whole deals to each worker took 36), and the
    processes of a batch, all at the same seats, go from deal to deal.
    A run stopped part-way leaves at most a window of deals part-played."""
    deals: dict[int, list[ScheduledMatch]] = {}

    def turns() -> Iterator[ScheduledMatch]:
        rows = list(deals.values())
        deals.clear()
        for turn in range(max(map(len, rows), default=0)):
            yield from (row[turn] for row in rows if turn < len(row))

    for match in matches:
        if match.deal not in deals and len(deals) == window:
            yield from turns()
        deals.setdefault(match.deal, []).append(match)
    yield from turns()


def _batches(pending: Iterable[ScheduledMatch], league: League, deal_key: str, size: int,
             state: _RunState) -> Iterator[list[tuple[BatchItem, ScheduledMatch]]]:
    """The playable matches in batches of ``size``, deals spread
    (_spread_deals), each with its deal's seed under ``deal_key``."""
    names_of = {league.bot_id(name): name for name in league.bots}
    seed_of = functools.lru_cache(maxsize=1024)(functools.partial(league.deal_seed,
                                                                  deal_key=deal_key))

    def playable() -> Iterator[ScheduledMatch]:  # checked as each batch is drawn
        for match in _spread_deals(pending, size):
            broken = {bot for bot in match.seats if bot in state.broken}
            if broken:
                state.leave(broken)  # a later run plays it, the bot fixed or not
            else:
                yield match

    matches = playable()
    while True:
        batch = list(itertools.islice(matches, size))
        if not batch:
            return
        yield [(BatchItem(m.match_id, seed_of(m.deal), tuple(names_of[s] for s in m.seats)), m)
               for m in batch]


class Engine(Protocol):
    """How batches reach workers: start(), submit(), next_done(), stop()."""

    setup: WorkerSetup  # with its matches in flight decided once started
    closing_faults: list[EndFault]  # end faults the workers' bots made, found by stop()

    def start(self, workers: int | None) -> int: ...
    def submit(self, worker: int, batch: list[BatchItem]) -> None: ...
    def next_done(self) -> tuple[int, BatchReply]: ...
    def in_flight(self) -> int: ...
    def stop(self, abandon: bool = False) -> int: ...


class InlineEngine:
    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self.queue: deque[tuple[int, list[BatchItem]]] = deque()
        self.workers: list[MatchWorker] = []
        self.closing_faults: list[EndFault] = []

    def start(self, workers: int | None) -> int:
        count = workers or 1
        self.setup = self.setup.with_workers(count, os.cpu_count() or 1)
        self.workers = [MatchWorker(self.setup) for _ in range(count)]
        return count

    def submit(self, worker: int, batch: list[BatchItem]) -> None:
        self.queue.append((worker, batch))

    def next_done(self) -> tuple[int, BatchReply]:
        worker, batch = self.queue.popleft()
        return worker, self.workers[worker].play(batch)

    def in_flight(self) -> int:
        return len(self.queue)

    def take_back(self) -> list[list[BatchItem]]:
        """The batches submitted and not played yet (for a hand-over to Ray)."""
        batches = [batch for _, batch in self.queue]
        self.queue.clear()
        return batches

    def stop(self, abandon: bool = False) -> int:
        closed = [w.close() for w in self.workers]
        self.closing_faults = [fault for _, faults in closed for fault in faults]
        return sum(starts for starts, _ in closed)


def start_embedded_ray(ray: Any) -> None:
    """A Ray of the league's own, reachable from this machine's loopback only.
    "local", because with no address Ray joins RAY_ADDRESS or the last cluster
    `ray start` began here."""
    ray.init(address="local", include_dashboard=False, log_to_driver=False,
             configure_logging=False, _node_ip_address="127.0.0.1")


class ClusterUnreachable(RuntimeError):
    """``--address`` names no Ray cluster this machine can join."""


CLUSTER_PROBE_S = 5.0  # a TCP connect to HOST:PORT, before Ray's minutes of retries


def _probe_cluster(address: str, via: str = "") -> None:
    """Fail fast, in a sentence, where nothing listens at HOST:PORT: Ray itself
    retries a wrong address for minutes, logging as it goes. ``via``: where
    the address came from, to start the sentence."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ClusterUnreachable(f"{via}--address {address!r}: expected HOST:PORT (the head's "
                                 "`ray start --head --port`), or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CLUSTER_PROBE_S).close()
    except OSError as error:
        raise ClusterUnreachable(
            f"{via}no Ray cluster answers at {address} ({error.strerror or error}): start its "
            "head with `ray start --head --port PORT` there, or check the host and port") from None


class RayEngine:
    """Ray actors as workers. A worker that dies (its node lost, the process
    killed) is replaced and its batch sent again, up to MAX_REPLACEMENTS."""

    MAX_REPLACEMENTS = 8

    def __init__(self, setup: WorkerSetup, address: str | None) -> None:
        self.setup = setup
        self.address = address
        self.futures: dict[Any, tuple[int, list[BatchItem]]] = {}
        self.replacements = 0
        self.workers: list[Any] = []
        self.ray: Any = None
        self.closing_faults: list[EndFault] = []

    def start(self, workers: int | None) -> int:
        import ray

        # Ray sets its loggers up on import; its start-up notices are not the user's business
        logging.getLogger("ray").setLevel(logging.ERROR)
        if not ray.is_initialized():
            if self.address:
                self._join(ray, self.address)
            else:
                start_embedded_ray(ray)
        self.ray = ray
        cpus = ray.cluster_resources().get("CPU", 1)
        workers = workers or max(1, int(cpus))
        self.setup = self.setup.with_workers(workers, cpus)
        self.actor_class = ray.remote(MatchWorker)
        self.cpus_each = min(1.0, cpus / workers)
        self.workers = [self._new_worker() for _ in range(workers)]
        return workers

    @staticmethod
    def _join(ray: Any, address: str) -> None:
        """Join the cluster at ``address``, or fail in a sentence."""
        # auto follows RAY_ADDRESS where it is set, as Ray does
        named = os.environ.get("RAY_ADDRESS") if address == "auto" else address
        if named and named != "auto" and "://" not in named:
            via = "" if named == address else "--address auto follows RAY_ADDRESS: "
            _probe_cluster(named, via)
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        except ConnectionError as error:  # auto and no cluster here, or not Ray's port
            raise ClusterUnreachable(f"--address {address}: {error}") from None

    def _new_worker(self, replacing: bool = False) -> Any:
        # A replacement asks for no CPU: the dead worker's node may be gone with
        # its CPUs, and one that asked for a whole CPU could wait forever.
        return self.actor_class.options(
            num_cpus=0 if replacing else self.cpus_each, scheduling_strategy="SPREAD",
            max_restarts=0).remote(self.setup)

    def submit(self, worker: int, batch: list[BatchItem]) -> None:
        self.futures[self.workers[worker].play.remote(batch)] = (worker, batch)

    def next_done(self) -> tuple[int, BatchReply]:
        while True:
            ready, _ = self.ray.wait(list(self.futures), num_returns=1)
            worker, batch = self.futures.pop(ready[0])
            try:
                return worker, self.ray.get(ready[0])
            except self.ray.exceptions.RayActorError as exc:
                self._replace(worker, batch, exc)

    def _replace(self, worker: int, batch: list[BatchItem], exc: Exception) -> None:
        self.replacements += 1
        if self.replacements > self.MAX_REPLACEMENTS:
            raise RuntimeError(f"workers keep dying ({self.replacements} times): {exc}") from exc
        log.warning("worker %d died (%s); starting a new one", worker, type(exc).__name__)
        dead = self.workers[worker]
        self.workers[worker] = self._new_worker(replacing=True)
        # its other batch in flight died with it: send both again
        for future, (other, other_batch) in list(self.futures.items()):
            if other == worker:
                del self.futures[future]
                self.submit(worker, other_batch)
        self.ray.kill(dead)
        self.submit(worker, batch)

    def in_flight(self) -> int:
        return len(self.futures)

    def stop(self, abandon: bool = False) -> int:
        """Close every worker's bots (or, abandoning, kill the workers at once:
        their bots die with them: bwrap's --die-with-parent)."""
        starts = 0
        if self.ray is None:  # never started
            return 0
        if not abandon:
            try:
                closed = self.ray.get([w.close.remote() for w in self.workers], timeout=60)
                starts = sum(count for count, _ in closed)
                self.closing_faults = [fault for _, faults in closed for fault in faults]
            except Exception:  # noqa: BLE001 - workers that are gone have no bots left to close
                pass
        for worker in self.workers:
            self.ray.kill(worker)
        if not self.address:
            self.ray.shutdown()
        return starts


def pending_batches(league: League, store: Store,
                    size: int = BATCH_SIZE) -> Iterator[list[BatchItem]]:
    """The batches of ``size`` matches that a run of ``league`` would send
    out, in order: the schedule less what ``store`` holds, deals spread, read
    chunk by chunk as a run reads it; nothing is played or stored (what a
    schedule costs the driver: harness.bench). Its deals are the run's: from
    the league's public seed, or the secret key ``store`` keeps for it."""
    deal_key = store.league_secret(league.name)
    for batch in _batches(_Pending(league, store), league, deal_key, size, _RunState()):
        yield [item for item, _ in batch]


@dataclass(frozen=True)
class ScheduleCounts:
    """A league's schedule against its results file: ``stored``, the
    scheduled matches stored (for these bot versions: a match ID names its
    bots' versions), and ``elsewhere``, the league's stored matches that the
    schedule does not hold (earlier versions of a bot, or deals past
    ``deals``): kept, and rated as what they are, but never counted as
    played for this schedule. So ``scheduled = stored + to_play`` always."""

    scheduled: int
    stored: int
    elsewhere: int

    @property
    def to_play(self) -> int:
        return self.scheduled - self.stored


def count_schedule(league: League, store: Store) -> ScheduleCounts:
    """The schedule's matches stored, read chunk by chunk as a run reads them
    (the schedule is never loaded whole)."""
    schedule, stored, scheduled = league.schedule(), 0, 0
    while chunk := [m.match_id for m in itertools.islice(schedule, 500)]:
        scheduled += len(chunk)
        stored += len(store.done_ids(chunk))
    return ScheduleCounts(scheduled, stored, store.league_match_count(league.name)[0] - stored)


def first_engine(engine: str, address: str | None, workers: int | None) -> str:
    """The engine a run starts with. ``auto``: Ray where ``address`` names a
    cluster or ``workers`` asks for several; else inline (HAND_OVER may move
    the rest of the run to Ray later)."""
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r}: choose from {', '.join(ENGINES)}")
    if engine != "auto":
        return engine
    return "ray" if address is not None or (workers or 1) > 1 else "inline"


def hand_over_pays(inline_s: float, handled: int, left: int, cpus: int) -> bool:
    """``auto``: whether an inline run should hand its ``left`` matches to Ray,
    after ``handled`` matches in ``inline_s`` seconds: on more than
    INLINE_CORES CPUs, once they would take over INLINE_BUDGET_S inline."""
    return (cpus > INLINE_CORES and handled > 0 and left > 0
            and inline_s / handled * left > INLINE_BUDGET_S)


def _cpus() -> int:
    """The CPUs this process may run on (an embedded Ray's CPUs)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_league(league: League, store: Store, workers: int | None = None, engine: str = "auto",
               address: str | None = None, progress: Progress | None = None,
               max_matches: int | None = None, concurrency: int | None = 1,
               sandbox: Sandbox | None = None,
               stop_when: Callable[[], bool] | None = None,
               counts: ScheduleCounts | None = None) -> RunSummary:
    """Play every scheduled match not yet stored. Ctrl-C (SIGINT) or SIGTERM
    stops cleanly: in-flight batches finish and are stored, bots are closed.
    ``engine``: auto (module docstring), ray or inline; ``workers`` defaults
    to the CPUs of the cluster (Ray) or 1 (inline); ``concurrency`` (matches
    in flight per worker) None: matches_in_flight(). ``stop_when`` is asked
    after each batch: True ends the run once what is in flight is stored (a
    sequential test that has its answer). ``counts``: count_schedule's,
    where the caller has them already. With nothing to play the sandbox is
    not checked and no engine starts."""
    started = time.perf_counter()
    chosen = first_engine(engine, address, workers)
    counts = counts or count_schedule(league, store)
    scheduled = counts.scheduled
    deal_key = store.league_secret(league.name)  # the deals, unless the league's seed is public
    store.register_league(league.config(), scheduled,
                          [league.bot_id(name) for name in league.bots])
    for name, spec in league.specs.items():
        store.register_bot(league.bot_id(name), name, league.bundles[name].version,
                           str(spec.manifest), spec.command)
    to_play = counts.to_play if max_matches is None else min(counts.to_play, max_matches)
    state = _RunState()
    batches: Iterator[list[tuple[BatchItem, ScheduledMatch]]] = iter(())
    if to_play:
        matches = itertools.islice(_Pending(league, store), to_play)
        batches = _batches(matches, league, deal_key, max(BATCH_SIZE, 2 * (concurrency or 2)),
                           state)
    first = next(batches, None)
    if first is None:  # nothing to play: no sandbox probe, no engine, no workers
        return RunSummary(scheduled, counts.stored, 0, 0, 0, time.perf_counter() - started,
                          False, stored_elsewhere=counts.elsewhere)
    sandbox = sandbox or Sandbox()
    sandbox.check()
    batches = itertools.chain([first], batches)
    setup = WorkerSetup.of(league, sandbox, concurrency)
    runner: Engine = RayEngine(setup, address) if chosen == "ray" else InlineEngine(setup)
    may_hand_over = engine == "auto" and chosen == "inline" and workers is None
    used = [chosen]
    run_id = store.start_run(league.name, workers or 0)
    stop = _StopFlag()
    starts = 0
    try:
        with stop.catching():
            workers = runner.start(workers)
            state.startup_s = time.perf_counter() - started
            store.heartbeat(run_id, 0, 0, workers)
            _fill(runner, workers, [], batches, state.schedules, stop)
            inline_from, handled = time.perf_counter(), 0
            while runner.in_flight():
                worker, reply = runner.next_done()
                state.collect(reply, league, store, run_id)
                handled += len(reply.results)
                store.heartbeat(run_id, len(state.schedules), state.played)
                if progress:
                    progress(RunProgress(counts.stored + state.played, scheduled, state.played,
                                         state.faulted, time.perf_counter() - started,
                                         state.startup_s, state.leaders()))
                if stop_when is not None and not stop.raised and stop_when():
                    stop.raised = stop.satisfied = True
                if may_hand_over and not stop.raised and hand_over_pays(
                        time.perf_counter() - inline_from, handled, to_play - handled, _cpus()):
                    may_hand_over = False
                    assert isinstance(runner, InlineEngine)
                    waiting = runner.take_back()
                    starts += runner.stop()
                    state.amend(runner.closing_faults, store)
                    runner = RayEngine(setup, None)
                    used.append("ray")
                    began = time.perf_counter()
                    workers = runner.start(None)
                    state.startup_s += time.perf_counter() - began
                    store.heartbeat(run_id, len(state.schedules), state.played, workers)
                    _fill(runner, workers, waiting, batches, state.schedules, stop)
                    continue
                _submit_next(runner, worker, batches, state.schedules, stop)
            stop.drained = True
        if stop.raised and not stop.satisfied:
            state.outcome = "interrupted"
        elif state.errors or state.unplayed:
            state.outcome = "incomplete"  # matches missing: a later run plays them
    except KeyboardInterrupt:  # a second Ctrl-C: abandon what is in flight
        state.outcome = "interrupted"
    except BaseException:
        state.outcome = "failed"
        raise
    finally:
        starts += runner.stop(abandon=state.outcome != "finished" and not stop.drained)
        state.amend(runner.closing_faults, store)
        store.finish_run(run_id, state.outcome)
    return RunSummary(scheduled, counts.stored, state.played, state.faulted, starts,
                      time.perf_counter() - started, state.outcome == "interrupted",
                      state.errors, state.startup_s, state.unplayed, sorted(state.broken),
                      dict(state.broken), dict(state.left), state.error_lines, workers or 0,
                      runner.setup.concurrency or 1, ", then ".join(used), counts.elsewhere)


def _fill(runner: Engine, workers: int, waiting: list[list[BatchItem]],
          batches: Iterator[list[tuple[BatchItem, ScheduledMatch]]],
          schedules: dict[str, ScheduledMatch], stop: _StopFlag) -> None:
    """Give each worker BATCHES_IN_FLIGHT_PER_WORKER batches: the ``waiting``
    ones first (sent out before, never played: a hand-over's), then new ones."""
    for worker in range(workers):
        for _ in range(BATCHES_IN_FLIGHT_PER_WORKER):
            if waiting:
                runner.submit(worker, waiting.pop(0))
            elif not _submit_next(runner, worker, batches, schedules, stop):
                break
    for batch in waiting:  # more than they take at once: the first worker plays them too
        runner.submit(0, batch)


@dataclass
class _RunState:
    """What one run has collected so far. Faults are counted here, in the
    driver, so that a bot's matches in a row are counted across workers
    (and Ray nodes), in the order their results arrive."""

    played: int = 0
    faulted: int = 0
    errors: int = 0
    error_lines: list[str] = field(default_factory=list)
    startup_s: float = 0.0
    outcome: str = "finished"
    unplayed: int = 0
    schedules: dict[str, ScheduledMatch] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)  # bot id -> why, in a few words
    left: Counter[str] = field(default_factory=Counter)  # unplayed matches, by the bot at fault
    # per bot, its faults in its last matches in a row: (kind, whether it had started)
    fault_streaks: dict[str, list[tuple[str, bool]]] = field(default_factory=dict)
    rank_sums: Counter[str] = field(default_factory=Counter)
    seat_counts: Counter[str] = field(default_factory=Counter)

    def collect(self, reply: BatchReply, league: League, store: Store, run_id: int) -> None:
        for result in reply.results:
            scheduled = self.schedules.pop(result.match_id)
            if isinstance(result, MatchError):
                self._harness_error(result)
                continue
            self._count_faults(result, scheduled)
            if result.unstarted():  # it says nothing of that bot: a later run plays it
                ids = dict(zip(result.bots, scheduled.seats))
                self.leave({ids[bot] for bot in result.unstarted()})
                continue
            if store.save_match(league.name, scheduled.deal, scheduled.seats, result, run_id,
                                where=(reply.node, reply.pid)):
                self.played += 1
                self.faulted += any(result.faults)
                for bot, rank in zip(scheduled.seats, result.ranks):
                    self.rank_sums[bot] += rank
                    self.seat_counts[bot] += 1
        self.amend(reply.end_faults, store)

    def amend(self, end_faults: list[EndFault], store: Store) -> None:
        """Store the faults bots made after their matches ended, with those
        matches (stored by now: a worker finds them only after)."""
        for fault in end_faults:
            stored = store.save_end_fault(fault)
            log.warning("bot %s, seat %d of match %s: %s after the match ended: %s%s",
                        fault.bot, fault.seat, fault.match_id, fault.kind, fault.detail,
                        "" if stored else " (not stored: the match is not stored)")

    def leave(self, bots: set[str]) -> None:
        """A match left for a later run because of ``bots``."""
        self.unplayed += 1
        self.left.update(bots)

    def _harness_error(self, error: MatchError) -> None:
        """Not stored, not a bot's fault: the next run plays it again."""
        self.errors += 1
        if len(self.error_lines) < 5:
            lines = error.traceback.strip().splitlines()
            self.error_lines.append(f"{error.match_id}: {lines[-1] if lines else '?'}")
        log.error("harness error in match %s (not stored; a later run retries it):\n%s",
                  error.match_id, error.traceback)

    def _count_faults(self, result: MatchResult, scheduled: ScheduledMatch) -> None:
        """A bot that faulted (any kind, at any of its seats) in BROKEN_AFTER
        of its matches in a row is broken; a match without a fault of its
        resets the count."""
        kinds: dict[str, tuple[str, bool]] = {}
        for bot, fault in zip(scheduled.seats, result.faults):
            if fault is not None:
                kinds.setdefault(bot, (fault.kind, fault.started))
        for bot in set(scheduled.seats):
            streak = self.fault_streaks.setdefault(bot, [])
            if bot not in kinds:
                streak.clear()
                continue
            streak.append(kinds[bot])
            del streak[:-BROKEN_AFTER]
            if len(streak) == BROKEN_AFTER and bot not in self.broken:
                self.broken[bot] = _broken_why(streak)
                log.warning("bot %s %s: its remaining matches are left for a later run",
                            bot, self.broken[bot])

    def leaders(self, count: int = 3) -> list[tuple[str, float]]:
        """This run's best bots by average rank so far (the table comes at the end)."""
        means = [(bot, self.rank_sums[bot] / n) for bot, n in self.seat_counts.items() if n]
        return sorted(means, key=lambda item: item[1])[:count]


def _broken_why(faults: list[tuple[str, bool]]) -> str:
    """Why a bot was marked broken, from its faults in its last matches."""
    kinds = ", ".join(kind for kind, _ in faults)
    if not any(started for _, started in faults):
        return f"never started ({len(faults)} tries in a row: {kinds})"
    return f"faulted in {len(faults)} matches in a row ({kinds})"


@dataclass(frozen=True)
class RunProgress:
    """What a progress display gets after each batch."""

    done: int  # stored matches of the league, earlier runs included
    total: int
    played: int  # by this run
    faulted: int  # by this run
    elapsed_s: float  # since the run began
    startup_s: float  # of which starting the engine
    leaders: list[tuple[str, float]]  # (bot id, average rank in this run)

    @property
    def rate(self) -> float:
        playing = self.elapsed_s - self.startup_s
        return self.played / playing if playing > 0 else 0.0


def _submit_next(runner: Engine, worker: int,
                 batches: Iterator[list[tuple[BatchItem, ScheduledMatch]]],
                 schedules: dict[str, ScheduledMatch], stop: _StopFlag) -> bool:
    if stop.raised:
        return False
    pairs = next(batches, None)
    if pairs is None:
        return False
    schedules.update((item.match_id, scheduled) for item, scheduled in pairs)
    runner.submit(worker, [item for item, _ in pairs])
    return True


class _StopFlag:
    """SIGINT/SIGTERM set a flag instead of raising mid-write: the run stops
    handing out work and drains what is in flight."""

    def __init__(self) -> None:
        self.raised = False
        self.satisfied = False  # raised by stop_when, not by a signal
        self.drained = False  # set once in-flight work has been collected

    def _handler(self, signum, frame) -> None:
        if self.raised:  # a second Ctrl-C: stop now, the stored results are safe
            raise KeyboardInterrupt
        self.raised = True
        log.warning("stopping: finishing the matches in flight (Ctrl-C again to abandon them)")

    @contextlib.contextmanager
    def catching(self) -> Iterator[None]:
        previous = {s: signal.signal(s, self._handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
