"""The `league` command line, through typer's CliRunner (in process; the bots
are still real sandboxed processes), plus one real subprocess for what only
a real process shows (`python -m harness.cli`)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import EXIT_BOT, EXIT_DB, EXIT_USAGE, app

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).parent / "bots"


@pytest.fixture(autouse=True)
def test_bot_path(monkeypatch):
    monkeypatch.setenv("LEAGUE_BOT_PATH", str(TEST_BOTS))


def league(*args: str, code: int = 0):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr,
                                      result.exception)
    assert "Traceback" not in result.stderr
    return result


def test_games_lists_every_game_and_shows_one_with_its_schema():
    out = league("games").stdout
    assert "limit" in out and "3-5 players" in out
    assert "twin_shoot" in out and "4/6 players" in out and "teams@4p=0+1/2+3" in out
    assert len(out.strip().splitlines()) == 11
    assert "docs/games/limit.md" in league("games", "limit").stdout
    schema = json.loads(league("games", "limit", "--schema").stdout)
    assert schema["game"] == "limit" and schema["obs"]["type"] == "object"
    assert "unknown game 'chess'" in league("games", "chess", code=EXIT_USAGE).stderr


def test_bots_lists_reference_and_path_bots():
    out = league("bots").stdout
    assert "random" in out and "all games" in out
    assert "heuristic" in out and "tateyoko" in out
    assert "faulty_exit" in out, "LEAGUE_BOT_PATH is searched"


@pytest.mark.parametrize("game", ["limit", "tateyoko"])
def test_play_prints_a_full_game_and_is_reproducible(game):
    def log(seed: str) -> list[str]:
        out = league("play", game, "random", "random", "heuristic", "--seed", seed, "-v").stdout
        return [line.split("  (")[0] for line in out.splitlines()]  # times vary

    first, again, other = log("7"), log("7"), log("8")
    assert first == again, "same seed, same game"
    assert other != first
    text = "\n".join(first)
    assert "seats: 0 = random, 1 = random, 2 = heuristic" in text
    assert "final standings" in text
    assert sum(1 for line in first if line.startswith("[")) > 30, "every decision is printed"
    assert first[2].startswith("[0] ") or any(line.startswith("[0] ") for line in first)
    if game == "tateyoko":
        assert any(symbol in text for symbol in "♠♥♦♣"), "card names people understand"


def test_play_shows_times_faults_and_stderr_and_exits_non_zero():
    out = league("play", "limit", "random", "faulty_garbage", "heuristic", "--seed", "2", "-v",
                 code=EXIT_BOT).stdout
    assert "FAULT bad_message" in out
    assert "3. seat 1 faulty_garbage" in out
    marker = next(line for line in out.splitlines() if "!! FAULT seat 1" in line)
    decision = int(marker.split("at decision ")[1].split(":")[0])
    lines = out.splitlines()
    after = lines[lines.index(marker) + 1]
    assert after.startswith(f"[{decision}] ") and "(random stand-in)" in after
    assert any(line.endswith(" ms)") for line in lines), "decision times are shown"
    assert "faulty_garbage)'s stderr" in out and "| faulty bot misbehaving: garbage" in out


def test_play_trace_shows_every_message_both_ways():
    out = league("play", "target", "random", "random", "--trace").stdout
    assert '>> random: {"type": "hello", "protocol": 1}' in out
    assert '<< random: {"type": "hello"' in out
    assert '>> random: {"type": "act"' in out and '"type": "end"' in out


def test_play_json_prints_only_json():
    out = league("play", "target", "random", "random", "--json", "-v").stdout
    record = json.loads(out)
    assert record["game"] == "target" and len(record["bots"]) == 2


def test_ordinary_mistakes_get_one_line_and_a_distinct_code(tmp_path):
    assert "unknown game 'chess'" in league("play", "chess", "random", "random",
                                            code=EXIT_USAGE).stderr
    unknown = league("play", "limit", "random", "random", "nobody", code=EXIT_USAGE).stderr
    assert "unknown bot 'nobody'" in unknown and "searched" in unknown and str(TEST_BOTS) in unknown
    assert "3-5 players" in league("play", "limit", "random", "random", code=EXIT_USAGE).stderr
    assert "no such folder" in league("bots", "--bots", str(tmp_path / "none"),
                                      code=EXIT_USAGE).stderr
    assert league("play", "limit", "random", "random", "random", "--decision-ms", "-5",
                  code=EXIT_USAGE)
    (tmp_path / "typo.toml").write_text('name = "typo"\ncommand = ["x"]\ncomand = ["y"]\n')
    typo = league("play", "limit", "random", "random", str(tmp_path / "typo.toml"),
                  code=EXIT_USAGE).stderr
    assert "unknown key(s) comand" in typo


def test_database_problems_are_named(tmp_path):
    assert "does not exist" in league("status", "--db", str(tmp_path / "no" / "r.db"),
                                      code=EXIT_DB).stderr
    assert "is a directory" in league("status", "--db", str(tmp_path), code=EXIT_DB).stderr
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not sqlite" * 100)
    assert "not a usable results database" in league("status", "--db", str(corrupt),
                                                     code=EXIT_DB).stderr
    league_path = tmp_path / "l.toml"
    league_path.write_text('name = "l"\ngame = "target"\nbots = ["random", "heuristic"]\n'
                           "players = 2\ndeals = 1\n")
    readonly = tmp_path / "ro.db"
    sqlite3.connect(readonly).close()
    readonly.chmod(0o444)
    if os.geteuid() != 0:  # root writes anyway
        assert "read-only" in league("run", str(league_path), "--db", str(readonly),
                                     code=EXIT_DB).stderr


def test_run_then_the_read_commands(tmp_path):
    path = tmp_path / "cli.toml"
    path.write_text('name = "cli"\ngame = "limit"\nbots = ["random", "heuristic", "faulty_exit"]\n'
                    "players = 3\ndeals = 2\nrotation = \"cyclic\"\n")
    db = str(tmp_path / "r.db")
    run = league("run", str(path), "--db", db, "--workers", "1", "--engine", "inline")
    assert "played 6 matches" in run.stderr
    assert "in flight" in run.stderr  # the run says how many matches each worker played at once
    with sqlite3.connect(db) as conn:
        saved = conn.execute("SELECT bot, games FROM ratings WHERE league = 'cli'").fetchall()
    assert len(saved) == 3 and all(games == 6 for _, games in saved), "ratings saved after the run"
    before = Path(db).stat().st_mtime_ns, Path(db + "-wal").stat().st_size
    table = league("table", "cli", "--db", db, "--matrix").stdout
    assert "95% interval" in table and "head to head" in table
    data = json.loads(league("table", "cli", "--db", db, "--json", "--matrix").stdout)
    order = [r["bot"] for r in data["ratings"]]
    assert [line.split()[1] for line in table.splitlines()[2:5]] == [b.split("@")[0] for b in order]
    assert {b.split("@")[0] for b in order} == {"random", "heuristic", "faulty_exit"}
    faulty = next(r for r in data["ratings"] if r["bot"].startswith("faulty_exit"))
    assert faulty["faults"] == 6
    heuristic = next(r for r in data["ratings"] if r["bot"].startswith("heuristic"))
    assert 0 < heuristic["think_ms_mean"] <= heuristic["think_ms_max"] < 1000
    assert "ms/move" in table and "max ms" in table
    with sqlite3.connect(db) as conn:
        moves = conn.execute("SELECT SUM(moves) FROM seats WHERE bot LIKE 'heuristic@%'").fetchone()[0]
    assert moves > 6 * 10, "every decision of the bot is timed"
    csv_lines = league("table", "cli", "--db", db, "--csv").stdout.strip().splitlines()
    assert csv_lines[0].startswith("rank,bot,elo") and len(csv_lines) == 4
    assert csv_lines[0].endswith("think_ms_mean,think_ms_max")
    status = league("status", "--db", db).stdout
    assert "cli" in status and " 6 " in status
    listed = league("matches", "--db", db, "--fault", "crash").stdout
    assert listed.count("crash at decision") == 6 and "| faulty bot misbehaving: exit" in listed
    assert "known: " in league("matches", "--db", db, "--bot", "nobody", code=EXIT_USAGE).stderr
    assert "choose from" in league("matches", "--db", db, "--fault", "crahs", code=EXIT_USAGE).stderr
    assert "known: cli" in league("matches", "--db", db, "--league", "x", code=EXIT_USAGE).stderr
    match_id = listed.splitlines()[0].split()[0]
    replay = league("replay", match_id[:10], "--db", db).stdout
    assert "final standings" in replay and "FAULT crash" in replay and "!! FAULT seat" in replay
    assert replay.splitlines()[1].startswith("seats: ")
    assert sum(1 for line in replay.splitlines() if line.startswith("[")) > 30
    logs = league("logs", match_id, "--db", db).stdout
    assert "faulty bot misbehaving: exit" in logs
    assert (Path(db).stat().st_mtime_ns, Path(db + "-wal").stat().st_size) == before, \
        "read commands write nothing"
    again = league("run", str(path), "--db", db, "--engine", "inline")
    assert "nothing to play" in again.stderr, "resume plays nothing twice"


def test_a_league_changed_under_the_same_name_is_refused(tmp_path):
    path = tmp_path / "same.toml"
    text = 'name = "same"\ngame = "target"\nbots = ["random", "heuristic"]\nplayers = 2\ndeals = 1\n'
    path.write_text(text)
    db = str(tmp_path / "r.db")
    league("run", str(path), "--db", db, "--engine", "inline", "-q")
    path.write_text(text.replace("players = 2", "players = 3"))
    refused = league("run", str(path), "--db", db, "--engine", "inline", code=EXIT_USAGE).stderr
    assert "players 2 -> 3" in refused and "new name" in refused
    path.write_text(text.replace("deals = 1", "deals = 2"))
    assert "played 2 matches" in league("run", str(path), "--db", db, "--engine", "inline",
                                        "-q").stderr, "more deals extend the same league"


def test_a_bot_that_never_starts_leaves_its_matches_for_later(tmp_path):
    bot_dir = tmp_path / "bots"
    bot_dir.mkdir()
    # a program on no PATH: a relative ./program missing from 'files' is refused as it loads
    (bot_dir / "ghost.toml").write_text('name = "ghost"\ncommand = ["missing-program"]\n'
                                        'files = ["ghost.toml"]\n')
    path = tmp_path / "g.toml"
    path.write_text('name = "g"\ngame = "target"\nbots = ["random", "heuristic", "ghost"]\n'
                    "players = 2\ndeals = 4\n")
    db = str(tmp_path / "r.db")
    run = league("run", str(path), "--db", db, "--engine", "inline", "--bots", str(bot_dir),
                 code=EXIT_BOT)
    assert "never started" in run.stderr
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT seats FROM matches").fetchall()
    assert stored and all("ghost" not in seats for (seats,) in stored)
    data = json.loads(league("table", "g", "--db", db, "--json").stdout)
    assert all(not r["bot"].startswith("ghost") for r in data["ratings"]), "never rated"


def test_broken_league_file_runs_nothing(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\ngame = "limit"\nbots = ["random", "heuristic"]\n'
                    "players = 2\ndeals = 2\n")
    db = tmp_path / "r.db"
    assert "field 'players'" in league("run", str(path), "--db", str(db), code=EXIT_USAGE).stderr
    assert not db.exists()


def test_a_broken_manifest_is_reported_and_hides_no_other_bot(tmp_path, monkeypatch):
    (tmp_path / "broken.toml").write_text('name = "broken"\ncommand = "not a list"\n')
    (tmp_path / "notoml.toml").write_text("name = \n")
    monkeypatch.setenv("LEAGUE_BOT_PATH", str(tmp_path))
    done = league("bots")
    assert "broken.toml (bot 'broken'): field 'command'" in done.stderr and "notoml.toml" in done.stderr
    assert "random" in done.stdout and "heuristic" in done.stdout
    play = league("play", "limit", "random", "random", "broken", code=EXIT_USAGE)
    assert "bot 'broken' cannot be used" in play.stderr and "field 'command'" in play.stderr


def test_help_version_and_the_module_entry_point():
    assert "Usage" in league("-h").stdout
    assert "Exit codes" in league("--help").stdout
    assert "card-league" in league("--version").stdout
    help_text = league("run", "--help").stdout
    for python_name in ("Optional", "list[", "Path", "NoneType"):
        assert python_name not in help_text
    done = subprocess.run([sys.executable, "-m", "harness.cli", "logs", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "stderr" in done.stdout, "read commands are registered"


def test_the_command_list_gives_each_command_one_line():
    """A summary that runs on past the end of its sentence's line in the
    docstring would show broken mid-sentence in `league --help`. Every
    command the README shows is there, with a summary and help of its own."""
    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"}).stdout
    panel = out[out.index("Commands"):]
    rows = [line.strip("│ ") for line in panel.splitlines()[1:] if line.startswith("│")]
    names = [command.name or command.callback.__name__ for command in app.registered_commands]
    names += [group.name for group in app.registered_groups]  # `league users ...`, after them
    assert [row.split()[0] for row in rows] == names, rows  # one row each, in order
    assert all(len(row.split()) > 1 for row in rows), rows  # each with its summary
    documented = set(re.findall(r"\.venv/bin/league ([a-z]+)", (ROOT / "README.md").read_text()))
    assert {"run", "table", "play", "check"} <= documented, "the README's commands were found"
    assert documented <= set(names), documented - set(names)
    for name in names:
        assert re.search(rf"Usage: \S+ {name} ", league(name, "--help").stdout), name


def test_report_and_replay_pages_from_the_cli(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "p"\ngame = "target"\nbots = ["random", "faulty_exit"]\n'
                    "players = 2\ndeals = 1\n")
    db = str(tmp_path / "r.db")
    league("run", str(path), "--db", db, "--engine", "inline", "-q")
    out = tmp_path / "report.html"
    assert "wrote" in league("report", "p", "-o", str(out), "--db", db).stdout
    assert "faulty_exit" in out.read_text() and "<svg" in out.read_text()
    assert "ms/move" in out.read_text() and "max ms" in out.read_text()
    match_id = league("matches", "--db", db).stdout.split()[0]
    page = tmp_path / "replay.html"
    league("replay", match_id, "--db", db, "--html", str(page))
    assert "faulty_exit" in page.read_text()
    assert "no match" in league("replay", "zzzz", "--db", db, "--html", str(page),
                                code=EXIT_USAGE).stderr


def test_an_address_with_no_cluster_fails_in_a_sentence_and_loses_nothing(tmp_path, monkeypatch):
    import socket

    path = tmp_path / "far.toml"
    path.write_text('name = "far"\ngame = "target"\nbots = ["random", "heuristic"]\n'
                    "players = 2\ndeals = 2\n")
    db = tmp_path / "r.db"
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Ray alone retries such an address for minutes, logging as it goes
    refused = league("run", str(path), "--db", str(db), "--address", f"127.0.0.1:{port}",
                     code=EXIT_USAGE).stderr
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in refused and "ray start --head" in refused
    malformed = league("run", str(path), "--db", str(db), "--address", "head-node", code=EXIT_USAGE)
    assert "expected HOST:PORT" in malformed.stderr
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")  # where auto looks first
    auto = league("run", str(path), "--db", str(db), "--address", "auto", code=EXIT_USAGE).stderr
    assert f"follows RAY_ADDRESS: no Ray cluster answers at 127.0.0.1:{port}" in auto
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 0
        states = [row[0] for row in conn.execute("SELECT state FROM runs")]
    assert states == ["failed"] * 3, "no run is left marked as running"
    status = league("status", "--db", str(db)).stdout
    line = next(row for row in status.splitlines() if row.startswith("far"))
    assert line.split()[2:6] == ["4", "0", "0", "4"], line  # none done or in flight, four to play


def test_every_command_takes_its_limits_from_the_one_definition():
    """`play`, `check` and `sprt` default to what a league file without
    [limits] gets (`run` takes a league file's), and say so in --help."""
    import typer.main

    from harness.limits import DEFAULT_LIMITS, LIMIT_FIELDS

    commands = typer.main.get_command(app).commands
    defaults = {name: {param.name: param.default for param in commands[name].params}
                for name in ("play", "check", "sprt")}
    for name, params in defaults.items():
        assert params["decision_ms"] == DEFAULT_LIMITS.decision_ms == LIMIT_FIELDS["decision_ms"], name
        help_text = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"}).stdout
        assert f"[default: {DEFAULT_LIMITS.decision_ms}]" in help_text, name
    assert defaults["play"]["startup_ms"] == DEFAULT_LIMITS.startup_ms == LIMIT_FIELDS["startup_ms"]

