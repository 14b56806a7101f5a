"""Load test of ``league serve`` on loopback: many clients submitting bots and
reading pages at once while validations run, bounded in count and time.

    python -m harness.bench.serve_load [--clients 20] [--reads 30] [--submits 2]
                                       [--timeout 300] [--workers 2] [--games target:3]
                                       [--url URL --tokens-file F] [--demo-bots]

By default it starts its own server, as a real user would: a ladder file
(ladders/demo.toml's games and limits, or ``--games``, with quotas raised so
that the load never meets them) in a temporary folder, an account and API
token per client (made with the store's own calls, as ``league users add``
makes them, without a process start per account), and ``league serve`` in a
subprocess of its own on a free port, stopped at the end. ``--url`` with
``--tokens-file`` (lines ``ACCOUNT TOKEN``) loads a server that runs already.

Each client is a thread with its own HTTP connection. All wait at a barrier,
then each does its plan: ``--submits`` uploads of a small Python bot (zip)
spread evenly through ``--reads`` reads, its first upload first. The reads
take turns: a bot's HTML page, that bot's JSON (``/api/v1/bots/NAME``) and
the index page (``/``); the bot read (``load-ACCOUNT``) is another client's whose upload was
already accepted (its own until there is one), so a read never meets a bot
that is not there yet. One client in four uploads a bot that fails
validation (it answers with an action that is not legal) on its 1st, 3rd...
upload, and valid ones between; the others upload only valid bots. Every
upload's source differs, so each is a new version.

Then it waits (bounded by ``--timeout``) until every accepted version has a
verdict and checks what the issue asks: no reply was a 5xx, a connection
error or another unexpected status; no submission was lost (every 201's
version is listed by the API with the sha256 the 201 gave); each verdict is
the one expected. It prints the load, latencies per kind of request
(p50/p95/p99/max), the time from each upload's 201 to its ``validated_at``
stamp (the client's and the server's clocks are the same clock on
loopback; from another machine they may differ), and the errors. It exits 1
on any error, lost submission, wrong verdict or version left unvalidated.

``--demo-bots``: on a quiet server with the repository's demo ladder as it
is (ladders/demo.toml), the time from upload to validated for the Python
starter kit bot and for the C one (``league new`` writes both; the C bot is
compiled by its build step in the sandbox during validation), one after the
other.

Latencies are measured by the clients, on the same machine as the server
and its validations: they are what a user on loopback would see with the
machine this loaded, and they include the clients' own share of the CPU.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import zipfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
DEMO_LADDER = REPO / "ladders" / "demo.toml"
LEAGUE = [sys.executable, "-m", "harness.cli"]
READ_KINDS = ("bot page", "bot json", "index")
KINDS = (*READ_KINDS, "upload")
FINAL_STATES = ("valid", "failed", "retired")
# Far beyond a start on a loaded machine (a few seconds): only a hang fails.
SERVER_START_S = 120.0
REQUEST_TIMEOUT_S = 120.0

# A legal action, chosen from the observation; ``# load N`` makes each upload new.
VALID_BOT = """\
# load {tag}
import random
from league_sdk import Bot, run


class Pick(Bot):
    def choose(self, obs, legal, time_left_ms):
        return random.Random(len(str(obs))).randrange(len(legal))


run(Pick())
"""

# Answers with an index past the end of the legal actions: fails validation.
FAILING_BOT = """\
# load {tag}
from league_sdk import Bot, run


class Wrong(Bot):
    def choose(self, obs, legal, time_left_ms):
        return len(legal) + 7


run(Wrong())
"""


# ---- the server ------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def parse_games(specs: list[str]) -> dict[str, list[int]]:
    """``["target:3", "limit:2,3"]`` -> {"target": [3], "limit": [2, 3]}."""
    games: dict[str, list[int]] = {}
    for spec in specs:
        slug, _, counts = spec.partition(":")
        try:
            games[slug.strip()] = [int(n) for n in counts.split(",")]
        except ValueError:
            raise SystemExit(f"--games {spec!r}: write GAME:COUNTS, like target:3 or "
                             "limit:2,3") from None
    return games


def ladder_text(games: dict[str, list[int]] | None, workers: int, sandbox: str,
                uploads_per_account: int) -> str:
    """A ladder file: the demo ladder's games (or ``games``) and limits, with
    quotas the load never meets, so that every refusal is a fault."""
    demo = tomllib.loads(DEMO_LADDER.read_text())
    games = games or demo["games"]
    lines = ['name = "load test"', "signup = \"invite\"",
             "games = { " + ", ".join(f"{slug} = {json.dumps(list(counts))}"
                                      for slug, counts in games.items()) + " }",
             "[limits]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in demo.get("limits", {}).items()]
    lines += ["[quotas]", f"submissions_per_day = {max(20, uploads_per_account)}",
              "bots_per_account = 3", "upload_bytes = 1048576",
              "[validation]", f"workers = {workers}", f"sandbox = {json.dumps(sandbox)}"]
    return "\n".join(lines) + "\n"


def make_accounts(db: Path, names: list[str]) -> dict[str, str]:
    """An account and an API token for each name (what `league users add`
    does, in this process: twenty CLI starts would take longer than the load)."""
    from harness.serve.db import ServerStore

    store = ServerStore(db)
    tokens = {}
    for name in names:
        tokens[name] = store.add_token(store.add_account(name), "load test")[1]
    return tokens


@contextmanager
def running_server(ladder: Path, db: Path, log: Path) -> Iterator[str]:
    """``league serve`` in its own process group on a free port; yields its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [*LEAGUE, "serve", str(ladder), "--db", str(db), "--port", str(port)],
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        _wait_healthy(url, process, log)
        yield url
    finally:
        _stop(process)


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}:\n"
                             f"{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"the server at {url} did not answer within {SERVER_START_S:g} s "
                     f"(log: {log})")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT (a clean stop), then SIGKILL of the whole group if it hangs."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=30)


# ---- the load ----------------------------------------------------------------------
def bot_zip(name: str, source: str) -> bytes:
    manifest = (f'name = {json.dumps(name)}\ncommand = ["{{python}}", "bot.py"]\n'
                'files = ["bot.py"]\n')
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.toml", manifest)
        archive.writestr("bot.py", source)
    return buffer.getvalue()


@dataclass(frozen=True)
class Submission:
    client: int
    bot: str
    number: int
    sha256: str
    accepted_at: float  # time.time() when the 201 arrived
    expected: str  # "valid" or "failed"


@dataclass
class Tally:
    """What every client saw; one lock, as the clients are threads."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})
    statuses: dict[str, Counter[str]] = field(
        default_factory=lambda: {k: Counter() for k in KINDS})
    errors: list[str] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)
    readable: list[str] = field(default_factory=list)  # bots with an accepted upload
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, seconds: float, status: str, error: str | None) -> None:
        with self.lock:
            self.latencies[kind].append(seconds)
            self.statuses[kind][status] += 1
            if error:
                self.errors.append(f"{kind}: {error}")

    def accepted(self, submission: Submission) -> None:
        with self.lock:
            self.submissions.append(submission)
            if submission.bot not in self.readable:
                self.readable.append(submission.bot)

    def bot_to_read(self, own: str, chooser: random.Random) -> str:
        with self.lock:
            others = [bot for bot in self.readable if bot != own]
        return chooser.choice(others) if others else own


def plan(reads: int, submits: int) -> list[str]:
    """The client's requests in order: ``submits`` uploads spread evenly
    among ``reads`` reads, the first upload first."""
    total = reads + submits
    upload_at = {round(k * total / submits) for k in range(submits)} if submits else set()
    steps, read = [], 0
    for position in range(total):
        if position in upload_at:
            steps.append("upload")
        else:
            steps.append(READ_KINDS[read % len(READ_KINDS)])
            read += 1
    return steps


def expected_verdict(client: int, upload: int) -> str:
    """One client in four uploads a failing bot on its 1st, 3rd... upload."""
    return "failed" if client % 4 == 3 and upload % 2 == 0 else "valid"


def bot_name(account: str) -> str:
    """The account's bot: the same on every run, so that a rerun against one
    server (--url) adds versions instead of spending the bots_per_account
    quota. Account names differ by skeleton, and no look-alike pair starts
    with the prefix's last letter, so these do too (harness.serve.names),
    unless two accounts of more than 27 characters differ only past the cut."""
    return f"load-{account}"[:32]


def client_work(index: int, account: str, token: str, url: str, run_tag: str,
                steps: list[str], barrier: threading.Barrier, tally: Tally) -> None:
    try:
        _client_steps(index, account, token, url, run_tag, steps, barrier, tally)
    except Exception as exc:  # noqa: BLE001 - a client cut short is an error, not a hang
        with tally.lock:
            tally.errors.append(f"client {index}: stopped by {type(exc).__name__}: {exc}")


def _client_steps(index: int, account: str, token: str, url: str, run_tag: str,
                  steps: list[str], barrier: threading.Barrier, tally: Tally) -> None:
    own = bot_name(account)
    chooser = random.Random(index)
    uploads = 0
    with httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"},
                      timeout=REQUEST_TIMEOUT_S) as client:
        barrier.wait()
        for step in steps:
            if step == "upload":
                _upload(client, index, own, uploads, run_tag, tally)
                uploads += 1
            else:
                _read(client, step, tally.bot_to_read(own, chooser), tally)


def _upload(client: httpx.Client, index: int, bot: str, upload: int, run_tag: str,
            tally: Tally) -> None:
    expected = expected_verdict(index, upload)
    source = (FAILING_BOT if expected == "failed" else VALID_BOT).format(
        tag=f"{run_tag} client {index} upload {upload}")
    reply, seconds, error = _timed(lambda: client.post(
        f"/api/v1/bots/{bot}/versions", content=bot_zip(bot, source),
        headers={"content-type": "application/zip"}))
    status = str(reply.status_code) if reply is not None else "no reply"
    if reply is not None and reply.status_code != 201:
        error = f"{bot} upload {upload}: {reply.status_code} {reply.text[:300]}"
    tally.record("upload", seconds, status, error)
    if reply is not None and reply.status_code == 201:
        data = reply.json()
        tally.accepted(Submission(index, bot, int(data["number"]), str(data["sha256"]),
                                  time.time(), expected))


def _read(client: httpx.Client, kind: str, bot: str, tally: Tally) -> None:
    path = {"bot page": f"/bots/{bot}", "bot json": f"/api/v1/bots/{bot}", "index": "/"}[kind]
    reply, seconds, error = _timed(lambda: client.get(path))
    status = str(reply.status_code) if reply is not None else "no reply"
    if reply is not None and reply.status_code != 200:
        error = f"GET {path}: {reply.status_code} {reply.text[:300]}"
    tally.record(kind, seconds, status, error)


def _timed(send: Any) -> tuple[httpx.Response | None, float, str | None]:
    started = time.perf_counter()
    try:
        reply = send()
    except httpx.HTTPError as exc:
        return None, time.perf_counter() - started, f"{type(exc).__name__}: {exc}"
    return reply, time.perf_counter() - started, None


# ---- after the load ------------------------------------------------------------------
@dataclass
class Outcome:
    """What the load test found: the figures printed and the checks' counts."""

    clients: int
    workers: int | None
    wall_s: float
    tally: Tally
    verdicts: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    validation_wait_s: float = 0.0
    # /api/v1/health polled through the load: validations running, queued.
    busy: list[tuple[int, int]] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return self.tally.errors

    @property
    def ok(self) -> bool:
        return not (self.errors or self.lost or self.wrong or self.unfinished)

    def to_validated(self) -> list[float]:
        """Seconds from each upload's 201 to its validated_at stamp."""
        times = []
        for submission in self.tally.submissions:
            stamp = self.verdicts.get((submission.bot, submission.number), {}).get(
                "validated_at")
            if stamp is not None:
                times.append(max(0.0, float(stamp) - submission.accepted_at))
        return times


def watch_validations(url: str, clients: list[threading.Thread]
                      ) -> list[tuple[int, int]]:
    """(validations running, queued) from the health endpoint every 0.1 s
    until the clients are done: shows that the load met running validations."""
    seen = []
    alive = list(clients)
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        while alive:
            try:
                health = client.get("/api/v1/health").json()
                seen.append((int(health["validations_running"]),
                             int(health["validations_queued"])))
            except (httpx.HTTPError, ValueError, KeyError):
                pass  # the clients count errors; this only describes the load
            alive[0].join(timeout=0.1)  # the next sample, or at once when it ends
            alive = [thread for thread in alive if thread.is_alive()]
    return seen


def await_verdicts(url: str, tally: Tally, timeout_s: float) -> dict[tuple[str, int],
                                                                         dict[str, Any]]:
    """Each accepted bot's versions as the API lists them, once none is
    queued or validating, or as they stand when ``timeout_s`` runs out.
    It asks the health endpoint (one cheap request) twice a second and the
    bots only when the queue is empty or every 5 s (another site's queue
    may never empty): the polling must not slow the validations it times."""
    deadline = time.monotonic() + timeout_s
    last_look = time.monotonic()
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as client:
        while True:
            health = client.get("/api/v1/health").json()
            idle = health["validations_queued"] == 0 and health["validations_running"] == 0
            now = time.monotonic()
            if idle or now > deadline or now - last_look > 5:
                last_look = now
                listed = _listed_versions(client, tally)
                pending = [s for s in tally.submissions if listed.get(
                    (s.bot, s.number), {}).get("state") not in FINAL_STATES]
                if not pending or now > deadline:
                    return listed
            time.sleep(0.5)


def _listed_versions(client: httpx.Client, tally: Tally) -> dict[tuple[str, int],
                                                                  dict[str, Any]]:
    listed = {}
    for bot in sorted({s.bot for s in tally.submissions}):
        reply = client.get(f"/api/v1/bots/{bot}")
        if reply.status_code == 200:
            for version in reply.json()["versions"]:
                listed[(bot, int(version["number"]))] = version
    return listed


def check(outcome: Outcome) -> None:
    for submission in outcome.tally.submissions:
        label = f"{submission.bot} v{submission.number}"
        version = outcome.verdicts.get((submission.bot, submission.number))
        if version is None or version.get("sha256") != submission.sha256:
            outcome.lost.append(f"{label}: accepted with sha256 {submission.sha256[:12]}, "
                                f"listed as {version and str(version.get('sha256'))[:12]}")
        elif version["state"] not in FINAL_STATES:
            outcome.unfinished.append(f"{label}: still {version['state']}")
        elif version["state"] != submission.expected:
            outcome.wrong.append(f"{label}: {version['state']}, expected {submission.expected}")


def run_load(url: str, tokens: dict[str, str], reads: int, submits: int, timeout_s: float,
             workers: int | None = None) -> Outcome:
    """The load against the server at ``url``: one client per account."""
    run_tag = format(random.getrandbits(32), "08x")  # a rerun's uploads are new versions
    accounts = list(tokens.items())
    steps = plan(reads, submits)
    # A timeout so that a client that could not start breaks it instead of hanging all.
    barrier = threading.Barrier(len(accounts) + 1, timeout=120)
    tally = Tally()
    threads = [threading.Thread(target=client_work, name=f"client-{index}", daemon=True,
                                args=(index, account, token, url, run_tag, steps, barrier,
                                      tally))
               for index, (account, token) in enumerate(accounts)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    busy = watch_validations(url, threads)
    wall_s = time.perf_counter() - started
    waited = time.perf_counter()
    outcome = Outcome(clients=len(accounts), workers=workers, wall_s=wall_s, tally=tally,
                      busy=busy)
    outcome.verdicts = await_verdicts(url, tally, timeout_s)
    outcome.validation_wait_s = time.perf_counter() - waited
    check(outcome)
    return outcome


# ---- the report --------------------------------------------------------------------
def percentile(values: list[float], fraction: float) -> float:
    """Nearest rank: the smallest value with ``fraction`` of them at or below it."""
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]


def report(outcome: Outcome, reads: int, submits: int) -> str:
    tally = outcome.tally
    counts = {kind: len(tally.latencies[kind]) for kind in KINDS}
    total = sum(counts.values())
    workers = outcome.workers if outcome.workers is not None else "?"
    lines = [
        f"load: {outcome.clients} clients at once (threads, one connection each), each "
        f"{submits} upload(s) among {reads} reads; {total} requests "
        f"({', '.join(f'{counts[k]} {k}' for k in KINDS)}) in {outcome.wall_s:.1f} s = "
        f"{total / outcome.wall_s:.1f} requests/s; {workers} validation worker(s); "
        f"server and clients on one machine of {os.cpu_count()} cores (load average "
        f"{os.getloadavg()[0]:.1f} at the end)",
        "latency (ms)       count    p50    p95    p99    max"]
    for kind in KINDS:
        values = [1000 * s for s in tally.latencies[kind]]
        if values:
            lines.append(f"  {kind:<14} {len(values):>7} {percentile(values, 0.50):>6.0f} "
                         f"{percentile(values, 0.95):>6.0f} {percentile(values, 0.99):>6.0f} "
                         f"{max(values):>6.0f}")
    if outcome.busy:
        during = sum(1 for running, _ in outcome.busy if running) / len(outcome.busy)
        lines.append(f"validations during the load: running in {100 * during:.0f}% of "
                     f"{len(outcome.busy)} health samples, at most "
                     f"{max(r for r, _ in outcome.busy)} running and "
                     f"{max(q for _, q in outcome.busy)} queued")
    waits = outcome.to_validated()
    verdicts = Counter(v["state"] for key, v in outcome.verdicts.items()
                       if any((s.bot, s.number) == key for s in tally.submissions))
    if waits:
        lines.append(f"upload (201) to validated: {len(waits)} versions, p50 "
                     f"{percentile(waits, 0.5):.1f} s, max {max(waits):.1f} s (queued behind "
                     f"each other: {len(waits)} versions for {workers} worker(s)); verdicts: "
                     f"{dict(verdicts)}; all validated {outcome.validation_wait_s:.1f} s after "
                     "the load ended")
    statuses = {kind: dict(tally.statuses[kind]) for kind in KINDS if tally.statuses[kind]}
    lines.append(f"replies by status: {statuses}")
    by_kind = Counter(error.split(":", 1)[0] for error in outcome.errors)
    lines.append(f"errors: {len(outcome.errors)} {dict(by_kind) if by_kind else ''}".rstrip())
    lines += [f"  {error}" for error in outcome.errors[:10]]
    lines.append(f"lost submissions: {len(outcome.lost)} of {len(tally.submissions)} accepted")
    lines += [f"  {lost}" for lost in outcome.lost[:10]]
    if outcome.wrong:
        lines.append(f"wrong verdicts: {len(outcome.wrong)}")
        lines += [f"  {wrong}" for wrong in outcome.wrong[:10]]
    if outcome.unfinished:
        lines.append(f"not validated in time: {len(outcome.unfinished)}")
        lines += [f"  {late}" for late in outcome.unfinished[:10]]
    lines.append("ok" if outcome.ok else "FAILED")
    return "\n".join(lines)


# ---- entry points --------------------------------------------------------------------
def local_load(clients: int, reads: int, submits: int, timeout_s: float, workers: int,
               games: dict[str, list[int]] | None, sandbox: str = "bwrap") -> Outcome:
    """The load test against a server of its own, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="serve-load-") as scratch:
        folder = Path(scratch)
        ladder = folder / "ladder.toml"
        ladder.write_text(ladder_text(games, workers, sandbox, submits))
        db = folder / "ladder.db"
        tokens = make_accounts(db, [f"client-{index}" for index in range(clients)])
        log = folder / "server.log"
        with running_server(ladder, db, log) as url:
            outcome = run_load(url, tokens, reads, submits, timeout_s, workers)
        if not outcome.ok:
            print(f"server log (last 3000 characters):\n{log.read_text()[-3000:]}",
                  file=sys.stderr)
        return outcome


def remote_load(url: str, tokens_file: Path, clients: int, reads: int, submits: int,
                timeout_s: float) -> Outcome:
    tokens: dict[str, str] = {}
    for number, line in enumerate(tokens_file.read_text().splitlines(), start=1):
        if line.strip() and not line.startswith("#"):
            words = line.split()
            if len(words) != 2:
                raise SystemExit(f"{tokens_file}, line {number}: write ACCOUNT TOKEN "
                                 f"(2 words), not {len(words)}")
            tokens[words[0]] = words[1]
    if len(tokens) < clients:
        raise SystemExit(f"{tokens_file} has {len(tokens)} accounts; --clients {clients} "
                         "needs one per client (lines: ACCOUNT TOKEN)")
    health = httpx.get(f"{url.rstrip('/')}/api/v1/health", timeout=30).json()
    return run_load(url.rstrip("/"), dict(list(tokens.items())[:clients]), reads, submits,
                    timeout_s, health.get("workers"))


def kit_zip(lang: str, name: str) -> bytes:
    """The starter kit that `league new NAME --lang LANG` writes, as an
    upload: its manifest and sources (not the README and game pages)."""
    from harness.kits import README, render

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in render(lang, name, "", "").items():
            if path != README:
                archive.writestr(path, text)
    return buffer.getvalue()


def demo_bots(timeout_s: float) -> list[tuple[str, float, dict[str, Any]]]:
    """(kit, seconds from the 201 to validated_at, the version) for the
    Python and the C kit bots, each uploaded alone to a quiet server with
    the demo ladder."""
    found = []
    with tempfile.TemporaryDirectory(prefix="serve-demo-") as scratch:
        folder = Path(scratch)
        db = folder / "ladder.db"
        token = make_accounts(db, ["demo-author"])["demo-author"]
        with running_server(DEMO_LADDER, db, folder / "server.log") as url, httpx.Client(
                base_url=url, headers={"authorization": f"Bearer {token}"},
                timeout=REQUEST_TIMEOUT_S) as client:
            for lang in ("python", "c"):
                name = f"kit-{lang}"
                reply = client.post(f"/api/v1/bots/{name}/versions", content=kit_zip(lang, name),
                                    headers={"content-type": "application/zip"})
                accepted_at = time.time()
                if reply.status_code != 201:
                    raise SystemExit(f"the {lang} kit was refused: {reply.status_code} "
                                     f"{reply.text[:500]}")
                version = _verdict(client, name, int(reply.json()["number"]), timeout_s)
                stamp = version.get("validated_at")
                found.append((lang, float(stamp) - accepted_at if stamp else float("nan"),
                              version))
    return found


def _verdict(client: httpx.Client, name: str, number: int, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        version: dict[str, Any] = client.get(f"/api/v1/bots/{name}/versions/{number}").json()
        if version["state"] in FINAL_STATES or time.monotonic() > deadline:
            return version
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.bench.serve_load",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--reads", type=int, default=30, help="reads per client")
    parser.add_argument("--submits", type=int, default=2, help="uploads per client")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds to wait for the validations after the load")
    parser.add_argument("--workers", type=int, default=2, help="validation workers")
    parser.add_argument("--games", action="append", default=[], metavar="GAME:COUNTS",
                        help="the ladder's games (default: the demo ladder's), like target:3")
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--url", help="load this server instead of starting one")
    parser.add_argument("--tokens-file", type=Path, help="with --url: lines ACCOUNT TOKEN")
    parser.add_argument("--demo-bots", action="store_true",
                        help="time upload to validated for the demo ladder's kit bots")
    options = parser.parse_args(argv)
    if not 1 <= options.clients <= 200 or options.reads < 0 or options.submits < 0:
        parser.error("--clients from 1 to 200; --reads and --submits 0 or more")
    if options.demo_bots:
        found = demo_bots(options.timeout)
        for lang, seconds, version in found:
            steps = ", ".join(f"{s['step']} {'ok' if s['ok'] else 'FAILED'}"
                              for s in version.get("steps", []))
            print(f"{lang} kit bot: upload (201) to validated {seconds:.1f} s, "
                  f"{version['state']} ({steps}); ladder {DEMO_LADDER.relative_to(REPO)}")
        print(f"one upload at a time on a quiet server; machine of {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.1f}")
        return 0 if all(version["state"] == "valid" for _, _, version in found) else 1
    if options.url:
        if options.tokens_file is None:
            parser.error("--url needs --tokens-file (lines: ACCOUNT TOKEN)")
        outcome = remote_load(options.url, options.tokens_file, options.clients, options.reads,
                              options.submits, options.timeout)
    else:
        outcome = local_load(options.clients, options.reads, options.submits, options.timeout,
                             options.workers, parse_games(options.games) or None,
                             options.sandbox)
    print(report(outcome, options.reads, options.submits))
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
