"""The HTML report and replay pages: built from a real (small) league, checked
as text, then opened in a real headless Chromium.

The browser tests drive Chromium with tests/browser.py (the DevTools
protocol on a pipe: no websocket library, no port, no driver): they load each
page, collect console errors and uncaught exceptions, press keys, read the
DOM and take screenshots. Without Chromium they fail, loudly, unless
``CARD_LEAGUE_NO_BROWSER=1`` says to skip them (``scripts/ensure-chromium``
installs it). ``CARD_LEAGUE_SCREENSHOTS=DIR`` keeps the screenshots there.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.league import load_league
from harness.replay import replay_game
from harness.runner import run_league
from harness.store import Store
from harness.web.replay_html import write_replay_html
from harness.web.report import checkpoints, nice_ticks, write_report
from tests.browser import Chromium, Tab, assert_png

TEST_BOTS = Path(__file__).parent / "bots"
BOTS = ["random", "heuristic", "faulty_exit"]
HOSTILE = "</script><script>alert(1)</script><!--<img src=x onerror=alert(2)>"


# ---- a real league ----------------------------------------------------------
@pytest.fixture(scope="module")
def league_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six matches of target: random, heuristic and a bot that crashes."""
    folder = tmp_path_factory.mktemp("pages")
    path = folder / "pages.toml"
    path.write_text(f'name = "pages"\ngame = "target"\nbots = {json.dumps(BOTS)}\n'
                    "players = 3\ndeals = 2\nseed = 11\nrotation = \"cyclic\"\n")
    db = folder / "results.db"
    summary = run_league(load_league(str(path), [TEST_BOTS]), Store(db), workers=1,
                         engine="inline")
    assert summary.played == 6 and summary.errors == 0
    return db


@dataclass
class Site:
    folder: Path
    report: Path
    replay: Path
    match_id: str
    store: Store


@pytest.fixture(scope="module")
def site(league_db: Path) -> Site:
    store = Store(league_db, readonly=True)
    folder = league_db.parent / "site"
    folder.mkdir()
    report = write_report(store, "pages", folder / "report.html")
    match_id = store.matches("pages", fault="crash", limit=1)[0]["id"]
    replay = write_replay_html(store, match_id[:8], folder / "replay.html")
    return Site(folder, report, replay, match_id, store)


@pytest.fixture(scope="module")
def hostile_site(league_db: Path) -> Site:
    """The same league with a bot name, a fault detail and stderr that try
    to close the script element and run code."""
    db = league_db.parent / "hostile.db"
    with sqlite3.connect(league_db) as source, sqlite3.connect(db) as conn:
        source.backup(conn)   # a file copy would miss what is still in the WAL
        conn.execute("UPDATE seats SET bot = ? || substr(bot, instr(bot, '@')) "
                     "WHERE bot LIKE 'random@%'", [HOSTILE])
        conn.execute("UPDATE seats SET fault_detail = ?, fault_stderr = ? "
                     "WHERE fault_kind IS NOT NULL", [HOSTILE, HOSTILE + "\n\u2028line"])
    store = Store(db, readonly=True)
    folder = league_db.parent / "hostile"
    folder.mkdir()
    report = write_report(store, "pages", folder / "report.html")
    match_id = store.matches("pages", fault="crash", limit=1)[0]["id"]
    replay = write_replay_html(store, match_id, folder / "replay.html")
    return Site(folder, report, replay, match_id, store)


def embedded_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert found, "no embedded replay data"
    return json.loads(found.group(1))


def expected_moves(store: Store, match_id: str) -> list[str]:
    """The moves in words, straight from the engine."""
    _, _, replay = store.match(match_id)
    return [game.describe_action(action) for game, action in replay_game(replay)
            if action is not None]


# ---- the pages as text ------------------------------------------------------
def test_pages_are_self_contained(site: Site) -> None:
    for page in (site.report, site.replay):
        text = page.read_text()
        assert "http://" not in text and "https://" not in text, f"{page.name} holds a URL"
        assert not re.search(r"""(src|href)\s*=\s*["']?(//|[a-z]+:)""", text, re.I)
        assert not re.search(r"<(link|iframe|object|embed|img)\b", text, re.I)
        assert "@import" not in text and "url(" not in text.replace("url(#plot)", "")


def test_report_shows_bots_charts_faults_and_settings(site: Site) -> None:
    text = site.report.read_text()
    for bot in BOTS:
        assert f"<b>{bot}</b>" in text
    assert text.count("<svg") >= 3 + len(BOTS)   # interval bars, axis, convergence, heatmap
    assert 'id="convergence"' in text and 'id="h2h"' in text
    assert "crash" in text and "bot exited" in text
    assert "limits.decision_ms" in text and "<td>11</td>" in text   # the league's seed
    linked = set(re.findall(r'href="(replay-[0-9a-f]+\.html)"', text))
    faulted = {m["id"] for m in site.store.matches("pages", fault="crash")}
    assert linked == {f"replay-{m}.html" for m in faulted}
    for name in linked:
        assert (site.folder / name).is_file()


def test_replay_page_holds_every_step(site: Site) -> None:
    text = site.replay.read_text()
    data = embedded_data(text)
    row, seats, replay = site.store.match(site.match_id)
    steps, strings = data["steps"], data["strings"]
    assert len(steps) == len(replay["actions"]) + 1 == row["decisions"] + 1
    moves = expected_moves(site.store, site.match_id)
    for step, move in zip(steps, moves):
        assert strings[step["a"]] == move
        assert strings[step["l"][step["t"]]] == move      # the move taken is among the legal
    assert all(len(step["o"]) == 3 for step in steps)
    assert steps[0]["k"] == 1 and set(steps[0]["o"][0]) >= {"seat", "hand"}
    fault = next(s for s in seats if s["fault_kind"])
    marked = [i for i, step in enumerate(steps) if fault["seat"] in step.get("f", [])]
    assert marked == [fault["fault_decision"]]
    for bot in BOTS:
        assert bot in text
    assert "Final standings" in text


def test_hostile_strings_cannot_break_out(hostile_site: Site) -> None:
    for page in (hostile_site.report, hostile_site.replay):
        text = page.read_text()
        assert HOSTILE not in text
        assert "<script>alert" not in text and "<img" not in text
        assert text.count("</script>") == text.count("<script")
        assert "&lt;/script&gt;&lt;script&gt;alert(1)" in text
    data = embedded_data(hostile_site.replay.read_text())
    assert any(seat["bot"] == HOSTILE for seat in data["seats"])


def test_checkpoints_grow_to_the_whole_league() -> None:
    assert checkpoints(0) == [] and checkpoints(5) == [1, 2, 3, 4, 5]
    for matches in (13, 100, 1234, 10**6):
        points = checkpoints(matches)
        assert points == sorted(set(points)) and points[-1] == matches
        assert 5 <= len(points) <= 15
        if matches >= 1000:
            assert sum(points) < 3.5 * matches   # refitting all prefixes stays cheap
    assert nice_ticks(1390, 1610) == [1400, 1450, 1500, 1550, 1600]


def test_unknown_league_and_match(site: Site, tmp_path: Path) -> None:
    with pytest.raises(KeyError):
        write_report(site.store, "no-such-league", tmp_path / "r.html")
    with pytest.raises(KeyError):
        write_replay_html(site.store, "ffffffffffff", tmp_path / "m.html")


# ---- in Chromium (tests/browser.py) -----------------------------------------
def step_of(tab: Tab) -> int:
    return int(tab.eval("document.body.dataset.step"))


@pytest.mark.slow
def test_report_renders_in_chromium(browser: Chromium, site: Site) -> None:
    tab = Tab(browser, site.report.as_uri())
    assert tab.errors() == []
    text = tab.eval("document.body.innerText")
    for bot in BOTS:
        assert bot in text
    assert "Ratings" in text and "Head to head" in text and "Settings" in text
    # the charts were laid out: the interval bars and the convergence plot have a size
    sizes = tab.eval("[...document.querySelectorAll('svg')].map(s => s.getBBox().width)")
    assert len(sizes) >= 3 + len(BOTS) and min(sizes) > 0
    links = tab.eval("[...document.querySelectorAll('a[href^=\"replay-\"]')].map(a => a.href)")
    assert links and all(link.startswith("file://") for link in links)
    assert_png(tab.screenshot(site.folder / "report.png"))


@pytest.mark.slow
def test_replay_steps_with_keys_in_chromium(browser: Chromium, site: Site) -> None:
    moves = expected_moves(site.store, site.match_id)
    tab = Tab(browser, site.replay.as_uri())
    assert tab.errors() == []
    assert step_of(tab) == 0
    dom = tab.eval("document.documentElement.outerHTML")
    for bot in BOTS:
        assert bot in dom
    assert moves[0] in tab.eval("document.getElementById('move').textContent")
    for _ in range(3):
        tab.press("ArrowRight")
    assert step_of(tab) == 3
    assert tab.eval("document.getElementById('move').textContent") == moves[3]
    assert tab.eval("document.querySelector('ol.legal li.taken').textContent").startswith(moves[3])
    tab.press("ArrowLeft")
    assert step_of(tab) == 2 and tab.eval("location.hash") == "#step=2"
    tab.press("End")
    assert step_of(tab) == len(moves)
    assert "Final position" in tab.eval("document.getElementById('decision').innerText")
    tab.press("Home")
    assert step_of(tab) == 0
    tab.eval("document.getElementById('next').click()")
    assert step_of(tab) == 1
    assert tab.errors() == []


@pytest.mark.slow
def test_replay_honours_the_step_in_the_url_and_marks_the_fault(browser: Chromium,
                                                                site: Site) -> None:
    _, seats, _ = site.store.match(site.match_id)
    fault = next(s for s in seats if s["fault_kind"])
    moves = expected_moves(site.store, site.match_id)
    step = fault["fault_decision"]
    tab = Tab(browser, f"{site.replay.as_uri()}#step={step}")
    assert tab.errors() == []
    assert step_of(tab) == step
    assert tab.eval("document.getElementById('move').textContent") == moves[step]
    marked = tab.eval("document.querySelector('.fault-here').textContent")
    assert "faulted at decision" in marked and fault["fault_kind"] in marked
    views = tab.eval("document.querySelectorAll('.view').length")
    assert views == len(seats)
    tab.press("ArrowRight")
    assert step_of(tab) == step + 1
    tab.press("ArrowLeft")
    assert_png(tab.screenshot(site.folder / "replay.png"))


@pytest.mark.slow
def test_hostile_pages_run_no_injected_code(browser: Chromium, hostile_site: Site) -> None:
    for page in (hostile_site.report, hostile_site.replay):
        tab = Tab(browser, page.as_uri() + ("#step=end" if page == hostile_site.replay else ""))
        assert tab.errors() == []
        assert tab.eval("document.querySelectorAll('img').length") == 0
        assert HOSTILE in tab.eval("document.body.textContent")
