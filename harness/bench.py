"""Throughput benchmark: the demo league on Ray with 1 and 2 workers, as
matches/s and bot decisions/s, and as a ratio to the machine's ceiling for
bot traffic measured in the same run (msgpack round trips over pipes, as in
../shared/tools/pipe_ceiling.py).

    python -m harness.bench [--league demo] [--workers 1,2] [--matches-per-worker 1,2]
                            [--deals 60] [--seconds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sqlite3
import sys
import tempfile
from pathlib import Path

from harness.league import load_league
from harness.runner import run_league
from harness.store import Store

CEILING_TOOL = Path(__file__).resolve().parent.parent.parent / "shared" / "tools" / "pipe_ceiling.py"


def pipe_ceiling(pairs: int, seconds: float) -> float:
    """Round trips/s of ``pairs`` bare driver+bot pairs at once."""
    if CEILING_TOOL.exists():
        sys.path.insert(0, str(CEILING_TOOL.parent))
        import pipe_ceiling as tool  # noqa: PLC0415 - the shared tool, when present
    else:  # pragma: no cover - a checkout without ../shared
        raise SystemExit(f"missing {CEILING_TOOL}")
    return tool.run(tool.pingpong, pairs, seconds)


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
                             progress=lambda done, total, faulted, t: marks.append((t, done)))
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
