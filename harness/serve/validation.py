"""Validation before entry: every new version runs ``league check`` in the
sandbox against the ladder's games and player counts before it may play.

The queue is the ``validations`` table (harness.serve.db): a version is
queued in the transaction that adds it, claimed by one worker of this
server run, and finished by that worker alone, so its verdict is written
once. A server killed mid-validation leaves it ``running``; the next start
queues it again (its bot processes died with the server: bwrap runs them
with ``--die-with-parent``), and it is run from the start.

A validation works on a copy of the version's files (``storage.scratch``):
the build step, if the manifest has one, writes there, in the sandbox. What
passed is kept as the version's ``ready/`` folder, which the ladder's
matches run. The steps and their verdicts, the build's output and the
bot's stderr tails are stored; who may read which is the app's concern
(the owner and the organiser see details and stderr, everyone else sees
the step names and whether each passed).
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.check import run_checks
from harness.proc.build import BuildError, run_build
from harness.proc.catalog import ManifestError, UnknownBotError
from harness.proc.sandbox import Sandbox
from harness.serve.archive import ArchiveError, load_uploaded_manifest
from harness.serve.db import ServerStore, Version
from harness.serve.ladder import Ladder
from harness.serve.storage import Storage, copy_tree

log = logging.getLogger(__name__)
STDERR_KEPT = 16_000  # characters of stderr kept per validation


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


class Validator:
    """Workers that take queued validations until stopped."""

    def __init__(self, store: ServerStore, storage: Storage, ladder: Ladder,
                 sandbox: Sandbox) -> None:
        self.store, self.storage, self.ladder, self.sandbox = store, storage, ladder, sandbox
        self.run_id = secrets.token_hex(8)
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

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
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
        work = self.storage.scratch(".work")
        try:
            copy_tree(self.storage.source(version.sha256), work)
            outcome = validate_folder(work, version.bot, self.ladder, self.sandbox)
        except Exception as exc:  # noqa: BLE001 - a harness fault: recorded, the server goes on
            log.exception("validation of %s v%d failed in the harness", version.bot,
                          version.number)
            outcome = Outcome()
            outcome.add("harness", False, f"the harness failed to validate this version "
                                          f"({type(exc).__name__}); the organiser can see why")
        finally:
            with self._count:
                self._busy -= 1
        if outcome.ok:
            self.storage.keep_ready(version.sha256, work)
        else:
            self.storage.discard(work)
        if not self.store.finish_validation(version.id, self.run_id, outcome.ok, outcome.steps,
                                            outcome.stderr):
            log.warning("validation of %s v%d was no longer this run's to finish", version.bot,
                        version.number)
