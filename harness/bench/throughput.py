"""Throughput benchmark: the sandbox's cost against ``--sandbox none``, then
the harness's own cost per decision (harness/bench/decisions.py: matches
in-process, no Ray; with the league's bots, then with trivial bots against
the same traffic without the harness), then the demo league on Ray with 1..N workers, as
matches/s and bot decisions/s, and as a ratio to the machine's ceiling for
bot traffic measured in the same run (harness/bench/ceiling.py), and last a league
of bots that use CPU (2 ms a decision) on 1..N workers, whose matches/s
against one worker's is the scaling across cores.

    python -m harness.bench [--league demo] [--workers 1,2] [--matches-per-worker 1,2]
                            [--deals 60] [--seconds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.bench.ceiling import round_trips_per_second, traffic_round_trips
from harness.bench.decisions import (
    BENCH_BOTS,
    league_from_text,
    load_bench_league,
    play_parallel,
    report,
)
from harness.league import load_league
from harness.runner import pending_batches, run_league, start_embedded_ray
from harness.store import Store


def pipe_ceiling(pairs: int, seconds: float) -> float:
    """Round trips/s of ``pairs`` bare driver+bot pairs at once."""
    return round_trips_per_second(pairs, seconds)


def sandbox_overhead(starts: int = 10, round_trips: int = 3000,
                     rounds: int = 3) -> dict[str, dict[str, float]]:
    """Process start (to the end of the handshake) and decision round trip
    of the trivial bot (harness/bench/bots/trivial_bot.py), with bubblewrap
    and with --sandbox none: the best of ``rounds`` interleaved rounds, so
    both see the same machine."""
    from harness.limits import ResourceLimits
    from harness.proc.botproc import BotClient
    from harness.proc.catalog import BotCache, load_manifest
    from harness.proc.sandbox import Sandbox

    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        spec = load_manifest(BENCH_BOTS / "trivial_a.toml")
        bot_dir = BotCache(Path(tmp) / "cache").materialise("trivial_a", spec.bundle())
        obs = {"hand": list(range(10)), "board": [[0] * 8 for _ in range(4)]}
        for mode in ("none", "bwrap") * rounds:
            sandbox, clients = Sandbox(mode), []
            clock = time.perf_counter()
            for _ in range(starts):
                client = BotClient(sandbox.spawn(bot_dir, spec.argv(), {}, ResourceLimits()))
                client.handshake(20.0)
                clients.append(client)
            start_ms = (time.perf_counter() - clock) / starts * 1000
            client = clients[0]
            client.start_match({"match_id": "bench"})
            clock = time.perf_counter()
            for decision in range(round_trips):
                client.choose(obs, list(range(20)), decision, 2000)
            trip_us = (time.perf_counter() - clock) / round_trips * 1e6
            for each in clients:
                each.close()
            best = figures.setdefault(mode, {"start_ms": start_ms, "round_trip_us": trip_us})
            best["start_ms"] = min(best["start_ms"], start_ms)
            best["round_trip_us"] = min(best["round_trip_us"], trip_us)
    return figures


@dataclass
class LeagueFigures:
    matches_s: float  # steady state: from the first stored result to the last
    decisions_s: float
    elapsed_s: float  # Ray's start included
    startup_s: float
    process_starts: int
    played: int


CPU_LEAGUE = """name = "cpu"
description = "benchmark: bots that think (2 ms of CPU a decision) against random"
game = "limit"
bots = ["spin", "random"]
players = 3
deals = {deals}
"""


def bench_league(league_name: str, workers: int, per_worker: int,
                 deals: int | None) -> LeagueFigures:
    league = load_league(league_name)
    if deals:
        league = replace(league, deals=deals)
    return _run_figures(league, workers, per_worker)


def bench_cpu_league(workers: int, deals: int, per_worker: int = 1) -> LeagueFigures:
    """Matches/s of a league whose bots use CPU (harness/bench/bots/spin.toml,
    2 ms a decision): what scaling across cores is about."""
    return _run_figures(league_from_text(CPU_LEAGUE.format(deals=deals)), workers, per_worker)


def _run_figures(league: Any, workers: int, per_worker: int) -> LeagueFigures:
    marks: list[tuple[float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        summary = run_league(league, Store(db), workers=workers, engine="ray",
                             concurrency=per_worker,
                             progress=lambda p: marks.append((p.elapsed_s, p.done)))
        with sqlite3.connect(db) as conn:
            decisions = conn.execute("SELECT SUM(decisions) FROM matches").fetchone()[0]
    (t0, d0), (t1, d1) = marks[0], marks[-1]
    matches_s = (d1 - d0) / (t1 - t0)
    return LeagueFigures(matches_s, matches_s * decisions / summary.played, summary.elapsed_s,
                         summary.startup_s, summary.process_starts, summary.played)


def ray_startup_s() -> float:
    import ray

    clock = time.perf_counter()
    start_embedded_ray(ray)  # as league run starts it
    took = time.perf_counter() - clock
    ray.shutdown()
    return took


def schedule_rss(matches: int = 1_000_000) -> list[tuple[int, float]]:
    """The driver's RSS (MiB) while it walks a league's schedule against the
    store and cuts it into batches, as a run does, without playing."""
    import psutil

    demo = load_league("demo")
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "rss.db")
        league = replace(demo, deals=-(-matches // demo.size() * demo.deals))
        seen = 0
        for batch in pending_batches(league, store, 8):
            seen += len(batch)
            if seen % 100_000 < len(batch):
                samples.append((seen, psutil.Process().memory_info().rss / 2**20))
            if seen >= matches:
                break
    return samples


def store_write_rate(matches: int = 2000) -> float:
    """Matches/s that save_match stores, one transaction each (a real league's rows)."""
    from harness.records import MatchResult, ThinkTime

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "w.db")
        replay = {"game": "limit", "actions": list(range(190))}
        clock = time.perf_counter()
        for i in range(matches):
            result = MatchResult(f"m{i}", "limit", "1", i, ["a", "b", "c"], [1.0, 2.0, 3.0],
                                 [3, 2, 1], [None, None, None], False, 190, 0.0, 0.1, None, replay,
                                 think=[ThinkTime(63, 40.0, 2.5) for _ in range(3)])
            store.save_match("bench", i, ["a@1", "b@1", "c@1"], result, None)
        return matches / (time.perf_counter() - clock)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m harness.bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--league", default="demo")
    parser.add_argument("--workers", default="", help="e.g. 1,2,4 (default 1..CPU count)")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--matches-per-worker", default="1,2")
    parser.add_argument("--deals", type=int, default=60, help="override the league's deals")
    parser.add_argument("--cpu-deals", type=int, default=40,
                        help="deals of the league whose bots use CPU (scaling)")
    parser.add_argument("--quick", action="store_true", help="skip the 1,000,000-match schedule")
    args = parser.parse_args()
    mp.set_start_method("fork", force=True)
    cores = os.cpu_count() or 1
    print(f"machine: {cores} cores")
    overhead = sandbox_overhead()
    bare, boxed = overhead["none"], overhead["bwrap"]
    print(f"bot process start + handshake: {boxed['start_ms']:.1f} ms sandboxed, "
          f"{bare['start_ms']:.1f} ms with --sandbox none "
          f"(x{boxed['start_ms'] / bare['start_ms']:.2f})")
    print(f"decision round trip: {boxed['round_trip_us']:.1f} us sandboxed, "
          f"{bare['round_trip_us']:.1f} us with --sandbox none "
          f"(x{boxed['round_trip_us'] / bare['round_trip_us']:.2f})")
    pairs = sorted({1, 2, cores})
    ceilings = {k: pipe_ceiling(k, args.seconds) for k in pairs}
    ceiling = max(ceilings.values())
    print("pipe ceiling: " + ", ".join(f"{k} pair(s) {v:,.0f} round trips/s"
                                       for k, v in ceilings.items()))
    for workers in sorted({1, min(2, cores)}):
        figures = max((play_parallel(args.league, "bwrap", 30, workers) for _ in range(3)),
                      key=lambda f: f.decisions_s)
        print(report(figures, ceiling, f"harness alone (no Ray), {args.league} bots, "
                                       f"{workers} worker(s), best of 3"))
    trivial = load_bench_league("trivial")
    for workers in sorted({1, min(2, cores)}):
        traffic = traffic_round_trips(trivial.game, trivial.players, workers, args.seconds)
        figures = max((play_parallel("trivial", "bwrap", 30, workers) for _ in range(3)),
                      key=lambda f: f.decisions_s)
        print(f"{trivial.game} traffic to {trivial.players} trivial bots without the harness, "
              f"{workers} driver(s): {traffic:,.0f} round trips/s")
        print(report(figures, ceiling, f"harness alone (no Ray), trivial bots, {workers} "
                                       "worker(s), best of 3", traffic))
    _engine_figures()
    print(f"Ray start-up (embedded): {ray_startup_s():.1f} s")
    print(f"store writes: {store_write_rate():,.0f} matches/s (one transaction each)")
    if not args.quick:
        samples = schedule_rss()
        print("driver RSS while scheduling 1,000,000 matches: " + ", ".join(
            f"{n // 1000}k {rss:.0f} MiB" for n, rss in samples))
    workers_list = [int(w) for w in args.workers.split(",")] if args.workers else \
        list(range(1, cores + 1))
    base: float | None = None
    for workers in workers_list:
        for per_worker in (int(k) for k in args.matches_per_worker.split(",")):
            f = bench_league(args.league, workers, per_worker, args.deals)
            if per_worker == 1 and workers == 1:
                base = f.matches_s
            scaling = (f" scaling {f.matches_s / (base * workers):.2f} of linear"
                       if base and per_worker == 1 else "")
            print(f"{args.league} on Ray, {workers} worker(s) x {per_worker} in flight: "
                  f"{f.matches_s:.1f} matches/s, {f.decisions_s:,.0f} decisions/s "
                  f"(= {f.decisions_s / ceiling:.1%} of the best pipe ceiling),{scaling} "
                  f"{f.process_starts / f.played:.3f} bot starts per match, "
                  f"start-up {f.startup_s:.1f}s of {f.elapsed_s:.1f}s")
    cpu_base: float | None = None
    for workers in workers_list:
        f = bench_cpu_league(workers, args.cpu_deals)
        cpu_base = cpu_base or f.matches_s
        print(f"bots that think (2 ms CPU a decision), {workers} worker(s) x 1: "
              f"{f.matches_s:.2f} matches/s, scaling {f.matches_s / (cpu_base * workers):.2f} "
              "of linear")
    if cores > 1 and cpu_base:  # one worker fills the cores by interleaving matches
        f = bench_cpu_league(1, args.cpu_deals, per_worker=cores)
        print(f"bots that think (2 ms CPU a decision), 1 worker x {cores} in flight: "
              f"{f.matches_s:.2f} matches/s, {f.matches_s / (cpu_base * cores):.2f} of "
              f"{cores} workers' linear")


def _engine_figures(seconds: float = 0.5) -> None:
    """Engine-only decisions/s per game, random play at 4 players or the
    game's nearest count (games/bench.py has before/after comparisons)."""
    from games import implemented_games
    from games.bench import measure, players_for

    for slug in implemented_games():
        players = players_for(slug, 4)
        figures = measure(slug, players, seconds)
        print(f"engine {slug:15} {players}p: {figures['random']:>9,.0f} decisions/s random play, "
              f"{figures['redeal']:>7,.0f} redeal+playouts/s")


if __name__ == "__main__":
    main()
