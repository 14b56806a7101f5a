"""Readers of the live ladder's pages while it plays: latency, errors, and
what the reading costs the matches.

    python -m harness.bench.ladder_load [--readers 50] [--seconds 60] [--think 1.0]
                                        [--requests 0] [--workers 0] [--games target:3]

It starts its own ``league serve`` on loopback (a ladder file with the demo
ladder's games and limits, or ``--games``; ``[play]`` on, ``--workers``
match workers, 0: the server's default), uploads two bots for two accounts
(made with the store's own calls), and waits until both are rated. Then
three windows of ``--seconds`` each:

1. quiet: no reader; the matches stored in the window (counted in the
   ladder file: exact, where the server's matches per minute is a moving
   five-minute figure) give the rate;
2. load: ``--readers`` readers at once, each with a connection of its own,
   take turns fetching ``/``, ``/bots/NAME`` and ``/api/v1/leaderboard``,
   waiting ``--think`` seconds (0.5x to 1.5x, at random) between requests,
   as a person or the front page's poller would, and starting at a random
   moment of the first such wait (people do not arrive in step); each stops
   at the window's end or after ``--requests`` requests (0: no count bound);
3. quiet again: matches slow down as the ladder's line-ups move (the
   matchmaker picks closer, longer games), so the load's rate is compared
   with the mean of the quiet windows on each side of it.

It prints the match rates, the drop under load, each window's CPU use (of
the whole machine, from /proc/stat: the matches should keep every core
busy; and of the server's process and the readers' apart, so that the CPU
one request costs each side is known: on a machine the matches keep busy,
that CPU is what the matches lose), and per kind of request the count,
p50/p95/p99/max latency and the errors (any status but 200, any connection
error or timeout), and whether the slow requests came together. It exits 1
on any error; the targets (p99 under 100 ms, drop under 10%) are printed
as met or missed.

Latencies are measured by the readers, in this process, on the machine
that serves and plays: they include the readers' own share of the CPU.
``--think 0`` makes each reader a closed loop (a request as soon as the
last answer came): the server's throughput, not a reader's experience.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from harness.bench.serve_load import (
    DEMO_LADDER,
    VALID_BOT,
    bot_zip,
    make_accounts,
    parse_games,
    percentile,
    running_server,
)

UPLOADERS = ("alice", "bob")
READ_PATHS = ("/", "/bots/{bot}", "/api/v1/leaderboard")
REQUEST_TIMEOUT_S = 30.0
RATED_TIMEOUT_S = 300.0
P99_TARGET_MS = 100.0
DROP_TARGET = 0.10
STEADY_BOSSES = ("heuristic", "random")  # every table costs about the same
MATCH_THREADS = ("arena-", "ladder")  # the server's threads that play and store matches


# ---- the readers -------------------------------------------------------------------
@dataclass
class Reads:
    """What the readers saw: latency (ms) per path kind, every error, and
    each request's (start on the monotonic clock, ms), to see whether slow
    requests come together (a stall of the whole server) or alone."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    paths: Counter[str] = field(default_factory=Counter)
    timeline: list[tuple[float, float]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(self.paths.values())

    def add(self, kind: str, path: str, started: float, elapsed_ms: float,
            error: str | None) -> None:
        self.paths[path] += 1
        self.timeline.append((started, elapsed_ms))
        self.latencies.setdefault(kind, []).append(elapsed_ms)
        if error:
            self.errors.append(f"GET {path}: {error}")


async def _reader(client: httpx.AsyncClient, index: int, bots: list[str], requests_each: int,
                  stop_at: float, think_s: float, reads: Reads) -> None:
    rng = random.Random(index)
    async with client:
        # Readers are people and pollers who do not start in step: each comes
        # at a random moment of its first think time, not all at the first tick.
        await asyncio.sleep(think_s * rng.random())
        done = 0
        while time.monotonic() < stop_at and (requests_each == 0 or done < requests_each):
            template = READ_PATHS[(index + done) % len(READ_PATHS)]
            path = template.format(bot=bots[(index + done) % len(bots)])
            started = time.monotonic()
            error = None
            try:
                reply = await client.get(path)
                if reply.status_code != 200:
                    error = f"status {reply.status_code}: {reply.text[:200]}"
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"
            reads.add(template, path, started, (time.monotonic() - started) * 1000, error)
            done += 1
            if think_s:
                await asyncio.sleep(think_s * rng.uniform(0.5, 1.5))


async def _readers(url: str, bots: list[str], readers: int, requests_each: int,
                   seconds: float, think_s: float) -> Reads:
    reads = Reads()
    # Every client is made before the clock starts: making one costs tens of
    # milliseconds of this loop's time (its SSL context), and fifty made
    # while the first readers wait for answers added seconds to theirs.
    clients = [httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT_S, trust_env=False)
               for _ in range(readers)]
    stop_at = time.monotonic() + seconds
    await asyncio.gather(*(_reader(client, i, bots, requests_each, stop_at, think_s, reads)
                           for i, client in enumerate(clients)))
    return reads


def run_readers(url: str, bots: list[str], readers: int = 50, requests_each: int = 0,
                seconds: float = 60.0, think_s: float = 0.0) -> Reads:
    """``readers`` concurrent readers of the front page, the bots' pages and
    the leaderboard's JSON, each bounded by ``seconds`` and (unless 0)
    ``requests_each`` requests."""
    return asyncio.run(_readers(url, bots, readers, requests_each, seconds, think_s))


# ---- the ladder --------------------------------------------------------------------
def ladder_text(games: dict[str, list[int]] | None, workers: int,
                bosses: tuple[str, ...] = STEADY_BOSSES, engine: str = "auto") -> str:
    demo = tomllib.loads(DEMO_LADDER.read_text())
    games = games or demo["games"]
    lines = ['name = "ladder load"', 'signup = "invite"',
             "games = { " + ", ".join(f"{slug} = {json.dumps(list(counts))}"
                                      for slug, counts in games.items()) + " }", "[limits]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in demo.get("limits", {}).items()]
    lines += ["[validation]", "workers = 1", 'sandbox = "bwrap"',
              "[play]", f"workers = {workers}", f"bosses = {json.dumps(list(bosses))}",
              f"engine = {json.dumps(engine)}"]
    return "\n".join(lines) + "\n"


def upload_and_rate(url: str, tokens: dict[str, str]) -> list[str]:
    """Each account uploads a bot; returns their names once all are rated."""
    bots = []
    for account, token in tokens.items():
        name = f"{account}-random"
        reply = httpx.post(f"{url}/api/v1/bots/{name}/versions",
                           content=bot_zip(name, VALID_BOT.format(tag=account)),
                           headers={"authorization": f"Bearer {token}",
                                    "content-type": "application/zip"}, timeout=60)
        if reply.status_code != 201:
            raise SystemExit(f"uploading {name}: {reply.status_code} {reply.text[:300]}")
        bots.append(name)
    deadline = time.monotonic() + RATED_TIMEOUT_S
    while time.monotonic() < deadline:
        board = httpx.get(f"{url}/api/v1/leaderboard", timeout=30).json()
        shown = {row["bot"] for pool in board["pools"] for row in pool["rows"]}
        if shown >= set(bots):
            return bots
        time.sleep(1)
    raise SystemExit(f"{bots} were not rated within {RATED_TIMEOUT_S:g} s")


def matches_stored(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return int(connection.execute(
            "SELECT COUNT(*) FROM matches WHERE league LIKE 'ladder:%'").fetchone()[0])


def server_pid(db: Path) -> int | None:
    """The ``league serve`` process of this ladder file (this machine's)."""
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in words and str(db).encode() in words:
            return int(entry.name)
    return None


def process_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a process (all its threads, not its
    children: the bots' own processes are not counted); this one's if None."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = _stat(Path(f"/proc/{pid}/stat"))[1]
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stat(path: Path) -> tuple[str, list[str]]:
    """A /proc stat file's name (comm) and the fields after it (state first)."""
    text = path.read_text()
    return text[text.index("(") + 1:text.rindex(")")], text.rsplit(")", 1)[1].split()


@dataclass(frozen=True)
class TreeCpu:
    """CPU seconds so far of the server's tree, split in two: ``matches``,
    its match threads, plus every process under it (live: its own and its
    reaped children's; gone: in the server's reaped-children count), and
    ``pages``, its other threads (requests, the event loop)."""

    matches: float
    pages: float

    @staticmethod
    def of(pid: int | None) -> TreeCpu:
        if pid is None:
            return TreeCpu(0.0, 0.0)
        tick = os.sysconf("SC_CLK_TCK")
        try:
            match_threads = own = 0
            for task in Path(f"/proc/{pid}/task").iterdir():
                name, fields = _stat(task / "stat")
                if name.startswith(MATCH_THREADS):
                    match_threads += int(fields[11]) + int(fields[12])
            fields = _stat(Path(f"/proc/{pid}/stat"))[1]
            own, reaped = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
        except (OSError, ValueError):  # the server is gone
            return TreeCpu(0.0, 0.0)
        below = sum(sum(map(int, fields[11:15])) for fields in _descendants(pid))
        return TreeCpu((match_threads + reaped + below) / tick, (own - match_threads) / tick)

    def __sub__(self, other: TreeCpu) -> TreeCpu:
        return TreeCpu(self.matches - other.matches, self.pages - other.pages)


def _descendants(pid: int) -> list[list[str]]:
    """The stat fields of every live process under ``pid``."""
    parent: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat(entry / "stat")[1]
        except (OSError, ValueError):  # it ended while we looked
            continue
        parent[int(entry.name)], stats[int(entry.name)] = int(fields[1]), fields
    found = []
    for child, fields in stats.items():
        ancestor = parent.get(child)
        while ancestor is not None and ancestor != pid and ancestor > 1:
            ancestor = parent.get(ancestor)
        if ancestor == pid:
            found.append(fields)
    return found


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine since boot."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


@dataclass
class Window:
    label: str
    seconds: float
    matches: int
    cpu_busy: float
    server: TreeCpu  # CPU seconds in the window
    readers_cpu_s: float
    reads: Reads | None = None

    @property
    def per_minute(self) -> float:
        return self.matches * 60 / self.seconds

    @property
    def match_cores(self) -> float:
        """The matches' CPU, in cores."""
        return self.server.matches / self.seconds


def window(label: str, db: Path, seconds: float, load: Any = None) -> Window:
    """Matches stored and CPU use over ``seconds``; ``load()`` (the readers)
    runs in the window and returns their Reads."""
    server = server_pid(db)
    server_before, readers_before = TreeCpu.of(server), process_cpu_s(None)
    before, cpu_before, started = matches_stored(db), cpu_times(), time.monotonic()
    reads = load() if load is not None else None
    left = seconds - (time.monotonic() - started)
    if left > 0:
        time.sleep(left)
    elapsed = time.monotonic() - started
    cpu_after = cpu_times()
    busy = (cpu_after[0] - cpu_before[0]) / max(1, cpu_after[1] - cpu_before[1])
    return Window(label, elapsed, matches_stored(db) - before, busy,
                  TreeCpu.of(server) - server_before, process_cpu_s(None) - readers_before,
                  reads)


# ---- the report --------------------------------------------------------------------
@dataclass(frozen=True)
class Round:
    """One load window against the mean of the quiet ones on its two sides."""

    rate_drop: float  # of the matches stored per minute
    cpu_drop: float  # of the matches' CPU

    @staticmethod
    def of(before: Window, load: Window, after: Window) -> Round:
        quiet_rate = (before.per_minute + after.per_minute) / 2
        quiet_cores = (before.match_cores + after.match_cores) / 2
        return Round(1 - load.per_minute / quiet_rate if quiet_rate else 0.0,
                     1 - load.match_cores / quiet_cores if quiet_cores else 0.0)


def rounds_of(windows: list[Window]) -> list[Round]:
    """Windows quiet, load, quiet, load, ..., quiet: a Round per load."""
    return [Round.of(windows[i - 1], windows[i], windows[i + 1])
            for i in range(1, len(windows) - 1, 2)]


def _spread(values: list[float]) -> str:
    mean = sum(values) / len(values)
    return (f"{mean:.1%} (over {len(values)} rounds: {min(values):.1%} to {max(values):.1%})"
            if len(values) > 1 else f"{mean:.1%}")


def report(windows: list[Window], readers: int, think_s: float) -> tuple[str, bool]:
    quiet = [w for w in windows if w.reads is None]
    loaded = [w for w in windows if w.reads is not None]
    cores = os.cpu_count() or 1
    lines = [f"{w.label:>6}: {w.matches} matches in {w.seconds:.0f} s = {w.per_minute:.1f}/min; "
             f"matches' CPU {w.match_cores:.2f} cores ({w.match_cores / cores:.0%} of the "
             f"machine); CPU {w.cpu_busy:.0%} busy; server's other threads "
             f"{w.server.pages / w.seconds:.0%} of a core, readers "
             f"{w.readers_cpu_s / w.seconds:.0%}" for w in windows]
    rounds = rounds_of(windows)
    for number, done in enumerate(rounds, 1):
        lines.append(f"round {number}: under load, the match rate dropped {done.rate_drop:.1%}, "
                     f"the matches' CPU {done.cpu_drop:.1%} (against the mean of the quiet "
                     "windows on each side)")
    rate_drop = sum(r.rate_drop for r in rounds) / len(rounds)
    lines.append(f"drop under load: match rate {_spread([r.rate_drop for r in rounds])}; "
                 f"matches' CPU {_spread([r.cpu_drop for r in rounds])}")
    reads = Reads()
    for w in loaded:
        assert w.reads is not None
        for kind, values in w.reads.latencies.items():
            reads.latencies.setdefault(kind, []).extend(values)
        reads.errors += w.reads.errors
        reads.paths.update(w.reads.paths)
        reads.timeline += w.reads.timeline
    load_s = sum(w.seconds for w in loaded)
    lines.append(f"{readers} readers, think {think_s:g} s: {reads.count} requests, "
                 f"{reads.count / load_s:.1f}/s, {len(reads.errors)} errors")
    quiet_pages = sum(w.server.pages for w in quiet) / sum(w.seconds for w in quiet)
    extra = sum(w.server.pages for w in loaded) - quiet_pages * load_s
    lines.append(f"CPU per request: server {extra / max(1, reads.count) * 1000:.2f} ms (its "
                 "threads but the matches', beyond their quiet use), readers "
                 f"{sum(w.readers_cpu_s for w in loaded) / max(1, reads.count) * 1000:.2f} ms")
    every: list[float] = []
    for kind, values in sorted(reads.latencies.items()):
        every += values
        lines.append(_latency_line(kind, values))
    if every:
        lines.append(_latency_line("all", every))
    slow = [started for started, ms in reads.timeline if ms > P99_TARGET_MS]
    together = max(Counter(int(started) for started in slow).values(), default=0)
    lines.append(f"over {P99_TARGET_MS:g} ms: {len(slow)} requests, at most {together} of them "
                 "started in the same second (many: a stall of the server or of the readers)")
    lines += [f"  error: {error}" for error in reads.errors[:10]]
    p99 = percentile(every, 0.99) if every else 0.0
    lines.append(f"machine: {cores} cores, load average {os.getloadavg()[0]:.1f} at the end")
    lines.append(f"targets: p99 {p99:.1f} ms < {P99_TARGET_MS:g} ms: "
                 f"{'met' if p99 < P99_TARGET_MS else 'MISSED'}; drop of the match rate "
                 f"{rate_drop:.1%} < {DROP_TARGET:.0%}: "
                 f"{'met' if rate_drop < DROP_TARGET else 'MISSED'}")
    return "\n".join(lines), not reads.errors


def _latency_line(kind: str, values: list[float]) -> str:
    return (f"  {kind:<22} n={len(values):>5}  p50 {percentile(values, 0.5):7.1f}  "
            f"p95 {percentile(values, 0.95):7.1f}  p99 {percentile(values, 0.99):7.1f}  "
            f"max {max(values):7.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0, help="each window's length")
    parser.add_argument("--think", type=float, default=1.0,
                        help="a reader's mean pause between requests (0: none)")
    parser.add_argument("--requests", type=int, default=0,
                        help="requests per reader at most (0: only the time bounds them)")
    parser.add_argument("--workers", type=int, default=0, help="match workers (0: default)")
    parser.add_argument("--games", nargs="*", default=[], help="GAME:COUNTS, like target:3")
    parser.add_argument("--bosses", default=",".join(STEADY_BOSSES),
                        help="the reference bots that play, comma-separated (random, heuristic, "
                             "search; search's tables cost some 20 times the others')")
    parser.add_argument("--engine", choices=["auto", "inline", "ray"], default="auto",
                        help="where matches play: threads in the server (inline; they share "
                             "its interpreter lock with the pages) or Ray's worker processes")
    parser.add_argument("--rounds", type=int, default=2,
                        help="load windows, each between two quiet ones")
    args = parser.parse_args(argv)
    bosses = tuple(b.strip() for b in args.bosses.split(",") if b.strip())
    if not bosses or args.rounds < 1:
        parser.error("--bosses needs one reference bot at least, --rounds 1 at least")
    with tempfile.TemporaryDirectory(prefix="ladder-load-") as folder:
        root = Path(folder)
        ladder, db = root / "ladder.toml", root / "ladder.db"
        ladder.write_text(ladder_text(parse_games(args.games) or None, args.workers, bosses,
                                      args.engine))
        tokens = make_accounts(db, list(UPLOADERS))
        with running_server(ladder, db, root / "server.log") as url:
            bots = upload_and_rate(url, tokens)
            print(f"{url}: {bots} rated; bosses {', '.join(bosses)}; {args.rounds} round(s) of "
                  f"windows of {args.seconds:g} s", flush=True)
            windows = [window("quiet", db, args.seconds)]
            for _ in range(args.rounds):
                windows += [window("load", db, args.seconds, lambda: run_readers(
                                url, bots, args.readers, args.requests, args.seconds,
                                args.think)),
                            window("quiet", db, args.seconds)]
        text, ok = report(windows, args.readers, args.think)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
