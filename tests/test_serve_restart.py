"""Restart safety of `league serve`: a server killed with SIGKILL (its
whole process group, bots included) during an upload, during a validation,
or right after accepting an upload, starts again with no half-written
version to see, and with every validation run to one verdict, none lost
and none written twice. One server per --db: a second exits on the lock.

How the tests hold a validation still without timing anything: the bot
they upload (``WAITING_BOT``) waits, before its handshake, for a SIGWINCH
from the test. Nothing else sends it one, so a validation of it is
certainly still running when the test kills the server, however slow the
machine; after the restart the test sends SIGWINCH to every process of
that bot (found by a marker in its command line) until the verdict is in.
SIGWINCH is ignored by default, so one sent before the bot blocks it is
lost harmlessly and the next one counts. The ladder's startup_ms is high
enough that the wait is never a start-up fault."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.helpers import wait_until
from tests.serve_site import LEAGUE, REPO, Site, bot_zip, free_port, make_site

WAITING_BOT = """\
import random
import signal

from league_sdk import Bot, run

# Hold still until the test says go (see the test module's docstring).
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGWINCH})
signal.sigwait({signal.SIGWINCH})


class Pick(Bot):
    def choose(self, obs, legal, time_left_ms):
        return random.Random(len(str(obs))).randrange(len(legal))


run(Pick())
"""


def waiting_bot_zip(name: str, marker: str) -> bytes:
    """``WAITING_BOT`` with ``marker`` on its command line, for psutil to find."""
    return bot_zip(name, WAITING_BOT, marker=marker)


def marked_processes(marker: str) -> list[psutil.Process]:
    """Live processes whose command line holds ``marker`` (bwrap and the bot)."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if any(marker in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return found


def bot_running(marker: str) -> bool:
    """Whether the bot itself runs (in its sandbox): not just its launcher or
    bwrap, whose command lines end with the bot's too."""
    return any(len(p.info["cmdline"] or ()) == 3 for p in marked_processes(marker))


def end_all(marker: str) -> None:
    """Teardown: SIGKILL what this test started and left, by pid."""
    for process in marked_processes(marker):
        try:
            process.kill()
        except psutil.Error:
            pass


def release(marker: str) -> None:
    """Say go to every waiting copy of the bot."""
    for process in marked_processes(marker):
        try:
            process.send_signal(signal.SIGWINCH)
        except psutil.Error:
            pass  # it ended meanwhile


def validated_releasing(site: Site, user: str, name: str, number: int, marker: str
                        ) -> dict[str, Any]:
    """Release the waiting bot until its version has a verdict; the version."""
    with site.client(user) as client:
        def done() -> dict[str, Any] | None:
            release(marker)
            data = client.get(f"/api/v1/bots/{name}/versions/{number}").json()
            return None if data["state"] in ("queued", "validating") else data
        found = wait_until(done, f"{name} v{number} to be validated", timeout=120,
                           interval=0.1)
    assert found is not None
    return found


def state_of(site: Site, name: str, number: int) -> str:
    with site.client() as client:
        return str(client.get(f"/api/v1/bots/{name}/versions/{number}").json()["state"])


def rows(site: Site, query: str, *values: Any) -> list[tuple[Any, ...]]:
    """Straight from the SQLite file, not through the server."""
    with sqlite3.connect(site.db) as db:
        return db.execute(query, values).fetchall()


def validation_row(site: Site, name: str, number: int) -> dict[str, Any]:
    found = rows(site, "SELECT c.state, c.attempts, c.ok, c.steps, c.started, c.finished, "
                       "v.state, v.validated_at FROM validations c JOIN ladder_versions v "
                       "ON v.id = c.version_id WHERE v.bot = ? AND v.number = ?", name, number)
    assert len(found) == 1, found  # one validation per version, ever
    keys = ("state", "attempts", "ok", "steps", "started", "finished", "version_state",
            "validated_at")
    return dict(zip(keys, found[0], strict=True))


def incoming(site: Site) -> list[Path]:
    return sorted(Path(f"{site.db}.bots", "incoming").iterdir())


@pytest.fixture
def marker(request: pytest.FixtureRequest) -> Iterator[str]:
    """A word on the test bot's command line that nothing else has."""
    word = f"marker-{os.getpid()}-{request.node.name}"
    yield word
    end_all(word)


@pytest.fixture
def waiting_site(tmp_path: Path) -> Iterator[Site]:
    """A stopped server (one validation worker) whose ladder lets a bot wait
    for minutes before its handshake; accounts alice and bob. The test
    starts it; teardown kills whatever runs."""
    site = make_site(tmp_path, workers=1)
    ladder = site.ladder.read_text()
    site.ladder.write_text(ladder.replace("decision_ms = 2000",
                                          "decision_ms = 2000\nstartup_ms = 300000"))
    site.add_user("alice")
    site.add_user("bob")
    yield site
    site.kill()


def kill_while_waiting(site: Site, name: str, marker: str) -> None:
    """Kill the server once the bot of ``name`` v1 is running and waiting,
    then see that no process of that bot outlives it."""
    wait_until(lambda: state_of(site, name, 1) == "validating" and bot_running(marker),
               f"{name} v1 to be validating with its bot started")
    site.kill()
    wait_until(lambda: not marked_processes(marker), "the bot's processes to end with the server",
               describe=lambda: [p.info["cmdline"] for p in marked_processes(marker)])


@pytest.mark.slow
def test_kill_during_an_upload_leaves_no_trace(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    site.add_user("alice")
    site.start()
    body = bot_zip("halfway", extra={"padding.txt": os.urandom(200_000)})  # not compressible
    first_half, second_half = body[:len(body) // 2], body[len(body) // 2:]
    half_sent, let_go = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def slow_body() -> Iterator[bytes]:
        yield first_half
        half_sent.set()
        let_go.wait(timeout=120)
        yield second_half

    def send() -> None:
        try:
            site.upload("alice", "halfway", slow_body())  # type: ignore[arg-type]
        except httpx.HTTPError as exc:
            failures.append(exc)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        assert half_sent.wait(timeout=60)
        # The server has written the first half to incoming/ when the file is that long.
        wait_until(lambda: [p for p in incoming(site) if p.suffix == ".upload"
                            and p.stat().st_size == len(first_half)],
                   "the first half of the upload to reach incoming/",
                   describe=lambda: [(p.name, p.stat().st_size) for p in incoming(site)])
        site.kill()
    finally:
        let_go.set()
        sender.join(timeout=60)
    assert failures, "the cut-off upload cannot have succeeded"
    assert incoming(site), "the killed server left its half upload behind"

    site.start()
    assert incoming(site) == []
    assert rows(site, "SELECT * FROM ladder_bots WHERE name = 'halfway'") == []
    assert rows(site, "SELECT * FROM ladder_versions WHERE bot = 'halfway'") == []
    with site.client("alice") as client:
        assert client.get("/api/v1/bots/halfway").status_code == 404
        assert "halfway" not in [b["name"] for b in client.get("/api/v1/bots").json()["bots"]]
    again = site.upload("alice", "halfway", body)
    assert again.status_code == 201, again.text
    assert again.json()["number"] == 1
    assert site.verdict("alice", "halfway", 1)["state"] == "valid"
    site.stop()


@pytest.mark.slow
def test_kill_during_a_validation_runs_it_again_to_one_verdict(waiting_site: Site,
                                                               marker: str) -> None:
    site = waiting_site
    site.start()
    assert site.upload("alice", "slowpoke", waiting_bot_zip("slowpoke", marker)).status_code == 201
    kill_while_waiting(site, "slowpoke", marker)
    cut_off = validation_row(site, "slowpoke", 1)
    assert (cut_off["state"], cut_off["attempts"], cut_off["version_state"]) == \
        ("running", 1, "validating")

    restarted = time.time()
    site.start()
    version = validated_releasing(site, "alice", "slowpoke", 1, marker)
    row = validation_row(site, "slowpoke", 1)
    assert (row["state"], row["attempts"], row["ok"]) == ("done", 2, 1), row
    assert version["state"] == row["version_state"] == "valid"
    assert all(step["ok"] for step in version["steps"]), version["steps"]
    step_names = [step["step"] for step in version["steps"]]
    assert len(step_names) == len(set(step_names)) == len(json.loads(row["steps"]))
    # The verdict was written once, by the second server run's attempt.
    assert row["started"] >= restarted
    assert version["validated_at"] == row["validated_at"] == row["finished"] >= row["started"]
    assert "1 validation(s) cut off by the last stop queued again" in site.log.read_text()
    site.stop()


@pytest.mark.slow
def test_kill_right_after_an_upload_is_accepted_loses_no_validation(waiting_site: Site,
                                                                    marker: str) -> None:
    """The one worker is held by a waiting bot, so the second upload is
    certainly still queued (never claimed) when the server dies."""
    site = waiting_site
    site.start()
    assert site.upload("bob", "blocker", waiting_bot_zip("blocker", marker)).status_code == 201
    wait_until(lambda: state_of(site, "blocker", 1) == "validating", "blocker to be validating")
    accepted = site.upload("alice", "queued", bot_zip("queued"))
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["state"] == "queued"
    site.kill()
    assert validation_row(site, "queued", 1)["state"] == "queued"

    site.start()
    validated_releasing(site, "bob", "blocker", 1, marker)
    version = site.verdict("alice", "queued", 1)
    row = validation_row(site, "queued", 1)
    assert version["state"] == "valid", version
    assert (row["state"], row["attempts"], row["ok"]) == ("done", 1, 1), row
    assert validation_row(site, "blocker", 1)["attempts"] == 2
    site.stop()


def test_a_second_server_on_the_same_db_exits_on_the_lock(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    site.start()
    second = subprocess.run(
        [*LEAGUE, "serve", str(site.ladder), "--db", str(site.db), "--port", str(free_port())],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert second.returncode == 2, second.stderr
    assert "another `league serve` is serving" in second.stderr
    assert f"{site.db}.lock" in second.stderr
    assert site.healthy(), "the first server must go on serving"
    site.stop()


# A harness that dies while a bot's launcher is still starting: the launcher
# must not go on to start a sandbox nobody owns (bwrap's --die-with-parent
# only counts from when bwrap runs, after the parent may be gone).
ORPHAN_LAUNCH = """
import os, sys
from pathlib import Path
from harness.limits import ResourceLimits
from harness.proc.sandbox import Sandbox
folder, marker = Path(sys.argv[1]), sys.argv[2]
Sandbox("bwrap", cgroups=False).spawn(folder, ["/bin/sh", "-c", "sleep 600", marker], {},
                                      ResourceLimits())
os._exit(0)  # at once: the launcher is still starting
"""


def test_a_bot_launched_by_a_harness_that_died_meanwhile_does_not_run(
        tmp_path: Path, marker: str) -> None:
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    (folder / "bot.sh").write_text("sleep 600\n")
    done = subprocess.run([*LEAGUE[:1], "-c", ORPHAN_LAUNCH, str(folder), marker], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # Its launcher either sees its parent gone and stops, or is killed with it.
    wait_until(lambda: not marked_processes(marker), "the orphaned launch to end",
               describe=lambda: [p.info["cmdline"][-4:] for p in marked_processes(marker)])
