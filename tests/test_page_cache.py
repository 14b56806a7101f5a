"""The pages' cache (harness.serve.page_cache) against a real `league serve`
(tests/serve_site.py): a kept page is served again while nothing it shows
has changed, and read afresh after a match is stored (by another process,
as an SPRT job stores them), a bot's row changes, or a refit lands; a
signed-in owner's private parts never reach another reader through it,
nor a kept anonymous page a signed-in one. The server's
``/api/v1/health`` counts the cache's hits and builds, so each test also
sees that the cache was used (a test of a cache that never kept anything
would pass for nothing)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.serve.page_cache import PageCache, SeatStamps
from harness.store import Store
from tests.helpers import wait_until
from tests.serve_site import Site, bot_zip, make_site

ALICE_PASSWORD = "alice-password-1"
BOB_PASSWORD = "bob-password-22"
STDERR_MARKER = "PRIVATE-STDERR-5c2e77"
CRASHING_BOT = f"""\
import sys

sys.stderr.write("{STDERR_MARKER}\\n")
sys.stderr.flush()
raise SystemExit(3)
"""
RATED_S = 300.0  # a hang's bound on a loaded machine; a first rating takes ~20 s quiet


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A ladder that plays nothing; alice owns ``pick`` (valid) and
    ``crasher`` (failed, STDERR_MARKER in its validation's stderr)."""
    site = make_site(tmp_path_factory.mktemp("paused"))
    site.add_user("alice", password=ALICE_PASSWORD)
    site.add_user("bob", password=BOB_PASSWORD)
    site.start()
    try:
        assert site.upload("alice", "pick", bot_zip("pick")).status_code == 201
        assert site.upload("alice", "crasher", bot_zip("crasher", CRASHING_BOT)).status_code \
            == 201
        assert site.verdict("alice", "pick", 1)["state"] == "valid"
        assert site.verdict("alice", "crasher", 1)["state"] == "failed"
        yield site
    finally:
        site.stop()


def cache_counts(site: Site) -> dict[str, int]:
    counts: dict[str, int] = httpx.get(f"{site.url}/api/v1/health", timeout=30).json()[
        "page_cache"]
    return counts


def signed_in(site: Site, name: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=site.url, timeout=60)
    reply = client.post("/login", data={"name": name, "password": password, "next": "/"})
    assert reply.status_code == 303, reply.text
    return client


def store_match(db: Path, match_id: str, seats: list[str], stderr: str | None = None) -> None:
    """A match written to the ladder file by another process (this one);
    ``stderr``: the first seat crashed with it (its owner's to read)."""
    with sqlite3.connect(db, timeout=30) as connection:
        connection.execute("INSERT INTO matches (id, league, seats, status, finished_at) "
                           "VALUES (?, 'sprt:target:3p', ?, 'ok', ?)",
                           [match_id, json.dumps(seats), time.time()])
        connection.executemany(
            "INSERT INTO seats (match_id, seat, bot, rank, fault_kind, fault_decision, "
            "fault_detail, fault_stderr) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(match_id, seat, bot, seat + 1, *(("crash", 1, "it crashed", stderr)
                                               if stderr and seat == 0 else (None,) * 4))
             for seat, bot in enumerate(seats)])


def test_a_kept_page_is_read_afresh_once_a_match_is_stored(paused: Site) -> None:
    with paused.client() as anonymous:
        first = anonymous.get("/bots/pick")
        before = cache_counts(paused)
        again = anonymous.get("/bots/pick")
        assert again.text == first.text
        assert cache_counts(paused)["hits"] > before["hits"], "the second read was not kept"
        store_match(paused.db, "cache-test-match-1", ["pick@v1", "random", "heuristic"])
        # the newest-seat stamp is trusted for SeatStamps.fresh_s (1 s): poll
        wait_until(lambda: "/matches/cache-test-match-1" in anonymous.get("/bots/pick").text,
                   "the stored match on the bot page", 30)
        ladder = anonymous.get("/api/v1/bots/pick/ladder").json()
    assert "cache-test-match-1" not in first.text
    assert [m["id"] for m in ladder["matches"]] == ["cache-test-match-1"]


def test_a_bots_newest_seat_is_read_again_once_its_freshness_ends(tmp_path: Path) -> None:
    """Within ``fresh_s`` the stamp is the one read (the page is kept, a
    busy ladder's matches go on); after it, the file's."""
    db = tmp_path / "ladder.db"
    Store(db)  # the results tables
    now = [100.0]
    stamps = SeatStamps(db, fresh_s=1.0, clock=lambda: now[0])
    assert stamps.newest(["pick@v1"]) == 0
    store_match(db, "m1", ["pick@v1", "random", "heuristic"])
    now[0] += 0.5
    assert stamps.newest(["pick@v1"]) == 0  # trusted still
    assert stamps.newest(["random"]) > 0  # another bot's stamp is its own
    now[0] += 0.6
    assert stamps.newest(["pick@v1"]) > 0
    stamps.close()


def test_a_kept_page_is_read_afresh_once_the_bot_changes(paused: Site) -> None:
    with paused.client() as anonymous, paused.client("alice") as alice:
        assert "cache-test-words" not in anonymous.get("/bots/pick").text
        assert "cache-test-words" not in anonymous.get("/").text
        reply = alice.patch("/api/v1/bots/pick", json={"description": "cache-test-words"})
        assert reply.status_code == 200, reply.text
        assert "cache-test-words" in anonymous.get("/bots/pick").text
        assert "cache-test-words" in anonymous.get("/").text
        assert any(bot["description"] == "cache-test-words"
                   for bot in anonymous.get("/api/v1/bots").json()["bots"])


def header_name(page: str) -> str | None:
    """The signed-in account the page's header names (None: nobody)."""
    marker = 'id="me">'
    if marker not in page:
        return None
    return page.split(marker, 1)[1].split("<", 1)[0]


def test_the_owners_private_parts_never_reach_another_reader(paused: Site) -> None:
    """Each reader in turn, twice (the second read of each is kept): the
    owner sees a fault's stderr, the files' link and their own header and
    CSRF field; nobody else sees them, whoever read the page before them."""
    store_match(paused.db, "cache-test-fault", ["crasher@v1", "random", "heuristic"],
                stderr=STDERR_MARKER)
    alice = signed_in(paused, "alice", ALICE_PASSWORD)
    bob = signed_in(paused, "bob", BOB_PASSWORD)
    before = cache_counts(paused)
    try:
        with paused.client() as anonymous:
            readers: list[tuple[str | None, httpx.Client]] = [
                (None, anonymous), ("alice", alice), (None, anonymous), ("bob", bob),
                ("alice", alice), ("bob", bob), (None, anonymous)]
            for who, client in readers * 2:
                page = client.get("/bots/crasher").text
                assert header_name(page) == who, (who, page[:600])
                assert "/matches/cache-test-fault" in page, who
                assert (STDERR_MARKER in page) == (who == "alice"), who
                assert ("/versions/1/files" in page) == (who == "alice"), who
                assert ('name="csrf"' in page) == (who is not None), who
                board = client.get("/").text
                assert header_name(board) == who, who
    finally:
        alice.close()
        bob.close()
    assert cache_counts(paused)["hits"] > before["hits"]


def test_the_leaderboard_answers_304_to_its_etag(paused: Site) -> None:
    with paused.client() as client:
        first = client.get("/api/v1/leaderboard")
        etag = first.headers["etag"]
        assert first.headers["cache-control"] == "no-cache"
        assert first.json()["pools"][0]["pool"] == "ladder:target:3p"
        same = client.get("/api/v1/leaderboard", headers={"if-none-match": etag})
        other = client.get("/api/v1/leaderboard", headers={"if-none-match": '"not-it"'})
        junk = client.get("/api/v1/leaderboard", headers={"if-none-match": "x" * 10_000})
    assert same.status_code == 304 and same.content == b"" and same.headers["etag"] == etag
    assert other.status_code == 200 and other.json() == first.json()
    assert junk.status_code == 200


@pytest.fixture
def playing(tmp_path: Path) -> Iterator[Site]:
    """A ladder that plays and refits every 2 s; alice owns ``pick``."""
    site = make_site(tmp_path, play=True, refit_s=2)
    site.add_user("alice")
    site.start()
    try:
        assert site.upload("alice", "pick", bot_zip("pick")).status_code == 201
        yield site
    finally:
        site.stop()


def newest_match(db: Path, entrant: str) -> str | None:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as connection:
        row = connection.execute(
            "SELECT m.id FROM matches m JOIN seats s ON s.match_id = m.id WHERE s.bot = ? "
            "ORDER BY m.finished_at DESC LIMIT 1", [entrant]).fetchone()
    return None if row is None else str(row[0])


def another_match(db: Path, entrant: str, seen: str | None) -> bool:
    return newest_match(db, entrant) != seen


@pytest.mark.slow
def test_refits_and_stored_matches_reach_the_kept_pages(playing: Site) -> None:
    """While the ladder plays: the leaderboard's ETag changes when a refit
    lands (a 304 turns into the new table), and the bot's page, read after
    a match of its is stored, lists that match."""
    with playing.client() as client:
        def rated() -> httpx.Response | None:
            reply = client.get("/api/v1/leaderboard")
            rows = [row["bot"] for pool in reply.json()["pools"] for row in pool["rows"]]
            return reply if "pick" in rows else None

        board = wait_until(rated, "pick to be rated", RATED_S)
        assert board is not None
        refitted = board.json()["pools"][0]["refitted_at"]

        def refit_landed() -> dict[str, Any] | None:
            reply = client.get("/api/v1/leaderboard",
                               headers={"if-none-match": board.headers["etag"]})
            return reply.json() if reply.status_code == 200 else None

        newer = wait_until(refit_landed, "a refit to change the leaderboard", RATED_S)
        assert newer is not None and newer["pools"][0]["refitted_at"] > refitted
        for _ in range(3):  # three matches stored in turn, each seen within a second or so
            seen = newest_match(playing.db, "pick@v1")
            wait_until(partial(another_match, playing.db, "pick@v1", seen),
                       "another match of pick to be stored", RATED_S)
            stored = newest_match(playing.db, "pick@v1")
            # the newest-seat stamp is trusted for SeatStamps.fresh_s (1 s): poll
            wait_until(lambda link=f"/matches/{stored}": link in client.get("/bots/pick").text,
                       f"match {stored} on pick's page", 30)
    assert cache_counts(playing)["hits"] > 0


def test_one_reader_builds_while_the_others_get_the_last_entry() -> None:
    """No stampede: while one reader rebuilds an outdated entry, another
    gets the entry as it was at once; with no entry yet, it waits for that
    build instead of building too."""
    cache = PageCache()
    assert cache.get("page", 1, lambda: "v1") == "v1"
    building, release = threading.Event(), threading.Event()
    builds: list[str] = []

    def slow_build() -> str:
        builds.append("v2")
        building.set()
        release.wait(30)
        return "v2"

    with ThreadPoolExecutor(3) as pool:
        rebuilt = pool.submit(cache.get, "page", 2, slow_build)
        assert building.wait(30)
        assert cache.get("page", 2, lambda: builds.append("again") or "v2'") == "v1"
        first = pool.submit(cache.get, "new", 1, slow_build)  # blocks until released
        wait_until(lambda: builds == ["v2", "v2"], "the first build of a new entry")
        waiting = pool.submit(cache.get, "new", 1, lambda: builds.append("twice") or "x")
        wait_until(lambda: cache.waits == 1, "a second reader waiting for that build")
        release.set()
        assert rebuilt.result(30) == "v2" and first.result(30) == "v2"
        assert waiting.result(30) == "v2"
    assert builds == ["v2", "v2"]  # neither "again" nor "twice"
    assert cache.get("page", 2, lambda: "never") == "v2"
