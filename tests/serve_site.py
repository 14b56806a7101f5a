"""A real `league serve` on loopback for the server's tests: the CLI in a
subprocess of its own (its own process group, so a test can SIGKILL it),
accounts made with `league users add`, and an httpx client per account."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.serve.db import ServerStore
from tests.helpers import wait_until

REPO = Path(__file__).resolve().parents[1]
LEAGUE = [sys.executable, "-m", "harness.cli"]

LADDER = """\
name = "test ladder"
games = {{ target = [3] }}
signup = "{signup}"
[limits]
decision_ms = 2000
[quotas]
submissions_per_day = {per_day}
bots_per_account = {bots}
upload_bytes = {upload}
[validation]
workers = {workers}
sandbox = "{sandbox}"
[play]
paused = {paused}
refit_s = {refit_s}
engine = "{engine}"
"""

# A bot that plays a legal move at random: the folder people upload.
RANDOM_BOT = """\
import random
from league_sdk import Bot, run


class Pick(Bot):
    def choose(self, obs, legal, time_left_ms):
        return random.Random(len(str(obs))).randrange(len(legal))


run(Pick())
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bot_zip(name: str, source: str = RANDOM_BOT, description: str = "",
            extra: dict[str, bytes] | None = None, marker: str = "",
            manifest_lines: str = "") -> bytes:
    """A bot folder as a zip, in memory (small); ``manifest_lines``: more of
    bot.toml (a build step, its files)."""
    command = ["{python}", "bot.py", *([marker] if marker else [])]  # a marker psutil finds
    manifest = (f'name = {json.dumps(name)}\ncommand = {json.dumps(command)}\n'
                f'description = {json.dumps(description)}\n{manifest_lines}')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.toml", manifest)
        archive.writestr("bot.py", source)
        for path, data in (extra or {}).items():
            archive.writestr(path, data)
    return buffer.getvalue()


@dataclass
class Site:
    url: str
    db: Path
    ladder: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    tokens: dict[str, str] = field(default_factory=dict)

    def start(self, wait: bool = True) -> None:
        port = int(self.url.rsplit(":", 1)[1])
        out = self.log.open("ab")
        self.process = subprocess.Popen(
            [*LEAGUE, "serve", str(self.ladder), "--db", str(self.db), "--port", str(port)],
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        out.close()
        if wait:
            wait_until(self.healthy, f"the server at {self.url} to answer (log: {self.log})")

    def healthy(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"the server exited with {self.process.returncode}:\n"
                                 f"{self.log.read_text()[-3000:]}")
        try:
            return httpx.get(f"{self.url}/api/v1/health", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        """SIGKILL the server's whole process group (its validation's bots too)."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        self.process = None

    def league(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([*LEAGUE, *args, "--db", str(self.db)], cwd=REPO, input=stdin,
                              capture_output=True, text=True, timeout=120)

    def add_user(self, name: str, organiser: bool = False, password: str = "",
                 via_cli: bool = False) -> str:
        """An account and its token: made in this process as `league users add`
        makes them (the same ServerStore calls; a CLI start per account would
        cost a second), or by the command itself with ``via_cli``."""
        if via_cli:
            args = ["users", "add", name] + (["--organiser"] if organiser else []) + \
                (["--password-stdin"] if password else [])
            done = self.league(*args, stdin=password + "\n" if password else "")
            assert done.returncode == 0, done.stderr
            token = done.stdout.strip()
        else:
            store = ServerStore(self.db)
            account = store.add_account(name, organiser)
            if password:
                store.set_password(account, password)
            token = store.add_token(account, "league users add")[1]
        self.tokens[name] = token
        return token

    def client(self, name: str | None = None) -> httpx.Client:
        headers = {"authorization": f"Bearer {self.tokens[name]}"} if name else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def upload(self, user: str, name: str, body: bytes,
               content_type: str = "application/zip", **params: str) -> httpx.Response:
        with self.client(user) as client:
            return client.post(f"/api/v1/bots/{name}/versions", content=body, params=params,
                               headers={"content-type": content_type})

    def verdict(self, user: str | None, name: str, number: int,
                timeout: float = 120) -> dict[str, Any]:
        """The version once validated (owner's view when ``user`` owns it)."""
        with self.client(user) as client:
            def done() -> dict[str, Any] | None:
                data = client.get(f"/api/v1/bots/{name}/versions/{number}").json()
                return None if data["state"] in ("queued", "validating") else data
            return wait_until(done, f"{name} v{number} to be validated", timeout)


def make_site(folder: Path, signup: str = "invite", per_day: int = 20, bots: int = 3,
              upload: int = 1 << 20, workers: int = 1, sandbox: str = "bwrap",
              play: bool = False, refit_s: float = 20, engine: str = "inline") -> Site:
    """``play``: the ladder plays matches (most tests need only submissions);
    ``refit_s``: how often its table is refitted (low: a test sees ratings soon);
    ``engine``: where matches play (inline by default: a test then waits for
    no Ray start; a site's own default is Ray)."""
    ladder = folder / "ladder.toml"
    ladder.write_text(LADDER.format(signup=signup, per_day=per_day, bots=bots, upload=upload,
                                    workers=workers, sandbox=sandbox,
                                    paused=str(not play).lower(), refit_s=refit_s,
                                    engine=engine))
    return Site(url=f"http://127.0.0.1:{free_port()}", db=folder / "ladder.db", ladder=ladder,
                log=folder / "server.log")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """A running server with accounts alice, bob and the organiser olga."""
    running = make_site(tmp_path)
    running.add_user("alice", password="alice-password-1")
    running.add_user("bob", password="bob-password-22")
    running.add_user("olga", organiser=True, via_cli=True)  # the command itself, once
    running.start()
    yield running
    running.stop()
