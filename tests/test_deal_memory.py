"""Issue 45: no bot process sees a deal twice. In a duplicate league one
table plays each deal from every seat; a process that played one seating
and remembers what was shown would know, in the next, its opponents' cards.

``deal_memory`` (tests/bots) remembers a fingerprint of every deal it is
dealt and crashes, writing RECOGNISED to stderr (stored with the fault),
when one comes back. Learning across different deals stays allowed: the
leagues here also check that its processes go on to play other deals."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harness.league import ScheduledMatch, load_league
from harness.match import BotPool, Limits, run_match
from harness.proc.catalog import discover
from harness.runner import _spread_deals, run_league
from harness.store import Store

TEST_BOTS = Path(__file__).parent / "bots"
BOTS = ["deal_memory", "random"]
DEALS = 3
# 3 players, 2 bots: tables (m, m, r) and (m, r, r), 3 rotations each, so
# deal_memory plays 9 seatings of each deal, 27 in all
SEATINGS_PER_DEAL = 9


def league_file(tmp_path: Path, name: str = "memory") -> str:
    """A duplicate league with secret deals (no seed), as a competition has."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\ngame = "limit"\nbots = ["deal_memory", "random"]\n'
                    f"players = 3\ndeals = {DEALS}\nrotation = \"cyclic\"\n")
    return str(path)


def recognitions(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT fault_kind, fault_stderr FROM seats "
                            "WHERE fault_kind IS NOT NULL").fetchall()
    return [f"{kind}: {stderr}" for kind, stderr in rows]


def assert_never_recognised(db: Path, played: int, league_size: int) -> None:
    faults = recognitions(db)
    assert not faults, f"{len(faults)} fault(s), the first: {faults[0]}"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == league_size
    assert played <= league_size


# ---- the pool ---------------------------------------------------------------------
def test_a_pool_never_hands_a_process_a_deal_it_has_played():
    """Three seatings of one deal take three processes of the bot; each goes
    on to the next deal, so three processes play all of it."""
    pool = BotPool(discover([TEST_BOTS]), Limits(decision_ms=2000, startup_ms=10000))
    seatings = [["deal_memory", "random", "random"], ["random", "deal_memory", "random"],
                ["random", "random", "deal_memory"]]
    try:
        for seed in (11, 12, 13):
            for bots in seatings:
                result = run_match("limit", seed, bots, pool, f"m-{seed}-{bots.index('deal_memory')}")
                assert result.faults == [None, None, None], result.faults
        assert pool.starts["deal_memory"] == 3
        assert pool.starts["random"] == 6
        # four players on the same seed: limit deals them the same cards
        result = run_match("limit", 11, ["deal_memory", "random", "random", "random"], pool, "four")
        assert not any(result.faults)
        assert (pool.starts["deal_memory"], pool.starts["random"]) == (4, 9)
        # the same seed in another game is another deal
        result = run_match("tateyoko", 11, ["random", "random", "random"], pool, "other game")
        assert not any(result.faults) and pool.starts["random"] == 9
    finally:
        pool.close()


def test_spread_deals_keeps_the_matches_and_puts_different_deals_side_by_side():
    def match(deal: int, seating: int) -> ScheduledMatch:
        return ScheduledMatch(f"{deal}-{seating}", deal, (str(seating),))

    schedule = [match(deal, seating) for deal in range(7) for seating in range(3)]
    del schedule[4]  # 1-1, stored by an earlier run: deal 1 has two seatings left
    spread = [m.match_id for m in _spread_deals(iter(schedule), 3)]
    assert sorted(spread) == sorted(m.match_id for m in schedule)
    assert spread == ["0-0", "1-0", "2-0", "0-1", "1-2", "2-1", "0-2", "2-2",
                      "3-0", "4-0", "5-0", "3-1", "4-1", "5-1", "3-2", "4-2", "5-2",
                      "6-0", "6-1", "6-2"]
    assert list(_spread_deals(iter([]), 4)) == []


# ---- leagues ----------------------------------------------------------------------
@pytest.mark.parametrize("workers,in_flight", [(1, 1), (1, 2), (2, 1)])
def test_an_inline_league_never_deals_a_process_a_deal_twice(tmp_path, workers, in_flight):
    league = load_league(league_file(tmp_path), [TEST_BOTS])
    assert league.size() == 6 * DEALS
    db = tmp_path / "r.db"
    summary = run_league(league, Store(db), workers=workers, engine="inline",
                         concurrency=in_flight)
    assert (summary.played, summary.faulted, summary.errors) == (league.size(), 0, 0)
    assert_never_recognised(db, summary.played, league.size())
    # the processes went on to other deals: far fewer starts than seats played
    seats_played = 3 * league.size()
    assert summary.process_starts <= workers * 2 * SEATINGS_PER_DEAL + 4, summary.process_starts
    assert summary.process_starts < seats_played / 2


def test_a_run_stopped_after_some_matches_and_resumed_never_deals_a_process_a_deal_twice(
        tmp_path):
    league = load_league(league_file(tmp_path), [TEST_BOTS])
    db = tmp_path / "r.db"
    first = run_league(league, Store(db), workers=1, engine="inline", concurrency=2,
                       max_matches=7)
    assert first.played == 7
    second = run_league(league, Store(db), workers=1, engine="inline", concurrency=1)
    assert (second.already_done, second.played) == (7, league.size() - 7)
    assert_never_recognised(db, first.played + second.played, league.size())


@pytest.mark.slow
def test_a_ray_league_on_two_workers_never_deals_a_process_a_deal_twice(tmp_path):
    """Part on Ray, then the rest (a resume) on Ray again: each run's
    workers start their own processes."""
    league = load_league(league_file(tmp_path), [TEST_BOTS])
    db = tmp_path / "r.db"
    first = run_league(league, Store(db), workers=2, engine="ray", concurrency=2, max_matches=10)
    second = run_league(league, Store(db), workers=2, engine="ray", concurrency=1)
    assert first.played + second.played == league.size()
    assert (first.faulted, second.faulted, first.errors, second.errors) == (0, 0, 0, 0)
    assert_never_recognised(db, first.played + second.played, league.size())
