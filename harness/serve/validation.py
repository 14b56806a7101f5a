"""Validation before entry: every new version runs ``league check`` in the
sandbox against the ladder's games and player counts before it may play.

The queue is the ``validations`` table (harness.serve.db): a version is
queued in the transaction that adds it, claimed by one worker of this
server run, and finished by that worker alone, so its verdict is written
once. A server killed mid-validation leaves it ``running``; the next start
queues it again (its bot processes died with the server: bwrap runs them
with ``--die-with-parent``), and it is run from the start.

Where a validation runs: where the ladder's matches run. The queue, the
claim and the verdict stay on the server (``Validator``), but the work (the
build step and the checks, which run the bot) goes to the ladder's arena
(harness.serve.arena) as a ``ValidationJob``, as a group goes: the
version's source files as a bundle, the bot's name and the ladder. On a Ray
cluster the server's machine then neither builds nor runs uploaded code;
the cluster's workers do. The worker (``validate_job``) writes the files
into a private scratch folder of its own, validates there, removes it, and
sends back the ``Outcome`` and, when it passed, the built bot's files
(bot.toml and every file its manifest lists: what a match runs), which the
server writes, as hostile (archive.write_files), and keeps as the version's
``ready/`` folder. Where it ran (the arena's node and process) is logged
and shown to the organiser (``Validator.recent``).

While the ladder's play is paused, or no scheduler runs (``create_app``
with ``play=False``), or its arena did not start, validations run on the
server's own threads as before (``validate_folder`` on a copy in
``storage.scratch``): a paused season still validates uploads without
holding the cluster.

The steps and their verdicts, the build's output and the bot's stderr
tails are stored; who may read which is the app's concern (the owner and
the organiser see details and stderr, everyone else sees the step names and
whether each passed).
"""

from __future__ import annotations

import logging
import os
import secrets
import tempfile
import threading
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.check import run_checks
from harness.proc.build import BuildError, run_build
from harness.proc.catalog import ManifestError, UnknownBotError
from harness.proc.sandbox import Sandbox
from harness.serve.archive import ArchiveError, load_uploaded_manifest, write_files
from harness.serve.db import ServerStore, Version
from harness.serve.ladder import Ladder
from harness.serve.storage import Storage, copy_tree, regular_files, remove_tree

log = logging.getLogger(__name__)
STDERR_KEPT = 16_000  # characters of stderr kept per validation
RECENT_KEPT = 20  # validations the organiser's view lists, with where each ran
WAIT_STEP_S = 1.0  # how often a worker waiting on the arena looks whether the server stops

BundleFiles = tuple[tuple[str, bool, bytes], ...]  # (relative path, executable, bytes)


@dataclass
class Outcome:
    ok: bool = True
    steps: list[dict[str, Any]] = field(default_factory=list)

    def add(self, step: str, ok: bool, detail: str, stderr: str = "") -> None:
        self.steps.append({"step": step, "ok": ok, "detail": detail, "stderr": stderr})
        self.ok = self.ok and ok

    @property
    def stderr(self) -> str:
        parts = [f"--- {s['step']} ---\n{s['stderr']}" for s in self.steps if s["stderr"]]
        return "\n".join(parts)[-STDERR_KEPT:]


def harness_failure(exc: BaseException) -> Outcome:
    """The verdict when the harness, not the bot, failed: the bot's owner
    learns that much; the organiser finds the traceback in the log."""
    outcome = Outcome()
    outcome.add("harness", False, f"the harness failed to validate this version "
                                  f"({type(exc).__name__}); the organiser can see why")
    return outcome


def validate_folder(folder: Path, name: str, ladder: Ladder, sandbox: Sandbox) -> Outcome:
    """Build (if the manifest says how) and check the bot in ``folder``,
    which this call may write in. Never raises for anything the bot did."""
    outcome = Outcome()
    try:
        spec = load_uploaded_manifest(folder, name)
    except ArchiveError as exc:
        outcome.add("manifest", False, str(exc))
        return outcome
    games = ladder.plays(spec.games)
    if not games:
        outcome.add("games", False, f"the bot plays none of this ladder's games "
                                    f"({', '.join(ladder.games)})")
        return outcome
    if spec.build:
        try:
            built = run_build(spec, sandbox)
        except BuildError as exc:
            outcome.add("build", False, str(exc))
            return outcome
        outcome.add("build", built.ok, built.summary(spec), built.output_tail)
        if not built.ok:
            return outcome
    try:
        spec.version_hash()
    except (OSError, ManifestError, UnknownBotError) as exc:
        outcome.add("files", False, str(exc))
        return outcome
    for verdict in run_checks(spec, games, ladder.limits, sandbox, ladder.games):
        outcome.add(verdict.step, verdict.ok, verdict.detail, verdict.stderr_tail)
    return outcome


# ---- a validation on the arena's workers -------------------------------------------------

@dataclass(frozen=True)
class ValidationJob:
    """What a worker needs to validate a version, wherever it runs."""

    bot: str
    ladder: Ladder
    files: BundleFiles = field(repr=False)  # the version's source, as uploaded


@dataclass
class ValidationReply:
    outcome: Outcome
    files: BundleFiles = field(default=(), repr=False)  # when ok: the built bot's files
    node: str = ""
    pid: int = 0
    error: str = ""  # a harness failure's traceback, for the server's log


class ArenaStopped(RuntimeError):
    """The arena stopped (the server stops, or its scheduler ended) before
    the validation ended: the server decides what to do, not the bot."""


class ValidationPlace(Protocol):
    """Where a job runs: the ladder's arena (harness.serve.arena.Arena)."""

    def validate(self, job: ValidationJob) -> Future[ValidationReply]: ...


def read_files(folder: Path) -> BundleFiles:
    """Every regular file under ``folder`` (links left out), by relative path."""
    return tuple((path.relative_to(folder).as_posix(), bool(path.stat().st_mode & 0o111),
                  path.read_bytes()) for path in regular_files(folder))


def validate_job(job: ValidationJob, sandbox: Sandbox) -> ValidationReply:
    """A worker's side: validate ``job`` in a private scratch folder of this
    process's own (removed afterwards). Never raises: a harness failure is an
    Outcome with a "harness" step and the traceback beside it."""
    from harness.runner import _node_name  # Ray's node, if this runs in Ray

    scratch = Path(tempfile.mkdtemp(prefix="league-validation-"))  # 0o700
    try:
        work = scratch / "bot"
        write_files(job.files, work)
        outcome = validate_folder(work, job.bot, job.ladder, sandbox)
        files = _built_files(work, job.bot, outcome) if outcome.ok else ()
        return ValidationReply(outcome, files, _node_name(), os.getpid())
    except Exception as exc:  # noqa: BLE001 - a harness fault: reported, the worker goes on
        log.exception("validation of %s failed in the harness", job.bot)
        return ValidationReply(harness_failure(exc), (), _node_name(), os.getpid(),
                               traceback.format_exc(limit=8))
    finally:
        remove_tree(scratch)


def _built_files(work: Path, name: str, outcome: Outcome) -> BundleFiles:
    """What the ladder's matches need of the built folder: bot.toml and the
    manifest's files (the check read them within the catalog's caps)."""
    try:
        bundle = load_uploaded_manifest(work, name).bundle()
    except (OSError, ArchiveError, ManifestError) as exc:  # changed since the check: a fault
        outcome.add("files", False, str(exc))
        return ()
    manifest = ("bot.toml", False, (work / "bot.toml").read_bytes())
    return (manifest, *[entry for entry in bundle.files if entry[0] != "bot.toml"])


# ---- the server's side -----------------------------------------------------------------------

class Validator:
    """Workers that take queued validations until stopped. ``place``: where
    a validation runs now (the ladder's arena), or None for this server's
    own threads."""

    def __init__(self, store: ServerStore, storage: Storage, ladder: Ladder,
                 sandbox: Sandbox,
                 place: Callable[[], ValidationPlace | None] = lambda: None) -> None:
        self.store, self.storage, self.ladder, self.sandbox = store, storage, ladder, sandbox
        self.place = place
        self.run_id = secrets.token_hex(8)
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_KEPT)
        self._wake = threading.Condition()
        self._stopping = False
        self._threads: list[threading.Thread] = []
        self._busy = 0
        self._count = threading.Lock()

    @property
    def busy(self) -> int:
        """Validations running now."""
        return self._busy

    @property
    def workers(self) -> int:
        return len(self._threads)

    def start(self) -> None:
        again = self.store.requeue_interrupted()
        if again:
            log.warning("%d validation(s) cut off by the last stop queued again", again)
        for index in range(self.ladder.validation_workers):
            thread = threading.Thread(target=self._work, name=f"validation-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def notify(self) -> None:
        with self._wake:
            self._wake.notify_all()

    def halt(self) -> None:
        """Claim no more; a validation waiting on the arena is given up (its
        row stays ``running`` and is queued again on the next start)."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()

    def stop(self) -> None:
        self.halt()
        for thread in self._threads:
            thread.join(timeout=60)

    def _work(self) -> None:
        while True:
            with self._wake:
                if self._stopping:
                    return
            version = self.store.claim_validation(self.run_id)
            if version is None:
                with self._wake:
                    if not self._stopping:
                        self._wake.wait(timeout=5)
                continue
            self._validate(version)

    def _validate(self, version: Version) -> None:
        with self._count:
            self._busy += 1
        try:
            place = self.place()
            found = self._on_arena(version, place) if place is not None else None
            if found is None and self._stopping:  # cut off: queued again on the next start
                return
            ready, outcome, where = found or self._here(version)
        finally:
            with self._count:
                self._busy -= 1
        if outcome.ok and ready is not None:
            self.storage.keep_ready(version.sha256, ready)
        elif ready is not None:
            self.storage.discard(ready)
        log.info("validated %s v%d on %s: %s", version.bot, version.number, where,
                 "valid" if outcome.ok else "failed")
        self.recent.appendleft({"bot": version.bot, "number": version.number, "ok": outcome.ok,
                                **where})
        if not self.store.finish_validation(version.id, self.run_id, outcome.ok, outcome.steps,
                                            outcome.stderr):
            log.warning("validation of %s v%d was no longer this run's to finish", version.bot,
                        version.number)

    def _here(self, version: Version) -> tuple[Path | None, Outcome, dict[str, Any]]:
        """On this server's thread, in a copy of the source: the built folder,
        the outcome and where it ran."""
        work = self.storage.scratch(".work")
        where = {"ran_on": "server", "node": "", "pid": os.getpid()}
        try:
            copy_tree(self.storage.source(version.sha256), work)
            return work, validate_folder(work, version.bot, self.ladder, self.sandbox), where
        except Exception as exc:  # noqa: BLE001 - a harness fault: recorded, the server goes on
            log.exception("validation of %s v%d failed in the harness", version.bot,
                          version.number)
            return work, harness_failure(exc), where

    def _on_arena(self, version: Version, place: ValidationPlace
                  ) -> tuple[Path | None, Outcome, dict[str, Any]] | None:
        """On the arena's worker: the built folder (unpacked here), the outcome
        and where it ran; None if the arena stopped first (the caller runs it
        here, unless the server stops)."""
        try:
            job = ValidationJob(version.bot, self.ladder,
                                read_files(self.storage.source(version.sha256)))
            reply = self._wait(place.validate(job))
        except (ArenaStopped, CancelledError):
            return None
        except Exception as exc:  # noqa: BLE001 - the workers died under it, or a harness bug
            log.exception("validation of %s v%d failed on the arena", version.bot,
                          version.number)
            return None, harness_failure(exc), {"ran_on": "arena", "node": "", "pid": 0}
        if reply is None:
            return None
        where = {"ran_on": "arena", "node": reply.node, "pid": reply.pid}
        if reply.error:
            log.error("validation of %s v%d failed in the harness on node %s (pid %d):\n%s",
                      version.bot, version.number, reply.node, reply.pid, reply.error)
        if not reply.outcome.ok:
            return None, reply.outcome, where
        ready = self.storage.scratch(".ready")
        try:
            write_files(reply.files, ready)
        except Exception as exc:  # noqa: BLE001 - a hostile bundle (ArchiveError) or worse
            log.error("the built files of %s v%d that came back were refused: %s", version.bot,
                      version.number, exc)
            reply.outcome.add("ready", False, f"the built files that came back were refused: "
                                              f"{exc}")
            return None, reply.outcome, where
        return ready, reply.outcome, where

    def _wait(self, future: Future[ValidationReply]) -> ValidationReply | None:
        """The reply, or None once the server stops (the job is left to the
        arena's stop, and the validation is queued again on the next start)."""
        while True:
            try:
                return future.result(timeout=WAIT_STEP_S)
            except FutureTimeout:
                if self._stopping:
                    return None
