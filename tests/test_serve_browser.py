"""The submission server's pages in a real browser (Debian Chromium over
tests/browser.py) against a real `league serve` on loopback
(tests/serve_site.py), as two people would use it:

alice signs in through the form, uploads a zip of a bot folder through
/submit, lands on the new version's page and sees the verdict arrive
without reloading by hand (the page's script polls the API and reloads);
as owner she sees each step's detail and a download link. bob, in a private
tab of his own (his own cookies), sees the same bot and which steps passed,
but no step details, no stderr and no download link, and the files URL
refuses him with 403. alice's second version writes to stderr and crashes:
its page shows FAIL at the failing step and her bot's stderr. No page logs
a console error, and on a phone-sized screen the pages fit the width.

One test, one server, because each part builds on the one before (bob looks
at the bot alice uploaded). Screenshots go to CARD_LEAGUE_SCREENSHOTS when
set (else the test's tmp_path): serve-valid-owner.png, serve-valid-public.png,
serve-failed-owner.png, and on the phone serve-phone-bots.png,
serve-phone-bot.png, serve-phone-version.png (alice's failed version, with
its stderr) and serve-phone-submit.png.
Like the other browser tests it fails loudly without Chromium unless
CARD_LEAGUE_NO_BROWSER=1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser import Chromium, Tab
from tests.serve_site import Site, bot_zip, site  # noqa: F401 - the fixture

BOT = "alice-random"
# Long enough for a validation on a loaded two-core machine (about 1 s on
# a quiet one): the limit turns a hang into a failure, it never times a pass.
VERDICT_S = 120.0
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}

# A bot that starts and shakes hands, then writes to stderr and crashes on
# its first decision: validation fails at the first match, not the handshake.
CRASHING_BOT = """\
import sys
from league_sdk import Bot, run


class Crash(Bot):
    def choose(self, obs, legal, time_left_ms):
        print("alice-random v2: dividing by zero now", file=sys.stderr, flush=True)
        return 1 // 0


run(Crash())
"""


def sign_in(browser: Chromium, base: str, name: str, password: str) -> Tab:
    """A private tab (its own cookies) signed in through the /login form."""
    tab = Tab(browser, f"{base}/login", private=True)
    tab.fill("#login input[name=name]", name)
    tab.fill("#login input[name=password]", password)
    tab.click_and_wait_for_load("#login button[type=submit]")
    assert tab.url() == f"{base}/", f"signing in led to {tab.url()}"
    assert tab.text("#me") == name
    return tab


def upload_through_form(tab: Tab, base: str, archive: Path, number: int) -> None:
    """From any page: the nav's Submit link, the form, the redirect to the
    new version's page."""
    tab.click_and_wait_for_load("nav a[href='/submit']")
    tab.fill("#submit input[name=name]", BOT)
    tab.select("#submit select[name=language]", "archive")
    tab.set_files("#submit input[type=file]", [archive])
    tab.click_and_wait_for_load("#submit button[type=submit]")
    version_page = f"{base}/bots/{BOT}/versions/{number}"
    assert tab.url() == version_page, (
        f"the upload led to {tab.url()}, not {version_page}; the page says: "
        f"{tab.text('main')[:500]}")


def await_verdict(tab: Tab) -> str:
    """Wait, hands off, for the version page to show its verdict; the page's
    script must reload it. Returns the verdict."""
    # One evaluation reads the state and marks this document, so a reload
    # cannot fall between the two.
    first = tab.eval("window.notReloadedYet = true, document.getElementById('state').textContent")
    verdict = tab.wait_for("['valid', 'failed'].includes(document.getElementById('state')"
                           ".textContent) && document.getElementById('state').textContent",
                           timeout=VERDICT_S)
    if first in ("queued", "validating"):
        # The server rendered it pending: only the page's script can have
        # brought the verdict in, by reloading (which drops the marker).
        assert tab.exists("#waiting") is False
        assert tab.eval("window.notReloadedYet === undefined"), \
            "the verdict appeared without a reload: the script changed the page in place"
    else:   # validated before the page loaded (a very slow browser): nothing to poll for
        assert first in ("valid", "failed"), f"unknown state {first!r}"
    return str(verdict)


def steps_shown(tab: Tab) -> list[dict[str, object]]:
    """The validation steps as the page lists them."""
    return list(tab.eval("""[...document.querySelectorAll('#steps li')].map(li => ({
        ok: li.classList.contains('ok'), mark: li.querySelector('strong').textContent,
        text: li.innerText, detail: li.querySelector('.detail') !== null}))"""))


def download_links(tab: Tab) -> int:
    return int(tab.eval("document.querySelectorAll(\"a[href$='/files']\").length"))


def assert_no_errors(tab: Tab, where: str, expected: str = "") -> None:
    """No console errors, uncaught exceptions, failed loads or dialogs; a
    log entry containing ``expected`` (a known refusal) is let through."""
    errors = [e for e in tab.errors() if not (expected and expected in e)]
    assert errors == [], f"console errors on {where}: {errors}"


def fits_width(tab: Tab) -> tuple[bool, int, int]:
    widths = tab.eval("[document.documentElement.scrollWidth, window.innerWidth]")
    return widths[0] <= widths[1] + 1, widths[0], widths[1]


@pytest.mark.slow
def test_submit_validate_and_view_in_a_browser(site: Site, browser: Chromium,  # noqa: F811
                                               tmp_path: Path) -> None:
    good = tmp_path / "alice-random.zip"
    good.write_bytes(bot_zip(BOT, description="plays a legal move at random"))
    crashing = tmp_path / "alice-random-v2.zip"
    crashing.write_bytes(bot_zip(BOT, source=CRASHING_BOT))
    files_url = f"{site.url}/api/v1/bots/{BOT}/versions/1/files"
    refusal = f"status of 403 (Forbidden) ({files_url})"   # the one error bob's tab may log

    # 1. alice signs in, uploads through the form, watches the verdict arrive.
    alice = sign_in(browser, site.url, "alice", "alice-password-1")
    upload_through_form(alice, site.url, good, 1)
    assert await_verdict(alice) == "valid"
    owner_steps = steps_shown(alice)
    assert len(owner_steps) >= 3, owner_steps   # handshake, target at 3 players, quit
    assert all(step["ok"] and step["mark"] == "ok" for step in owner_steps), owner_steps
    assert all(step["detail"] for step in owner_steps), f"owner sees no details: {owner_steps}"
    assert "target, 3 players" in " ".join(str(step["text"]) for step in owner_steps)
    assert download_links(alice) == 1
    assert alice.eval(f"fetch({json.dumps(files_url)}).then(r => r.status + ' ' + "
                      "r.headers.get('content-type'))") == "200 application/zip"
    alice.screenshot(tmp_path / "serve-valid-owner.png")
    assert_no_errors(alice, "alice's sign-in, submit and version pages")

    # 2. bob, in a tab of his own, sees the bot but nothing private.
    bob = sign_in(browser, site.url, "bob", "bob-password-22")
    bob.navigate(f"{site.url}/bots/{BOT}")
    assert bob.text("h1") == BOT
    assert bob.text(".owner") == "alice"
    assert "plays as v1" in bob.text("main")
    assert bob.eval("document.querySelectorAll('table.versions tbody tr').length") == 1
    assert "v1" in bob.text("table.versions tbody")
    assert f"{len(owner_steps)}/{len(owner_steps)} passed" in bob.text("table.versions")
    assert download_links(bob) == 0
    assert not bob.exists("form[action$='/retire']")
    assert not bob.exists("textarea[name=description]")
    bob.navigate(f"{site.url}/bots/{BOT}/versions/1")
    assert bob.text("#state") == "valid"
    public_steps = steps_shown(bob)
    assert [step["mark"] for step in public_steps] == ["ok"] * len(owner_steps)
    assert not any(step["detail"] for step in public_steps), public_steps
    assert not bob.exists("#stderr")
    assert download_links(bob) == 0
    bob.screenshot(tmp_path / "serve-valid-public.png")
    assert_no_errors(bob, "bob's views of alice's bot")
    bob.navigate(files_url)
    assert bob.status() == 403
    assert_no_errors(bob, "bob's refused download", expected=refusal)

    # 3. alice's second version crashes: FAIL at the match, with her stderr.
    upload_through_form(alice, site.url, crashing, 2)
    assert await_verdict(alice) == "failed"
    failed_steps = steps_shown(alice)
    assert failed_steps[0]["ok"] and "handshake" in str(failed_steps[0]["text"])
    failing = [step for step in failed_steps if not step["ok"]]
    assert len(failing) == 1 and failing[0]["mark"] == "FAIL", failed_steps
    assert "target, 3 players" in str(failing[0]["text"]) and failing[0]["detail"]
    stderr = alice.text("#stderr")
    assert "dividing by zero now" in stderr and "ZeroDivisionError" in stderr
    alice.screenshot(tmp_path / "serve-failed-owner.png")
    assert_no_errors(alice, "alice's failed version page")
    bob.navigate(f"{site.url}/bots/{BOT}/versions/2")
    assert [step["ok"] for step in steps_shown(bob)] == [step["ok"] for step in failed_steps]
    assert not bob.exists("#stderr") and not bob.exists(".detail")
    assert "dividing by zero" not in bob.text("main")
    assert_no_errors(bob, "bob's view of the failed version", expected=refusal)

    # 5. A phone: the bots table and the version pages fit the width.
    alice.send("Emulation.setDeviceMetricsOverride", PHONE)
    for path, shot in (("/", "serve-phone-bots.png"),
                       (f"/bots/{BOT}", "serve-phone-bot.png"),
                       (f"/bots/{BOT}/versions/1", ""),
                       (f"/bots/{BOT}/versions/2", "serve-phone-version.png"),
                       ("/submit", "serve-phone-submit.png")):
        alice.navigate(f"{site.url}{path}")
        if path == "/":
            assert BOT in alice.text("table.bots")
        assert alice.eval("window.innerWidth") == PHONE["width"]
        fits, scroll_width, width = fits_width(alice)
        assert fits, f"{path} is {scroll_width} px wide on a {width} px phone screen"
        if shot:
            alice.screenshot(tmp_path / shot)
    assert_no_errors(alice, "the phone-sized pages")
    alice.close()
    bob.close()
