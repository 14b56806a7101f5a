"""Issue 44, second round: limits with bounds, harness errors never counted
as stored, bots that fault match after match marked broken, and bot
start-ups that hold up only their own match.

The slow starter, ``faulty_slow_start_then_crash``, takes 2 s to say hello
(well within the start-up limit) and exits at its first decision, so every
match it plays starts it again."""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from harness import runner
from harness.cli import EXIT_BOT, EXIT_CODES, EXIT_HARNESS_ERROR, app
from harness.league import LIMIT_BOUNDS, LIMIT_FIELDS, LeagueFileError, load_league
from harness.match import BotPool, Limits, match_steps, play_interleaved
from harness.proc.catalog import discover
from harness.proc.sandbox import Sandbox
from harness.records import Fault, MatchResult
from harness.runner import (
    BROKEN_AFTER,
    BatchItem,
    BatchReply,
    MatchWorker,
    WorkerSetup,
    _RunState,
    run_league,
)
from harness.store import Store
from tests.helpers import wait_until

TEST_BOTS = Path(__file__).parent / "bots"
ROOT = Path(__file__).resolve().parent.parent
SLOW = "faulty_slow_start_then_crash"
SLOW_START_S = 2.0  # its sleep before hello (tests/bots/faulty.py)
NO_SANDBOX = Sandbox("none")  # these tests are about scheduling, not isolation


def league_file(tmp_path: Path, bots: list[str], deals: int, limits: str = "",
                name: str = "hard") -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\ngame = "limit"\nbots = {bots!r}\nplayers = 3\n'
                    f"deals = {deals}\nseed = 3\nrotation = 'cyclic'\n".replace("'", '"')
                    + (f"[limits]\n{limits}\n" if limits else ""))
    return str(path)


def run_states(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[0] for row in conn.execute("SELECT state FROM runs ORDER BY id")]


def stored(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]


# ---- limits have bounds ---------------------------------------------------------
@pytest.mark.parametrize("field,value,bound", [
    ("decision_ms", 600_001, "above its maximum 600000"),
    ("startup_ms", 10**12, "above its maximum 600000"),
    ("memory_mb", 10**9, "above its maximum 65536"),
    ("memory_mb", 16, "below its minimum 32"),
    ("cpu_s", 86_401, "above its maximum 86400"),
    ("processes", 4097, "above its maximum 4096"),
    ("file_mb", 10**6, "above its maximum 4096"),
    ("open_files", 10**7, "above its maximum 65536"),
    ("open_files", 8, "below its minimum 16"),
])
def test_a_limit_outside_its_bounds_is_refused_naming_the_field_value_and_bound(
        tmp_path, field, value, bound):
    path = league_file(tmp_path, ["random", "heuristic"], 1, f"{field} = {value}")
    with pytest.raises(LeagueFileError) as refused:
        load_league(path)
    assert f"field '{field}' = {value} is {bound}" in str(refused.value)


def test_every_limit_has_bounds_around_its_default_and_the_docs_list_them():
    assert set(LIMIT_BOUNDS) == set(LIMIT_FIELDS)
    docs = (ROOT / "docs" / "leagues.md").read_text()
    for field, (low, high) in LIMIT_BOUNDS.items():
        default = f"{LIMIT_FIELDS[field]:g}"
        assert low <= LIMIT_FIELDS[field] <= high, field
        row = next((line for line in docs.splitlines()
                    if line.startswith("|") and f"`{field}`" in line), "")
        assert re.search(rf"\| {default} \| {low} \| {high}\b", row), (field, row)


def test_a_league_at_every_maximum_plays_without_a_harness_error(tmp_path):
    """The maxima are values the harness can run: the hostile league file
    that found this made every match a harness error."""
    limits = "\n".join(f"{field} = {high}" for field, (_, high) in LIMIT_BOUNDS.items())
    league = load_league(league_file(tmp_path, ["random", "heuristic"], 1, limits))
    summary = run_league(league, Store(tmp_path / "r.db"), workers=1, engine="inline",
                         sandbox=NO_SANDBOX)
    assert (summary.played, summary.errors, summary.faulted) == (league.size(), 0, 0)


# ---- harness errors are never counted as stored -----------------------------------
def _engine_bug(*args, **kwargs):
    raise RuntimeError("engine bug")


@pytest.mark.parametrize("in_flight", [1, 2])
def test_harness_errors_are_not_stored_and_leave_the_run_unfinished(tmp_path, monkeypatch,
                                                                    in_flight):
    league = load_league(league_file(tmp_path, ["random", "heuristic"], 1))
    assert league.size() == 6
    db = tmp_path / "r.db"
    with monkeypatch.context() as patched:  # fails in the worker, one match at a time or interleaved
        patched.setattr(runner, "run_match", _engine_bug)
        patched.setattr(runner, "match_steps", _engine_bug)
        summary = run_league(league, Store(db), workers=1, engine="inline",
                             concurrency=in_flight, sandbox=NO_SANDBOX)
    assert (summary.errors, summary.played, stored(db)) == (6, 0, 0)
    assert summary.error_lines[0].endswith("RuntimeError: engine bug")
    assert run_states(db) == ["incomplete"], "a run with matches missing is not finished"
    again = run_league(league, Store(db), workers=1, engine="inline", sandbox=NO_SANDBOX)
    assert (again.errors, again.played, stored(db)) == (0, 6, 6)
    assert run_states(db) == ["incomplete", "finished"]


def test_league_run_reports_harness_errors_and_exits_non_zero(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "run_match", _engine_bug)
    path = league_file(tmp_path, ["random", "heuristic"], 1)
    db = tmp_path / "r.db"
    done = CliRunner().invoke(app, ["run", path, "--db", str(db), "--engine", "inline",
                                    "--matches-per-worker", "1", "--sandbox", "none", "-q"])
    assert done.exit_code == EXIT_HARNESS_ERROR, (done.exit_code, done.stderr)
    assert "every scheduled match is stored" not in done.stderr
    assert "played 0 matches" in done.stderr
    assert "6 matches ended in a harness error and are not stored" in done.stderr
    assert "RuntimeError: engine bug" in done.stderr
    assert "stopped with 6 matches left; resume with:" in done.stderr
    assert stored(db) == 0 and run_states(db) == ["incomplete"]


# ---- K faulted matches in a row: broken -------------------------------------------
class _Saved:
    """A store that keeps nothing: collect() is tested here, not SQLite."""

    def save_match(self, *args, **kwargs) -> bool:
        return True


class _League:
    name = "unit"


def _result(match_id: str, bots: list[str], faults: list[Fault | None]) -> MatchResult:
    return MatchResult(match_id, "limit", "1", 0, bots, [0.0] * len(bots), [1] * len(bots),
                       faults, False, 10, 0.0, 0.0, None, {})


def _collect(state: _RunState, seats: list[str], faults: list[Fault | None]) -> None:
    match_id = f"m{len(state.schedules)}-{time.perf_counter_ns()}"
    state.schedules[match_id] = runner.ScheduledMatch(match_id, 0, tuple(seats))
    reply = BatchReply([_result(match_id, seats, faults)], 0, 0)
    state.collect(reply, _League(), _Saved(), 0)  # type: ignore[arg-type]


def test_any_fault_in_k_matches_in_a_row_marks_a_bot_broken_and_a_clean_match_resets_it():
    assert BROKEN_AFTER == 3 and f"faulted in {BROKEN_AFTER} matches in a row" in EXIT_CODES
    state = _RunState()
    crash, timeout = Fault("crash", 4, "", ""), Fault("timeout", 9, "", "")
    limit, garbage = Fault("limit", 2, "", ""), Fault("bad_message", 1, "", "")
    seats = ["x@1", "y@1", "z@1"]
    _collect(state, seats, [crash, None, None])
    _collect(state, seats, [timeout, None, None])
    _collect(state, seats, [None, None, None])  # a clean match: the count starts again
    _collect(state, seats, [limit, None, None])
    _collect(state, ["y@1", "x@1", "x@1"], [None, None, garbage])  # one of its two seats
    assert not state.broken
    _collect(state, seats, [Fault("illegal_action", 3, "", ""), None, None])
    assert list(state.broken) == ["x@1"]
    assert state.broken["x@1"] == "faulted in 3 matches in a row (limit, bad_message, " \
                                  "illegal_action)"
    assert state.played == 6 and state.unplayed == 0, "the faulted matches are results"
    never = Fault("startup", 0, "", "", started=False)
    for _ in range(BROKEN_AFTER):
        _collect(state, ["y@1", "z@1", "w@1"], [None, None, never])
    assert state.broken["w@1"] == "never started (3 tries in a row: startup, startup, startup)"
    assert state.unplayed == 3, "a match where a bot never started is not stored"


@pytest.mark.slow
def test_a_bot_that_starts_slowly_then_crashes_is_broken_after_k_matches(tmp_path):
    """The issue's bot: 2 s to start (under the limit), then a crash at its
    first decision. Before, only failed starts counted: it was never broken
    and every match paid its start again."""
    path = league_file(tmp_path, ["random", "heuristic", SLOW], 10, name="slow")
    db = tmp_path / "r.db"
    done = CliRunner().invoke(app, ["run", path, "--db", str(db), "--engine", "inline",
                                    "--matches-per-worker", "4", "--sandbox", "none", "-q",
                                    "--bots", str(TEST_BOTS)])
    assert done.exit_code == EXIT_BOT, (done.exit_code, done.stderr)
    assert f"bot {SLOW}@" in done.stderr
    assert "faulted in 3 matches in a row (crash, crash, crash)" in done.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT bot, fault_kind, think_max_ms FROM seats").fetchall()
    faults = [kind for bot, kind, _ in rows if bot.startswith(SLOW)]
    # two batches of 2 x 4 matches went out before the first result came back;
    # the rest of the 30 are left for a later run
    assert 3 <= len(faults) <= 16 and set(faults) == {"crash"}, faults
    assert stored(db) == len(faults) < 30
    assert f"stopped with {30 - len(faults)} matches left" in done.stderr
    assert run_states(db) == ["incomplete"]
    innocent = [think for bot, _, think in rows if not bot.startswith(SLOW)]
    assert max(innocent) < 1000, "the slow starts held up the other bots' replies"


# ---- start-ups hold up only their own match ---------------------------------------
@pytest.mark.slow
def test_a_slow_start_does_not_stall_the_other_matches_in_flight():
    """Matches with the slow starter between matches of well-behaved bots,
    three in flight on one thread: every start of the slow one (2 s) runs
    while the others play, and no innocent reply waits for it."""
    specs = discover([TEST_BOTS])
    setup = WorkerSetup("limit", specs, {n: s.bundle() for n, s in specs.items()},
                        Limits(decision_ms=2000, startup_ms=10000), NO_SANDBOX, concurrency=3)
    worker = MatchWorker(setup)
    lineups = [(SLOW, "random", "random"), ("slow_thinker", "random", "heuristic")] * 3
    started = time.monotonic()
    try:
        reply = worker.play([BatchItem(f"s{i}", i, bots) for i, bots in enumerate(lineups)])
    finally:
        worker.close()
    took = time.monotonic() - started
    slowest: dict[str, float] = {}
    for result in reply.results:
        assert isinstance(result, MatchResult), result
        for bot, fault, think in zip(result.bots, result.faults, result.think or []):
            if bot == SLOW:
                assert fault is not None and fault.kind == "crash" and fault.started
            else:
                assert fault is None
                slowest[bot] = max(slowest.get(bot, 0.0), think.max_ms)
    assert slowest["slow_thinker"] >= 20, "the think bot was timed"
    # A start that held up the thread would hold every reply then awaited for
    # its whole 2 s (the sleep), so no reply waits that long unless it waited
    # for a start: a bound of the bot's own sleep, not of the machine's speed.
    assert max(slowest.values()) < SLOW_START_S * 1000, slowest
    print(f"six matches, three slow starts: {took:.1f} s (one at a time: 6 s and more)")


@pytest.mark.slow
def test_a_match_stopped_while_its_bots_start_leaves_no_process(tmp_path):
    """Ctrl-C while a match waits for a start: the start is finished by its
    own thread, which then closes the process; the pool waits for it."""
    pool = BotPool(discover([TEST_BOTS]), Limits(decision_ms=1000, startup_ms=10000), NO_SANDBOX)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    try:
        played = play_interleaved(
            [lambda: match_steps("limit", 1, ["random"] * 3, pool, "quick"),
             lambda: match_steps("limit", 2, [SLOW, "random", "random"], pool, "waiting")], 2)
        position, result = next(played)
        assert position == 0 and isinstance(result, MatchResult) and not any(result.faults)
        played.close()  # the second match still waits for its slow starter
    finally:
        pool.close()
    assert pool.starts[SLOW] == 1

    def left():
        return [p for p in psutil.Process().children(recursive=True)
                if p.pid not in before and p.is_running() and p.status() != psutil.STATUS_ZOMBIE]

    wait_until(lambda: not left(), "the bot processes to end",
               describe=lambda: [p.cmdline() for p in left()])
