"""Each decision's stderr, where asked for (``league play --stderr``, a
league's ``[logs] stderr = "all"``): real bot processes that write a known
line at each decision, the caps, the store, the text and HTML outputs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.league import LeagueFileError, load_league
from harness.limits import DEFAULT_LIMITS
from harness.match import STDERR_MATCH_BYTES, BotPool, run_match
from harness.proc.botproc import STDERR_DECISION_BYTES, STDERR_DECISION_LINES, _StderrDrain
from harness.proc.catalog import resolve
from harness.replay import replay_game
from harness.runner import run_league
from harness.store import Store
from harness.web.replay_html import write_replay_html
from tests.browser import Tab  # the `browser` fixture comes from conftest.py

TEST_BOTS = Path(__file__).parent / "bots"
BOT_DIRS = [TEST_BOTS, Path(__file__).parent.parent / "bots"]
MARKUP = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"  # stderr_chatty's


def play(bots: list[str], seed: int = 3) -> tuple[list, list[int]]:
    """One match with each decision's stderr kept: its entries, and the
    seat that acted at each decision (from the engine)."""
    pool = BotPool({name: resolve(name, BOT_DIRS) for name in set(bots)}, DEFAULT_LIMITS)
    pool.keep_stderr = True
    try:
        result = run_match("limit", seed, bots, pool, match_id="m")
    finally:
        pool.close()
    assert not any(result.faults)
    actors = [game.current_player() for game, action in replay_game(result.replay)
              if action is not None]
    return result.stderr, actors


def test_each_decision_has_the_lines_its_bot_wrote_for_it():
    entries, actors = play(["stderr_chatty", "random", "stderr_chatty"])
    chatty_decisions = [d for d, seat in enumerate(actors) if seat in (0, 2)]
    assert sorted((e.decision, e.seat) for e in entries) == [(d, actors[d]) for d in chatty_decisions]
    for entry in entries:
        assert f"decision {entry.decision} seat {entry.seat} {MARKUP}" in entry.text
    first = {seat: min(d for d in chatty_decisions if actors[d] == seat) for seat in (0, 2)}
    for seat, decision in first.items():  # written on `start`: the first decision's
        text = next(e.text for e in entries if (e.decision, e.seat) == (decision, seat))
        assert text.startswith(f"starting at seat {seat}\n")


def test_a_decision_and_a_match_keep_at_most_their_caps():
    entries, _ = play(["stderr_flood", "random", "random"])
    assert entries
    marker = re.compile(r"\n\[\u2026 [\d,]+ bytes dropped\][^\n]*")
    kept = [marker.sub("", entry.text) for entry in entries]
    assert all(len(text.encode()) <= STDERR_DECISION_BYTES for text in kept)
    total = sum(len(entry.text.encode()) for entry in entries)  # markers count too
    assert STDERR_MATCH_BYTES < total < STDERR_MATCH_BYTES + 200, "the match's cap, and its note"
    # each decision is cut to its cap and says so, until the match's cap cuts the last short
    *full, cut = sorted(entries, key=lambda e: e.decision)
    assert all(len(marker.sub("", e.text).encode()) == STDERR_DECISION_BYTES for e in full)
    assert all(re.search(r"\[\u2026 [\d,]+ bytes dropped\]$", e.text) for e in full)
    assert len(marker.sub("", cut.text).encode()) < STDERR_DECISION_BYTES
    assert re.search(r"\n\[\u2026 [\d,]+ bytes dropped\] \(this decision's and the rest of the "
                     r"match's: the cap is 64 KiB of stderr a bot a match\)$", cut.text)


def test_a_decision_keeps_its_first_lines():
    read, write = os.pipe()
    drain = _StderrDrain(os.fdopen(read, "rb", buffering=0))
    drain.keep_log()
    os.write(write, b"".join(b"line %d\n" % n for n in range(STDERR_DECISION_LINES + 20)))
    data, dropped = drain.take(settle_s=5.0)  # waits for the bytes in the pipe, no longer
    assert data.splitlines()[-1] == b"line %d" % (STDERR_DECISION_LINES - 1)
    assert dropped == sum(len(b"line %d\n" % n) for n in range(STDERR_DECISION_LINES,
                                                               STDERR_DECISION_LINES + 20))
    assert drain.take() == (b"", 0), "taken once"
    os.close(write)
    drain.finish()


def test_play_shows_each_decisions_stderr_escaped():
    result = CliRunner().invoke(app, ["play", "limit", "stderr_chatty", "random", "random",
                                      "--seed", "3", "--bots", str(TEST_BOTS), "--stderr", "-v"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output, "a bot's escape sequence reaches no terminal"
    lines = result.output.splitlines()
    said = [n for n, line in enumerate(lines) if "seat 0 (stderr_chatty) stderr: decision" in line]
    assert said
    for n in said:  # right under its decision's line
        decision = re.search(r"stderr: decision (\d+) ", lines[n]).group(1)
        above = next(line for line in reversed(lines[:n]) if " stderr: " not in line)
        assert above.startswith(f"[{decision}] "), (above, lines[n])
        assert lines[n].endswith(f"{MARKUP}\\x1b[31m")
    quiet = CliRunner().invoke(app, ["play", "limit", "stderr_chatty", "random", "random",
                                     "--seed", "3", "--bots", str(TEST_BOTS)])
    assert " stderr: " not in quiet.output and "stderr by" not in quiet.output, "not asked"


# ---- leagues ------------------------------------------------------------------
def league(tmp_path: Path, logs: str) -> Path:
    path = tmp_path / "l.toml"
    path.write_text('name = "chatty"\ngame = "limit"\nbots = ["stderr_chatty", "random"]\n'
                    f'players = 3\ndeals = 1\nrotation = "none"\n{logs}')
    return path


@pytest.fixture(scope="module")
def logged_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stderr")
    db = folder / "results.db"
    summary = run_league(load_league(str(league(folder, '[logs]\nstderr = "all"\n')), [TEST_BOTS]),
                         Store(db), workers=1, engine="inline")
    assert summary.played == 2 and summary.errors == 0
    return db


def test_a_league_asked_for_all_stores_each_decision(logged_db):
    store = Store(logged_db, readonly=True)
    for row in store.db.query("SELECT id, seats FROM matches"):
        chatty = {seat for seat, bot in enumerate(json.loads(row["seats"]))
                  if bot.startswith("stderr_chatty@")}
        stored = store.decision_stderr(row["id"])
        assert stored and {seat for _, seat, _ in stored} == chatty
        for decision, seat, text in stored:
            assert f"decision {decision} seat {seat} " in text


def test_a_league_keeps_no_stderr_of_clean_bots_by_default(tmp_path):
    db = tmp_path / "results.db"
    run_league(load_league(str(league(tmp_path, "")), [TEST_BOTS]), Store(db), workers=1,
               engine="inline")
    assert Store(db).db.execute("SELECT COUNT(*) FROM decision_stderr").fetchone()[0] == 0


def test_logs_option_is_checked(tmp_path):
    with pytest.raises(LeagueFileError, match=r'\[logs\] stderr must be "faults".*not \'some\''):
        load_league(str(league(tmp_path, '[logs]\nstderr = "some"\n')), [TEST_BOTS])


def test_logs_and_replay_show_the_stored_lines(logged_db):
    match_id = Store(logged_db, readonly=True).db.execute("SELECT id FROM matches").fetchone()[0]
    logs = CliRunner().invoke(app, ["logs", match_id, "--db", str(logged_db)])
    assert logs.exit_code == 0 and "-- per decision" in logs.output
    assert re.search(r"^\[\d+\] decision \d+ seat \d ", logs.output, re.M)
    replay = CliRunner().invoke(app, ["replay", match_id, "--db", str(logged_db)])
    assert "(stderr_chatty) stderr: decision" in replay.output
    assert "\x1b" not in logs.output + replay.output


def test_the_replay_page_holds_each_decisions_stderr_as_data(logged_db, tmp_path):
    store = Store(logged_db, readonly=True)
    match_id = store.db.execute("SELECT id FROM matches").fetchone()[0]
    page = write_replay_html(store, match_id, tmp_path / "r.html").read_text()
    assert "<script>alert" not in page and "<img" not in page
    data = json.loads(re.search(r'id="replay-data">(.*?)</script>', page, re.S).group(1))
    said = [(step["d"], seat, text) for step in data["steps"] for seat, text in step.get("se", [])]
    assert len(said) == len(store.decision_stderr(match_id))
    for decision, seat, text in said:
        assert f"decision {decision} seat {seat} {MARKUP}\\x1b[31m" in text


@pytest.mark.slow
def test_the_replay_page_shows_stderr_as_text_in_chromium(browser, logged_db, tmp_path):  # noqa: F811
    store = Store(logged_db, readonly=True)
    match_id = store.db.execute("SELECT id FROM matches").fetchone()[0]
    decision, seat, _ = store.decision_stderr(match_id)[0]
    page = write_replay_html(store, match_id, tmp_path / "r.html")
    tab = Tab(browser, f"{page.as_uri()}#step={decision}")
    assert tab.errors() == [], "no script ran, no error"
    shown = tab.eval("[...document.querySelectorAll('pre.stderr')].map(p => p.textContent)")
    assert any(f"decision {decision} seat {seat} {MARKUP}" in text for text in shown)
    assert tab.eval("document.querySelectorAll('#decision img, #decision script').length") == 0
