"""Small runs are quick and counts add up (issue 47).

A run picks its engine by a fixed rule (harness.runner, --engine auto): a
small league plays in the run's own process, a rerun with nothing to play
starts no engine and probes no sandbox. And when a bot's version changes,
its earlier results stay stored and rated but no longer count for the
schedule: `run`, `status`, the report and a decided SPRT all say scheduled =
stored + to play, and name the matches they do not count. Real bot
processes in the real sandbox, real SQLite files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import runner
from harness.cli import app
from harness.league import load_league
from harness.runner import count_schedule, first_engine, hand_over_pays, run_league
from harness.store import Store

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).parent / "bots"
MINE = """import random, zlib
from sdk import Bot, run


class Mine(Bot):
    name = "mine"

    def on_start(self, match):
        self.rng = random.Random(zlib.crc32(f"{match['match_id']}:{match['seat']}".encode()))

    def choose(self, obs, legal, time_left_ms):
        return self.rng.randrange(len(legal))


if __name__ == "__main__":
    run(Mine())
"""


def league(*args: str, code: int = 0):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def changing_bot(tmp_path: Path) -> Path:
    """A bot of the user's own, in tmp_path/bots/mine: editing bot.py makes a new version."""
    folder = tmp_path / "bots" / "mine"
    folder.mkdir(parents=True)
    (folder / "sdk.py").write_text((ROOT / "bots" / "sdk.py").read_text())
    (folder / "bot.py").write_text(MINE)
    (folder / "bot.toml").write_text('name = "mine"\ncommand = ["{python}", "bot.py"]\n'
                                     'games = "*"\nfiles = ["bot.py", "sdk.py"]\n')
    return folder.parent


def twelve_matches(tmp_path: Path) -> Path:
    """3 bots, 2 seats: 3 tables x 2 seatings x 2 deals; 8 of the 12 hold ``mine``."""
    path = tmp_path / "ver.toml"
    path.write_text('name = "ver"\ngame = "target"\nbots = ["random", "mine", "heuristic"]\n'
                    "players = 2\ndeals = 2\n")
    return path


def test_the_engine_rule():
    assert first_engine("auto", None, None) == "inline"
    assert first_engine("auto", None, 1) == "inline"
    assert first_engine("auto", None, 4) == "ray", "several workers are Ray actors"
    assert first_engine("auto", "10.0.0.1:6379", None) == "ray", "--address is a Ray cluster"
    assert first_engine("inline", None, 4) == "inline" and first_engine("ray", None, 1) == "ray"
    with pytest.raises(ValueError, match="choose from auto, ray, inline"):
        first_engine("fast", None, None)
    budget, cores = runner.INLINE_BUDGET_S, runner.INLINE_CORES
    # 10 matches in 1 s; 1000 left would take 100 s inline
    assert hand_over_pays(1.0, 10, 1000, cores + 1) == (100 > budget)
    assert not hand_over_pays(1.0, 10, 1000, cores), "Ray adds nothing where inline fills the cores"
    assert not hand_over_pays(1.0, 10, 10, 64), "10 matches left: 1 s"
    assert not hand_over_pays(0.0, 0, 1000, 64), "nothing measured yet"


def test_a_small_league_plays_inline_and_a_rerun_starts_nothing(tmp_path):
    """Run as a user runs it, in a process of its own: after a 2-match league
    and after a rerun, Ray was never imported; the rerun probed no sandbox."""
    path = tmp_path / "small.toml"
    path.write_text('name = "small"\ngame = "target"\nbots = ["random", "heuristic"]\n'
                    "players = 2\ndeals = 1\n")
    db = tmp_path / "r.db"
    script = ("import sys\nfrom harness.cli import app\nfrom harness.proc import sandbox\n"
              "try:\n    app(sys.argv[1:])\nexcept SystemExit as end:\n"
              "    print('exit', end.code, 'ray' in sys.modules,"
              " sandbox.probe.cache_info().currsize, file=sys.stderr)\n")

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", script, "run", str(path), "--db", str(db),
                               "-q"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        return done.stderr

    first = run()
    assert "played 2 matches" in first and "inline, 1 worker(s)" in first, first
    assert first.rstrip().endswith("exit 0 False 1"), "played inline: no Ray, one probe"
    again = run()
    assert "0 to play (2 scheduled; 2 already stored" in again, again
    assert again.rstrip().endswith("exit 0 False 0"), "nothing to play: no Ray, no probe"


def test_counts_add_up_after_a_bot_changes(tmp_path):
    bots, path, db = changing_bot(tmp_path), twelve_matches(tmp_path), tmp_path / "r.db"
    first = league("run", str(path), "--db", str(db), "--bots", str(bots), "-q").stderr
    assert "12 to play (12 scheduled; 0 already stored" in first and "played 12 matches" in first
    (bots / "mine" / "bot.py").write_text(MINE + "# faster now\n")  # a new version of mine
    changed = load_league(str(path), [bots])
    counts = count_schedule(changed, Store(db))
    assert (counts.scheduled, counts.stored, counts.to_play, counts.elsewhere) == (12, 4, 8, 8)
    second = league("run", str(path), "--db", str(db), "--bots", str(bots), "-q",
                    "--max-matches", "3").stderr
    assert ("8 to play (12 scheduled; 4 already stored in " in second and "for these bot "
            "versions; also stored: 8 for earlier bot versions, kept and rated as such, not "
            "counted)" in second), second
    assert "played 3 matches" in second and "stopped with 5 matches left" in second
    status = league("status", "--db", str(db)).stdout.splitlines()
    row = next(line for line in status if line.startswith("ver "))
    assert row.split()[2:7] == ["12", "7", "0", "5", "0"], row  # scheduled = done + remaining
    assert "ver: also stored: 8 for earlier bot versions (kept and rated as such, not counted " \
           "as done)" in status
    third = league("run", str(path), "--db", str(db), "--bots", str(bots), "-q").stderr
    assert "5 to play (12 scheduled; 7 already stored" in third and "played 5 matches" in third
    row = next(line for line in league("status", "--db", str(db)).stdout.splitlines()
               if line.startswith("ver "))
    assert row.split()[2:7] == ["12", "12", "0", "0", "0"], row
    league("report", "ver", "--db", str(db), "-o", str(tmp_path / "ver.html"))
    page = (tmp_path / "ver.html").read_text()
    assert ("12 of 12 scheduled matches played · also stored: 8 for earlier bot versions "
            "(rated as such, not counted as played) · 0 of all 20 stored with faults") in page
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 20, "all kept"
    table = json.loads(league("table", "ver", "--db", str(db), "--json", "--all-versions").stdout)
    assert sum(r["bot"].startswith("mine@") for r in table["ratings"]) == 2, "both rated"
    with sqlite3.connect(db) as conn:  # a results file from before bot_ids were kept
        conn.execute("ALTER TABLE leagues DROP COLUMN bot_ids")
        conn.execute("ALTER TABLE leagues DROP COLUMN stopped")
    counts = Store(db, readonly=True).league_counts("ver")  # each bot's latest version
    assert (counts.scheduled, counts.current, counts.older, counts.remaining) == (12, 12, 8, 0)


def test_fewer_deals_leave_the_matches_past_them_uncounted(tmp_path):
    bots, path, db = changing_bot(tmp_path), twelve_matches(tmp_path), tmp_path / "r.db"
    summary = run_league(load_league(str(path), [bots]), Store(db), engine="inline")
    assert (summary.scheduled, summary.already_done, summary.played) == (12, 0, 12)
    path.write_text(path.read_text().replace("deals = 2", "deals = 1"))
    again = run_league(load_league(str(path), [bots]), Store(db))
    assert (again.scheduled, again.already_done, again.played, again.stored_elsewhere) == \
        (6, 6, 0, 6)
    assert again.engine == "" and again.workers == 0, "nothing to play: no engine"
    counts = Store(db, readonly=True).league_counts("ver")
    assert (counts.scheduled, counts.current, counts.remaining, counts.older,
            counts.past_deals) == (6, 6, 0, 0, 6)
    assert counts.elsewhere() == "6 on deals past the league's deals"


def test_a_decided_sprt_has_nothing_remaining(tmp_path):
    db = str(tmp_path / "s.db")
    out = league("sprt", "target", "random", "heuristic", "--db", db, "--max-deals", "500")
    assert "the LLR reached the upper bound at deal" in out.stdout
    deals = int(out.stdout.split("upper bound at deal ")[1].split()[0])
    status = league("status", "--db", db).stdout.splitlines()
    row = next(line for line in status if line.startswith("sprt-target"))
    scheduled, done, _, remaining = map(int, row.split()[2:6])
    assert scheduled == 2000 and remaining == 0, row
    assert (f"decided: H1 accepted after {deals} deals; the {scheduled - done} unplayed "
            "scheduled matches will not be played") in "\n".join(status)
    name = row.split()[0]
    league("report", name, "--db", db, "-o", str(tmp_path / "s.html"))
    assert (f"{done} of 2000 scheduled matches played (decided: H1 accepted after {deals} "
            f"deals; the other {2000 - done} will not be played)") in (
        tmp_path / "s.html").read_text()


@pytest.mark.slow
def test_auto_hands_a_long_run_to_ray_and_keeps_every_guarantee(tmp_path, monkeypatch):
    """The hand-over, forced (a budget of 0 s, 8 CPUs claimed): the first
    batch plays inline, the rest on Ray; the schedule is stored whole, and no
    bot process is dealt a deal twice across the two engines."""
    from tests.test_deal_memory import assert_never_recognised, league_file

    monkeypatch.setattr(runner, "INLINE_BUDGET_S", 0.0)
    monkeypatch.setattr(runner, "_cpus", lambda: 8)
    spec = load_league(league_file(tmp_path), [TEST_BOTS])
    db = tmp_path / "r.db"
    summary = run_league(spec, Store(db), concurrency=2)
    assert summary.engine == "inline, then ray"
    assert (summary.played, summary.errors, summary.unplayed) == (spec.size(), 0, 0)
    assert_never_recognised(db, summary.played, spec.size())
    with sqlite3.connect(db) as conn:
        stored = {row[0] for row in conn.execute("SELECT id FROM matches")}
    assert stored == {m.match_id for m in spec.schedule()}


@pytest.mark.slow
def test_a_run_on_ray_keeps_rays_notices_quiet(tmp_path):
    """Ray is imported only where a run starts it, and quieted there."""
    path = tmp_path / "small.toml"
    path.write_text('name = "small"\ngame = "target"\nbots = ["random", "heuristic"]\n'
                    "players = 2\ndeals = 1\n")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(path), "--db",
                           str(tmp_path / "r.db"), "-q", "--engine", "ray", "--workers", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "played 2 matches" in done.stderr and "Ray, 1 worker(s)" in done.stderr
    assert "INFO" not in done.stderr and "Token authentication" not in done.stderr, done.stderr
