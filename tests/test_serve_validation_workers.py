"""Validations run where the ladder's matches run: on the arena's workers.

The server sends a version's source files as a job (harness.serve.validation
ValidationJob), the arena's worker validates them in a scratch folder of its
own and sends back the outcome and the built files, which the server writes
as hostile and keeps as the version's ``ready/``. These tests use the real
sandbox, a real store and storage, a real LocalArena, and (slow) a real
``league serve`` on an embedded Ray.
"""

from __future__ import annotations

import json
import pickle
import shutil
import sqlite3
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest

from harness.limits import Limits
from harness.proc.sandbox import Sandbox
from harness.serve.archive import ArchiveError, write_files
from harness.serve.arena import LocalArena
from harness.serve.db import Account, ServerStore
from harness.serve.ladder import Ladder, Play, Quotas
from harness.serve.ladder_run import LadderRun
from harness.serve.storage import Storage
from harness.serve.validation import (
    Outcome,
    ValidationJob,
    ValidationReply,
    Validator,
    read_files,
    validate_folder,
)
from tests.helpers import wait_until
from tests.serve_site import RANDOM_BOT, bot_zip, make_site

LADDER = Ladder(name="workers", games={"target": (3,)}, limits=Limits(decision_ms=2000))
SANDBOX = Sandbox("bwrap")
QUITS_AT_ONCE = "import sys\nsys.exit(3)\n"
# The bot refuses to start unless the build's output is there: a check that
# passes proves the built file reached the worker's bot.
NEEDS_BUILT = "open('made.txt').read()\n" + RANDOM_BOT
BUILD = ["{python}", "-c", "open('made.txt', 'w').write('built by the build step')"]


def bot_folder(parent: Path, name: str, source: str = RANDOM_BOT, **fields: Any) -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    lines = [f"name = {json.dumps(name)}", 'command = ["{python}", "bot.py"]',
             *[f"{key} = {json.dumps(value)}" for key, value in fields.items()]]
    (folder / "bot.toml").write_text("\n".join(lines) + "\n")
    (folder / "bot.py").write_text(source)
    return folder


@pytest.fixture
def arena() -> Iterator[LocalArena]:
    running = LocalArena(1, LADDER.limits, SANDBOX, validators=2)
    running.start()
    yield running
    running.stop()


def steps_of(outcome: Outcome) -> list[tuple[str, bool]]:
    return [(step["step"], step["ok"]) for step in outcome.steps]


# ---- (a) the arena's verdicts are the server's -----------------------------------------
@pytest.mark.parametrize("source, valid", [(RANDOM_BOT, True), (QUITS_AT_ONCE, False)],
                         ids=["good", "quits"])
def test_the_arena_gives_the_verdict_and_steps_of_the_local_path(
        tmp_path: Path, arena: LocalArena, source: str, valid: bool) -> None:
    folder = bot_folder(tmp_path / "upload", "pick", source)
    job = ValidationJob("pick", LADDER, read_files(folder))
    on_arena = arena.validate(job)
    local_copy = tmp_path / "local"
    shutil.copytree(folder, local_copy)
    here = validate_folder(local_copy, "pick", LADDER, SANDBOX)
    reply = on_arena.result(timeout=120)
    assert here.ok is valid and reply.outcome.ok is valid, (here.steps, reply.outcome.steps)
    assert steps_of(reply.outcome) == steps_of(here)
    assert len(here.steps) >= (3 if valid else 1)  # handshake, target at 3, quit
    sent_back = {path for path, _, _ in reply.files}
    assert sent_back == ({"bot.toml", "bot.py"} if valid else set())
    assert reply.pid and reply.node, "the reply says where it ran"


def test_a_job_pickles_with_its_ladder(tmp_path: Path) -> None:
    """A job travels to Ray workers: it must pickle whole."""
    job = ValidationJob("pick", LADDER, read_files(bot_folder(tmp_path, "pick")))
    assert pickle.loads(pickle.dumps(job)) == job


# ---- (b) a build's output comes back to ready/ -------------------------------------------
def stored_version(tmp_path: Path, folder: Path) -> tuple[ServerStore, Storage, str]:
    """The store and storage of a server with ``folder`` uploaded as pick v1."""
    store = ServerStore(tmp_path / "ladder.db")
    storage = Storage(tmp_path / "ladder.db.bots")
    upload = storage.scratch(".d")
    shutil.copytree(folder, upload)
    digest = storage.keep(upload)
    alice: Account = store.add_account("alice")
    store.add_version(alice, "pick", digest, "archive", 100, "", Quotas())
    return store, storage, digest


def validated(store: ServerStore) -> str:
    version = store.version("pick", 1)
    assert version is not None
    return "" if version.state in ("queued", "validating") else version.state


def validate_with(store: ServerStore, storage: Storage, place: Any) -> tuple[str, Validator]:
    """A real Validator validating pick v1 where ``place`` says: its verdict,
    and the validator (stopped)."""
    validator = Validator(store, storage, LADDER, SANDBOX, place=place)
    validator.start()
    try:
        return wait_until(lambda: validated(store), "pick v1 to be validated", 120), validator
    finally:
        validator.stop()


def test_a_builds_output_comes_back_and_is_kept_as_ready(tmp_path: Path,
                                                        arena: LocalArena) -> None:
    folder = bot_folder(tmp_path / "upload", "pick", NEEDS_BUILT, build=BUILD,
                        files=["bot.py", "made.txt"])
    store, storage, digest = stored_version(tmp_path, folder)
    state, validator = validate_with(store, storage, lambda: arena)
    version = store.version("pick", 1)
    assert version is not None
    assert state == "valid", version.steps
    assert [step["step"] for step in version.steps][0] == "build"
    ready = storage.ready(digest)
    assert (ready / "made.txt").read_text() == "built by the build step"
    assert sorted(p.name for p in ready.iterdir()) == ["bot.py", "bot.toml", "made.txt"]
    assert not (storage.source(digest) / "made.txt").exists(), "the source stays as uploaded"
    assert validator.recent[0]["ran_on"] == "arena", validator.recent
    assert not list(storage.incoming.iterdir()), "no scratch left on the server"


# ---- (c) the files that come back are hostile ----------------------------------------------
@pytest.mark.parametrize("entry, words", [
    (("../escaped", False, b"x"), "'..'"),
    (("/tmp/escaped", False, b"x"), "absolute"),
    (("a/../../escaped", False, b"x"), "'..'"),
    (("bot.toml", "yes", b"x"), "is not .path, executable, bytes."),
    (("bad\\name", False, b"x"), "backslash"),
])
def test_a_hostile_path_in_the_returned_files_is_refused(tmp_path: Path,
                                                          entry: tuple[Any, ...],
                                                          words: str) -> None:
    dest = tmp_path / "deep" / "ready"
    dest.parent.mkdir()
    with pytest.raises(ArchiveError, match=words):
        write_files([("bot.toml", False, b"name = 'x'\n"), entry], dest)
    assert not dest.exists(), "nothing half-written stays"
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "deep" / "escaped").exists()


def test_twice_the_same_file_or_a_file_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="twice"):
        write_files([("a", False, b"1"), ("a", False, b"2")], tmp_path / "one")
    with pytest.raises(ArchiveError, match="both a file and a folder"):
        write_files([("a", False, b"1"), ("a/b", False, b"2")], tmp_path / "two")


class HostileArena:
    """An arena whose worker sends back a file outside the bot's folder."""

    def validate(self, job: ValidationJob) -> Future[ValidationReply]:
        answer: Future[ValidationReply] = Future()
        files = (("bot.toml", False, b""), ("../../escaped", True, b"#!/bin/sh\n"))
        answer.set_result(ValidationReply(Outcome(), files, "elsewhere", 1))
        return answer


def test_a_version_whose_built_files_are_hostile_fails_and_keeps_nothing(tmp_path: Path) -> None:
    store, storage, digest = stored_version(tmp_path, bot_folder(tmp_path / "upload", "pick"))
    state, _ = validate_with(store, storage, HostileArena)
    version = store.version("pick", 1)
    assert version is not None and state == "failed"
    assert version.steps[-1]["step"] == "ready" and "'..'" in version.steps[-1]["detail"]
    assert not storage.ready(digest).exists()
    assert not any(p.name == "escaped" for p in tmp_path.rglob("escaped"))
    assert not list(storage.incoming.iterdir())


# ---- (d) on Ray: the validation runs in a Ray worker, then the bot plays ------------------
@pytest.mark.slow
def test_on_ray_an_upload_is_validated_by_a_ray_worker_and_then_plays(tmp_path: Path) -> None:
    site = make_site(tmp_path, play=True, engine="ray")
    site.ladder.write_text(site.ladder.read_text() + 'bosses = ["random", "heuristic"]\n'
                           'workers = 1\n')
    site.add_user("alice")
    site.add_user("olga", organiser=True)
    site.start()
    try:
        answer = site.upload("alice", "pick", _zip(NEEDS_BUILT))
        assert answer.status_code == 201, answer.text
        verdict = site.verdict("alice", "pick", 1, timeout=240)
        assert verdict["state"] == "valid", verdict
        with site.client("olga") as olga:
            recent = olga.get("/api/v1/organiser").json()["validated_recently"]
        assert site.process is not None
        assert recent[0]["bot"] == "pick" and recent[0]["ran_on"] == "arena", recent
        assert recent[0]["pid"] != site.process.pid, "it ran in a Ray worker, not the server"
        assert len(recent[0]["node"]) >= 32, f"a Ray node id: {recent[0]}"
        wait_until(lambda: _seats_of(site.db, "pick@v1") > 0, "pick v1 to play a match", 240,
                   interval=0.5)
        started = psutil.Process(site.process.pid).children(recursive=True)
        assert any("raylet" in " ".join(_cmdline(p)) for p in started), "Ray runs under it"
    finally:
        site.stop()
    # nothing the server started outlives it: its embedded Ray is shut down
    # (Ray's agents would otherwise linger a minute or more: this fails then)
    wait_until(lambda: not [p for p in started if _running(p)], "the server's Ray to end", 20,
               describe=lambda: [_cmdline(p) for p in started if _running(p)])


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _zip(source: str) -> bytes:
    return bot_zip("pick", source, manifest_lines=f'build = {json.dumps(BUILD)}\n'
                                                  'files = ["bot.py", "made.txt"]\n')


def _seats_of(db: Path, bot: str) -> int:
    try:
        with sqlite3.connect(db, timeout=30) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM seats WHERE bot = ?",
                                    [bot]).fetchone()[0])
    except sqlite3.OperationalError:  # the results' tables are not made yet
        return 0


# ---- the fallback: no arena to validate on -----------------------------------------------
def test_without_a_running_arena_validations_run_on_the_server(tmp_path: Path) -> None:
    """Paused play, or a scheduler never started: the server's threads validate."""
    store, storage, digest = stored_version(tmp_path, bot_folder(tmp_path / "upload", "pick"))
    paused = replace(LADDER, play=Play(paused=True))
    not_started = LadderRun(LADDER, store, tmp_path / "ladder.db", storage, SANDBOX)
    assert not_started.validation_arena(wait_s=0) is None
    validator = Validator(store, storage, paused, SANDBOX,
                          place=LadderRun(paused, store, tmp_path / "ladder.db", storage,
                                          SANDBOX).validation_arena)
    validator.start()
    try:
        assert wait_until(lambda: validated(store), "pick v1 to be validated", 60) == "valid"
    finally:
        validator.stop()
    assert validator.recent[0]["ran_on"] == "server"
    assert (storage.ready(digest) / "bot.py").exists()
