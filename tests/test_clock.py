"""Clocks (PROTOCOL.md, "Clocks"): a bank of overage over decision_ms, a
match clock with an increment, per-bot odds; what ``act`` tells a bot of
them, and timeouts that state their numbers.

The accounting (harness.clock.SeatClock) reads no time: its edges are tested
with the times a decision took given outright. One test runs a real bot
process out of a small clock."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from bots.sdk import Bot
from harness.clock import SeatClock
from harness.league import LeagueFileError, load_league
from harness.limits import BotTime, Limits
from harness.local import play
from harness.match import BotPool, run_match
from harness.proc.botproc import NO_REPLY, BotClient, BotTimeout, FakeTransport
from harness.proc.catalog import discover

FAULTY_DIR = Path(__file__).parent / "bots"
HELLO = {"type": "hello", "protocol": 1, "name": "fake"}


# ---- the account ------------------------------------------------------------------
def test_without_a_clock_or_bank_every_decision_gets_decision_ms():
    clock = SeatClock(Limits(decision_ms=700))
    for took in (10, 699.9, 700, 5000):  # 5000: arrived in time, read late
        assert clock.allowed_ms() == 700
        clock.charge(took)
    assert clock.act_fields() == {"clock_ms": None, "increment_ms": 0, "bank_ms": 0}
    assert clock.timeout_note() == ""


def test_the_bank_pays_for_what_goes_over_decision_ms_until_it_is_empty():
    clock = SeatClock(Limits(decision_ms=100, bank_ms=250))
    assert clock.allowed_ms() == 350
    clock.charge(80)  # within decision_ms: the bank is untouched
    assert clock.allowed_ms() == 350 and clock.act_fields()["bank_ms"] == 250
    clock.charge(150)  # 50 over
    assert clock.allowed_ms() == 300 and clock.act_fields()["bank_ms"] == 200
    clock.charge(300)  # exactly at the limit: all the bank, and no fault
    assert clock.act_fields()["bank_ms"] == 0
    assert clock.allowed_ms() == 100, "an empty bank leaves decision_ms"
    clock.charge(100)
    assert clock.allowed_ms() == 100 and clock.act_fields()["bank_ms"] == 0


def test_a_reply_read_late_is_charged_no_more_than_it_was_allowed():
    """A reply in the pipe before the deadline counts, however late the
    harness reads it; the harness's delay is not the bot's."""
    clock = SeatClock(Limits(decision_ms=100, bank_ms=50, clock_ms=1000))
    clock.charge(900)  # allowed 150
    assert clock.act_fields() == {"clock_ms": 850, "increment_ms": 0, "bank_ms": 0}


def test_the_increment_is_added_after_each_decision_and_the_clock_bounds_each_one():
    clock = SeatClock(Limits(decision_ms=1000, clock_ms=500, increment_ms=100))
    assert clock.allowed_ms() == 500, "no more than the clock holds"
    assert clock.act_fields() == {"clock_ms": 500, "increment_ms": 100, "bank_ms": 0}
    clock.charge(200)
    assert clock.act_fields()["clock_ms"] == 400
    clock.charge(50)
    assert clock.act_fields()["clock_ms"] == 450
    clock.charge(450)  # exactly what was left: in time, and the increment comes on
    assert clock.allowed_ms() == 100 and clock.act_fields()["clock_ms"] == 100
    assert clock.timeout_note() == "; clock 0 ms left of 500 (+100/decision) after 3 decisions"


def test_a_spent_clock_without_increment_leaves_no_time_for_the_next_decision():
    clock = SeatClock(Limits(decision_ms=1000, clock_ms=300, bank_ms=100))
    clock.charge(299.6)
    assert clock.allowed_ms() == 0
    assert clock.timeout_note() == ("; clock 0 ms left of 300, bank 100 ms left of 100 "
                                    "(decision limit 1000 ms) after 1 decision")


def test_time_odds_scale_every_time_of_one_bot_and_own_times_replace_them():
    league = Limits(decision_ms=1000, clock_ms=60000, increment_ms=500, bank_ms=2000,
                    bots=(("search", BotTime(time_odds=0.5)),
                          ("fast", BotTime(own=(("clock_ms", 1000),)))))
    half = league.for_name("search")
    assert (half.decision_ms, half.clock_ms, half.increment_ms, half.bank_ms) == (
        500, 30000, 250, 1000)
    own = league.for_name("fast")
    assert (own.decision_ms, own.clock_ms, own.increment_ms) == (1000, 1000, 500)
    assert league.for_name("random") is league
    assert SeatClock(half).allowed_ms() == 1500
    assert half.for_bot()["clock_ms"] == 30000, "its start message shows its own clock"


# ---- what the bot is told, and what a timeout says --------------------------------------
class ClockReader(Bot):
    """Records each act's time fields."""

    name = "clock-reader"

    def __init__(self) -> None:
        self.seen: list[tuple[int, dict]] = []
        self.limits: dict = {}

    def on_start(self, match: dict) -> None:
        self.limits = match["limits"]

    def choose(self, obs, legal, time_left_ms):
        self.seen.append((time_left_ms, dict(self.clock)))
        return 0


def test_act_carries_the_clock_left_which_goes_down_as_decisions_spend_it():
    reader = ClockReader()
    limits = Limits(decision_ms=1000, clock_ms=60000, bank_ms=300)
    match = play("limit", [reader, "random", "random"], seed=3, limits=limits)
    assert match.faults[0] is None
    assert {k: reader.limits[k] for k in ("decision_ms", "clock_ms", "increment_ms", "bank_ms")} \
        == {"decision_ms": 1000, "clock_ms": 60000, "increment_ms": 0, "bank_ms": 300}
    clocks = [clock["clock_ms"] for _, clock in reader.seen]
    assert len(clocks) > 10 and clocks[0] == 60000
    assert all(later <= earlier for earlier, later in zip(clocks, clocks[1:]))
    for time_left, clock in reader.seen:
        assert clock["increment_ms"] == 0 and clock["bank_ms"] == 300  # all within decision_ms
        assert time_left == min(1000 + clock["bank_ms"], clock["clock_ms"])


def test_without_a_clock_act_says_so_and_time_left_is_decision_ms():
    reader = ClockReader()
    play("limit", [reader, "random", "random"], seed=3, limits=Limits(decision_ms=800))
    assert reader.seen and all(seen == (800, {"clock_ms": None, "increment_ms": 0, "bank_ms": 0})
                               for seen in reader.seen)


def _playing_client(replies: list) -> BotClient:
    client = BotClient(FakeTransport([HELLO, *replies]))
    client.handshake(5.0)
    client.start_match({"match_id": "m", "seat": 0})
    return client


def test_a_timeout_states_the_limit_and_the_time_waited():
    client = _playing_client([BotTimeout(NO_REPLY)])
    with pytest.raises(BotTimeout) as caught:
        client.choose({}, [0, 1], 55, 1000)
    assert re.fullmatch(r"no reply within 1000 ms \(waited \d+ ms\)", caught.value.detail)


def test_a_timeout_on_the_clock_states_the_clock():
    clock = SeatClock(Limits(decision_ms=5000, clock_ms=60000, increment_ms=500))
    for _ in range(54):
        clock.charge(1120)  # each a little over its increment: 60000 - 54 * 620 left
    client = _playing_client([BotTimeout(NO_REPLY)])
    with pytest.raises(BotTimeout) as caught:
        client.ask({}, [0, 1], 160, clock.allowed_ms(), clock)
        client.await_answer()
    assert client.transport.sent[-1]["clock_ms"] == 26520
    assert re.fullmatch(r"no reply within 5000 ms \(waited \d+ ms\); clock 21520 ms left of "
                        r"60000 \(\+500/decision\) after 54 decisions", caught.value.detail)


def test_a_start_that_times_out_states_the_start_up_limit():
    client = BotClient(FakeTransport([BotTimeout(NO_REPLY)]))
    with pytest.raises(BotTimeout) as caught:
        client.handshake(15.0)
    assert re.fullmatch(r"no hello within 15000 ms \(waited \d+ ms\)", caught.value.detail)


def test_a_bot_that_thinks_past_its_clock_times_out_with_the_clocks_figures():
    """A real process: slow_thinker takes 20 ms a decision, so a 300 ms clock
    runs out within its first 16 decisions, long before the match ends."""
    pool = BotPool(discover([FAULTY_DIR]), Limits(decision_ms=1000, startup_ms=10000,
                                                   clock_ms=300))
    try:
        result = run_match("limit", 5, ["slow_thinker", "random", "random"], pool, "clock-out")
    finally:
        pool.close()
    fault = result.faults[0]
    assert fault is not None and fault.kind == "timeout", fault
    found = re.fullmatch(r"no reply within (\d+) ms \(waited (\d+) ms\); clock 0 ms left of 300 "
                         r"after (\d+) decisions", fault.detail)
    assert found, fault.detail
    limit, waited, decisions = map(int, found.groups())
    assert limit < 300 and waited >= limit and 0 < decisions <= 15
    assert result.think[0].moves == decisions and result.faults[1:] == [None, None]


# ---- league files -------------------------------------------------------------------------
LEAGUE = """
name = "clocked"
game = "limit"
bots = ["random", "heuristic"]
players = 3
deals = 2
seed = 5
[limits]
decision_ms = 500
"""


def _league(tmp_path: Path, extra: str):
    path = tmp_path / "league.toml"
    path.write_text(LEAGUE + extra)
    return load_league(str(path))


def test_a_league_file_sets_a_clock_and_one_bots_odds(tmp_path):
    league = _league(tmp_path, "clock_ms = 60000\nincrement_ms = 500\nbank_ms = 1000\n"
                               "[limits.bots.heuristic]\ntime_odds = 0.5\n")
    assert (league.limits.clock_ms, league.limits.increment_ms, league.limits.bank_ms) == (
        60000, 500, 1000)
    assert league.limits.for_name("heuristic").clock_ms == 30000
    assert league.limits.for_name("random").clock_ms == 60000
    config = league.config()
    assert config["time_odds"] == {"heuristic": {"time_odds": 0.5}}
    assert config["limits"]["clock_ms"] == 60000
    plain = _league(tmp_path, "")
    assert "time_odds" not in plain.config(), "a league without odds keeps its stored identity"
    assert plain.limits.clock_ms == 0 and not plain.limits.timed


@pytest.mark.parametrize("extra,message", [
    ("increment_ms = 500\n", "set clock_ms too"),
    ("clock_ms = -1\n", "clock_ms' = -1 is below its minimum 0"),
    ("bank_ms = 99999999999\n", "above its maximum"),
    ("[limits.bots.heuristic]\ntime_odds = 0\n", "time_odds = 0 must be a number from 0.01"),
    ("[limits.bots.heuristic]\ntime_odds = 0.5\nclock_ms = 5\n", "not both"),
    ("[limits.bots.heuristic]\nclock_mz = 5\n", "unknown field(s) clock_mz"),
    ("[limits.bots.nobody]\ntime_odds = 2\n", "'nobody' is not in 'bots'"),
    ("[limits.bots.heuristic]\nincrement_ms = 5\n", "set clock_ms too"),
])
def test_a_bad_clock_is_refused_naming_the_field(tmp_path, extra, message):
    with pytest.raises(LeagueFileError) as caught:
        _league(tmp_path, extra)
    assert message in str(caught.value)


# ---- the search bot's use of its clock ------------------------------------------------------
def _search_bot(game: str, decision_ms: int, clock: dict):
    from bots.search_bot import SearchBot

    bot = SearchBot(ms=100, share=0.25)
    bot.on_start({"match_id": "m", "seat": 0, "game": game, "players": 2,
                  "limits": {"decision_ms": decision_ms, "cpu_s": 60}})
    bot.clock = {"clock_ms": None, "increment_ms": 0, "bank_ms": 0, **clock}
    return bot


def test_the_search_bot_spends_a_share_of_its_clock_and_keeps_clear_of_the_deadline():
    bot = _search_bot("target", 5000, {"clock_ms": 9000, "increment_ms": 100})
    first = bot.clock_budget_ms(5000, 4)
    assert first == pytest.approx(9000 / 18 + 80), "the clock over the decisions to come"
    assert bot.clock_budget_ms(5000, 16) == pytest.approx(2 * first), "more moves, more time"
    bot.decision = 16  # 2 of the expected 18 to go: no more than a fifth of the clock
    assert bot.clock_budget_ms(5000, 4) == pytest.approx(9000 / 5 + 80)
    # near the hard deadline it keeps a margin for the harness: 20 ms, or a tenth
    assert bot.clock_budget_ms(1000, 16) == pytest.approx(900)
    bot.clock = {"clock_ms": 15, "increment_ms": 0, "bank_ms": 0}
    assert bot.clock_budget_ms(15, 4) == 0.0, "a nearly spent clock: the default move at once"


def test_the_search_bot_spends_its_bank_over_the_match_and_without_one_its_usual_time():
    bot = _search_bot("target", 100, {"bank_ms": 3600})
    assert bot.clock_budget_ms(3700, 4) == pytest.approx(25 + 3600 / 18)
    plain = _search_bot("target", 100, {})
    before = time.perf_counter()
    deadline = plain.budget(100).deadline  # SEARCH_MS capped by SEARCH_SHARE: 25 ms - 5 ms safety
    after = time.perf_counter()
    assert before + 0.020 - 1e-9 <= deadline <= after + 0.020 + 1e-9
    bot.lengths["target"] = 30.0  # learned from the matches it played
    assert bot.clock_budget_ms(3700, 4) == pytest.approx(25 + 3600 / 30)


def test_the_protocol_docs_clock_example_is_what_the_harness_does():
    clock = SeatClock(Limits(decision_ms=1000, clock_ms=5000, increment_ms=200, bank_ms=500))
    rows = []
    for took in (300, 1400):
        rows.append((clock.act_fields()["clock_ms"], clock.act_fields()["bank_ms"],
                     clock.allowed_ms()))
        clock.charge(took)
    rows.append((clock.act_fields()["clock_ms"], clock.act_fields()["bank_ms"],
                 clock.allowed_ms()))
    assert rows == [(5000, 500, 1500), (4900, 500, 1500), (3700, 100, 1100)]
    doc = (Path(__file__).resolve().parent.parent / "PROTOCOL.md").read_text()
    assert f"no reply within 1100 ms (waited 1101 ms){clock.timeout_note()}" in doc


def test_a_league_resumed_with_other_odds_is_refused_but_a_new_clock_is_not(tmp_path, capsys):
    import typer

    from harness.cli.common import _check_identity
    from harness.store import Store

    store = Store(tmp_path / "results.db")
    stored = _league(tmp_path, "[limits.bots.heuristic]\ntime_odds = 0.5\n")
    store.register_league(stored.config(), stored.size())
    _check_identity(store, _league(tmp_path, "clock_ms = 9000\n[limits.bots.heuristic]\n"
                                             "time_odds = 0.5\n"), "league.toml")
    with pytest.raises(typer.Exit):
        _check_identity(store, _league(tmp_path, "[limits.bots.heuristic]\ntime_odds = 2\n"),
                        "league.toml")
    assert "time_odds {'heuristic': {'time_odds': 0.5}} -> {'heuristic': {'time_odds': 2.0}}" \
        in capsys.readouterr().err
