"""The results store: per-seat think times, and results files from before
they were kept."""

from __future__ import annotations

import sqlite3

from harness.records import MatchResult, ThinkTime
from harness.store import Store


def result(match_id: str, think: list[ThinkTime] | None) -> MatchResult:
    return MatchResult(match_id, "limit", "1", 1, ["a", "b", "c"], [3.0, 2.0, 1.0], [1, 2, 3],
                       [None, None, None], False, 9, 0.0, 0.5, None, {"actions": []}, think=think)


def test_think_times_add_up_per_bot_over_matches(tmp_path):
    store = Store(tmp_path / "r.db")
    for i, slow in enumerate((40.0, 90.0)):
        think = [ThinkTime(), ThinkTime(), ThinkTime()]
        for ms in (10.0, slow):
            think[0].add(ms)
        think[1].add(1.0)
        store.save_match("l", i, ["a@1", "b@1", "c@1"], result(f"m{i}", think), None)
    times = store.think_times("l")
    assert times["a@1"] == (4, (10 + 40 + 10 + 90) / 4, 90.0)
    assert times["b@1"] == (2, 1.0, 1.0)
    assert "c@1" not in times, "a bot never asked has no time"


def test_a_results_file_from_before_think_times_is_upgraded_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.db"
    store = Store(path)
    store.save_match("l", 0, ["a@1", "b@1", "c@1"], result("old", None), None)
    store.db.conn.close()
    with sqlite3.connect(path) as conn:  # the seats table as it was before
        for column in ("moves", "think_ms", "think_max_ms"):
            conn.execute(f"ALTER TABLE seats DROP COLUMN {column}")
    assert Store(path, readonly=True).think_times("l") == {}, "read-only: no times, no error"
    upgraded = Store(path)
    upgraded.save_match("l", 1, ["a@1", "b@1", "c@1"], result("new", [ThinkTime(2, 8.0, 5.0)] * 3),
                        None)
    assert upgraded.league_match_count("l") == (2, 0)
    assert upgraded.think_times("l")["a@1"] == (2, 4.0, 5.0)
