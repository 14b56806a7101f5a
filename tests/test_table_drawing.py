"""The replay page draws the table (harness/web/assets/table.js) for every
game: opened in a real headless Chromium (tests/browser.py), a page of a
short real match shows cards as cards, dice as dice and a score strip, for
the public view and for each seat's view, redraws on every step and shows
only what the observation holds.

Each match is the first decisions of a real game, played with seeded random
legal moves by the engine and made into a page by ``replay_page``, the
function ``write_replay_html`` writes a stored match with: the test needs no
league run. ``CARD_LEAGUE_SCREENSHOTS=DIR`` keeps one screenshot per game.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from games import get_game, implemented_games
from harness.replay import replay_game
from harness.web.page import asset
from harness.web.replay_html import replay_page
from tests.browser import Chromium, Tab, assert_png

ACTIONS = 60        # decisions played: a short match with cards on the table
STEP = 12           # the step opened first, then stepped from
HOSTILE = "</script><img src=x onerror=alert(1)>\u202e"
DICE_GAMES = {"tile_hunt"}


def players_for(slug: str) -> int:
    counts = get_game(slug).INFO.player_counts()
    return 3 if 3 in counts else counts[0]


def short_match(slug: str, seed: int = 5) -> dict[str, Any]:
    """A replay of the first ACTIONS decisions of a seeded random game."""
    game_class = get_game(slug)
    players = players_for(slug)
    game = game_class.new(players, seed)
    rng = random.Random(seed)
    actions: list[Any] = []
    while len(actions) < ACTIONS and not game.is_terminal():
        action = rng.choice(game.legal_actions())
        actions.append(json.loads(json.dumps(action)))   # as stored: tuples become lists
        game.apply(action)
    return {"game": slug, "rules_version": game_class.INFO.rules_version, "players": players,
            "seed": seed, "actions": actions}


def page_for(slug: str, folder: Path, bot_names: list[str] | None = None) -> tuple[Path, dict[str, Any]]:
    replay = short_match(slug)
    players = replay["players"]
    names = bot_names or [f"bot{seat}" for seat in range(players)]
    row = {"id": f"{slug}-test", "league": "drawing", "game": slug,
           "rules_version": replay["rules_version"], "seed": replay["seed"], "deal": 0,
           "status": "ok", "capped": 0, "faulted": 0, "decisions": len(replay["actions"]),
           "duration_s": 0.0}
    seats = [{"seat": seat, "bot": f"{names[seat]}@v1", "score": 0, "rank": 1, "team": seat,
              "fault_kind": None} for seat in range(players)]
    path = folder / f"{slug}.html"
    path.write_text(replay_page(row, seats, replay), encoding="utf-8")
    return path, replay


def observations(replay: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    """Every seat's observation at each step, straight from the engine."""
    for game, _ in replay_game(replay):
        yield [json.loads(json.dumps(game.observation(s))) for s in range(game.num_players)]


def own_hand(slug: str, view: dict[str, Any]) -> list[Any] | None:
    """The cards of the viewing seat's hand, where the game has hands."""
    if slug == "limit":
        return list(view["hands"][view["seat"]])
    return list(view["hand"]) if "hand" in view else None


def hand_counts(tab: Tab) -> list[int | None]:
    """Per seat's view card, the cards drawn in its own hand (None: no hand drawn)."""
    return tab.eval("""[...document.querySelectorAll('#views .view')].map(card => {
        const hand = card.querySelector('.table-drawing [data-hand="mine"]');
        return hand ? hand.querySelectorAll('.tcard').length : null; })""")


def step_of(tab: Tab) -> int:
    return int(tab.eval("document.body.dataset.step"))


# ---- the assets as text -------------------------------------------------------
def test_drawing_sets_no_markup_and_has_a_renderer_per_game() -> None:
    script = asset("table.js")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "document.write" not in script and "eval(" not in script
    for slug in implemented_games():
        assert f"    {slug}(ctx, root) {{" in script, f"no renderer for {slug}"


def test_the_page_carries_the_drawing(tmp_path: Path) -> None:
    page, _ = page_for("grazia", tmp_path)
    text = page.read_text()
    assert "window.drawTable = drawTable" in text and ".table-drawing" in text
    assert text.index("window.drawTable = drawTable") < text.index("function drawPublic(")


# ---- in Chromium ----------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("slug", implemented_games())
def test_every_game_is_drawn_and_redrawn(browser: Chromium, tmp_path: Path, slug: str) -> None:
    page, replay = page_for(slug, tmp_path)
    views = list(observations(replay))
    step = min(STEP, len(views) - 2)
    tab = Tab(browser, f"{page.as_uri()}#step={step}")
    assert tab.errors() == []
    assert step_of(tab) == step
    public = "#public .table-drawing"
    assert tab.eval(f"document.querySelector('{public}').dataset.view") == "public"
    assert tab.eval(f"document.querySelector('{public}').dataset.game") == slug
    # the public view holds no hand: nothing is drawn as the viewer's own
    assert not tab.exists(f'{public} [data-hand="mine"]')
    assert tab.eval(f"document.querySelectorAll('{public} .t-seat').length") == len(views[0])
    drawn_views = tab.eval("[...document.querySelectorAll('#views .view .table-drawing')]"
                           ".map(d => d.dataset.view)")
    assert drawn_views == [str(seat) for seat in range(len(views[0]))]
    check_hands(tab, slug, views[step])
    if slug in DICE_GAMES:
        shown = tab.eval(f"[...document.querySelectorAll('{public} .t-zone:first-child .tdie')]"
                         ".map(d => Number(d.dataset.value))")
        assert shown == views[step][0]["dice"]
        assert tab.eval(f"document.querySelector('{public} .tdie .pip.on') !== null")
    else:
        assert tab.eval("document.querySelectorAll('#views .tcard').length") > 0
    # stepping redraws: the drawing is a new element, true to the next step
    tab.eval(f"document.querySelector('{public}').dataset.stale = 'yes'")
    tab.press("ArrowRight")
    assert step_of(tab) == step + 1
    assert not tab.exists("[data-stale]")
    check_hands(tab, slug, views[step + 1])
    assert tab.errors() == []
    # the screenshot: the table as the seat to act sees it, its hand face up
    acting = views[step + 1][0]["current_player"] if "current_player" in views[step + 1][0] else 0
    tab.click(f'.viewer button[data-seat="{max(acting, 0)}"]')
    assert_png(tab.screenshot(tmp_path / f"table-{slug}.png"))


def check_hands(tab: Tab, slug: str, views: list[dict[str, Any]]) -> None:
    hands = [own_hand(slug, view) for view in views]
    expected = [None if hand is None else len(hand) for hand in hands]
    assert hand_counts(tab) == expected


@pytest.mark.slow
def test_the_table_card_draws_the_view_picked(browser: Chromium, tmp_path: Path) -> None:
    page, replay = page_for("target", tmp_path)
    views = list(observations(replay))
    tab = Tab(browser, f"{page.as_uri()}#step=3")
    tab.click('.viewer button[data-seat="1"]')
    drawing = "#public .table-drawing"
    assert tab.eval(f"document.querySelector('{drawing}').dataset.view") == "1"
    cards = tab.eval(f"""[...document.querySelectorAll('{drawing} [data-hand="mine"] .tcard')]
                         .map(c => c.title)""")
    assert len(cards) == len(views[3][1]["hand"])
    tab.press("ArrowRight")   # the pick holds while stepping
    assert tab.eval(f"document.querySelector('{drawing}').dataset.view") == "1"
    assert tab.eval("document.querySelector('.viewer button[aria-pressed=\"true\"]').dataset.seat") == "1"
    tab.click('.viewer button[data-seat=""]')
    assert tab.eval(f"document.querySelector('{drawing}').dataset.view") == "public"
    assert tab.errors() == []


@pytest.mark.slow
def test_hostile_names_are_drawn_as_text(browser: Chromium, tmp_path: Path) -> None:
    page, _ = page_for("limit", tmp_path, [HOSTILE, "b", "c"])
    tab = Tab(browser, f"{page.as_uri()}#step=5")
    assert tab.errors() == []
    assert tab.eval("document.querySelectorAll('img').length") == 0
    names = tab.eval("[...document.querySelectorAll('#public .t-seat .t-name')].map(n => n.textContent)")
    assert names[0] == HOSTILE.replace("\u202e", "\\u202e")   # made visible, never obeyed


@pytest.mark.slow
def test_the_drawing_fits_a_phone(browser: Chromium, tmp_path: Path) -> None:
    page, _ = page_for("grazia", tmp_path)
    tab = Tab(browser, f"{page.as_uri()}#step=8")
    tab.send("Emulation.setDeviceMetricsOverride",
             {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    # no drawing scrolls sideways: its cards, piles and strip wrap into its width
    overflow = tab.wait_for("""(() => {
        const drawings = [...document.querySelectorAll('.table-drawing')];
        return drawings.length && drawings.every(d => d.clientWidth <= 390)
          ? drawings.map(d => d.scrollWidth - d.clientWidth) : null; })()""")
    assert max(overflow) <= 1
    assert tab.errors() == []
