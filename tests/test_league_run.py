"""Integration: leagues on a real local Ray, real bot processes, a real
SQLite file; killed runs resume to exactly the scheduled set of matches."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

from harness.league import load_league
from harness.runner import run_league
from harness.store import Store
from tests.helpers import wait_until

TEST_BOTS = Path(__file__).parent / "bots"
ROOT = Path(__file__).resolve().parent.parent


def league_file(tmp_path: Path, name: str, bots: list[str], deals: int, game: str = "limit",
                players: int = 3) -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ngame = "{game}"\nbots = {bots!r}\nplayers = {players}\n'
        f"deals = {deals}\nseed = 11\nrotation = 'cyclic'\n[limits]\ndecision_ms = 2000\n"
        .replace("'", '"'))  # cyclic: the match and process counts below are its
    return str(path)


def stored_ids(db: Path, league: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        try:
            rows = conn.execute("SELECT id FROM matches WHERE league = ?", [league]).fetchall()
        except sqlite3.OperationalError as exc:
            # polled while the run is still creating its tables
            if "no such table" in str(exc):
                return []
            raise
        return [r[0] for r in rows]


def _reference_bots(root: psutil.Process) -> set[psutil.Process]:
    """The reference bot processes among ``root``'s descendants."""
    found = set()
    for proc in root.children(recursive=True):
        try:
            cmdline = proc.cmdline()
        except psutil.Error:  # gone, or a zombie
            continue
        if any(part in ("bots.random_bot", "bots.heuristic_bot") for part in cmdline):
            found.add(proc)
    return found


class BotWatch:
    """Every reference bot process a run starts: ``root``'s descendants (a
    `league run`, or this process for a run in it), sampled every 0.1 s while
    the watch is open, so that other tests' bots (the suite runs on several
    processes at once) are not counted, and bots orphaned by a killed run are."""

    def __init__(self, root: int) -> None:
        self.root = psutil.Process(root)
        self.seen: set[psutil.Process] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> BotWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while True:
            try:
                self.seen |= _reference_bots(self.root)
            except psutil.Error:  # the run itself is gone (killed)
                return
            if self._stop.wait(0.1):
                return

    def alive(self) -> list[psutil.Process]:
        """The bots seen that still run (a zombie has exited)."""
        assert self.seen, "no bot process was seen: the watch checks nothing"
        running = []
        for proc in self.seen:
            try:
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    running.append(proc)
            except psutil.NoSuchProcess:
                pass
        return running


@pytest.mark.slow
def test_ray_league_reuses_bot_processes_and_ranks_a_weaker_copy_below(tmp_path):
    path = league_file(tmp_path, "strength", ["random", "heuristic_half", "heuristic"], deals=40)
    league = load_league(path, [TEST_BOTS])
    db = tmp_path / "results.db"
    store = Store(db)
    with BotWatch(os.getpid()) as bots:
        summary = run_league(league, store, workers=2, engine="ray", concurrency=2)
    assert summary.played == league.size() == 120
    assert summary.faulted == 0
    # No process plays a deal twice (BotPool): a worker needs a process of a bot
    # per seating of a deal it plays (3 here), plus one per other match in flight:
    # at most 2 workers x 3 bots x (3 + 1), each started once, then reused
    assert summary.process_starts <= 24, summary.process_starts
    assert summary.process_starts / summary.played <= 0.2
    assert sorted(stored_ids(db, "strength")) == sorted(m.match_id for m in league.schedule())
    from harness.stats.ratings import rate

    table = rate(list(store.seat_rows("strength")))
    names = [row.bot.split("@")[0] for row in table]
    assert names == ["heuristic", "heuristic_half", "random"]
    assert table[0].elo_low > table[1].elo_high, "intervals of strong and weaker copy overlap"
    assert table[1].elo_low > table[2].elo_high
    assert not bots.alive(), "bot processes left after the run"


def run_cli(args: list[str], env_extra: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, LEAGUE_BOT_PATH=str(TEST_BOTS), PYTHONUNBUFFERED="1", **(env_extra or {}))
    return subprocess.Popen([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_gives_exactly_the_schedule(tmp_path):
    path = league_file(tmp_path, "killed", ["random", "heuristic"], deals=30)
    db = tmp_path / "results.db"
    schedule = sorted(m.match_id for m in load_league(path).schedule())
    first = run_cli(["run", path, "--db", str(db), "-q"])
    try:
        with BotWatch(first.pid) as killed_bots:
            wait_until(lambda: db.exists() and len(stored_ids(db, "killed")) >= 20,
                       "20 results", timeout=120)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    partial = stored_ids(db, "killed")
    status = run_cli(["status", "--db", str(db)]).communicate(timeout=60)[0]
    line = next(row for row in status.splitlines() if row.startswith("killed"))
    assert int(line.split()[4]) == 0, "a killed run has nothing in flight"
    assert 20 <= len(partial) < len(schedule), "kill landed mid-run"
    second = run_cli(["run", path, "--db", str(db), "-q"])
    with BotWatch(second.pid) as resumed_bots:
        out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    ids = stored_ids(db, "killed")
    assert sorted(ids) == schedule, "missing or extra matches"
    assert len(ids) == len(set(ids))
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        seats = conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
        replays = conn.execute("SELECT COUNT(*) FROM replays").fetchone()[0]
    assert seats == 3 * len(schedule) and replays == len(schedule), "a match was half-written"
    wait_until(lambda: not killed_bots.alive() and not resumed_bots.alive(),
               "bot processes of the killed run and of the second run to exit")


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path):
    path = league_file(tmp_path, "interrupted", ["random", "heuristic"], deals=200)
    db = tmp_path / "results.db"
    run = run_cli(["run", path, "--db", str(db), "-q"])
    with BotWatch(run.pid) as bots:
        wait_until(lambda: db.exists() and len(stored_ids(db, "interrupted")) >= 8,
                   "8 results", timeout=120)
        status = run_cli(["status", "--db", str(db)]).communicate(timeout=60)[0]
        line = next(row for row in status.splitlines() if row.startswith("interrupted"))
        done, in_flight, remaining = map(int, line.split()[3:6])
        assert in_flight > 0 and done >= 8 and remaining > 0, line
        second = run_cli(["run", path, "--db", str(db), "-q"])
        second_err = second.communicate(timeout=60)[1]
        assert second.returncode == 2 and "already running" in second_err
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    assert "resume with: " in err and " run " in err
    assert "Token authentication" not in err and "INFO" not in err, "Ray's notices stay quiet"
    stored = len(stored_ids(db, "interrupted"))
    assert 8 <= stored < 1200
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0] == 3 * stored
        state = conn.execute("SELECT state FROM runs").fetchone()[0]
    assert state == "interrupted"
    wait_until(lambda: not bots.alive(), "bot processes to exit", describe=bots.alive)


@pytest.mark.statistical  # a separation of ratings over 112 matches
@pytest.mark.slow
def test_a_mixed_team_league_rates_each_bot_by_what_it_adds(tmp_path):
    """Mixed partnerships: the heuristic sometimes partners the random bot,
    yet the team-strength model ranks it clearly above, with separate intervals."""
    # 8 deals, 112 matches: the intervals measured 290 Elo apart (454 at 25 deals)
    path = league_file(tmp_path, "teams", ["random", "heuristic"], deals=8,
                       game="tenos_square", players=4)
    text = Path(path).read_text().replace("seed = 11", 'seed = 11\npartners = "mixed"')
    Path(path).write_text(text)
    league = load_league(path)
    store = Store(tmp_path / "r.db")
    summary = run_league(league, store, workers=1, engine="inline")
    assert summary.played == league.size() and summary.faulted == 0
    rows = list(store.seat_rows("teams"))
    by_match: dict[str, list] = {}
    for row in rows:
        by_match.setdefault(row["match_id"], []).append(row)
    for seats in by_match.values():
        for team in (0, 1):
            assert len({r["rank"] for r in seats if r["team"] == team}) == 1
    assert any(len({r["bot"] for r in seats if r["team"] == 0}) == 2 for seats in by_match.values()), \
        "mixed partnerships were played"
    from harness.stats.ratings import rate

    table = rate(rows)
    assert table[0].bot.startswith("heuristic@")
    assert table[0].elo_low > table[1].elo_high


@pytest.mark.slow
def test_a_worker_that_dies_is_replaced_and_no_match_is_lost(tmp_path, monkeypatch):
    from harness import runner

    engines = []
    original_start = runner.RayEngine.start

    def start_and_remember(self, workers):
        count = original_start(self, workers)
        engines.append(self)
        return count

    monkeypatch.setattr(runner.RayEngine, "start", start_and_remember)
    path = league_file(tmp_path, "dying", ["random", "heuristic"], deals=40)
    league = load_league(path)
    store = Store(tmp_path / "r.db")
    db = tmp_path / "r.db"

    def kill_a_worker_mid_run():
        wait_until(lambda: engines and db.exists() and len(stored_ids(db, "dying")) >= 20,
                   "20 results", timeout=120)
        engines[0].ray.kill(engines[0].workers[0])

    killer = threading.Thread(target=kill_a_worker_mid_run)
    killer.start()
    with BotWatch(os.getpid()) as bots:
        summary = run_league(league, store, workers=2, engine="ray")
    killer.join()
    assert engines[0].replacements == 1
    assert sorted(stored_ids(db, "dying")) == sorted(m.match_id for m in league.schedule())
    assert summary.played == league.size()
    wait_until(lambda: not bots.alive(), "the dead worker's bots to exit", describe=bots.alive)


def test_a_harness_error_in_one_match_does_not_end_the_run(tmp_path, monkeypatch):
    from harness import runner

    path = league_file(tmp_path, "buggy", ["random", "heuristic"], deals=3)
    league = load_league(path)
    doomed = next(league.schedule()).match_id
    real_run_match = runner.run_match

    def sometimes_broken(game, seed, names, pool, match_id, *args):
        if match_id == doomed:
            raise RuntimeError("engine bug")
        return real_run_match(game, seed, names, pool, match_id, *args)

    monkeypatch.setattr(runner, "run_match", sometimes_broken)
    store = Store(tmp_path / "r.db")
    summary = run_league(league, store, workers=1, engine="inline")
    assert summary.errors == 1 and summary.played == league.size() - 1
    assert summary.error_lines == [f"{doomed}: RuntimeError: engine bug"]
    assert doomed not in stored_ids(tmp_path / "r.db", "buggy")
    monkeypatch.setattr(runner, "run_match", real_run_match)
    again = run_league(league, store, workers=1, engine="inline")
    assert again.played == 1 and again.errors == 0
    assert sorted(stored_ids(tmp_path / "r.db", "buggy")) == sorted(
        m.match_id for m in league.schedule())


def test_matches_in_flight_default_fills_idle_cores_only():
    from harness.runner import WorkerSetup, matches_in_flight

    assert matches_in_flight(1, 2) == 2  # a core left idle: a second match uses it
    assert matches_in_flight(2, 2) == 1
    assert matches_in_flight(16, 16.0) == 1
    setup = WorkerSetup("limit", {}, {}, None, None, concurrency=None)  # type: ignore[arg-type]
    assert setup.with_workers(1, 4).concurrency == 2
    assert setup.with_workers(4, 4).concurrency == 1
    chosen = WorkerSetup("limit", {}, {}, None, None, concurrency=3)  # type: ignore[arg-type]
    assert chosen.with_workers(4, 4).concurrency == 3


def test_a_league_with_the_default_matches_in_flight_plays_its_schedule(tmp_path):
    league = load_league(league_file(tmp_path, "auto", ["random", "heuristic"], deals=3))
    store = Store(tmp_path / "r.db")
    summary = run_league(league, store, workers=1, engine="inline", concurrency=None)
    assert summary.played == league.size() and summary.errors == 0
    assert (summary.workers, summary.in_flight) == (1, 2 if (os.cpu_count() or 1) > 1 else 1)
    assert sorted(stored_ids(tmp_path / "r.db", "auto")) == sorted(m.match_id for m in league.schedule())
