"""The live ladder loses nothing and doubles nothing, whatever is killed.

A real `league serve` (tests.serve_site) plays its ladder (target at three
players: the bosses and one uploaded bot) while the tests SIGKILL, at
chosen moments, the server's whole process group, one Ray worker of its
arena, or a whole node of a two-node Ray cluster it plays on. Then they
read the SQLite file itself, not the server:

- every match is stored once and whole: one ``matches`` row per ID, one
  ``seats`` row per player, one ``replays`` row;
- every group marked done holds exactly its seatings' matches (the IDs the
  ladder derives from its pool, line-up and group number), and no match
  lies outside a group;
- every group pending at a kill is finished after the restart (or after
  the dead worker's replacement), and the ladder goes on storing matches;
- no bot process outlives the process that started it.

The moments are chosen from what the server says (/api/v1/health) and
what the file holds, never from a clock. A kill between a group's stored
matches and its "done" mark is too short a window to hit by polling, so
one test leaves the file in exactly the state such a kill leaves (a group
pending with all, or some, of its matches stored) and restarts on it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from harness.league import League
from harness.limits import Limits
from tests.helpers import wait_until
from tests.serve_site import RANDOM_BOT, Site, bot_zip, make_site
from tests.test_cluster import cluster, kill_node  # noqa: F401 - cluster: a fixture

pytestmark = pytest.mark.slow  # each starts servers and plays dozens of matches

SLOW_S = 240.0  # a generous ceiling for waits that span bot start-ups and Ray's


# ---- the site and its bot ----------------------------------------------------------
def marked_bot_zip(name: str, marker: str) -> bytes:
    """The random bot with ``marker`` on its command line (bwrap's and its own)."""
    return bot_zip(name, RANDOM_BOT, marker=marker)


def playing_site(folder: Path, marker: str, play_lines: str = "", engine: str = "inline") -> Site:
    """A ladder that plays on ``engine``, with ``play_lines`` added to its
    [play] table (the template's last), its server started and the marked
    bot uploaded."""
    site = make_site(folder, play=True, engine=engine)
    # random and heuristic as bosses: search thinks 100 ms a move, and what is
    # tested here is what a kill does to groups in flight, not their strength
    site.ladder.write_text(site.ladder.read_text() + 'bosses = ["random", "heuristic"]\n'
                           + play_lines)
    site.add_user("alice")
    site.start()
    answer = site.upload("alice", "pick", marked_bot_zip("pick", marker))
    assert answer.status_code == 201, answer.text
    assert site.verdict("alice", "pick", 1)["state"] == "valid"
    return site


@pytest.fixture
def marker(request: pytest.FixtureRequest) -> Iterator[str]:
    word = f"durable-{os.getpid()}-{re.sub(r'[^A-Za-z0-9]', '', request.node.name)}"
    yield word
    for process in marked(word):  # teardown: whatever this test left, by pid
        try:
            process.kill()
        except psutil.Error:
            pass


def play_status(site: Site) -> dict[str, Any]:
    answer = httpx.get(f"{site.url}/api/v1/health", timeout=10)
    answer.raise_for_status()
    return dict(answer.json()["play"])


# ---- processes ---------------------------------------------------------------------
def marked(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["status"] != psutil.STATUS_ZOMBIE and \
                any(marker in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return found


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running (is_running also tells a reused pid apart)."""
    living = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                living.append(process)
        except psutil.Error:
            pass
    return living


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def kill_server(site: Site, marker: str) -> int:
    """SIGKILL the server's process group, then wait until every process it
    had started (a snapshot taken just before) and every process of the
    marked bot (started after the snapshot too) is gone; how many it had."""
    assert site.process is not None
    started = descendants(site.process.pid)
    site.kill()
    wait_until(lambda: not alive(started) and not marked(marker),
               "the server's bots and workers to die with it",
               describe=lambda: [p.cmdline()[-3:] for p in alive(started) + marked(marker)])
    return len(started)


# ---- the file ----------------------------------------------------------------------
def rows(db: Path, query: str, *values: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db, timeout=30) as conn:
        return conn.execute(query, values).fetchall()


def match_count(db: Path) -> int:
    return int(rows(db, "SELECT COUNT(*) FROM matches")[0][0])


def pending_groups(db: Path) -> set[int]:
    return {g for (g,) in rows(db, "SELECT id FROM ladder_groups WHERE state = 'pending'")}


def done(db: Path, groups: set[int]) -> bool:
    states = dict(rows(db, "SELECT id, state FROM ladder_groups"))
    return all(states[g] == "done" for g in groups)


def group_match_ids(db: Path, group: int) -> list[str]:
    pool = rows(db, "SELECT pool FROM ladder_groups WHERE id = ?", group)[0][0]
    return [m for (m,) in rows(db, "SELECT id FROM matches WHERE league = ? AND deal = ?",
                                pool, group)]


def expected_ids(pool: str, lineup: list[str], group: int) -> list[str]:
    """The IDs the ladder gives a group's matches (harness.serve.ladder_run._dispatch)."""
    _, game, players = pool.split(":")
    league = League(name=pool, game=game, bots=[], players=int(players.rstrip("p")), deals=0,
                    rotation="balanced", partners="copies", seed=None, limits=Limits())
    ids, seen = [], Counter[tuple[str, ...]]()
    for seats in league.seatings(lineup):
        again = seen[seats]
        seen[seats] += 1
        ids.append(league.match_id(seats, group, f"again{again}" if again else ""))
    return ids


def check_exactly_once(db: Path) -> dict[str, int]:
    """Every assertion of the module's docstring on the file; its figures."""
    total, distinct = rows(db, "SELECT COUNT(*), COUNT(DISTINCT id) FROM matches")[0]
    assert total == distinct, f"{total - distinct} matches stored twice"
    torn = rows(db, "SELECT m.id, m.seats, (SELECT COUNT(*) FROM seats s WHERE s.match_id = m.id),"
                    " (SELECT COUNT(*) FROM replays r WHERE r.match_id = m.id) FROM matches m")
    half = [(m, n, r) for m, seats, n, r in torn if n != len(json.loads(seats)) or r != 1]
    assert not half, f"half-stored matches (id, seat rows, replay rows): {half[:5]}"
    orphans = rows(db, "SELECT COUNT(*) FROM seats WHERE match_id NOT IN (SELECT id FROM matches)"
                       " UNION ALL SELECT COUNT(*) FROM replays WHERE match_id NOT IN "
                       "(SELECT id FROM matches)")
    assert [n for (n,) in orphans] == [0, 0], "seat or replay rows of no match"
    groups = rows(db, "SELECT id, pool, lineup, state FROM ladder_groups")
    for group, pool, lineup, state in groups:
        stored = sorted(group_match_ids(db, group))
        if state == "done":
            assert stored == sorted(expected_ids(pool, json.loads(lineup), group)), \
                f"group {group} ({state}) holds {len(stored)} matches, not its seatings"
        else:  # a group still playing at the stop: some of its own matches, or none
            assert set(stored) <= set(expected_ids(pool, json.loads(lineup), group)), group
    outside = rows(db, "SELECT COUNT(*) FROM matches WHERE deal NOT IN "
                       "(SELECT id FROM ladder_groups)")[0][0]
    assert outside == 0, f"{outside} matches of no group"
    return {"matches": total, "duplicates": total - distinct,
            "groups_done": sum(1 for g in groups if g[3] == "done"),
            "groups_pending": sum(1 for g in groups if g[3] == "pending")}


# ---- 1. the server killed, again and again ------------------------------------------
def test_sigkill_of_the_server_mid_run_loses_and_doubles_nothing(tmp_path: Path,
                                                                 marker: str) -> None:
    """Three kills: mid-run (groups done and in flight), during the resend of
    the groups the first kill left (before they are done), and mid-run again
    once those are done and more are."""
    site = playing_site(tmp_path, marker)
    figures: list[str] = []

    def mid_run() -> bool:
        status = play_status(site)
        return status["groups_done"] >= 2 and status["groups_in_flight"] > 0

    def kill(number: int) -> tuple[int, set[int]]:
        started = kill_server(site, marker)
        count, left = match_count(site.db), pending_groups(site.db)
        figures.append(f"kill {number}: {count} matches stored, {len(left)} groups pending, "
                       f"{started} processes ended with it")
        assert left, "a kill mid-run leaves groups pending"
        site.start()
        return count, left

    def finished(left: set[int], count: int, what: str) -> None:
        wait_until(lambda: done(site.db, left) and match_count(site.db) > count,
                   f"the groups pending at {what} to be finished, and more matches stored",
                   SLOW_S, interval=0.2)

    try:
        wait_until(mid_run, "groups done and others in flight", SLOW_S, interval=0.2)
        first_count, first_left = kill(1)
        # at once: the restart's first groups in flight are the first kill's, sent again
        wait_until(lambda: play_status(site)["groups_in_flight"] > 0, "the resend", SLOW_S,
                   interval=0.05)
        second_count, second_left = kill(2)
        still = first_left & second_left
        figures.append(f"{len(still)} of kill 1's groups were still pending at kill 2")
        assert second_count >= first_count
        assert first_left <= second_left | done_ids(site.db), "a pending group vanished"
        finished(first_left | second_left, second_count, "kills 1 and 2")
        wait_until(mid_run, "groups done and others in flight", SLOW_S, interval=0.2)
        third_count, third_left = kill(3)
        assert third_count > second_count
        finished(third_left, third_count, "kill 3")
    finally:
        site.stop()
    found = check_exactly_once(site.db)
    print("\n".join(figures), found)
    assert found["duplicates"] == 0 and found["matches"] > third_count


def done_ids(db: Path) -> set[int]:
    return {g for (g,) in rows(db, "SELECT id FROM ladder_groups WHERE state = 'done'")}


def test_a_restart_resends_a_pending_group_without_storing_its_matches_twice(
        tmp_path: Path, marker: str) -> None:
    """The file a kill leaves between a group's matches and its "done" mark:
    group ``whole`` pending with all its matches stored, group ``part`` with
    its last ones not stored yet. The restart sends both again; the store
    refuses every match it holds, and stores the missing ones once."""
    site = playing_site(tmp_path, marker)
    try:
        wait_until(lambda: play_status(site)["groups_done"] >= 3, "three groups done", SLOW_S,
                   interval=0.2)
    finally:
        site.stop()
    check_exactly_once(site.db)
    whole, part = sorted(done_ids(site.db))[-2:]
    lost = rows(site.db, "SELECT id FROM matches WHERE deal = ? ORDER BY rowid DESC LIMIT 3",
                part)
    with sqlite3.connect(site.db) as conn:
        conn.execute("UPDATE ladder_groups SET state = 'pending', matches = 0 WHERE id IN (?, ?)",
                     [whole, part])
        for table, column in (("seats", "match_id"), ("replays", "match_id"),
                              ("decision_stderr", "match_id"), ("end_faults", "match_id"),
                              ("matches", "id")):
            if rows(site.db, "SELECT 1 FROM sqlite_master WHERE name = ?", table):
                conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", lost)
    count = match_count(site.db)
    site.start()
    try:
        wait_until(lambda: done(site.db, {whole, part}), "the resent groups to be done", SLOW_S,
                   interval=0.2)
    finally:
        kill_server(site, marker)
    stored_by = dict(rows(site.db, "SELECT id, matches FROM ladder_groups WHERE id IN (?, ?)",
                          whole, part))
    assert stored_by == {whole: 0, part: len(lost)}, "only the missing matches were stored"
    assert {m for (m,) in lost} <= set(group_match_ids(site.db, part))
    found = check_exactly_once(site.db)
    assert found["matches"] >= count + len(lost)


# ---- 2. one Ray worker killed -------------------------------------------------------
def arena_workers(site: Site) -> list[psutil.Process]:
    """The server's Ray actors that play groups (Ray names their processes)."""
    assert site.process is not None
    return [p for p in descendants(site.process.pid)
            if any("ray::ArenaWorker" in part for part in _cmdline(p))]


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def started_or_failed(site: Site) -> dict[str, Any] | None:
    """The ladder's status once its arena has workers or its scheduler stopped."""
    status = play_status(site)
    return status if status["workers"] or status["errors"] else None


def busy_worker(site: Site) -> psutil.Process | None:
    """An arena worker with bots running: a group is in flight on it."""
    return next((p for p in arena_workers(site) if descendants(p.pid)), None)


def test_a_killed_ray_worker_is_replaced_and_its_groups_played_once(tmp_path: Path,
                                                                   marker: str) -> None:
    site = playing_site(tmp_path, marker, 'workers = 2\n', engine="ray")
    try:
        status = wait_until(lambda: started_or_failed(site), "Ray to start, or fail", SLOW_S,
                            interval=0.2)
        assert status is not None
        if not status["workers"]:
            pytest.skip(f"Ray did not start here: {status['errors']}")
        wait_until(lambda: play_status(site)["groups_done"] >= 2, "two groups done on Ray",
                   SLOW_S, interval=0.2)
        victim = wait_until(lambda: busy_worker(site), "an arena worker with a group in flight",
                            SLOW_S, interval=0.1)
        assert victim is not None
        its_bots = descendants(victim.pid)
        count, left = match_count(site.db), pending_groups(site.db)
        victim.kill()
        wait_until(lambda: not alive([victim, *its_bots]), "the worker's bots to die with it")
        wait_until(lambda: done(site.db, left) and match_count(site.db) > count,
                   "the groups in flight at the kill to be finished, and more matches stored",
                   SLOW_S, interval=0.2)
        assert "died" in site.log.read_text(), "the dead worker was seen and replaced"
        assert len(arena_workers(site)) >= 2, "a replacement runs"
    finally:
        site.stop()
    found = check_exactly_once(site.db)
    print(f"ray worker killed: {count} matches stored, {len(left)} groups pending at the kill;"
          f" {len(its_bots)} of its processes ended", found)
    assert found["duplicates"] == 0 and found["matches"] > count


# ---- 3. a node of a Ray cluster lost ------------------------------------------------
def test_the_ladder_on_a_cluster_survives_losing_a_node(
        cluster: tuple[str, dict[str, str], Path], tmp_path: Path, marker: str,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two nodes of one CPU each (tests.test_cluster), an arena worker on each;
    the second node is SIGKILLed mid-run, as test_cluster does to `league run`."""
    address, env, second_dir = cluster
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_USAGE_STATS_ENABLED"):
        monkeypatch.setenv(name, env[name])  # the server joins the cluster with its token
    site = playing_site(tmp_path, marker, f'address = "{address}"\nworkers = 2\n', engine="ray")
    try:
        wait_until(lambda: len(nodes(site.db)) == 2, "matches played on both nodes", SLOW_S,
                   interval=0.2, describe=lambda: (play_status(site), nodes(site.db)))
        count, left = match_count(site.db), pending_groups(site.db)
        assert kill_node(second_dir) > 0
        wait_until(lambda: done(site.db, left) and match_count(site.db) > count,
                   "the groups in flight at the kill to be finished, and more matches stored",
                   SLOW_S, interval=0.2, describe=lambda: play_status(site))
        assert "died" in site.log.read_text(), "the lost worker was seen and replaced"
    finally:
        site.stop()
    found = check_exactly_once(site.db)
    print(f"node killed: {count} matches stored, {len(left)} groups pending at the kill", found)
    assert found["duplicates"] == 0 and found["matches"] > count


def nodes(db: Path) -> set[str]:
    return {node for (node,) in rows(db, "SELECT DISTINCT node FROM matches")}
