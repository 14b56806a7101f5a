"""`league sprt` end to end: paired deals played and stored like a league,
stopped by the test as soon as it has its answer, resumed without replaying."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from harness.cli import EXIT_USAGE, app
from harness.sprt_run import SEATINGS_PER_DEAL, SprtLeague

TEST_BOTS = Path(__file__).parent / "bots"


def sprt(*args: str, code: int = 0):
    result = CliRunner().invoke(app, ["sprt", *args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def test_a_clear_difference_stops_early_and_resumes_without_replaying(tmp_path):
    db = str(tmp_path / "s.db")
    first = sprt("target", "random", "heuristic", "--elo1", "50", "--max-pairs", "400",
                 "--db", db, "--engine", "inline").stdout
    assert "verdict: H1: heuristic is better than random" in first
    deals = int(first.split("pairs played: ")[1].split(" in ")[1].split()[0])
    assert deals < 200, "it stopped long before the pairs ran out"
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    assert deals * 2 * SEATINGS_PER_DEAL <= stored <= (deals + 8) * 2 * SEATINGS_PER_DEAL
    again = sprt("target", "random", "heuristic", "--elo1", "50", "--max-pairs", "400",
                 "--db", db, "--engine", "inline").stdout
    assert again == first, "a decided test is reported again, nothing replayed"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == stored


def test_twins_share_cards_seat_and_field(tmp_path):
    from harness.catalog import resolve
    from harness.match import Limits
    from harness.sprt_run import sprt_league

    league: SprtLeague = sprt_league("limit", resolve("random"), resolve("heuristic"),
                                     [resolve("random")], 3, 10, Limits())
    league.secret = "00" * 32
    matches = list(league.schedule())
    assert len(matches) == league.size() == 5 * SEATINGS_PER_DEAL * 2
    assert len({m.match_id for m in matches}) == len(matches)
    for a, b in zip(matches[::2], matches[1::2]):
        assert a.deal == b.deal and a.seed == b.seed
        differ = [s for s in range(3) if a.seats[s] != b.seats[s]]
        assert len(differ) == 1 and b.seats[differ[0]].startswith("heuristic@")


def test_bad_sprt_input_is_refused():
    assert "same bot" in sprt("target", "random", "random", code=EXIT_USAGE).stderr
    assert "elo0 must be below" in sprt("target", "random", "heuristic", "--elo0", "5",
                                        "--elo1", "0", code=EXIT_USAGE).stderr
