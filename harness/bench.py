"""Throughput benchmark: the sandbox's cost against ``--sandbox none``, then
the demo league on Ray with 1 and 2 workers, as matches/s and bot
decisions/s, and as a ratio to the machine's ceiling for bot traffic
measured in the same run (harness/ceiling.py).

    python -m harness.bench [--league demo] [--workers 1,2] [--matches-per-worker 1,2]
                            [--deals 60] [--seconds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sqlite3
import tempfile
import time
from pathlib import Path

from harness.ceiling import round_trips_per_second
from harness.league import load_league
from harness.runner import run_league
from harness.store import Store

def pipe_ceiling(pairs: int, seconds: float) -> float:
    """Round trips/s of ``pairs`` bare driver+bot pairs at once."""
    return round_trips_per_second(pairs, seconds)


FIRST_BOT = """
import msgpack, sys
out = sys.stdout.buffer
unpacker = msgpack.Unpacker(raw=False)
while data := sys.stdin.buffer.read1(65536):
    unpacker.feed(data)
    for m in unpacker:
        if m["type"] == "hello":
            out.write(msgpack.packb({"type": "hello", "protocol": 1, "name": "first"}))
        elif m["type"] == "act":
            out.write(msgpack.packb({"type": "action", "index": 0, "decision": m["decision"]}))
        out.flush()
"""


def sandbox_overhead(starts: int = 10, round_trips: int = 3000,
                     rounds: int = 3) -> dict[str, dict[str, float]]:
    """Process start (to the end of the handshake) and decision round trip
    of a trivial Python bot, with bubblewrap and with --sandbox none: the
    best of ``rounds`` interleaved rounds, so both see the same machine."""
    from harness.botproc import BotClient
    from harness.catalog import BotCache, load_manifest
    from harness.sandbox import ResourceLimits, Sandbox

    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "first.py").write_text(FIRST_BOT)
        (root / "first.toml").write_text('name = "first"\ncommand = ["{python}", "first.py"]\n'
                                         'files = ["first.py"]\n')
        spec = load_manifest(root / "first.toml")
        bot_dir = BotCache(root / "cache").materialise("first", spec.bundle())
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
                client.choose(obs, list(range(20)), decision, 2.0)
            trip_us = (time.perf_counter() - clock) / round_trips * 1e6
            for each in clients:
                each.close()
            best = figures.setdefault(mode, {"start_ms": start_ms, "round_trip_us": trip_us})
            best["start_ms"] = min(best["start_ms"], start_ms)
            best["round_trip_us"] = min(best["round_trip_us"], trip_us)
    return figures


def bench_league(league_name: str, workers: int, per_worker: int,
                 deals: int | None) -> tuple[float, float, float, int]:
    """Steady-state matches/s and decisions/s (from the first stored result to
    the last, so Ray's start-up is left out), total seconds, process starts."""
    league = load_league(league_name)
    if deals:
        league.deals = deals
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
    return matches_s, matches_s * decisions / summary.played, summary.elapsed_s, \
        summary.process_starts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--league", default="demo")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--matches-per-worker", default="1,2")
    parser.add_argument("--deals", type=int, default=60, help="override the league's deals")
    args = parser.parse_args()
    mp.set_start_method("fork", force=True)
    overhead = sandbox_overhead()
    bare, boxed = overhead["none"], overhead["bwrap"]
    print(f"bot process start + handshake: {boxed['start_ms']:.1f} ms sandboxed, "
          f"{bare['start_ms']:.1f} ms with --sandbox none "
          f"(x{boxed['start_ms'] / bare['start_ms']:.2f})")
    print(f"decision round trip: {boxed['round_trip_us']:.1f} us sandboxed, "
          f"{bare['round_trip_us']:.1f} us with --sandbox none "
          f"(x{boxed['round_trip_us'] / bare['round_trip_us']:.2f})")
    one_pair = pipe_ceiling(1, args.seconds)
    two_pairs = pipe_ceiling(2, args.seconds)
    print(f"pipe ceiling: 1 pair {one_pair:,.0f} round trips/s, 2 pairs {two_pairs:,.0f}/s")
    ceiling = max(one_pair, two_pairs)
    for workers in (int(w) for w in args.workers.split(",")):
        for per_worker in (int(k) for k in args.matches_per_worker.split(",")):
            matches_s, decisions_s, elapsed, starts = bench_league(args.league, workers, per_worker,
                                                                 args.deals)
            print(f"{args.league} on Ray, {workers} worker(s) x {per_worker} in flight: "
                  f"{matches_s:.1f} matches/s, {decisions_s:,.0f} decisions/s "
                  f"(= {decisions_s / ceiling:.1%} of the best pipe ceiling), "
                  f"{elapsed:.1f}s including Ray start, {starts} bot process starts")


if __name__ == "__main__":
    main()
