"""The `league` command line, end to end, with real bot processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).parent / "bots"


def league(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, LEAGUE_BOT_PATH=str(TEST_BOTS))
    done = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def test_games_lists_every_game_with_player_counts():
    out = league("games").stdout
    assert "limit" in out and "3-5 players" in out
    assert "twin_shoot" in out and "4/6 players" in out and "teams@4p=0+1/2+3" in out
    assert len(out.strip().splitlines()) == 11


def test_bots_lists_reference_and_path_bots():
    out = league("bots").stdout
    assert "random" in out and "all games" in out
    assert "heuristic" in out and "tateyoko" in out
    assert "faulty_exit" in out, "LEAGUE_BOT_PATH is searched"


@pytest.mark.parametrize("game", ["limit", "tateyoko"])
def test_play_prints_a_full_game_and_is_reproducible(game):
    first = league("play", game, "random", "random", "heuristic", "--seed", "7", "--verbose").stdout
    again = league("play", game, "random", "random", "heuristic", "--seed", "7", "--verbose").stdout
    assert first == again, "same seed, same game"
    other = league("play", game, "random", "random", "heuristic", "--seed", "8", "--verbose").stdout
    assert other != first
    assert "final standings" in first
    lines = first.splitlines()
    assert sum(1 for line in lines if line.startswith("[")) > 30, "every decision is printed"
    assert all(f"seat {s}" in first for s in range(3))
    if game == "tateyoko":
        assert any(symbol in first for symbol in "♠♥♦♣"), "card names people understand"


def test_play_records_faults_and_still_finishes():
    out = league("play", "limit", "random", "faulty_garbage", "heuristic", "--seed", "2").stdout
    assert "FAULT bad_message" in out
    assert "3. seat 1 faulty_garbage" in out


def test_play_refuses_bad_input_clearly():
    bad_game = league("play", "chess", "random", "random", check=False)
    assert bad_game.returncode == 2 and "unknown game 'chess'" in bad_game.stderr
    bad_bot = league("play", "limit", "random", "random", "nobody", check=False)
    assert bad_bot.returncode == 2 and "unknown bot 'nobody'" in bad_bot.stderr
    too_few = league("play", "limit", "random", "random", check=False)
    assert too_few.returncode == 2 and "3-5 players" in too_few.stderr


def test_run_table_status_matches_replay(tmp_path):
    path = tmp_path / "cli.toml"
    path.write_text('name = "cli"\ngame = "limit"\nbots = ["random", "heuristic", "faulty_exit"]\n'
                    "players = 3\ndeals = 2\nseed = 3\n")
    db = str(tmp_path / "r.db")
    run = league("run", str(path), "--db", db, "--workers", "1", "--engine", "inline")
    assert "played 6 matches" in run.stderr
    import sqlite3

    with sqlite3.connect(db) as conn:
        saved = conn.execute("SELECT bot, games FROM ratings WHERE league = 'cli'").fetchall()
    assert len(saved) == 3 and all(games == 6 for _, games in saved), "ratings saved after the run"
    table = league("table", "cli", "--db", db, "--matrix").stdout
    assert "heuristic@" in table and "95% interval" in table and "head to head" in table
    data = json.loads(league("table", "cli", "--db", db, "--json").stdout)
    assert {r["bot"].split("@")[0] for r in data["ratings"]} == {"random", "heuristic", "faulty_exit"}
    faulty = next(r for r in data["ratings"] if r["bot"].startswith("faulty_exit"))
    assert faulty["faults"] == 6
    csv_lines = league("table", "cli", "--db", db, "--csv").stdout.strip().splitlines()
    assert csv_lines[0].startswith("rank,bot,elo") and len(csv_lines) == 4
    status = league("status", "--db", db).stdout
    assert "cli" in status and " 6 " in status
    listed = league("matches", "--db", db, "--fault", "crash").stdout.strip().splitlines()
    assert len(listed) == 6
    assert league("matches", "--db", db, "--bot", "nobody").stdout.strip() == ""
    match_id = listed[0].split()[0]
    replay = league("replay", match_id[:10], "--db", db).stdout
    assert "final standings" in replay and "FAULT crash" in replay
    assert sum(1 for line in replay.splitlines() if line.startswith("[")) > 30
    again = league("run", str(path), "--db", db, "--engine", "inline")
    assert "played 0 matches" in again.stderr, "resume plays nothing twice"


def test_broken_league_file_runs_nothing(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\ngame = "limit"\nbots = ["random", "heuristic"]\n'
                    "players = 2\ndeals = 2\n")
    db = tmp_path / "r.db"
    done = league("run", str(path), "--db", str(db), check=False)
    assert done.returncode == 2 and "field 'players'" in done.stderr
    assert not db.exists()


def test_a_broken_manifest_is_reported_and_hides_no_other_bot(tmp_path):
    (tmp_path / "broken.toml").write_text('name = "broken"\ncommand = "not a list"\n')
    (tmp_path / "notoml.toml").write_text("name = \n")
    env = dict(os.environ, LEAGUE_BOT_PATH=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "harness.cli", "bots"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "broken.toml: field 'command'" in done.stderr and "notoml.toml" in done.stderr
    assert "random" in done.stdout and "heuristic" in done.stdout
    play = subprocess.run([sys.executable, "-m", "harness.cli", "play", "limit", "random",
                           "random", "broken"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert play.returncode == 2 and "unknown bot 'broken'" in play.stderr
    assert "field 'command'" in play.stderr
