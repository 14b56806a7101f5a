"""The live ladder's throughput against ``league run``, and a new bot's time
to a rating, measured in one run on this machine.

    python -m harness.bench.ladder [--seconds 120] [--warmup 30] [--workers N]
                                   [--half-width 100] [--rated-timeout 900]

1. **The ladder.** ``league serve`` on the demo ladder (ladders/demo.toml:
   its games, player counts, limits and bwrap sandbox; ``[play]`` at its
   defaults, or ``--workers N``) in a process of its own, with the bosses
   and two starter-kit bots (what ``league new`` writes), each uploaded by
   an account of its own. After ``--warmup`` seconds of play (the workers'
   bot processes started, the placement groups played), the matches stored
   in the next ``--seconds`` are counted from the ladder file, per pool:
   matches per minute, read from the database, not from the server's own
   figure (which is printed beside it).
2. **A new upload.** While that ladder plays on, a third kit bot is
   uploaded, and the bench records, from just before the request: the 201;
   its validation (the server's ``validated_at``); its first stored match
   (the ladder file); the first refit that rates it (its page,
   ``/api/v1/bots/NAME/ladder``, shows a standing); and, per pool, the first
   refit at which its 95% half-width is under ``--half-width`` Elo (polled
   every half second: a refit happens every ``refit_s``, 20 s on the demo
   ladder, so these times are what its owner would see, to within one
   refit).
3. **``league run``**, after the server has stopped (so the two never share
   the CPUs): one league file per pool, with the same bots (the bosses and
   the two kit bots, as folders on ``--bots``), game, player count, limits
   and seat design, in whole deals (every table of the round robin once a
   deal), as many as come nearest the matches the ladder stored in that pool
   during its window. Its rate is its matches
   over the wall time of the ``league run`` processes (their start, the
   sandbox probe and the bots' start-ups included, as a user pays them),
   and also over the span of its stored matches (first to last finish).

The ratio printed is ladder / league run. The two differ in what they
schedule (the ladder's matchmaker picks line-ups, a league plays every
table deal by deal), so the share of matches with the slowest bot
(search) in them is printed for both: a rate is only comparable at a
similar mix. Give both the same number of match workers with ``--workers
N``: the ladder's own default (``workers = 0``) is one Ray worker per CPU,
``league run``'s one worker in its own process (Ray for ``--workers`` above
1); with ``--workers 2`` on 2 cores both play on two Ray workers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import subprocess
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from harness.bench.serve_load import (
    DEMO_LADDER,
    LEAGUE,
    REPO,
    kit_zip,
    make_accounts,
    running_server,
)
from harness.kits import README, render

KIT_BOTS = ("amber", "basil")   # in the ladder from the start
NEWCOMER = "cedar"              # uploaded while it plays
BOSSES = ("random", "heuristic", "search")
POLL_S = 0.5
SLOWEST = "search"


@dataclass
class LadderWindow:
    seconds: float
    per_pool: dict[str, int]       # pool -> matches stored in the window
    with_slowest: int              # of them, matches with SLOWEST seated
    server_rate: float             # /api/v1/health's matches_per_minute at the end
    workers: int

    @property
    def matches(self) -> int:
        return sum(self.per_pool.values())


@dataclass
class Newcomer:
    """Seconds from just before the upload's request to each step (NaN: not seen)."""

    accepted: float = math.nan
    validated: float = math.nan
    first_match: float = math.nan
    first_rated: float = math.nan
    narrow: dict[str, float] = field(default_factory=dict)  # pool -> half-width under the bar


@dataclass
class LeagueRuns:
    matches: int = 0
    wall_s: float = 0.0
    span_s: float = 0.0
    with_slowest: int = 0
    exit_codes: list[int] = field(default_factory=list)


def ladder_file(folder: Path, workers: int) -> Path:
    """The demo ladder as it is, or with ``[play] workers`` set."""
    text = DEMO_LADDER.read_text()
    if workers:
        if "play" in tomllib.loads(text):
            raise SystemExit(f"{DEMO_LADDER} has a [play] table: set its workers there")
        text += f"\n[play]\nworkers = {workers}\n"
    path = folder / "ladder.toml"
    path.write_text(text)
    return path


def pools_of(ladder: Path) -> list[tuple[str, int]]:
    games = tomllib.loads(ladder.read_text())["games"]
    return [(game, count) for game, counts in games.items() for count in counts]


def pool_name(game: str, players: int) -> str:
    from harness.serve.ladder_run import pool_name as named

    return named(game, players)


def upload(client: httpx.Client, name: str) -> dict[str, Any]:
    reply = client.post(f"/api/v1/bots/{name}/versions", content=kit_zip("python", name),
                        headers={"content-type": "application/zip"})
    if reply.status_code != 201:
        raise SystemExit(f"{name} was refused: {reply.status_code} {reply.text[:500]}")
    return dict(reply.json())


def await_valid(client: httpx.Client, name: str, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        version: dict[str, Any] = client.get(f"/api/v1/bots/{name}/versions/1").json()
        if version["state"] == "valid":
            return version
        if version["state"] not in ("queued", "validating"):
            raise SystemExit(f"{name} did not validate: {json.dumps(version)[:2000]}")
        time.sleep(POLL_S / 5)
    raise SystemExit(f"{name} was not validated within {timeout_s:g} s")


def connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)


def matches_between(db: Path, start: float, end: float) -> tuple[dict[str, int], int]:
    """Ladder matches finished in [start, end): per pool, and with SLOWEST."""
    with connect(db) as connection:
        per_pool = dict(connection.execute(
            "SELECT league, COUNT(*) FROM matches WHERE league LIKE 'ladder:%' AND "
            "finished_at >= ? AND finished_at < ? GROUP BY league", [start, end]).fetchall())
        slowest = connection.execute(
            "SELECT COUNT(DISTINCT m.id) FROM matches m JOIN seats s ON s.match_id = m.id "
            "WHERE m.league LIKE 'ladder:%' AND m.finished_at >= ? AND m.finished_at < ? "
            "AND s.bot = ?", [start, end, SLOWEST]).fetchone()[0]
    return per_pool, int(slowest)


def first_match_at(db: Path, entrant: str) -> float | None:
    with connect(db) as connection:
        found = connection.execute(
            "SELECT MIN(m.finished_at) FROM matches m JOIN seats s ON s.match_id = m.id "
            "WHERE s.bot = ?", [entrant]).fetchone()[0]
    return float(found) if found is not None else None


def play_window(client: httpx.Client, db: Path, warmup_s: float, seconds: float
                ) -> LadderWindow:
    time.sleep(warmup_s)  # a bench: the workers' bots start and placement plays
    start = time.time()
    time.sleep(seconds)
    end = time.time()
    per_pool, slowest = matches_between(db, start, end)
    play = client.get("/api/v1/health").json()["play"]
    return LadderWindow(end - start, per_pool, slowest, float(play["matches_per_minute"]),
                        int(play["workers"]))


def time_to_rating(client: httpx.Client, db: Path, pools: list[str], half_width: float,
                   timeout_s: float) -> Newcomer:
    """Upload NEWCOMER and follow it to a rating narrower than ``half_width``
    in every pool (or ``timeout_s``)."""
    seen = Newcomer()
    sent = time.time()
    number = int(upload(client, NEWCOMER)["number"])
    seen.accepted = time.time() - sent
    entrant = f"{NEWCOMER}@v{number}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and len(seen.narrow) < len(pools):
        if math.isnan(seen.validated):
            version = client.get(f"/api/v1/bots/{NEWCOMER}/versions/{number}").json()
            if version.get("validated_at"):
                seen.validated = float(version["validated_at"]) - sent
        if math.isnan(seen.first_match):
            at = first_match_at(db, entrant)
            if at is not None:
                seen.first_match = at - sent
        page = client.get(f"/api/v1/bots/{NEWCOMER}/ladder").json()
        standings = [pool for version in page["versions"] for pool in version["pools"]]
        if standings and math.isnan(seen.first_rated):
            seen.first_rated = time.time() - sent
        for standing in standings:
            if standing["pool"] not in seen.narrow and \
                    (standing["high"] - standing["low"]) / 2 < half_width:
                seen.narrow[standing["pool"]] = time.time() - sent
        time.sleep(POLL_S)
    return seen


def write_kit(folder: Path, name: str) -> None:
    """The python kit as `league new NAME` writes it (without its pages)."""
    for relative, text in render("python", name, "", "").items():
        if relative == README:
            continue
        path = folder / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def league_runs(folder: Path, ladder: Path, counts: dict[str, int], workers: int) -> LeagueRuns:
    """``league run`` of each pool's league, for the ladder's count of matches."""
    bots_dir = folder / "bots"
    for name in KIT_BOTS:
        write_kit(bots_dir, name)
    limits = tomllib.loads(ladder.read_text()).get("limits", {})
    db = folder / "league.db"
    runs = LeagueRuns()
    for game, players in pools_of(ladder):
        wanted = counts.get(pool_name(game, players), 0)
        if not wanted:
            continue
        league = folder / f"bench-{game}-{players}p.toml"
        league.write_text(league_text(league.stem, game, players, limits, wanted))
        command = [*LEAGUE, "run", str(league), "--db", str(db), "--bots", str(bots_dir), "-q"]
        if workers:
            command += ["--workers", str(workers)]
        started = time.monotonic()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        runs.wall_s += time.monotonic() - started
        runs.exit_codes.append(done.returncode)
        if done.returncode not in (0,):
            print(f"league run {league.name} exited {done.returncode}: {done.stderr[-1500:]}")
    with connect(db) as connection:
        for matches, first, last in connection.execute(
                "SELECT COUNT(*), MIN(finished_at), MAX(finished_at) FROM matches "
                "GROUP BY league").fetchall():
            runs.matches += int(matches)
            runs.span_s += float(last) - float(first)
        # a league's seats name versions (search@1a2b...), the ladder's bosses not
        runs.with_slowest = int(connection.execute(
            "SELECT COUNT(DISTINCT match_id) FROM seats WHERE bot LIKE ?",
            [f"{SLOWEST}@%"]).fetchone()[0])
    return runs


def league_text(name: str, game: str, players: int, limits: dict[str, Any], matches: int
                ) -> str:
    """A league of the bosses and the kit bots, in whole deals (every table
    once a deal: a cut deal would play the tables that sort first, without
    search), as near ``matches`` as whole deals come."""
    from harness.league import League
    from harness.limits import Limits

    bots = sorted([*BOSSES, *KIT_BOTS])
    probe = League(name=name, game=game, bots=bots, players=players, deals=1,
                   rotation="balanced", partners="copies", seed=None, limits=Limits())
    deals = max(1, round(matches / probe.size()))
    lines = [f'name = "{name}"', f'game = "{game}"', f"bots = {json.dumps(bots)}",
             f"players = {players}", f"deals = {deals}", "[limits]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in limits.items()]
    return "\n".join(lines) + "\n"


def per_minute(matches: int, seconds: float) -> float:
    return matches * 60 / seconds if seconds > 0 else math.nan


def report(window: LadderWindow, newcomer: Newcomer, pools: list[str], runs: LeagueRuns,
           half_width: float, cpus: int) -> str:
    ladder_rate = per_minute(window.matches, window.seconds)
    run_rate = per_minute(runs.matches, runs.wall_s)
    span_rate = per_minute(runs.matches, runs.span_s)
    lines = [f"machine: {cpus} CPUs; ladder: {DEMO_LADDER.name} with the bosses and "
             f"{len(KIT_BOTS)} kit bots, {window.workers} match worker(s)",
             f"ladder:     {window.matches} matches in {window.seconds:.0f} s = "
             f"{ladder_rate:.1f} matches/min (server's own figure: {window.server_rate:.1f}); "
             f"{_share(window.with_slowest, window.matches)} with {SLOWEST}",
             "            " + ", ".join(f"{pool} {count}" for pool, count in
                                      sorted(window.per_pool.items())),
             f"league run: {runs.matches} matches in {runs.wall_s:.0f} s of `league run` = "
             f"{run_rate:.1f} matches/min ({span_rate:.1f} over its matches' span of "
             f"{runs.span_s:.0f} s); {_share(runs.with_slowest, runs.matches)} with {SLOWEST}; "
             f"exit codes {runs.exit_codes}",
             f"ratio ladder / league run: {ladder_rate / run_rate:.2f} "
             f"({ladder_rate / span_rate:.2f} against its span)",
             f"new upload ({NEWCOMER}), seconds from the request: 201 {newcomer.accepted:.2f}; "
             f"validated {newcomer.validated:.1f}; first stored match "
             f"{newcomer.first_match:.1f}; first rated {newcomer.first_rated:.1f}"]
    for pool in pools:
        lines.append(f"  half-width under {half_width:g} Elo in {pool}: "
                     f"{newcomer.narrow.get(pool, math.nan):.1f}")
    if newcomer.narrow and len(newcomer.narrow) == len(pools):
        lines.append(f"  in every pool: {max(newcomer.narrow.values()):.1f}")
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.bench.ladder",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120,
                        help="the ladder's measured window")
    parser.add_argument("--warmup", type=float, default=30, help="play before the window")
    parser.add_argument("--workers", type=int, default=0,
                        help="match workers for both (0: each tool's default)")
    parser.add_argument("--half-width", type=float, default=100)
    parser.add_argument("--rated-timeout", type=float, default=900,
                        help="how long to follow the new upload")
    parser.add_argument("--keep", type=Path, default=None,
                        help="a folder to keep the files in (default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-ladder-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        ladder = ladder_file(folder, args.workers)
        pools = [pool_name(g, n) for g, n in pools_of(ladder)]
        db = folder / "ladder.db"
        owners = [f"{name}-owner" for name in (*KIT_BOTS, NEWCOMER)]
        tokens = make_accounts(db, owners)
        with running_server(ladder, db, folder / "server.log") as url:
            for name, owner in zip(KIT_BOTS, owners):
                with _client(url, tokens[owner]) as client:
                    upload(client, name)
                    await_valid(client, name, 300)
            with _client(url, tokens[owners[0]]) as client:
                window = play_window(client, db, args.warmup, args.seconds)
            with _client(url, tokens[owners[-1]]) as client:
                newcomer = time_to_rating(client, db, pools, args.half_width,
                                          args.rated_timeout)
        runs = league_runs(folder, ladder, window.per_pool, args.workers)
        print(report(window, newcomer, pools, runs, args.half_width, os.cpu_count() or 1))
    return 0


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=60)


if __name__ == "__main__":
    raise SystemExit(main())
