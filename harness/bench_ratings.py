"""Benchmark: rate() time and peak memory for 10k, 100k and 1M synthetic matches.

    python -m harness.bench_ratings [--sizes 10000,100000,1000000] [--players 4]
                                    [--bots 8] [--no-deal] [--stream] [--baseline FILE]

Each size runs in a fresh interpreter. The seat rows (dicts, as
``Store.seat_rows`` yields them, with deal and league unless ``--no-deal``)
are built first; then the peak resident memory is reset (Linux
``/proc/self/clear_refs``) and ``rate()`` runs, so "rate peak" is the memory
rate() itself adds on top of its input, and "process peak" the whole
process's. ``--stream`` hands rate() a generator instead of a list, as the
CLI could pass ``Store.seat_rows`` (no list of rows in memory; the time then
includes making the rows). ``--baseline FILE`` times another implementation
of ``rate`` (a copy of an older ratings.py, e.g. ``git show
<commit>:harness/ratings.py > /tmp/old_ratings.py``) on the same rows.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np


def synthetic_rows(matches: int, players: int, bots: int, with_deal: bool,
                   seed: int = 0) -> Iterator[dict[str, Any]]:
    """Seat rows of ``matches`` individual matches of ``players`` seats among
    ``bots`` bots, Plackett-Luce finishing orders, 280 matches a deal;
    generated lazily, 10,000 matches at a time."""
    rng = np.random.default_rng(seed)
    names = [f"bot{i}@v1" for i in range(bots)]
    strength = np.linspace(-1, 1, bots)
    small = list(range(max(players + 1, 8)))   # shared int objects, as sqlite3's are
    for first in range(0, matches, 10_000):
        count = min(10_000, matches - first)
        seats = np.argsort(rng.random((count, bots)), axis=1)[:, :players]
        finish = rng.exponential(size=(count, players)) / np.exp(strength[seats])
        ranks = ((finish[:, None, :] < finish[:, :, None]).sum(-1) + 1).tolist()
        seats_list = seats.tolist()
        for k in range(count):
            m = first + k
            match_id = f"{m:020x}"
            for seat in range(players):
                rank = small[ranks[k][seat]]
                row = {"match_id": match_id, "seat": small[seat], "bot": names[seats_list[k][seat]],
                       "team": small[seat], "score": float(players - rank), "rank": rank,
                       "fault_kind": None}
                if with_deal:
                    row["deal"] = m // 280
                    row["league"] = "bench"
                yield row


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _load_rate(baseline: str | None) -> Callable[[Iterable[dict[str, Any]]], Any]:
    if not baseline:
        from harness.ratings import rate

        return rate
    spec = importlib.util.spec_from_file_location("ratings_baseline", baseline)
    assert spec is not None and spec.loader is not None, baseline
    module = importlib.util.module_from_spec(spec)
    sys.modules["ratings_baseline"] = module
    spec.loader.exec_module(module)
    return module.rate


def measure_one(matches: int, players: int, bots: int, with_deal: bool,
                baseline: str | None, stream: bool) -> dict[str, Any]:
    """Build the rows (or a generator of them), then time rate() and the
    memory it adds."""
    rate = _load_rate(baseline)
    rows: Iterable[dict[str, Any]] = synthetic_rows(matches, players, bots, with_deal)
    if not stream:
        rows = list(rows)
    before = _rss_kib("VmRSS")
    try:
        Path("/proc/self/clear_refs").write_text("5")
        resettable = True
    except OSError:
        resettable = False
    start = time.perf_counter()
    table = rate(rows)
    seconds = time.perf_counter() - start
    peak = _rss_kib("VmHWM") if resettable else 0
    return {"matches": matches, "seconds": seconds, "input_mib": before / 1024,
            "rate_peak_mib": max(peak - before, 0) / 1024 if resettable else None,
            "peak_mib": peak / 1024 if resettable else None, "bots": len(table)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--no-deal", action="store_true", help="rows without deal and league")
    parser.add_argument("--baseline", help="another ratings.py to time instead")
    parser.add_argument("--stream", action="store_true",
                        help="hand rate() a generator of rows (as Store.seat_rows is) "
                             "instead of a list: its time then includes making the rows")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one, args.players, args.bots, not args.no_deal,
                                     args.baseline, args.stream)))
        return
    label = args.baseline or "harness/ratings.py"
    print(f"rate() of {label}: {args.players} seats, {args.bots} bots, "
          f"{'no deal numbers' if args.no_deal else '280 matches a deal'}, "
          f"{'a generator of rows' if args.stream else 'a list of rows'}")
    print(f"{'matches':>10} {'seconds':>9} {'rate peak MiB':>14} {'input MiB':>10} "
          f"{'process peak MiB':>17}")
    for size in (int(s) for s in args.sizes.split(",")):
        command = [sys.executable, "-m", "harness.bench_ratings", "--one", str(size),
                   "--players", str(args.players), "--bots", str(args.bots)]
        command += ["--no-deal"] if args.no_deal else []
        command += ["--baseline", args.baseline] if args.baseline else []
        command += ["--stream"] if args.stream else []
        result = json.loads(subprocess.run(command, check=True, capture_output=True,
                                           text=True).stdout)
        peak, total = result["rate_peak_mib"], result["peak_mib"]
        print(f"{size:>10} {result['seconds']:>9.2f} "
              f"{'n/a' if peak is None else f'{peak:.0f}':>14} {result['input_mib']:>10.0f} "
              f"{'n/a' if total is None else f'{total:.0f}':>17}", flush=True)


if __name__ == "__main__":
    main()
