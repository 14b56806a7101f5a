"""The ladder's matches: workers that play duplicate groups, locally or on Ray.

A *group* is the ladder's unit of play: one line-up of entrants, one deal,
played in every seating of the ladder's seat design (``rotation``, as a
league's tables are), so the deal's luck cancels inside it. The scheduler
(harness.serve.ladder_run) decides which line-up; this module plays it.

Workers are long-lived, like the league runner's (harness.runner): each
keeps a pool of bot processes (harness.match.BotPool) between groups, and
learns a new entrant's files the first time a group of it comes (a job
carries only the bots its worker lacks). A process never plays a deal
twice (BotPool's deal memory), so a worker starts about one process per
seating of a group per bot, and reuses them on the next groups.

Engines:

- ``LocalArena``: ``workers`` threads in the server's process. Each worker
  owns its pool and only ever uses it from its own thread, because bwrap's
  ``--die-with-parent`` ties a sandbox to the thread that forked it: bots
  die with the server, whatever kills it.
- ``RayArena``: one Ray actor per worker, on an embedded Ray or an existing
  cluster (``address``). An actor that dies (its node left, or SIGKILL) is
  replaced and its groups are sent again; a match stored already is not
  stored twice (match IDs are the group's, and Store.save_match refuses a
  stored ID in the transaction that would write it).

Validations run here too (``Arena.validate``, a future per job; see
harness.serve.validation), so that on a cluster the server's machine
neither builds nor runs uploaded code. They run beside the groups, never
queued behind them: LocalArena on a small thread pool of its own
(``[validation] workers`` threads), RayArena as Ray tasks that ask for no
CPU (the actors hold them) and that Ray runs again on another worker when
theirs dies, GIVE_UP_AFTER times in all. Stopping the arena ends the
validations under way; their futures fail with ArenaStopped.
"""

from __future__ import annotations

import ctypes
import logging
import os
import queue
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from harness.match import BotPool, MatchResult, MatchSteps, match_steps, play_interleaved
from harness.proc.catalog import BotBundle, BotSpec
from harness.proc.sandbox import Sandbox
from harness.records import EndFault
from harness.runner import MatchError, start_embedded_ray
from harness.serve.validation import ArenaStopped, ValidationJob, ValidationReply, validate_job

log = logging.getLogger(__name__)
IN_FLIGHT_PER_WORKER = 2  # matches one worker interleaves (harness.runner.matches_in_flight)
PR_SET_NAME = 15  # prctl(2): the calling thread's name
GIVE_UP_AFTER = 3  # workers a group may end (Ray: died under it) before it is given up


def name_os_thread(name: str) -> None:
    """Give the calling thread ``name`` in the kernel's view too (its /proc
    ``comm``, what ``top -H`` shows), so that the CPU of the ladder's own
    threads can be told from the pages' (harness.bench.ladder_load). Best
    effort: Linux only, 15 bytes at most."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
    except (OSError, AttributeError):  # not Linux, or no prctl: only a name lost
        pass


@dataclass(frozen=True)
class GroupMatch:
    match_id: str
    seed: int
    seats: tuple[str, ...]  # entrant keys by seat


@dataclass(frozen=True)
class GroupJob:
    group_id: int
    game: str
    matches: tuple[GroupMatch, ...]
    bots: dict[str, tuple[BotSpec, BotBundle]] = field(default_factory=dict, repr=False)


@dataclass
class GroupReply:
    group_id: int
    worker: int
    results: list[MatchResult | MatchError]
    end_faults: list[EndFault]
    node: str = ""
    pid: int = 0


class ArenaWorker:
    """Plays groups with one persistent pool of bot processes."""

    def __init__(self, index: int, limits: Any, sandbox: Sandbox,
                 in_flight: int = IN_FLIGHT_PER_WORKER,
                 stopping: threading.Event | None = None) -> None:
        self.index = index
        self.pool = BotPool({}, limits, sandbox, {})
        self.in_flight = in_flight
        self.stopping = stopping or threading.Event()

    def play(self, job: GroupJob) -> GroupReply:
        for key, (spec, bundle) in job.bots.items():
            self.pool.specs[key] = spec
            self.pool.bundles[key] = bundle
        missing = {seat for m in job.matches for seat in m.seats} - set(self.pool.specs)
        if missing:  # the driver thought this worker knew them: a harness bug, said so
            text = f"worker {self.index} lacks the files of {sorted(missing)}"
            return GroupReply(job.group_id, self.index,
                              [MatchError(m.match_id, text) for m in job.matches], [])

        def starter(match: GroupMatch) -> Callable[[], MatchSteps]:
            return lambda: match_steps(job.game, match.seed, match.seats, self.pool,
                                       match.match_id)

        results: list[MatchResult | MatchError] = []
        for position, outcome in play_interleaved(map(starter, job.matches), self.in_flight):
            if isinstance(outcome, Exception):  # an engine or harness bug: the others play on
                text = "".join(traceback.format_exception(outcome, limit=8))
                results.append(MatchError(job.matches[position].match_id, text))
            else:
                results.append(outcome)
            if self.stopping.is_set():  # the server stops: the matches in play are closed
                break
        return GroupReply(job.group_id, self.index, results, self.pool.take_end_faults(),
                          _node(), os.getpid())

    def forget(self, keys: list[str]) -> None:
        """Entrants that left the ladder: their idle processes end."""
        for key in keys:
            for client in self.pool.idle.pop(key, []):
                client.close()
            self.pool.specs.pop(key, None)
            self.pool.bundles.pop(key, None)

    def close(self) -> list[EndFault]:
        self.pool.close()
        return self.pool.take_end_faults()


def _node() -> str:
    from harness.runner import _node_name

    return _node_name()


class Arena(Protocol):
    workers: int

    def start(self) -> int: ...
    def free(self) -> list[int]: ...
    def knows(self, worker: int) -> set[str]: ...
    def submit(self, worker: int, job: GroupJob) -> None: ...
    def next_done(self, timeout: float) -> GroupReply | None: ...
    def forget(self, keys: list[str]) -> None: ...
    def validate(self, job: ValidationJob) -> Future[ValidationReply]: ...
    def stop(self) -> None: ...


class _Seen:
    """Which entrants' files each worker has (the driver's side)."""

    def __init__(self) -> None:
        self.known: dict[int, set[str]] = {}

    def knows(self, worker: int) -> set[str]:
        return self.known.setdefault(worker, set())

    def learn(self, worker: int, job: GroupJob) -> None:
        self.knows(worker).update(job.bots)


class LocalArena(_Seen):
    """Worker threads in this process; each holds ``per_worker`` groups at most."""

    def __init__(self, workers: int, limits: Any, sandbox: Sandbox, per_worker: int = 2,
                 validators: int = 1) -> None:
        super().__init__()
        self.workers, self.limits, self.sandbox = workers, limits, sandbox
        self.per_worker = per_worker
        # validations run beside the groups, not in a group worker's queue: a
        # new version waits for no group, and no group for a build
        self._validations = ThreadPoolExecutor(max(1, validators),
                                               thread_name_prefix="arena-validation")
        self._inbox: list[queue.Queue[GroupJob | list[str] | None]] = []
        self._done: queue.Queue[GroupReply] = queue.Queue()
        self._held = [0] * workers
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()

    def start(self) -> int:
        for index in range(self.workers):
            inbox: queue.Queue[GroupJob | list[str] | None] = queue.Queue()
            self._inbox.append(inbox)
            thread = threading.Thread(target=self._run, args=(index, inbox),
                                      name=f"arena-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self.workers

    def _run(self, index: int, inbox: queue.Queue[GroupJob | list[str] | None]) -> None:
        name_os_thread(f"arena-{index}")
        worker = ArenaWorker(index, self.limits, self.sandbox, stopping=self._stopping)
        try:
            while (job := inbox.get()) is not None:
                if isinstance(job, list):
                    worker.forget(job)
                    continue
                try:
                    reply = worker.play(job)
                except Exception:  # noqa: BLE001 - the group is reported, the worker goes on
                    text = traceback.format_exc(limit=8)
                    reply = GroupReply(job.group_id, index,
                                       [MatchError(m.match_id, text) for m in job.matches], [])
                self._done.put(reply)
        finally:
            worker.close()

    def free(self) -> list[int]:
        return [i for i in range(self.workers) for _ in range(self.per_worker - self._held[i])]

    def submit(self, worker: int, job: GroupJob) -> None:
        self.learn(worker, job)
        self._held[worker] += 1
        self._inbox[worker].put(job)

    def next_done(self, timeout: float) -> GroupReply | None:
        try:
            reply = self._done.get(timeout=timeout)
        except queue.Empty:
            return None
        self._held[reply.worker] -= 1
        return reply

    def forget(self, keys: list[str]) -> None:
        for index, inbox in enumerate(self._inbox):
            inbox.put(list(keys))
            self.knows(index).difference_update(keys)

    def validate(self, job: ValidationJob) -> Future[ValidationReply]:
        try:
            return self._validations.submit(validate_job, job, self.sandbox)
        except RuntimeError as exc:  # shut down: the arena stopped
            raise ArenaStopped("the ladder's arena has stopped") from exc

    def stop(self) -> None:
        # the scheduler stores no more results: a group in play stops after its
        # next match ends, and groups not begun are dropped; all stay pending in
        # the ladder file and are sent again on the next start. Validations not
        # begun are cancelled (their validators run them on the server's
        # threads, or leave them queued when the server stops); one under way ends.
        self._validations.shutdown(wait=False, cancel_futures=True)
        self._stopping.set()
        for inbox in self._inbox:
            while True:
                try:
                    inbox.get_nowait()
                except queue.Empty:
                    break
            inbox.put(None)
        for thread in self._threads:
            thread.join(timeout=30)


class RayArena(_Seen):
    """One Ray actor per worker; a dead actor is replaced and its groups sent again."""

    def __init__(self, workers: int | None, limits: Any, sandbox: Sandbox,
                 address: str | None, per_worker: int = 2) -> None:
        super().__init__()
        self.requested, self.limits, self.sandbox = workers, limits, sandbox
        self.address, self.per_worker = address, per_worker
        self.workers = 0
        self._actors: list[Any] = []
        self._pending: dict[Any, tuple[int, GroupJob]] = {}
        self._failures: dict[int, int] = {}  # per group: the workers that died playing it
        self._ray: Any = None
        self._validate_remote: Any = None
        self._validations: set[Any] = set()  # refs of the validations under way
        self._validations_lock = threading.Lock()  # validators' threads call validate()
        self._stopped = False
        self._owns_ray = False
        # the files of these entrants, for a job sent again to a fresh actor
        self.files_of: Callable[[set[str]], dict[str, tuple[BotSpec, BotBundle]]] | None = None

    def start(self) -> int:
        import ray

        self._ray = ray
        # a Ray of our own is shut down at stop (its agents would otherwise
        # linger a minute or two after the server); one joined is left running
        self._owns_ray = not ray.is_initialized() and not self.address
        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, log_to_driver=False)
            else:
                start_embedded_ray(ray)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = self.requested or max(1, cpus)
        self._actors = [self._new_actor(i) for i in range(self.workers)]
        # A task, not an actor: Ray sends it again, to any node, when its worker
        # or node dies (max_retries), and never for what the bot did (the task
        # does not raise). It asks for no CPU: the arena's actors hold one each,
        # by default every CPU of the cluster, and a task that waited for one
        # would wait for ever; a validation is rare and bounded by the check's
        # limits. SPREAD: the nodes take turns, not the driver's node first.
        self._validate_remote = ray.remote(num_cpus=0, max_retries=GIVE_UP_AFTER - 1,
                                           scheduling_strategy="SPREAD")(validate_job)
        return self.workers

    def _new_actor(self, index: int, replacing: bool = False) -> Any:
        # A replacement asks for no CPU (as harness.runner.RayEngine's): the dead
        # actor's node may be gone with its CPUs, and one that asked for a whole
        # CPU would wait forever, its groups with it.
        remote = self._ray.remote(num_cpus=0 if replacing else 1, max_restarts=0)(ArenaWorker)
        return remote.remote(index, self.limits, self.sandbox)

    def free(self) -> list[int]:
        held = [0] * self.workers
        for worker, _ in self._pending.values():
            held[worker] += 1
        return [i for i in range(self.workers) for _ in range(self.per_worker - held[i])]

    def submit(self, worker: int, job: GroupJob) -> None:
        self.learn(worker, job)
        self._pending[self._actors[worker].play.remote(job)] = (worker, job)

    def next_done(self, timeout: float) -> GroupReply | None:
        if not self._pending:  # wait as LocalArena does, or an idle scheduler spins
            time.sleep(timeout)
            return None
        ready, _ = self._ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        if not ready:
            return None
        worker, job = self._pending.pop(ready[0])
        try:
            reply: GroupReply = self._ray.get(ready[0])
            return reply
        except Exception as exc:  # noqa: BLE001 - the actor or its node died: replace, resend
            failures = self._failures[job.group_id] = self._failures.get(job.group_id, 0) + 1
            log.warning("ladder worker %d died (%s); replacing it, its groups go again",
                        worker, type(exc).__name__)
            if failures >= GIVE_UP_AFTER:  # no node kills a group three times: a bug does
                self._replace(worker, None)
                text = (f"group {job.group_id} ended {failures} workers in a row "
                        f"({type(exc).__name__}: {exc}); given up")
                return GroupReply(job.group_id, worker,
                                  [MatchError(m.match_id, text) for m in job.matches], [])
            self._replace(worker, job)
            return None

    def _replace(self, worker: int, job: GroupJob | None) -> None:
        dead, self._actors[worker] = self._actors[worker], self._new_actor(worker, replacing=True)
        try:  # "unavailable" may be an actor still running: end it, its CPU too
            self._ray.kill(dead)
        except Exception:  # noqa: BLE001 - already gone
            pass
        lost = [(ref, j) for ref, (w, j) in self._pending.items() if w == worker]
        for ref, _ in lost:
            self._pending.pop(ref)
        self.known[worker] = set()
        for again in [*([job] if job is not None else []), *[j for _, j in lost]]:
            if self.files_of is not None:
                seats = {seat for m in again.matches for seat in m.seats}
                again = replace(again, bots=self.files_of(seats))
            self.learn(worker, again)
            self._pending[self._actors[worker].play.remote(again)] = (worker, again)

    def forget(self, keys: list[str]) -> None:
        for index, actor in enumerate(self._actors):
            actor.forget.remote(list(keys))
            self.knows(index).difference_update(keys)

    def validate(self, job: ValidationJob) -> Future[ValidationReply]:
        """The job as a Ray task; its future fails with ArenaStopped if the
        arena stops first, or with Ray's error once GIVE_UP_AFTER workers died
        under it."""
        with self._validations_lock:
            if self._stopped or self._validate_remote is None:
                raise ArenaStopped("the ladder's arena is not running")
            ref = self._validate_remote.remote(job, self.sandbox)
            self._validations.add(ref)
        answer: Future[ValidationReply] = Future()

        def settle(done: Future[Any]) -> None:
            with self._validations_lock:
                self._validations.discard(ref)
                stopped = self._stopped
            try:
                answer.set_result(done.result())
            except BaseException as exc:  # noqa: BLE001 - passed on to the validator
                answer.set_exception(ArenaStopped("the ladder's arena stopped") if stopped
                                     else exc)

        ref.future().add_done_callback(settle)
        return answer

    def stop(self) -> None:
        with self._validations_lock:  # a validation under way ends: its bots with it
            self._stopped = True
            under_way = list(self._validations)
        for ref in under_way:
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - already done
                pass
        for actor in self._actors:
            try:
                self._ray.kill(actor)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self._actors = []
        if self._owns_ray:
            self._ray.shutdown()
