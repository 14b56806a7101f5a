"""The live ladder's pages in a real browser (Debian Chromium over
tests/browser.py) and under many readers, against a real `league serve`
that plays (tests/serve_site.py, ``play=True``, a refit every 2 s).

The browser test follows one bot from upload to replay: the front page,
opened before the upload and never reloaded, shows the bot's row once the
ladder has rated it (the page's poller redraws the tables and counts its
redraws in ``#leaderboards[data-updates]``); the bot's page draws its
rating history (an SVG polyline in ``#history``); one of its matches
replays and steps with the arrow keys; the organiser, signed in through
the form, sees the figures; on a phone the front page fits the width. No
page logs a console error. Screenshots go to CARD_LEAGUE_SCREENSHOTS when
set (else the test's tmp_path): ladder-board.png, ladder-bot.png,
ladder-replay.png, ladder-organiser.png, ladder-phone-board.png.

The load test is a small, bounded run of harness/bench/ladder_load.py's
readers (the benchmark itself measures latency and the match rate): many
readers at once while matches are played, and not one request fails.
Like the other browser tests it fails loudly without Chromium unless
CARD_LEAGUE_NO_BROWSER=1.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.bench.ladder_load import run_readers
from harness.serve.ladder_views import head_to_head
from harness.store import Store
from tests.browser import Chromium, Tab
from tests.helpers import wait_until
from tests.serve_site import Site, bot_zip, make_site

BOT = "alice-random"
# Limits that turn a hang into a failure on a loaded two-core machine; they
# never time a pass (a first rating takes about 20 s on a quiet one).
RATED_S = 180.0
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
OLGA_PASSWORD = "olga-password-333"


@pytest.fixture
def ladder_site(tmp_path: Path) -> Iterator[Site]:
    """A ladder that plays, refits every 2 s, with alice and the organiser olga."""
    running = make_site(tmp_path, play=True, refit_s=2)
    running.add_user("alice", password="alice-password-1")
    running.add_user("olga", organiser=True, password=OLGA_PASSWORD)
    running.start()
    yield running
    running.stop()


def shot(tab: Tab, folder: Path, name: str) -> Path:
    path = folder / name
    tab.screenshot(path)
    kept = os.environ.get("CARD_LEAGUE_SCREENSHOTS")
    return Path(kept) / name if kept else path


def assert_no_errors(tab: Tab, where: str) -> None:
    errors = tab.errors()
    assert errors == [], f"console errors on {where}: {errors}"


def rated(site: Site, name: str) -> dict[str, Any] | None:
    """The bot's ladder data once it has a standing and a rating history of
    two refits at least (a line, not only a dot)."""
    data = httpx.get(f"{site.url}/api/v1/bots/{name}/ladder", timeout=30).json()
    versions = data.get("versions", [])
    ready = versions and versions[0]["pools"] and len(versions[0]["history"]) >= 2 and \
        data["matches"]
    return data if ready else None


def board_row_shown(tab: Tab) -> str:
    """A JavaScript test: the bot's row is in a leaderboard table."""
    return (f"document.querySelector('#leaderboards table.leaderboard "
            f"a[href=\"/bots/{BOT}\"]') !== null")


@pytest.mark.slow
def test_the_ladder_live_in_a_browser(ladder_site: Site, browser: Chromium,
                                      tmp_path: Path) -> None:
    site = ladder_site
    shots: list[Path] = []

    # 1. The front page, opened before the bot exists, is never reloaded.
    board = Tab(browser, f"{site.url}/")
    assert not board.eval(board_row_shown(board))
    board.eval("window.notReloadedYet = true")
    assert site.upload("alice", BOT, bot_zip(BOT)).status_code == 201
    board.wait_for(board_row_shown(board), timeout=RATED_S)
    assert board.eval("window.notReloadedYet === true"), "the page reloaded"
    assert int(board.eval("document.getElementById('leaderboards').dataset.updates")) >= 1
    row = board.eval(f"""[...document.querySelectorAll('table.leaderboard tbody tr')]
        .find(tr => tr.querySelector('a[href="/bots/{BOT}"]')).innerText""")
    assert "alice" in row and "v1" in row
    # the bots table below, rendered before the upload, is redrawn in the same turn
    assert BOT in board.text("table.bots tbody")
    bosses = board.eval("document.querySelectorAll('table.leaderboard tr.boss').length")
    assert bosses == 3, f"{bosses} boss rows"
    shots.append(shot(board, tmp_path, "ladder-board.png"))
    assert_no_errors(board, "the front page")

    # 2. The bot's page draws its history once a refit has rated it.
    wait_until(lambda: rated(site, BOT), f"{BOT} to have a rating history", RATED_S)
    board.navigate(f"{site.url}/bots/{BOT}")
    points = board.wait_for("document.querySelector('#history svg polyline')"
                            ".getAttribute('points')")
    # the refits the page was rendered with (a refit every 2 s: not the API's, read before)
    refits = board.eval("JSON.parse(document.getElementById('ladder-data').textContent)"
                        ".versions[0].history.length")
    assert refits >= 2 and len(points.split()) == refits
    assert board.eval("document.querySelectorAll('#history svg circle').length") == refits
    assert board.eval("document.querySelector('#history').dataset.series") == "1"
    assert " of 4" in board.text(".standing h3")
    assert board.eval("document.title").startswith(BOT)
    shots.append(shot(board, tmp_path, "ladder-bot.png"))
    assert_no_errors(board, "the bot's page")

    # 3. One of its matches, replayed from the page's link, steps with the keys.
    replay = board.eval("document.querySelector('table.matches a[href^=\"/matches/\"]').href")
    board.navigate(replay)
    assert board.eval("document.body.dataset.step") == "0"
    board.press("ArrowRight")
    board.press("ArrowRight")
    assert board.eval("document.body.dataset.step") == "2"
    assert BOT in board.eval("document.documentElement.outerHTML")
    shots.append(shot(board, tmp_path, "ladder-replay.png"))
    assert_no_errors(board, "the replay")

    # 4. The organiser signs in through the form and sees the figures.
    olga = Tab(browser, f"{site.url}/login?next=/organiser", private=True)
    olga.fill("#login input[name=name]", "olga")
    olga.fill("#login input[name=password]", OLGA_PASSWORD)
    olga.click_and_wait_for_load("#login button[type=submit]")
    assert olga.url() == f"{site.url}/organiser", olga.url()
    assert olga.text("h1") == "Organiser"
    figures = olga.eval("Object.fromEntries([...document.querySelectorAll('#organiser "
                        "[data-key]')].map(cell => [cell.dataset.key, cell.textContent]))")
    assert int(figures["entrants"]) == 4 and int(figures["groups_done"]) >= 1, figures
    shots.append(shot(olga, tmp_path, "ladder-organiser.png"))
    assert_no_errors(olga, "the organiser's page")
    olga.close()

    # 5. A phone: the front page fits the width, its table too.
    board.send("Emulation.setDeviceMetricsOverride", PHONE)
    board.navigate(f"{site.url}/")
    board.wait_for(board_row_shown(board))
    widths = board.eval("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] + 1, f"the front page is {widths[0]} px wide on a phone"
    shots.append(shot(board, tmp_path, "ladder-phone-board.png"))
    assert_no_errors(board, "the front page on a phone")
    board.close()
    print("screenshots:", json.dumps([str(path) for path in shots]))


@pytest.mark.slow
def test_many_readers_while_matches_play(ladder_site: Site) -> None:
    site = ladder_site
    assert site.upload("alice", BOT, bot_zip(BOT)).status_code == 201
    wait_until(lambda: rated(site, BOT), f"{BOT} to be rated", RATED_S)
    done = run_readers(site.url, [BOT], readers=20, requests_each=10, seconds=120)
    assert done.errors == [], done.errors[:5]
    assert done.count == 20 * 10
    kinds = {path.split("/")[1] if path != "/" else "/" for path in done.paths}
    assert kinds == {"/", "bots", "api"}, kinds


def test_head_to_head_finds_the_rival_by_the_match_not_by_its_bot(tmp_path: Path) -> None:
    """The rivals' counts on a bot's page: right, and found through each
    match's seats (primary key), not by reading all of the rival's seats
    for each of the bot's (quadratic: 95 s at 20,000 matches)."""
    store = Store(tmp_path / "ladder.db")
    ranks = [(1, 2), (2, 1), (1, 1), (1, 3)]   # (a's rank, b's rank) per match
    for number, (rank_a, rank_b) in enumerate(ranks):
        store.db.execute("INSERT INTO matches (id, league) VALUES (?, 'ladder:x:2p')",
                         [f"m{number}"])
        for seat, (bot, rank) in enumerate((("a@v1", rank_a), ("b@v1", rank_b),
                                            ("c@v1", 3))):
            store.db.execute("INSERT INTO seats (match_id, seat, bot, rank) VALUES (?, ?, ?, ?)",
                             [f"m{number}", seat, bot, rank])
    store.db.conn.commit()
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    assert head_to_head(store, "ladder:x:2p", "a@v1", "b@v1") == \
        {"ahead": 2, "behind": 1, "level": 1}
    store.db.conn.set_trace_callback(None)
    query = next(s for s in statements if s.lstrip().startswith("SELECT"))
    plan = [row[3] for row in store.db.execute(f"EXPLAIN QUERY PLAN {query}").fetchall()]
    assert any(step.startswith("SEARCH b USING INDEX sqlite_autoindex_seats_1") for step in plan), \
        plan


def test_the_schedulers_head_to_head_counts_agree_with_the_file(tmp_path: Path) -> None:
    """What a bot page's rivals show comes from the scheduler's memory (no
    query that grows with the pool): counted from the file at start, then as
    matches are stored; both agree with the file's own count."""
    from harness.limits import Limits
    from harness.proc.sandbox import Sandbox
    from harness.serve.db import ServerStore
    from harness.serve.ladder import Ladder
    from harness.serve.ladder_run import LadderRun
    from harness.serve.storage import Storage

    db = tmp_path / "ladder.db"
    store = Store(db)
    pool = "ladder:target:3p"
    stored = [(["a@v1", "b@v1", "c@v1"], [1, 2, 3]), (["b@v1", "a@v1", "c@v1"], [1, 1, 3]),
              (["c@v1", "b@v1", "a@v1"], [1, 3, 2])]
    later = [(["a@v1", "c@v1", "b@v1"], [3, 1, 2]), (["b@v1", "c@v1", "a@v1"], [2, 2, 1])]

    def save(number: int, seats: list[str], ranks: list[int]) -> None:
        store.db.execute("INSERT INTO matches (id, league) VALUES (?, ?)", [f"m{number}", pool])
        for seat, (bot, rank) in enumerate(zip(seats, ranks)):
            store.db.execute("INSERT INTO seats (match_id, seat, bot, rank) VALUES (?, ?, ?, ?)",
                             [f"m{number}", seat, bot, rank])
        store.db.conn.commit()

    for number, (seats, ranks) in enumerate(stored):
        save(number, seats, ranks)
    ladder = Ladder(name="h2h", games={"target": (3,)}, limits=Limits(decision_ms=1000))
    run = LadderRun(ladder, ServerStore(db), db, Storage(tmp_path / "bots"), Sandbox("bwrap"))
    assert run.head_to_head(pool, "a@v1", "b@v1") is None  # not counted yet: the file's then
    run._prepare(store)
    for number, (seats, ranks) in enumerate(later, len(stored)):
        save(number, seats, ranks)
        run._count_head_to_head(pool, seats, ranks)
    for first in ("a@v1", "b@v1", "c@v1"):
        for second in ("a@v1", "b@v1", "c@v1"):
            if first != second:
                assert run.head_to_head(pool, first, second) == \
                    head_to_head(store, pool, first, second), (first, second)
    assert run.head_to_head(pool, "a@v1", "b@v1") == {"ahead": 3, "behind": 1, "level": 1}
