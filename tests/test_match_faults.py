"""Integration: real bot subprocesses that misbehave. Each fault is recorded
with the right kind, the match still finishes, and no process is left."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import psutil
import pytest

from harness.match import BotPool, Limits, run_match
from harness.proc import botproc
from harness.proc.botproc import BotClient, FakeTransport
from harness.proc.catalog import discover
from tests.helpers import wait_until

FAULTY_DIR = Path(__file__).parent / "bots"
# Starts get 5 s: a loaded machine may take seconds to start an innocent
# Python bot, and faulty_slow_start sleeps 30 s before its hello.
LIMITS = Limits(decision_ms=500, startup_ms=5000)


@pytest.fixture
def pool():
    specs = discover([FAULTY_DIR])
    pool = BotPool(specs, LIMITS)
    yield pool
    pool.close()


def own_decisions(result, seat: int) -> list[int]:
    """The decision numbers at which ``seat`` was asked, from the replay."""
    from harness.replay import replay_game

    return [game.decisions for game, action in replay_game(result.replay)
            if action is not None and game.current_player() == seat]


def descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.parametrize(
    "bot,kind",
    [
        ("faulty_sleep", "timeout"),
        ("faulty_exit", "crash"),
        ("faulty_garbage", "bad_message"),
        ("faulty_out_of_range", "illegal_action"),
        ("faulty_no_hello", "bad_message"),
        pytest.param("faulty_slow_start", "timeout", marks=pytest.mark.slow),  # waits out start-up
    ],
)
def test_fault_is_recorded_and_match_finishes(pool, bot, kind):
    before = descendants()
    started = time.monotonic()
    result = run_match("limit", 7, ["random", bot, "heuristic"], pool, "fault-test")
    # the deadline cut the bot short: a match that waited for it would take its
    # sleep, 30 s (slow start) or 60 s (sleep); generous for a loaded machine
    assert time.monotonic() - started < 25
    fault = result.faults[1]
    assert fault is not None and fault.kind == kind, fault
    assert result.faults[0] is None and result.faults[2] is None
    if bot in ("faulty_no_hello", "faulty_slow_start"):
        assert fault.decision == 0 and not fault.started
    else:
        # it misbehaves at its own second decision: the match's decision number then
        assert fault.decision == own_decisions(result, seat=1)[1]
        assert fault.started and "misbehaving" in fault.stderr_tail
    # the match went on to the end with the seat played at random
    assert not result.capped and result.decisions > 50
    assert result.ranks[1] == 3, "a faulted bot is ranked last"
    assert sorted(result.ranks[:1] + result.ranks[2:]) in ([1, 2], [1, 1])
    pool.close()
    assert descendants() - before == set(), "bot processes left behind"


def test_think_times_are_measured_per_seat_and_the_duration_is_the_whole_match(pool):
    result = run_match("limit", 5, ["slow_thinker", "random", "random"], pool, "think-test")
    slow, quick = result.think[0], result.think[1]
    asked = [t for t, seat in zip(result.replay["times_ms"], _actors(result)) if seat == 0]
    assert slow.moves == len(asked) > 10
    assert slow.total_ms / slow.moves >= 20 and slow.max_ms >= 20, "its 20 ms sleeps counted"
    # each seat its own: the quick one has the same round trips, not the sleeps
    assert quick.moves > 10 and quick.total_ms / quick.moves < slow.total_ms / slow.moves
    # one decision at a time, so the seats' times together fit in the match (a
    # think time that ran on past its own decision would not), whatever the load
    assert result.duration_s * 1000 >= sum(t.total_ms for t in result.think), \
        "duration covers every decision"


def _actors(result) -> list[int]:
    from harness.replay import replay_game

    return [game.current_player() for game, action in replay_game(result.replay)
            if action is not None]


def marked_children() -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"])
            if "faulty-spawned-child" in (p.info["cmdline"] or [])]


def test_faulted_bot_children_are_killed_with_the_group(pool):
    result = run_match("limit", 3, ["faulty_spawn_and_sleep", "random", "random"], pool,
                        "spawn-test")
    assert result.faults[0].kind == "timeout"
    wait_until(lambda: not marked_children(), "the faulted bot's child to end",
               describe=marked_children)


def test_faulted_process_is_replaced_and_healthy_ones_reused(pool):
    for match in range(3):
        run_match("limit", match, ["random", "faulty_exit", "heuristic"], pool, f"m{match}")
    assert pool.starts["random"] == 1, "a healthy bot process plays many matches"
    assert pool.starts["heuristic"] == 1
    assert pool.starts["faulty_exit"] == 3, "a faulted process is replaced for the next match"


def test_same_seed_same_bots_same_match(pool):
    first = run_match("limit", 11, ["random", "heuristic", "random"], pool, "same")
    second = run_match("limit", 11, ["random", "heuristic", "random"], pool, "same")
    assert first.replay["actions"] == second.replay["actions"]
    assert {**first.replay, "times_ms": None} == {**second.replay, "times_ms": None}
    assert first.scores == second.scores


def test_a_match_at_the_decision_cap_ends_scored_as_it_stands(pool, monkeypatch):
    import dataclasses

    from games.limit import Limit

    monkeypatch.setattr(Limit, "INFO", dataclasses.replace(Limit.INFO, max_decisions=25))
    result = run_match("limit", 4, ["random", "heuristic", "random"], pool, "capped")
    assert result.capped and result.decisions == 25
    assert len(result.replay["actions"]) == 25
    game = Limit.new(3, 4)
    for action in result.replay["actions"]:
        game.apply(action)
    assert result.scores == game.scores() and not game.is_terminal()


def test_team_fault_ranks_the_whole_team_last():
    from harness.match import ranks_with_faults

    assert ranks_with_faults([1, 2, 1, 2], {0}, [(0, 2), (1, 3)]) == [2, 1, 2, 1]
    assert ranks_with_faults([1, 2, 3, 4], {1, 3}, None) == [1, 3, 2, 3]
    assert ranks_with_faults([1, 1, 3, 3, 5, 5], {4}, [(0, 1), (2, 3), (4, 5)]) == [1, 1, 2, 2, 3, 3]
    assert ranks_with_faults([2, 1, 3], set(), None) == [2, 1, 3]


def test_the_start_message_tells_a_bot_its_seat_team_and_partner(tmp_path):
    """Unsandboxed, so that the bot can write what it was told where the test reads it."""
    import ast

    from harness.proc.sandbox import Sandbox

    record = tmp_path / "starts.txt"
    shutil.copyfile(FAULTY_DIR / "faulty.py", tmp_path / "faulty.py")  # cwd stays beside it
    (tmp_path / "recorder.toml").write_text(
        f'name = "faulty_record_start"\ncommand = ["{{python}}", "faulty.py", "record_start"]\n'
        f'files = ["faulty.py"]\n'
        f'[env]\nRECORD_START_FILE = "{record}"\n')
    specs = discover([tmp_path])
    recording_pool = BotPool(specs, LIMITS, Sandbox("none"))
    bots = ["faulty_record_start", "random", "random", "random"]
    try:
        result = run_match("tenos_square", 2, bots, recording_pool, "team-start")
    finally:
        recording_pool.close()
    assert result.faults == [None] * 4
    start = ast.literal_eval(record.read_text().splitlines()[0])
    assert start["game"] == "tenos_square" and start["seat"] == 0 and start["players"] == 4
    assert start["teams"] == [[0, 2], [1, 3]] and start["partners"] == [2]
    assert start["names"] == bots and start["limits"]["decision_ms"] == 500
    assert result.ranks[0] == result.ranks[2] and result.ranks[1] == result.ranks[3]
    assert result.scores[0] == result.scores[2]


class _ForkBombAtLastWords(FakeTransport):
    """Answers index 0 to everything; from its ``breach_from``-th decision on,
    the sandbox reports refused forks (what a fork bomb leaves behind)."""

    def __init__(self, breach_from: int) -> None:
        super().__init__([])
        self.breach_from = breach_from
        self.decisions = 0

    def receive(self, deadline: float):
        if self.sent[-1]["type"] == "hello":
            return {"type": "hello", "protocol": 1, "name": "bomb"}
        self.decisions += 1
        return {"type": "action", "index": 0}

    def live_breach(self) -> str:
        return "process limit: refused forks" if self.decisions >= self.breach_from else ""


class _FakePool(BotPool):
    def __init__(self, transports: dict[str, FakeTransport]) -> None:
        super().__init__({}, LIMITS, bundles={})
        self.transports = transports

    def _spawn(self, name: str) -> BotClient:
        return BotClient(self.transports[name], name, cpu_limit_s=None)


@pytest.mark.parametrize("breach_from", [2, "last"])
def test_a_breach_in_the_last_moments_of_a_match_is_that_matchs_fault(monkeypatch, breach_from):
    """Limits are read at most every CPU_CHECK_INTERVAL_S during play; here
    never after the first decision. A breach after that is still the match's
    fault, found when play ends, not lost with the process at ``end``."""
    monkeypatch.setattr(botproc, "CPU_CHECK_INTERVAL_S", 3600.0)
    clean = _FakePool({n: _ForkBombAtLastWords(10**9) for n in ("a", "b", "c")})
    baseline = run_match("limit", 7, ["a", "b", "c"], clean, "clean")
    assert baseline.faults == [None, None, None]
    asked = clean.transports["b"].decisions
    last = asked if breach_from == "last" else breach_from
    bomb = _ForkBombAtLastWords(last)
    pool = _FakePool({"a": _ForkBombAtLastWords(10**9), "b": bomb,
                      "c": _ForkBombAtLastWords(10**9)})
    result = run_match("limit", 7, ["a", "b", "c"], pool, "bomb")
    fault = result.faults[1]
    assert fault is not None and fault.kind == "limit" and "refused forks" in fault.detail
    assert fault.decision == result.decisions, "found after the last decision"
    assert result.replay["actions"] == baseline.replay["actions"], "the match itself is unchanged"
    assert result.faults[0] is None and result.faults[2] is None
    assert result.ranks[1] == 3 and bomb.closed, "ranked last, its process killed"


def test_end_gives_each_seat_still_playing_its_view_of_the_final_state(pool):
    """What happened after a seat's last decision (the last trick, the last
    turns) reaches it in ``end``; a faulted seat gets no ``end``."""
    from harness.replay import replay_game

    ends: list[tuple[str, dict]] = []
    pool.trace = lambda direction, label, message: (
        ends.append((label, message)) if direction == "to" and message["type"] == "end" else None)
    result = run_match("cat_in_the_box", 3, ["random", "faulty_garbage", "heuristic", "random"],
                       pool, "end-test")
    assert result.faults[1] is not None and not result.capped
    *_, (final, _) = replay_game(result.replay)
    assert final.is_terminal()
    assert sorted(message["seat"] for _, message in ends) == [0, 2, 3]
    for label, message in ends:
        seat = message["seat"]
        assert label == result.bots[seat]
        assert message["obs"] == final.observation(seat)
        assert message["scores"] == result.scores and message["ranks"] == result.ranks
