"""The ratings' sufficient statistics the store keeps (issue 45): folded in as
matches are stored, they rate exactly as the seat rows do, on every shape
of league; results files from before them get them on first writable open;
matches stored without them are still counted; reading writes nothing."""

from __future__ import annotations

import random
import sqlite3
from itertools import groupby
from operator import itemgetter
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import harness.store as store_module
from harness.cli import app
from harness.records import Fault, MatchResult, ThinkTime
from harness.stats.ratings import RowTuples, Tallies, comparisons, head_to_head, rating_fit
from harness.store import RATING_TABLES, Store
from tests.test_ratings import row, synthetic_matches


def save_rows(store: Store, league: str, rows: list[dict[str, Any]], seed: int = 0,
              prefix: str = "") -> None:
    """Store seat rows (as tests/test_ratings.py makes them) match by match
    through ``save_match``, with a fault in some seats and think times in
    most matches (none in some, as from a runner that does not time)."""
    rng = random.Random(seed)
    ordered = sorted(rows, key=itemgetter("match_id", "seat"))
    for number, (match_id, group) in enumerate(groupby(ordered, key=itemgetter("match_id"))):
        seats = list(group)
        labels = sorted({s["team"] for s in seats})
        individual = all(s["team"] == s["seat"] for s in seats)
        teams = None if individual else [[s["seat"] for s in seats if s["team"] == label]
                                         for label in labels]
        think = None if rng.random() < 0.2 else [
            ThinkTime(n, round(n * rng.uniform(1, 30), 3), round(rng.uniform(30, 90), 3))
            for n in (rng.randrange(0, 9) for _ in seats)]
        faults = [Fault("crash", 2, "x") if rng.random() < 0.03 else None for _ in seats]
        result = MatchResult(prefix + match_id, "limit", "1", number, [s["bot"] for s in seats],
                             [s["score"] for s in seats], [s["rank"] for s in seats], faults,
                             False, 9, 0.0, 0.1, teams, {"actions": []}, think=think)
        assert store.save_match(league, seats[0].get("deal", number % 7),
                                [s["bot"] for s in seats], result, None)


def tied(rows: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The rows with some teams' ranks shared (ties): a tie with the team just ahead."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for _, group in groupby(rows, key=itemgetter("match_id")):
        match = [dict(r) for r in group]
        if rng.random() < 0.3:
            worst = max(r["rank"] for r in match)
            for r in match:
                if r["rank"] == worst:
                    r["rank"] = worst - 1
        out += match
    return out


def copies(matches: int, seed: int) -> list[dict[str, Any]]:
    """Individual matches where one bot often holds two seats, and mixed
    partners (a+b against b+a, a+c against b+d) with ties."""
    rng = random.Random(seed)
    rows = []
    for m in range(matches):
        if m % 3 == 0:
            bots = rng.sample("abcd", 2)
            line_up = [bots[0], bots[1], bots[rng.randrange(2)]]
            ranks = rng.sample([1, 2, 3], 3) if m % 2 else [1, 1, 3]
            rows += [row(f"c{m:04d}", s, b, s, r, deal=m % 11) for s, (b, r) in
                     enumerate(zip(line_up, ranks))]
        else:
            line_up = [rng.choice("abcd") for _ in range(4)]
            first = rng.choice([1, 2])
            team_rank = {0: first, 1: 3 - first} if m % 5 else {0: 1, 1: 1}
            rows += [row(f"c{m:04d}", s, b, s % 2, team_rank[s % 2], deal=m % 11)
                     for s, b in enumerate(line_up)]
    for r in rows:
        r["score"] = float(4 - r["rank"])
    return rows


LEAGUES = {
    "four_seats": lambda: synthetic_matches({"a": 0.6, "b": 0.2, "c": 0.0, "d": -0.3, "e": -0.5},
                                            400, 4, seed=11, deals=23),
    "team_copies": lambda: synthetic_matches({"s": 0.5, "m": 0.0, "w": -0.5}, 150, 4, seed=12,
                                             teams=True, deals=9),
    "ties": lambda: tied(synthetic_matches({"a": 0.4, "b": 0.0, "c": -0.4}, 300, 3, seed=13,
                                           deals=17), seed=5),
    "copies_and_partners": lambda: copies(240, seed=14),
    "no_deal_column": lambda: synthetic_matches({"x": 0.3, "y": 0.0, "z": -0.3}, 120, 2, seed=15),
}


def assert_same_ratings(store: Store, league: str) -> Tallies:
    """The kept statistics rate exactly as the seat rows: the same comparisons
    (line-ups, pairs, blocks, counts, triples, order effect) and so the
    same fit, intervals, bootstrap and head-to-head; think times and counts too."""
    tallies = store.rating_tallies(league)
    assert tallies is not None

    def rows() -> RowTuples:
        return store.seat_tuples(league)

    kept, read = comparisons(tallies), comparisons(rows())
    assert kept.bots == read.bots and kept.blocks == read.blocks
    for name in ("lineups", "first", "second", "row", "block", "wins", "losses", "ties",
                 "triples", "triple_count", "order_effect"):
        assert np.array_equal(getattr(kept, name), getattr(read, name)), name
    fit, expected = rating_fit(tallies), rating_fit(rows())
    assert [(r.bot, r.games, r.faults) for r in fit.rows] == \
        [(r.bot, r.games, r.faults) for r in expected.rows]
    for got, want in zip(fit.rows, expected.rows):
        assert np.allclose([got.elo, got.elo_low, got.elo_high, got.avg_score, got.avg_rank],
                           [want.elo, want.elo_low, want.elo_high, want.avg_score, want.avg_rank],
                           rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.covariance, expected.covariance, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(fit.draws, expected.draws, rtol=0, atol=1e-9)
    (bots, rates, games), (bots_read, rates_read, games_read) = (head_to_head(tallies),
                                                               head_to_head(rows()))
    assert bots == bots_read and np.array_equal(games, games_read)
    assert np.array_equal(rates, rates_read, equal_nan=True)
    sql = store.db.execute(
        "SELECT s.bot, SUM(s.moves), SUM(s.think_ms), MAX(s.think_max_ms) FROM seats s "
        "JOIN matches m ON m.id = s.match_id WHERE m.league = ? AND s.moves > 0 "
        "GROUP BY s.bot", [league]).fetchall()
    think = store.think_times(league)
    assert sorted(think) == sorted(bot for bot, *_ in sql)
    for bot, moves, total, slowest in sql:
        assert think[bot][0] == moves and think[bot][2] == slowest
        assert think[bot][1] == pytest.approx(total / moves, rel=1e-12)
    assert store.league_match_count(league) == tuple(store.db.execute(
        "SELECT COUNT(*), SUM(faulted > 0) FROM matches WHERE league = ?", [league]).fetchone())
    return tallies


@pytest.mark.parametrize("shape", sorted(LEAGUES))
def test_kept_statistics_rate_exactly_as_the_seat_rows(tmp_path, monkeypatch, shape):
    monkeypatch.setattr(store_module, "FOLD_EVERY", 37)  # folded in many times, some left over
    store = Store(tmp_path / "r.db")
    save_rows(store, shape, LEAGUES[shape]())
    save_rows(store, "other", LEAGUES["four_seats"]()[:200], seed=1, prefix="o")  # more rowids
    folded, left = store.db.execute(
        "SELECT folded, (SELECT COUNT(*) FROM matches WHERE league = ? AND rowid > folded) "
        "FROM rating_leagues WHERE league = ?", [shape, shape]).fetchone()
    assert folded and left, "some matches folded in, some not yet"
    assert_same_ratings(store, shape)
    assert_same_ratings(Store(tmp_path / "r.db", readonly=True), shape)


def two_player(matches: int, deals: int) -> list[dict[str, Any]]:
    rows = synthetic_matches({"a": 0.5, "b": 0.1, "c": -0.2, "d": -0.4}, matches, 2, seed=21,
                             deals=deals)
    for r in rows:
        r["league"] = "pooled"
    return rows


def test_past_a_thousand_deal_groups_the_kept_pairs_pool_into_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "FOLD_EVERY", 500)
    store = Store(tmp_path / "r.db")
    rows = two_player(2600, 1300)
    save_rows(store, "pooled", rows[:1600])  # 800 deals: kept by deal
    assert store.db.execute("SELECT pooled FROM rating_leagues").fetchone() == (0,)
    assert_same_ratings(store, "pooled")
    save_rows(store, "pooled", rows[1600:])
    assert store.db.execute("SELECT pooled FROM rating_leagues").fetchone() == (1,)
    assert not store.db.execute("SELECT COUNT(*) FROM rating_deals").fetchone()[0]
    keys = {k for (k,) in store.db.execute("SELECT DISTINCT key FROM rating_pairs")}
    assert max(keys) < 1000 and len(keys) > 700, "pairs keyed by block"
    tallies = assert_same_ratings(store, "pooled")
    assert tallies.deals is None


def test_unpooled_statistics_with_more_groups_left_over_still_rate_exactly(tmp_path,
                                                                          monkeypatch):
    """The kept pairs by deal, and more matches left over than make a
    thousand groups: the reader pools them as the seat rows are."""
    monkeypatch.setattr(store_module, "FOLD_EVERY", 900)
    store = Store(tmp_path / "r.db")
    save_rows(store, "pooled", two_player(1700, 1200))  # folded: the first 901 matches
    assert store.db.execute("SELECT pooled, folded FROM rating_leagues").fetchone() == (0, 901)
    tallies = assert_same_ratings(store, "pooled")
    assert tallies.deals is not None and len(tallies.deals) == 1200


def drop_rating_tables(path) -> None:
    with sqlite3.connect(path) as conn:
        for name in RATING_TABLES:
            conn.execute(f"DROP TABLE {name}")


def test_a_results_file_from_before_them_gets_them_on_first_writable_open(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(store_module, "FOLD_EVERY", 50)
    store = Store(tmp_path / "r.db")
    save_rows(store, "four_seats", LEAGUES["four_seats"]())
    save_rows(store, "copies", LEAGUES["copies_and_partners"]())
    kept = {league: store.rating_tallies(league) for league in ("four_seats", "copies")}
    store.db.conn.close()
    drop_rating_tables(tmp_path / "r.db")
    old = Store(tmp_path / "r.db", readonly=True)
    assert "rating_meta" not in old.db.table_names(), "a read-only open writes nothing"
    assert isinstance(old.ratings_source("four_seats"), Tallies), "few matches: folded on read"
    assert_same_ratings(old, "four_seats")
    think = old.think_times("four_seats")
    monkeypatch.setattr(store_module, "TAIL_LIMIT", 100)
    rows = old.ratings_source("four_seats")
    assert isinstance(rows, RowTuples), "many: the seat rows (in the order stored: no sort)"
    assert rating_fit(rows).rows == rating_fit(old.seat_tuples("four_seats")).rows
    assert old.think_times("four_seats").keys() == think.keys()
    for bot, (moves, mean, slowest) in old.think_times("four_seats").items():
        assert (moves, slowest) == (think[bot][0], think[bot][2])
        assert mean == pytest.approx(think[bot][1], rel=1e-12)
    assert old.league_match_count("four_seats") == (400, old.db.execute(
        "SELECT SUM(faulted > 0) FROM matches WHERE league = 'four_seats'").fetchone()[0])
    monkeypatch.setattr(store_module, "FOLD_CHUNK", 130)  # upgraded a few transactions at a time
    upgraded = Store(tmp_path / "r.db")
    for league in ("four_seats", "copies"):
        assert upgraded.rating_tallies(league) == kept[league], "the same sums as kept live"
        assert upgraded.db.execute("SELECT folded FROM rating_leagues WHERE league = ?",
                                   [league]).fetchone()[0] == upgraded.db.execute(
            "SELECT MAX(rowid) FROM matches WHERE league = ?", [league]).fetchone()[0]
        assert_same_ratings(upgraded, league)


def test_matches_stored_without_them_are_counted_and_folded_in_later(tmp_path, monkeypatch):
    """An older harness stores matches without folding them in: the readers
    read them as left over; a count that no longer adds up (a match gone)
    sends them back to the seat rows, and the next writable open folds the
    league again."""
    monkeypatch.setattr(store_module, "FOLD_EVERY", 40)
    path = tmp_path / "r.db"
    store = Store(path)
    rows = LEAGUES["ties"]()
    save_rows(store, "ties", [r for r in rows if r["match_id"] < "m00250"])
    with sqlite3.connect(path) as conn:  # the older harness: plain rows, nothing folded in
        for match_id, group in groupby([r for r in rows if r["match_id"] >= "m00250"],
                                       key=itemgetter("match_id")):
            seats = list(group)
            conn.execute("INSERT INTO matches (id, league, deal, faulted) VALUES (?, 'ties', ?, 0)",
                         [match_id, seats[0]["deal"]])
            conn.executemany(
                "INSERT INTO seats (match_id, seat, bot, team, score, rank) VALUES (?, ?, ?, ?, ?, ?)",
                [(match_id, s["seat"], s["bot"], s["team"], s["score"], s["rank"]) for s in seats])
    assert_same_ratings(Store(path, readonly=True), "ties")
    with sqlite3.connect(path) as conn:  # a folded match gone: the kept sums no longer add up
        conn.execute("DELETE FROM seats WHERE match_id = 'm00003'")
        conn.execute("DELETE FROM matches WHERE id = 'm00003'")
    reader = Store(path, readonly=True)
    assert isinstance(reader.ratings_source("ties"), RowTuples)
    assert reader.league_match_count("ties")[0] == 299
    assert_same_ratings(Store(path), "ties")  # folded again on open


def test_table_reads_the_kept_statistics_and_writes_nothing(tmp_path, monkeypatch):
    store = Store(tmp_path / "r.db")
    store.register_league({"name": "cli", "game": "limit"}, 400)
    save_rows(store, "cli", LEAGUES["four_seats"]())
    store.db.conn.close()
    command = ["table", "cli", "--db", str(tmp_path / "r.db"), "--matrix", "--json"]
    with monkeypatch.context() as rows_only:
        rows_only.setattr(Store, "rating_tallies", lambda self, league: None)
        expected = CliRunner().invoke(app, command)
    assert expected.exit_code == 0, expected.output

    def no_seat_rows(self: Store, league: str) -> RowTuples:
        raise AssertionError("the table read seat rows")

    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setattr(Store, "seat_tuples", no_seat_rows)
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.stdout == expected.stdout
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
