"""League files: validation that names the field, and the lazy schedule."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import shutil
from collections import Counter
from pathlib import Path

import pytest

from harness.league import LeagueFileError, load_league
from harness.limits import DEFAULT_LIMITS, Limits

GOOD = """
name = "t"
game = "limit"
bots = ["random", "heuristic"]
players = 3
deals = 4
seed = 5
[limits]
decision_ms = 500
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "league.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "change,field",
    [
        (("game = \"limit\"", "game = \"chess\""), "game"),
        (("\"heuristic\"]", "\"nobody\"]"), "bots"),
        (("players = 3", "players = 9"), "players"),
        (("players = 3", "players = 0"), "players"),
        (("deals = 4", "deals = -1"), "deals"),
        (("deals = 4", "deals = \"many\""), "deals"),
        (("decision_ms = 500", "decision_ms = 0"), "decision_ms"),
        (("decision_ms = 500", "decision_mx = 5"), "limits.decision_mx"),
        (("seed = 5", "sede = 5"), "sede"),
        (("bots = [\"random\", \"heuristic\"]", "bots = [\"random\"]"), "bots"),
        (("name = \"t\"\n", ""), "name"),
    ],
)
def test_broken_league_files_name_the_field(tmp_path, change, field):
    old, new = change
    assert old in GOOD
    with pytest.raises(LeagueFileError, match=field):
        load_league(write(tmp_path, GOOD.replace(old, new)))


def test_not_toml_and_missing_files_are_clear(tmp_path):
    with pytest.raises(LeagueFileError, match="not valid TOML"):
        load_league(write(tmp_path, "name = "))
    with pytest.raises(LeagueFileError, match="no league file"):
        load_league("no-such-league")


def test_schedule_is_duplicate_deals_in_every_rotation(tmp_path):
    league = load_league(write(tmp_path, GOOD))
    matches = list(league.schedule())
    assert len(matches) == league.size() == 4 * 2 * 3  # deals x tables x rotations
    assert len({m.match_id for m in matches}) == len(matches)
    for deal in range(4):
        seatings = [m.seats for m in matches if m.deal == deal]
        seat_counts = Counter((seat, bot) for seats in seatings for seat, bot in enumerate(seats))
        # every bot meets the deal from every seat
        assert {seat for seat, bot in seat_counts if bot.startswith("heuristic")} == {0, 1, 2}
    assert len({league.deal_seed(deal, "00" * 32) for deal in range(4)}) == 4, "each deal its cards"
    again = list(load_league(write(tmp_path, GOOD)).schedule())
    assert [m.match_id for m in again] == [m.match_id for m in matches], "stable IDs"


def test_combinations_when_enough_bots(tmp_path):
    text = GOOD.replace('["random", "heuristic"]', '["random", "heuristic", "heuristic_half", "faulty_exit"]')
    league = load_league(write(tmp_path, text), [Path(__file__).parent / "bots"])
    assert league.table_count() == 4  # C(4, 3)
    assert league.size() == 4 * 4 * 6  # balanced: every order of 3 bots
    cyclic = load_league(write(tmp_path, text.replace("seed = 5", 'seed = 5\nrotation = "cyclic"')),
                         [Path(__file__).parent / "bots"])
    assert cyclic.size() == 4 * 4 * 3


def test_schedule_is_lazy_for_huge_leagues(tmp_path):
    league = load_league(write(tmp_path, GOOD.replace("deals = 4", "deals = 1000000")))
    first = list(itertools.islice(league.schedule(), 10))
    assert len(first) == 10
    assert league.size() == 6_000_000


def test_team_league_pairs_copies_or_mixes(tmp_path):
    text = GOOD.replace('"limit"', '"tenos_square"').replace("players = 3", "players = 4")
    copies = load_league(write(tmp_path, text))
    seatings = {m.seats for m in copies.schedule() if m.deal == 0}
    for seats in seatings:
        assert seats[0] == seats[2] and seats[1] == seats[3], "partners are copies"
    assert len(seatings) == 2
    mixed = load_league(write(tmp_path, text.replace("seed = 5", 'seed = 5\npartners = "mixed"')))
    assert any(s[0] != s[2] for s in (m.seats for m in mixed.schedule()))


LEAGUE_FILES = sorted((Path(__file__).resolve().parent.parent / "leagues").glob("*.toml"))


@pytest.mark.slow
@pytest.mark.parametrize("path", LEAGUE_FILES, ids=[p.stem for p in LEAGUE_FILES])
def test_shipped_league_runs_to_a_rating_table(path, tmp_path):
    """Each shipped league loads, and one deal of it, each table in one
    seating, plays with real bot processes to a rating table with every bot
    in it (the seatings themselves: tests/test_fair_tables.py)."""
    from harness.runner import run_league
    from harness.stats.ratings import rate
    from harness.store import Store

    league = load_league(str(path))
    assert league.size() >= 50, "a shipped league should say something"
    league = dataclasses.replace(league, deals=1, rotation="none")
    store = Store(tmp_path / "r.db")
    summary = run_league(league, store, workers=1, engine="inline")
    assert summary.played == league.size() and summary.faulted == 0
    table = rate(list(store.seat_rows(league.name)))
    assert {row.bot.split("@")[0] for row in table} == set(league.bots)


def test_a_gauntlet_schedules_only_tables_with_a_challenger(tmp_path):
    text = GOOD.replace('bots = ["random", "heuristic"]',
                        'bots = ["random", "heuristic", "js_random", "heuristic_half"]\n'
                        'format = "gauntlet"\nchallengers = ["heuristic_half"]')
    league = load_league(write(tmp_path, text), [Path(__file__).parent / "bots"])
    tables = list(league.tables())
    assert tables and all("heuristic_half" in t for t in tables)
    assert len(tables) == league.table_count() == 3  # C(3, 2) partners of the challenger
    assert league.size() == 4 * 3 * 6  # deals x tables x balanced seatings
    assert all("heuristic_half@" in ",".join(m.seats) for m in league.schedule())
    bad = text.replace('challengers = ["heuristic_half"]', 'challengers = ["nobody"]')
    with pytest.raises(LeagueFileError, match="challengers"):
        load_league(write(tmp_path, bad), [Path(__file__).parent / "bots"])


def test_mixed_partners_play_every_partnership(tmp_path):
    text = """
name = "mixed"
game = "tenos_square"
bots = ["random", "heuristic", "js_random", "heuristic_half"]
players = 4
deals = 1
partners = "mixed"
seed = 2
"""
    league = load_league(write(tmp_path, text), [Path(__file__).parent / "bots"])
    teams = league.teams()
    (table,) = list(league.tables())
    pairings = set()
    for seats in league.seatings(table):
        pairings.add(frozenset(frozenset(seats[s] for s in team) for team in teams))
    assert len(pairings) == 3, "A+B/C+D, A+C/B+D and A+D/B+C"
    assert len(league.seatings(table)) == 24  # balanced: every seating, so each partnership 8 times


# ---- limits: one definition, in milliseconds all the way to the bot -----------------------
def test_a_loaded_league_cannot_be_changed(tmp_path):
    league = load_league(write(tmp_path, GOOD))
    for name, value in (("deals", 1), ("seed", None), ("limits", Limits()), ("bots", [])):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(league, name, value)
    assert (league.deals, league.seed, league.limits.decision_ms) == (4, 5, 500)
    assert len(league.bots) == 2


def test_a_league_file_without_limits_gets_the_one_definitions_defaults(tmp_path):
    league = load_league(write(tmp_path, GOOD.replace("[limits]\ndecision_ms = 500\n", "")))
    assert league.limits == DEFAULT_LIMITS and league.limits.decision_ms == 1000


def test_a_bot_is_told_the_league_files_milliseconds_exactly(tmp_path):
    """1005 ms in the league file is 1005 in the bot's ``start`` message (as
    the bot decoded it) and in each ``act``'s time_left_ms: no trip through
    seconds on the way (int(1005 / 1000 * 1000) is 1004)."""
    from harness.match import BotPool, run_match
    from harness.proc.sandbox import Sandbox

    record = tmp_path / "starts.txt"
    shutil.copyfile(Path(__file__).parent / "bots" / "faulty.py", tmp_path / "faulty.py")
    (tmp_path / "told.toml").write_text(
        f'name = "told"\ncommand = ["{{python}}", "faulty.py", "record_start"]\n'
        f'files = ["faulty.py"]\n[env]\nRECORD_START_FILE = "{record}"\n')
    text = GOOD.replace('["random", "heuristic"]', '["told", "random"]').replace(
        "decision_ms = 500", "decision_ms = 1005\nstartup_ms = 4321")
    league = load_league(write(tmp_path, text), [tmp_path])
    assert league.limits.decision_ms == 1005
    pool = BotPool(league.specs, league.limits, Sandbox("none"))
    sent: list[dict] = []
    pool.trace = lambda way, bot, message: sent.append(message) if way == "to" else None
    try:
        result = run_match("limit", 1, ["told", "random", "random"], pool, "told-ms")
    finally:
        pool.close()
    assert result.faults == [None] * 3
    start = ast.literal_eval(record.read_text().splitlines()[0])
    assert start["limits"]["decision_ms"] == 1005 and type(start["limits"]["decision_ms"]) is int
    assert start["limits"]["startup_ms"] == 4321
    times = [m["time_left_ms"] for m in sent if m.get("type") == "act"]
    assert times and set(times) == {1005}
