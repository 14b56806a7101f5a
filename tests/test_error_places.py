"""Errors said where they belong: a manifest's missing files at load time, a
bot path folder that does not exist, typos answered with the name meant, and
the reference bots ready (every import done) when they answer hello."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from games import UnknownGameError, get_game
from harness.cli import EXIT_USAGE, app
from harness.league import LeagueFileError, load_league
from harness.proc.catalog import ManifestError, UnknownBotError, load_manifest, resolve

ROOT = Path(__file__).resolve().parent.parent


def league(*args: str, code: int = 0):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result


def entrant(folder: Path, body: str, name: str = "cbot") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bot.toml"
    path.write_text(f'name = "{name}"\n{body}')
    return path


# ---- files and command, refused as the manifest loads ------------------------------
def test_a_files_pattern_that_matches_nothing_is_refused_naming_manifest_bot_and_pattern(
        tmp_path):
    path = entrant(tmp_path / "c", 'command = ["./cgreedy"]\nfiles = ["cgreedy"]\n')
    with pytest.raises(ManifestError) as refused:
        load_manifest(path)
    message = str(refused.value)
    assert str(path) in message and "'cbot'" in message
    assert f"files pattern 'cgreedy' matches no file in {tmp_path / 'c'}" in message


def test_a_relative_program_must_be_one_of_the_bots_files_and_executable(tmp_path):
    folder = tmp_path / "c"
    path = entrant(folder, 'command = ["./cgreedy"]\nfiles = ["notes.txt"]\n')
    (folder / "notes.txt").write_text("")
    (folder / "cgreedy").write_text("#!/bin/sh\n")
    (folder / "cgreedy").chmod(0o755)
    with pytest.raises(ManifestError, match="program './cgreedy' is not among the bot's files"):
        load_manifest(path)
    path.write_text(path.read_text().replace('"notes.txt"', '"cgreedy"'))
    (folder / "cgreedy").chmod(0o644)
    with pytest.raises(ManifestError, match=r"'./cgreedy' is not executable \(chmod \+x"):
        load_manifest(path)
    (folder / "cgreedy").chmod(0o755)
    assert load_manifest(path).command == ("./cgreedy",)


def test_a_missing_program_is_refused_at_load_and_a_path_program_is_left_to_the_path(
        tmp_path):
    with pytest.raises(ManifestError, match="'bin/run' is not a file"):
        load_manifest(entrant(tmp_path / "a", 'command = ["bin/run"]\n'))
    assert load_manifest(entrant(tmp_path / "b", 'command = ["node", "bot.js"]\n'))


def test_play_says_which_pattern_instead_of_bwraps_execvp(tmp_path):
    entrant(tmp_path / "c", 'command = ["./cgreedy"]\nfiles = ["cgreedy"]\n')
    out = league("play", "limit", "cbot", "random", "random", "--bots", str(tmp_path),
                 code=EXIT_USAGE)
    assert "files pattern 'cgreedy' matches no file" in out.stderr
    assert "execvp" not in out.stderr + out.stdout


# ---- the bot path -------------------------------------------------------------------
def test_a_league_bot_path_folder_that_does_not_exist_is_warned_about_once(
        tmp_path, monkeypatch):
    missing = tmp_path / "my-bots"
    monkeypatch.setenv("LEAGUE_BOT_PATH", f"{missing}:{ROOT / 'tests' / 'bots'}")
    monkeypatch.setattr("harness.proc.catalog._WARNED_DIRS", set())
    out = league("bots")
    assert "faulty_exit" in out.stdout, "the folder that exists is searched"
    warnings = [line for line in out.stderr.splitlines() if str(missing) in line]
    assert len(warnings) == 1, out.stderr
    assert "LEAGUE_BOT_PATH" in warnings[0] and "does not exist" in warnings[0]


# ---- did you mean -------------------------------------------------------------------
def test_a_mistyped_bot_game_or_league_key_gets_the_name_it_meant(tmp_path):
    with pytest.raises(UnknownBotError, match=r"unknown bot 'heuristc' \(did you mean "
                                              r"'heuristic'\?\)"):
        resolve("heuristc")
    with pytest.raises(UnknownGameError, match=r"unknown game 'limt' \(did you mean 'limit'\?\)"):
        get_game("limt")
    path = tmp_path / "typo.toml"
    path.write_text('name = "t"\ngame = "limit"\nbots = ["random", "heuristic"]\nplayers = 3\n'
                    'deals = 1\ndeels = 2\n[limits]\ndecison_ms = 5\n')
    with pytest.raises(LeagueFileError, match=r"deels \(did you mean 'deals'\?\)"):
        load_league(str(path))
    path.write_text(path.read_text().replace("deels = 2\n", ""))
    with pytest.raises(LeagueFileError,
                       match=r"limits.decison_ms \(did you mean 'limits.decision_ms'\?\)"):
        load_league(str(path))
    assert "(did you mean" not in str(pytest.raises(UnknownBotError, resolve, "zzzzzz").value)


def test_the_command_line_suggests_for_bots_and_leaves_commands_and_options_to_click():
    assert "(did you mean 'heuristic'?)" in league(
        "play", "limit", "random", "random", "heuristc", code=EXIT_USAGE).stderr
    assert "Did you mean 'table'?" in league("tabel", code=EXIT_USAGE).stderr
    assert "--seed" in league("play", "limit", "random", "random", "random", "--seeed", "1",
                              code=EXIT_USAGE).stderr


# ---- the reference bots are ready when they say hello --------------------------------
# In a fresh interpreter: the bot's hello reply is written to an object that
# notes which modules are loaded at that moment; stdin holds the hello alone.
READY_PROBE = """
import io, sys, msgpack
from bots.sdk import run
from {module} import {cls}
class Out(io.BytesIO):
    def write(self, data):
        print(" ".join(sorted(sys.modules)))
        return super().write(data)
run({cls}(), io.BytesIO(msgpack.packb({{"type": "hello", "protocol": 1}})), Out())
"""


@pytest.mark.parametrize("module, cls, packages", [
    ("bots.heuristic_bot", "HeuristicBot", ["bots.heuristics"]),
    ("bots.search_bot", "SearchBot", ["bots.heuristics", "bots.search.games", "games"]),
])
def test_a_reference_bot_has_imported_every_games_modules_before_it_answers_hello(
        module, cls, packages):
    from bots.heuristics import available

    probe = subprocess.run([sys.executable, "-c", READY_PROBE.format(module=module, cls=cls)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    loaded = set(probe.stdout.split())
    for package in packages:
        missing = [slug for slug in available() if f"{package}.{slug}" not in loaded]
        assert not missing, f"{module} answers hello before importing {package}.{missing}"


# ---- a fault while a bot handles `end` is that match's ----------------------------
TEST_BOTS = ROOT / "tests" / "bots"


@pytest.mark.parametrize("bot, kind", [("faulty_crash_at_end", "crash"),
                                       ("faulty_garbage_at_end", "bad_message")])
def test_play_reports_a_fault_made_while_handling_end_and_exits_3(bot, kind):
    from harness.cli import EXIT_BOT
    from harness.cli.common import END_FAULT

    out = league("play", "limit", bot, "random", "random", "--bots", str(TEST_BOTS),
                 code=EXIT_BOT).stdout
    standings, after = out.split("final standings", 1)[1].split(END_FAULT, 1)
    assert "FAULT" not in standings, "the game was over: no fault during it"
    assert after.startswith(f" {kind}:"), out
    if kind == "crash":  # os.abort(), reported as the signal the bot got
        assert "bot exited (killed by SIGABRT)" in after, after
    assert f"misbehaving: {kind.replace('bad_message', 'garbage')}" in out  # its stderr


def test_end_faults_amend_their_own_matches_and_the_next_match_starts_clean(tmp_path):
    from harness.runner import run_league
    from harness.store import Store

    path = tmp_path / "end.toml"
    path.write_text('name = "end"\ngame = "target"\nbots = ["random", "faulty_crash_at_end"]\n'
                    "players = 2\ndeals = 2\n")
    store = Store(tmp_path / "r.db")
    summary = run_league(load_league(str(path), [TEST_BOTS]), store, workers=1,
                         engine="inline", concurrency=2)
    assert summary.played == 4
    rows = store.db.execute("SELECT m.id, s.seat, s.fault_kind, s.fault_decision, e.kind "
                            "FROM matches m JOIN seats s ON s.match_id = m.id LEFT JOIN "
                            "end_faults e ON e.match_id = m.id AND e.seat = s.seat "
                            "WHERE s.bot LIKE 'faulty_crash_at_end@%'").fetchall()
    assert len(rows) == 4
    # Each crash is recorded once. A bot that had already read its next
    # match's `start` when it died cannot be told from one that died on that
    # `start` (PROTOCOL.md, faults): that crash is the next match's fault, at
    # the seat's first decision, and the match it ended shows none. So a
    # match blamed for the last leaves one silent; on a quiet machine it is rare.
    assert all((fault, after) in ((None, "crash"), ("crash", None), (None, None))
               for *_, fault, _, after in rows), rows
    blamed_on_the_next = sum(fault is not None for *_, fault, _, _ in rows)
    silent = sum(fault is None and after is None for *_, fault, _, after in rows)
    assert silent == blamed_on_the_next == summary.faulted, rows
    assert len(store.matches(fault="crash")) == 4 - silent, "--fault crash finds the end faults"


SILENT_BOT = """
import os, sys, msgpack
unpacker = msgpack.Unpacker(raw=False)
while data := os.read(0, 65536):
    unpacker.feed(data)
    for message in unpacker:
        if message["type"] == "hello":
            sys.stdout.buffer.write(msgpack.packb({"type": "hello", "protocol": 1}))
            sys.stdout.buffer.flush()
        elif message["type"] == "act":
            os._exit(1)  # not a word on stderr
"""


def test_logs_tells_a_silent_faulted_bot_from_one_whose_stderr_was_not_kept(tmp_path):
    from harness.runner import run_league
    from harness.store import Store

    entrant(tmp_path / "bots" / "silent", 'command = ["{python}", "bot.py"]\n'
            'files = ["bot.py"]\n', name="silent")
    (tmp_path / "bots" / "silent" / "bot.py").write_text(SILENT_BOT)
    path = tmp_path / "quiet.toml"
    path.write_text('name = "quiet"\ngame = "target"\nbots = ["random", "silent"]\n'
                    "players = 2\ndeals = 1\nrotation = \"none\"\n")
    db = tmp_path / "r.db"
    run_league(load_league(str(path), [tmp_path / "bots"]), Store(db), workers=1,
               engine="inline")
    match_id = Store(db).db.execute("SELECT id FROM matches").fetchone()[0]
    sections = league("logs", match_id, "--db", str(db)).stdout.split("== ")[1:]
    silent = next(s for s in sections if "silent@" in s.splitlines()[0])
    quiet = next(s for s in sections if "random@" in s.splitlines()[0])
    assert "FAULT crash" in silent
    assert "faulted and wrote nothing to stderr" in silent
    assert "did not fault" in quiet and "faulted and wrote nothing" not in quiet


# ---- signals as the bot received them ------------------------------------------------
C_BOT = "#include <signal.h>\n#include <stdlib.h>\nint main(void) {{ {call}; return 0; }}\n"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc to build the C bot")
@pytest.mark.parametrize("call, signal_name", [("abort()", "SIGABRT"),
                                               ("raise(SIGSEGV)", "SIGSEGV")])
def test_a_bot_killed_by_a_signal_is_reported_with_that_signal(tmp_path, call, signal_name):
    """The bot is not PID 1 of its namespace (bwrap's init is): a signal it
    raises is delivered as to any process, and its name comes back."""
    from harness.proc.sandbox import probe

    if not probe().bwrap_works:
        pytest.skip(f"SANDBOX UNAVAILABLE: {probe().bwrap_problem}")
    folder = tmp_path / "bots" / "csig"
    entrant(folder, 'command = ["./csig"]\nfiles = ["csig"]\n', name="csig")
    (folder / "csig.c").write_text(C_BOT.format(call=call))
    subprocess.run(["gcc", "-O0", "-o", str(folder / "csig"), str(folder / "csig.c")], check=True)
    out = league("play", "target", "csig", "random", "--bots", str(tmp_path / "bots"),
                 code=3).stdout
    assert f"bot exited (killed by {signal_name})" in out, out
