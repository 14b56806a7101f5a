"""Running a league: the schedule goes out in batches to long-lived workers
that keep their bot processes alive between matches; results stream back and
are stored one match per transaction as they arrive.

Engines: ``ray`` (default; an embedded local Ray, or an existing cluster with
``address``) and ``inline`` (the same worker code in this process, for
debugging and quick tests).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from harness.catalog import BotSpec
from harness.league import League, ScheduledMatch
from harness.match import BotPool, Limits, MatchResult, run_match
from harness.store import Store

BATCH_SIZE = 4
BATCHES_IN_FLIGHT_PER_WORKER = 2


class MatchWorker:
    """Plays batches of matches with a persistent pool of bot processes,
    ``concurrency`` matches at a time: while one match waits for a bot, the
    others use the core (a lone ping-pong leaves cores idle between wake-ups)."""

    def __init__(self, specs: dict[str, BotSpec], limits: Limits, game: str,
                 concurrency: int = 1) -> None:
        self.pool = BotPool(specs, limits)
        self.limits = limits
        self.game = game
        self.matches = 0
        self.executor = ThreadPoolExecutor(concurrency) if concurrency > 1 else None

    def _play_one(self, item: tuple[str, int, tuple[str, ...], tuple[str, ...]]) -> MatchResult | MatchError:
        match_id, seed, names, _ids = item
        try:
            return run_match(self.game, seed, names, self.pool, self.limits, match_id)
        except Exception:  # noqa: BLE001 - an engine or harness bug must not end the run
            return MatchError(match_id, traceback.format_exc(limit=8))

    def play(self, batch: list[tuple[str, int, tuple[str, ...], tuple[str, ...]]]) -> dict[str, Any]:
        """batch: (match_id, seed, bot names by seat, bot ids by seat)."""
        if self.executor is None:
            results = [self._play_one(item) for item in batch]
        else:
            results = list(self.executor.map(self._play_one, batch))
        self.matches += len(results)
        return {"results": results, "starts": self.pool.total_starts(),
                "matches": self.matches, "pid": os.getpid()}

    def close(self) -> int:
        if self.executor is not None:
            self.executor.shutdown(wait=True)
        self.pool.close()
        return self.pool.total_starts()


@dataclass
class MatchError:
    """A match the harness itself failed to play (a bug, not a bot fault):
    not stored, so the next run tries it again."""

    match_id: str
    traceback: str


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

    @property
    def rate(self) -> float:
        return self.played / self.elapsed_s if self.elapsed_s > 0 else 0.0


Progress = Callable[[int, int, int, float], None]  # done, total, faulted, elapsed


def _pending(league: League, store: Store, skipped: list[int]) -> Iterator[ScheduledMatch]:
    """The schedule minus what is stored, checked chunk by chunk; counts the
    stored ones in ``skipped[0]``."""
    schedule = league.schedule()
    while True:
        chunk = list(itertools.islice(schedule, 500))
        if not chunk:
            return
        done = store.done_ids([m.match_id for m in chunk])
        skipped[0] += len(done)
        yield from (m for m in chunk if m.match_id not in done)


def _batches(pending: Iterator[ScheduledMatch], league: League, size: int):
    names_of = {league.bot_id(name): name for name in league.bots}
    while True:
        batch = list(itertools.islice(pending, size))
        if not batch:
            return
        yield [(m.match_id, m.seed, tuple(names_of[s] for s in m.seats), m.seats) for m in batch], \
            {m.match_id: m for m in batch}


class _Engine:
    """How batches reach workers: submit() then next_done()."""

    def start(self, workers: int | None) -> int:
        """Start the workers; returns how many."""
        ...
    def submit(self, worker: int, batch: list) -> Any: ...
    def next_done(self) -> tuple[int, dict[str, Any]]: ...
    def in_flight(self) -> int: ...
    def stop(self, abandon: bool = False) -> int: ...


class InlineEngine(_Engine):
    def __init__(self, league: League, concurrency: int) -> None:
        self.league = league
        self.concurrency = concurrency
        self.queue: deque = deque()

    def start(self, workers: int | None) -> int:
        self.workers = [MatchWorker(self.league.specs, self.league.limits, self.league.game,
                                    self.concurrency) for _ in range(workers or 1)]
        return len(self.workers)

    def submit(self, worker: int, batch: list) -> None:
        self.queue.append((worker, batch))

    def next_done(self) -> tuple[int, dict[str, Any]]:
        worker, batch = self.queue.popleft()
        return worker, self.workers[worker].play(batch)

    def in_flight(self) -> int:
        return len(self.queue)

    def stop(self, abandon: bool = False) -> int:
        return sum(w.close() for w in self.workers)


class RayEngine(_Engine):
    """Ray actors as workers. A worker that dies (its node lost, the process
    killed) is replaced and its batch sent again, up to MAX_REPLACEMENTS."""

    MAX_REPLACEMENTS = 8

    def __init__(self, league: League, address: str | None, concurrency: int) -> None:
        self.league = league
        self.address = address
        self.concurrency = concurrency
        self.futures: dict[Any, tuple[int, list]] = {}
        self.replacements = 0

    def start(self, workers: int | None) -> int:
        import ray

        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, log_to_driver=False)
            else:
                ray.init(include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
        self.ray = ray
        cpus = ray.cluster_resources().get("CPU", 1)
        workers = workers or max(1, int(cpus))
        self.actor = ray.remote(MatchWorker).options(
            num_cpus=min(1.0, cpus / workers), scheduling_strategy="SPREAD", max_restarts=0)
        self.workers = [self._new_worker() for _ in range(workers)]
        return workers

    def _new_worker(self):
        return self.actor.remote(self.league.specs, self.league.limits, self.league.game,
                                 self.concurrency)

    def submit(self, worker: int, batch: list) -> None:
        self.futures[self.workers[worker].play.remote(batch)] = (worker, batch)

    def next_done(self) -> tuple[int, dict[str, Any]]:
        while True:
            ready, _ = self.ray.wait(list(self.futures), num_returns=1)
            worker, batch = self.futures.pop(ready[0])
            try:
                return worker, self.ray.get(ready[0])
            except self.ray.exceptions.RayActorError as exc:
                self._replace(worker, batch, exc)

    def _replace(self, worker: int, batch: list, exc: Exception) -> None:
        self.replacements += 1
        if self.replacements > self.MAX_REPLACEMENTS:
            raise RuntimeError(f"workers keep dying ({self.replacements} times): {exc}") from exc
        print(f"\nworker {worker} died ({type(exc).__name__}); starting a new one",
              file=sys.stderr, flush=True)
        dead = self.workers[worker]
        self.workers[worker] = self._new_worker()
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
        their bots see end of input and exit)."""
        starts = 0
        if not abandon:
            try:
                starts = sum(self.ray.get([w.close.remote() for w in self.workers], timeout=60))
            except Exception:  # noqa: BLE001 - workers that are gone have no bots left to close
                pass
        for worker in self.workers:
            self.ray.kill(worker)
        if not self.address:
            self.ray.shutdown()
        return starts


def run_league(league: League, store: Store, workers: int | None = None, engine: str = "ray",
               address: str | None = None, progress: Progress | None = None,
               max_matches: int | None = None, concurrency: int = 1) -> RunSummary:
    """Play every scheduled match not yet stored. Ctrl-C (SIGINT) or SIGTERM
    stops cleanly: in-flight batches finish and are stored, bots are closed.
    ``workers`` defaults to the CPUs of the cluster (Ray) or 1 (inline)."""
    started = time.perf_counter()
    scheduled = league.size()
    store.register_league(league.config(), scheduled)
    for name, spec in league.specs.items():
        store.register_bot(league.bot_id(name), name, league.versions[name],
                           str(spec.manifest), spec.command)
    run_id = store.start_run(league.name, workers)
    skipped = [0]
    pending = _pending(league, store, skipped)
    if max_matches is not None:
        pending = itertools.islice(pending, max_matches)
    batches = _batches(pending, league, max(BATCH_SIZE, 2 * concurrency))
    runner: _Engine = (RayEngine(league, address, concurrency) if engine == "ray"
                       else InlineEngine(league, concurrency))
    stop = _StopFlag()
    played = faulted = starts = errors = 0
    state = "finished"
    schedules: dict[str, ScheduledMatch] = {}
    try:
        with stop.catching():
            workers = runner.start(workers)
            store.heartbeat(run_id, 0, 0, workers)
            for worker in range(workers):
                for _ in range(BATCHES_IN_FLIGHT_PER_WORKER):
                    if not _submit_next(runner, worker, batches, schedules, stop):
                        break
            while runner.in_flight():
                worker, reply = runner.next_done()
                for result in reply["results"]:
                    scheduled_match = schedules.pop(result.match_id)
                    if isinstance(result, MatchError):
                        errors += 1
                        print(f"\nharness error in match {result.match_id} (not stored; a later "
                              f"run retries it):\n{result.traceback}", file=sys.stderr, flush=True)
                        continue
                    if store.save_match(league.name, scheduled_match.deal,
                                        scheduled_match.seats, result, run_id):
                        played += 1
                        faulted += any(result.faults)
                store.heartbeat(run_id, len(schedules), played)
                if progress:
                    progress(skipped[0] + played, scheduled, faulted,
                             time.perf_counter() - started)
                _submit_next(runner, worker, batches, schedules, stop)
            stop.drained = True
        if stop.raised:
            state = "interrupted"
    except KeyboardInterrupt:  # a second Ctrl-C: abandon what is in flight
        state = "interrupted"
    except BaseException:
        state = "failed"
        raise
    finally:
        starts = (runner.stop(abandon=state != "finished" and not stop.drained)
                  if hasattr(runner, "workers") else 0)
        store.finish_run(run_id, state)
    # what the lazy scan did not reach yet (a stop) is not known to be done
    return RunSummary(scheduled, skipped[0], played, faulted, starts,
                      time.perf_counter() - started, state == "interrupted", errors)


def _submit_next(runner: _Engine, worker: int, batches, schedules: dict, stop: "_StopFlag") -> bool:
    if stop.raised:
        return False
    try:
        batch, by_id = next(batches)
    except StopIteration:
        return False
    schedules.update(by_id)
    runner.submit(worker, batch)
    return True


class _StopFlag:
    """SIGINT/SIGTERM set a flag instead of raising mid-write: the run stops
    handing out work and drains what is in flight."""

    def __init__(self) -> None:
        self.raised = False
        self.drained = False  # set once in-flight work has been collected

    def _handler(self, signum, frame) -> None:
        if self.raised:  # a second Ctrl-C: stop now, the stored results are safe
            raise KeyboardInterrupt
        self.raised = True
        print("\nstopping: finishing the matches in flight (Ctrl-C again to abandon them)",
              file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def catching(self) -> Iterator[None]:
        previous = {s: signal.signal(s, self._handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
