"""Benchmark: rate() time and peak memory for 10k, 100k and 1M synthetic matches.

    python -m harness.bench.ratings [--sizes 10000,100000,1000000] [--players 4]
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
<commit>:harness/stats/ratings.py > /tmp/old_ratings.py``) on the same rows.

``league table`` end to end, on a results database built through the real
``Store`` API (cached under ``--cache``, built once; the build's time and
insert rate are printed):

    python -m harness.bench.ratings --table 100000,1000000 [--cache DIR] [--code DIR]

Each table runs in a fresh interpreter with ``SQLITE_TMPDIR`` an empty
folder: wall, CPU (user + system, ``RUSAGE_CHILDREN``), peak RSS
(``RUSAGE_SELF`` of that interpreter), the peak bytes of SQLite temporary
files it held open (polled from ``/proc/self/fd``) and the bytes it wrote
(``/proc/self/io``). ``--code DIR`` runs another tree's harness (e.g.
``git archive <commit> harness | tar -x -C DIR``) on the same database.
``--inserts N`` times N ``Store.save_match`` calls into a fresh database.

``--calibration`` prints instead how the table's 95% intervals cover the
truth in simulated leagues as deals are added (``harness.bench.ratings_calibration``;
its options follow, e.g. ``--calibration --replications 100``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
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
    from harness.bench.ratings_calibration import load_ratings

    return load_ratings(baseline).rate


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


BENCH_LEAGUE = "bench"
MATCHES_PER_DEAL = 280


def build_results_db(path: Path, matches: int, players: int = 4, bots: int = 8,
                     seed: int = 0) -> tuple[float, float]:
    """A results database of ``matches`` individual matches among ``bots``
    bots, 280 matches a deal, Plackett-Luce finishing orders, think times
    and a fault in about one seat in a thousand, written match by match
    through ``Store.save_match`` as a league run writes them; the seconds
    the inserts took, wall clock and CPU."""
    from harness.records import Fault, MatchResult, ThinkTime
    from harness.store import Store

    store = Store(path)
    names = [f"bot{i}@v1" for i in range(bots)]
    store.register_league({"name": BENCH_LEAGUE, "game": "limit"}, matches)
    for name in names:
        store.register_bot(name, name.split("@")[0], "v1", "{}", ["true"])
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1, 1, bots)
    replay = {"actions": list(range(40))}
    seconds = cpu = 0.0
    for first in range(0, matches, 10_000):
        count = min(10_000, matches - first)
        seats = np.argsort(rng.random((count, bots)), axis=1)[:, :players]
        finish = rng.exponential(size=(count, players)) / np.exp(strength[seats])
        ranks = ((finish[:, None, :] < finish[:, :, None]).sum(-1) + 1).tolist()
        moves = rng.integers(5, 30, size=(count, players)).tolist()
        think = np.round(rng.exponential(20.0, size=(count, players)), 3).tolist()
        faulty = (rng.random((count, players)) < 0.001).tolist()
        seats_list = seats.tolist()
        for k in range(count):
            m = first + k
            seat_ids = [names[b] for b in seats_list[k]]
            match_id = hashlib.sha256(f"bench|{m}".encode()).hexdigest()[:20]
            result = MatchResult(
                match_id, "limit", "1", m, seat_ids, [float(players - r) for r in ranks[k]],
                ranks[k], [Fault("timeout", 3, "slow") if f else None for f in faulty[k]],
                False, 40, 0.0, 0.1, None, replay,
                think=[ThinkTime(n, n * t, 2 * t) for n, t in zip(moves[k], think[k])])
            start, start_cpu = time.perf_counter(), time.process_time()
            store.save_match(BENCH_LEAGUE, m // MATCHES_PER_DEAL, seat_ids, result, None)
            seconds += time.perf_counter() - start
            cpu += time.process_time() - start_cpu
    store.db.conn.close()
    return seconds, cpu


def cached_results_db(cache: Path, matches: int, players: int, bots: int) -> tuple[Path, dict[str, Any]]:
    """The benchmark's database of ``matches`` matches, built once (into a
    ``.part`` file renamed when complete) and kept with how long it took."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"table-{matches}-{players}p{bots}b.db"
    info_path = path.with_suffix(".json")
    if path.exists() and info_path.exists():
        return path, json.loads(info_path.read_text())
    part = path.with_suffix(".part")
    for leftover in (part, Path(f"{part}-wal"), Path(f"{part}-shm")):
        leftover.unlink(missing_ok=True)
    start = time.perf_counter()
    inserts, inserts_cpu = build_results_db(part, matches, players, bots)
    info = {"matches": matches, "build_s": time.perf_counter() - start, "insert_s": inserts,
            "insert_cpu_s": inserts_cpu, "bytes": part.stat().st_size}
    part.rename(path)
    info_path.write_text(json.dumps(info))
    return path, info


# run in a fresh interpreter: ``league table`` as the command line runs it, measured from inside
TABLE_CHILD = r"""
import io, json, os, resource, sys, threading, time
tmp, report = os.environ["SQLITE_TMPDIR"], os.environ["BENCH_REPORT"]
peak = [0]
def watch():
    while True:
        held = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}").startswith(tmp):
                    held += os.fstat(int(fd)).st_size
            except OSError:
                pass
        peak[0] = max(peak[0], held)
        time.sleep(0.005)
threading.Thread(target=watch, daemon=True).start()
start = time.perf_counter()
from harness.cli import app
try:
    app(sys.argv[1:], prog_name="league")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
wall = time.perf_counter() - start
io_fields = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
usage = resource.getrusage(resource.RUSAGE_SELF)
with open(report, "w") as out:
    json.dump({"code": code, "inner_wall_s": wall, "maxrss_kib": usage.ru_maxrss,
               "temp_peak_bytes": peak[0], "wchar": int(io_fields["wchar"]),
               "write_bytes": int(io_fields["write_bytes"])}, out)
"""


def measure_table(db: Path, league: str, code: Path | None = None) -> dict[str, Any]:
    """``league table`` on ``db`` in a fresh interpreter: wall and CPU seen
    from here, peak RSS, temporary file bytes and bytes written seen from
    inside it."""
    with tempfile.TemporaryDirectory(prefix="bench-sqlite-tmp-") as tmp:
        report = Path(tmp) / "report.json"
        sqlite_tmp = Path(tmp) / "sqlite"
        sqlite_tmp.mkdir()
        env = {**os.environ, "SQLITE_TMPDIR": str(sqlite_tmp), "BENCH_REPORT": str(report)}
        if code is not None:
            env["PYTHONPATH"] = str(code)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", TABLE_CHILD, "table", league, "--db", str(db)],
                              env=env, cwd=code or Path.cwd(), capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode or not report.exists():
            raise RuntimeError(f"league table failed:\n{done.stdout}\n{done.stderr}")
        result = json.loads(report.read_text())
        left = sum(f.stat().st_size for f in sqlite_tmp.iterdir())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {**result, "wall_s": wall, "cpu_s": cpu, "temp_left_bytes": left,
            "output": done.stdout}


def bench_table(sizes: list[int], cache: Path, players: int, bots: int,
                code: Path | None) -> None:
    print(f"league table on a results database built through Store.save_match: {players} seats, "
          f"{bots} bots, {MATCHES_PER_DEAL} matches a deal; code: {code or 'this tree'}")
    print(f"{'matches':>9} {'build s':>8} {'inserts/s':>9} {'wall s':>7} {'CPU s':>6} "
          f"{'peak RSS MiB':>12} {'temp peak MB':>12} {'written MB':>10}  read")
    for size in sizes:
        db, info = cached_results_db(cache, size, players, bots)
        result = measure_table(db, BENCH_LEAGUE, code)
        print(f"{size:>9} {info['build_s']:>8.0f} {size / info['insert_s']:>9.0f} "
              f"{result['wall_s']:>7.2f} {result['cpu_s']:>6.2f} "
              f"{result['maxrss_kib'] / 1024:>12.0f} {result['temp_peak_bytes'] / 1e6:>12.1f} "
              f"{result['wchar'] / 1e6:>10.1f}  {_source(db) if code is None else '-'}",
              flush=True)


def _source(db: Path) -> str:
    """What this tree's ratings read from ``db``."""
    from harness.store import Store

    store = Store(db, readonly=True)
    return "kept statistics" if store.rating_tallies(BENCH_LEAGUE) is not None else "seat rows"


def bench_inserts(matches: int, players: int, bots: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-inserts-") as tmp:
        seconds, cpu = build_results_db(Path(tmp) / "r.db", matches, players, bots)
    print(f"{matches} Store.save_match calls ({players} seats, {bots} bots): {seconds:.2f} s, "
          f"{matches / seconds:.0f} matches/s, {seconds / matches * 1e6:.0f} us a match "
          f"({cpu / matches * 1e6:.0f} us CPU)")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--calibration" in argv:
        from harness.bench.ratings_calibration import main as calibration

        calibration([a for a in argv if a != "--calibration"])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--no-deal", action="store_true", help="rows without deal and league")
    parser.add_argument("--baseline", help="another ratings.py to time instead")
    parser.add_argument("--stream", action="store_true",
                        help="hand rate() a generator of rows (as Store.seat_rows is) "
                             "instead of a list: its time then includes making the rows")
    parser.add_argument("--table", metavar="SIZES",
                        help="time `league table` on stored leagues of these sizes instead")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "league-bench",
                        help="where --table keeps the databases it builds")
    parser.add_argument("--code", type=Path, help="--table: the tree whose harness runs the table")
    parser.add_argument("--inserts", type=int, metavar="N",
                        help="time N Store.save_match calls into a fresh database instead")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inserts:
        bench_inserts(args.inserts, args.players, args.bots)
        return
    if args.table:
        bench_table([int(s) for s in args.table.split(",")], args.cache, args.players, args.bots,
                    args.code.resolve() if args.code else None)
        return
    if args.one:
        print(json.dumps(measure_one(args.one, args.players, args.bots, not args.no_deal,
                                     args.baseline, args.stream)))
        return
    label = args.baseline or "harness/stats/ratings.py"
    print(f"rate() of {label}: {args.players} seats, {args.bots} bots, "
          f"{'no deal numbers' if args.no_deal else '280 matches a deal'}, "
          f"{'a generator of rows' if args.stream else 'a list of rows'}")
    print(f"{'matches':>10} {'seconds':>9} {'rate peak MiB':>14} {'input MiB':>10} "
          f"{'process peak MiB':>17}")
    for size in (int(s) for s in args.sizes.split(",")):
        command = [sys.executable, "-m", "harness.bench.ratings", "--one", str(size),
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
