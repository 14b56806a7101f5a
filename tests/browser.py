"""A headless Chromium for the browser tests, driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``: JSON messages ending in NUL
on fds 3 and 4), so it needs no websocket library, no port and no driver.

Two kinds of page use it: the static report and replay pages
(tests/test_pages.py: load, read the DOM, press keys, take screenshots) and
form-driven web apps (the submission server: sign in, fill a form, upload a
file, follow the redirect, wait for a verdict). For the second, ``Tab`` acts
like a user: it types with ``Input.insertText`` (so input events fire),
clicks with real mouse events at the element's centre (so a hidden, covered
or disabled button fails the test instead of being clicked by script), and
keeps the browser's cookies between navigations, so a session cookie set by
one page is sent with the next request. Every wait has a timeout, and every
failure says which page it was on and the console errors so far, because a
failed browser step is otherwise very hard to diagnose.

Without Chromium the tests that use the ``browser`` fixture fail, loudly,
unless ``CARD_LEAGUE_NO_BROWSER=1`` says to skip them
(``scripts/ensure-chromium`` installs it). ``CARD_LEAGUE_SCREENSHOTS=DIR``
keeps the screenshots there. tests/conftest.py registers the ``browser``
fixture (one Chromium per test module), so a test names it as an argument.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

WIDTH, HEIGHT = 1280, 1600
# Far beyond what a page of these tests takes on a quiet machine (well under
# a second): the limit turns a hang into a failure, it never times a pass.
TIMEOUT_S = 30.0
POLL_S = 0.05


def chromium_binary() -> str:
    if os.environ.get("CARD_LEAGUE_NO_BROWSER") == "1":
        pytest.skip("CARD_LEAGUE_NO_BROWSER=1: the HTML pages are not checked in a browser")
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        found = name and shutil.which(name)
        if found:
            return found
    pytest.fail("NO CHROMIUM FOUND: the HTML pages cannot be checked in a browser. "
                "Run `sh scripts/ensure-chromium` (as root it installs Debian's chromium), set "
                "CHROMIUM=/path/to/chromium, or set CARD_LEAGUE_NO_BROWSER=1 to skip these "
                "tests knowingly.", pytrace=False)


# Puts the pipe on fds 3 (commands) and 4 (replies), where the browser looks
# for it, then becomes the browser (a shell cannot: dash refuses fds above 9).
TRAMPOLINE = """
import os, sys
fds = [os.dup(int(fd)) for fd in sys.argv[1:3]]
for fd in sys.argv[1:3]:
    os.close(int(fd))
os.dup2(fds[0], 3)
os.dup2(fds[1], 4)
for fd in fds:
    if fd not in (3, 4):
        os.close(fd)
os.set_inheritable(3, True)
os.set_inheritable(4, True)
os.execv(sys.argv[3], sys.argv[3:])
"""


class DevToolsError(RuntimeError):
    """The browser refused a command, closed the pipe or stopped answering."""


class DevToolsTimeout(DevToolsError):
    """Nothing (or not the awaited event) came from the browser in time."""


class PageError(AssertionError):
    """A page did not do what the test asked of it (no such element, no
    load, an expression never true); the message names the page's URL and
    its console errors so far. An AssertionError, so pytest reports it as
    the test's failure, not as a crash of the driver."""


class Chromium:
    """Headless Chromium, spoken to over --remote-debugging-pipe."""

    def __init__(self, binary: str, profile: Path) -> None:
        command_read, self.command_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        self.log = profile / "chromium.log"
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--no-default-browser-check",
                 "--allow-file-access-from-files", f"--user-data-dir={profile}",
                 "--remote-debugging-pipe", f"--window-size={WIDTH},{HEIGHT}", "about:blank"]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", TRAMPOLINE, str(command_read), str(reply_write), binary,
                 *flags], pass_fds=(command_read, reply_write),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        os.close(command_read)
        os.close(reply_write)
        self.buffer = b""
        self.events: list[dict[str, Any]] = []
        self.next_id = 0

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.reply_read], [], [], left)[0]:
                raise DevToolsTimeout(f"Chromium did not answer; its log:\n{self.log_tail()}")
            chunk = os.read(self.reply_read, 1 << 20)
            if not chunk:
                raise DevToolsError(f"Chromium closed the pipe; its log:\n{self.log_tail()}")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.command_write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise DevToolsError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """The first queued or coming event ``method`` of ``session``, taken
        off the queue."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    self.events.remove(event)
                    return event
            self.events.append(self._read(deadline))

    def drop_events(self, method: str, session: str) -> None:
        """Forget queued ``method`` events of ``session``, so that a wait that
        follows sees only new ones."""
        self.events = [event for event in self.events
                       if not (event.get("method") == method and event.get("sessionId") == session)]

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except DevToolsError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.command_write)
        os.close(self.reply_read)


# Runs in the page: the element for a selector, or why it cannot be acted on.
# `reason` is empty when the element is there and (for a click) can be hit.
FIND_ELEMENT = """
((selector, forClick) => {
  const element = document.querySelector(selector);
  if (!element) return {reason: 'no element matches ' + JSON.stringify(selector)};
  if (!forClick) return {reason: ''};
  element.scrollIntoView({block: 'center', inline: 'center'});
  const box = element.getBoundingClientRect();
  if (box.width === 0 || box.height === 0)
    return {reason: JSON.stringify(selector) + ' is not visible (its box is ' +
                    box.width + ' x ' + box.height + ' px)'};
  if (element.disabled) return {reason: JSON.stringify(selector) + ' is disabled'};
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  const hit = document.elementFromPoint(x, y);
  if (hit !== element && !element.contains(hit))
    return {reason: JSON.stringify(selector) + ' is covered at its centre by ' +
                    (hit ? hit.outerHTML.slice(0, 120) : 'nothing (outside the viewport)')};
  return {reason: '', x, y};
})
"""

# Input types that take a click or a choice, not typed text.
NOT_TYPED = ["button", "submit", "reset", "checkbox", "radio", "file", "image", "hidden",
             "range", "color"]


class Tab:
    """One page, opened fresh (so a ``#step=N`` URL is a real first load).

    ``private=True`` opens it in a browser context of its own (its own
    cookies, like an incognito window): two private tabs are two users.
    Tabs that are not private share the browser's default cookie jar."""

    def __init__(self, browser: Chromium, url: str, *, private: bool = False,
                 timeout: float = TIMEOUT_S) -> None:
        self.browser = browser
        self.context: str | None = None
        target_params: dict[str, Any] = {"url": "about:blank"}
        if private:
            self.context = browser.send("Target.createBrowserContext")["browserContextId"]
            target_params["browserContextId"] = self.context
        self.target = browser.send("Target.createTarget", target_params)["targetId"]
        self.session = browser.send("Target.attachToTarget",
                                    {"targetId": self.target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.send(method)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
        self.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        self.navigate(url, timeout=timeout)

    # ---- the protocol ---------------------------------------------------------
    def send(self, method: str, params: dict[str, Any] | None = None,
             timeout: float = TIMEOUT_S) -> dict[str, Any]:
        return self.browser.send(method, params, self.session, timeout=timeout)

    def eval(self, expression: str) -> Any:
        """The expression's value as JSON (a DOM node comes back as {});
        a thrown exception raises DevToolsError."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def url(self) -> str:
        """The page's address, asked of the browser rather than the page, so
        it answers even while the page is busy or between documents."""
        try:
            info = self.browser.send("Target.getTargetInfo", {"targetId": self.target},
                                     timeout=5)
        except DevToolsError as exc:
            return f"(unknown: {exc})"
        return str(info["targetInfo"]["url"])

    def fail(self, what: str) -> PageError:
        """A PageError saying ``what`` went wrong, on which page, with the
        console errors so far (raise it)."""
        errors = self.errors(flush=False)
        listed = "".join(f"\n    {error}" for error in errors) if errors else " none"
        return PageError(f"{what}\n  page: {self.url()}\n  console errors so far:{listed}")

    # ---- navigation -----------------------------------------------------------
    def navigate(self, url: str, timeout: float = TIMEOUT_S) -> None:
        """Open ``url`` in this tab and wait for its load event. Cookies the
        browser holds go with the request, as in a user's browser."""
        self.browser.drop_events("Page.loadEventFired", self.session)
        navigated = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if navigated.get("errorText"):
            raise self.fail(f"cannot open {url}: {navigated['errorText']}")
        if navigated.get("loaderId"):   # none for a change of #fragment: no load follows
            self.wait_for_load(timeout, f"the load event of {url}")

    def wait_for_load(self, timeout: float = TIMEOUT_S, what: str = "a page load") -> None:
        try:
            self.browser.wait_for("Page.loadEventFired", self.session, timeout)
        except DevToolsTimeout:
            raise self.fail(f"timed out after {timeout:g} s waiting for {what}") from None

    def status(self) -> int | None:
        """The HTTP status of the latest document this tab received (after
        redirects: the final page's), or None before any (file:// pages)."""
        for event in reversed(self.browser.events):
            params = event.get("params", {})
            if (event.get("sessionId") == self.session
                    and event.get("method") == "Network.responseReceived"
                    and params.get("type") == "Document"
                    and params.get("frameId") == self.target):
                return int(params["response"]["status"])
        return None

    # ---- waiting --------------------------------------------------------------
    def wait_for(self, expression: str, timeout: float = TIMEOUT_S) -> Any:
        """Evaluate ``expression`` (JavaScript, may be a promise) until it is
        truthy, as JavaScript judges it, and return its value as JSON. While
        it throws (say, its element is not there yet) it counts as false."""
        wrapped = (f"(async () => {{ const value = await (\n{expression}\n);"
                   " return {truthy: !!value, value}; })()")
        deadline = time.monotonic() + timeout
        last = "never evaluated"
        while True:
            try:
                result = self.eval(wrapped)
                if result["truthy"]:
                    return result["value"]
                last = f"last value: {json.dumps(result.get('value'))[:200]}"
            except DevToolsError as exc:   # thrown, or the page was between documents
                last = f"last error: {str(exc)[-300:]}"
            if time.monotonic() >= deadline:
                raise self.fail(f"timed out after {timeout:g} s waiting for {expression!r} "
                                f"to be true ({last})")
            time.sleep(POLL_S)

    def _element(self, selector: str, for_click: bool, timeout: float) -> dict[str, Any]:
        """Wait for ``selector`` to match (and, for a click, to be visible,
        enabled and uncovered); its centre in viewport pixels for a click."""
        script = f"{FIND_ELEMENT}({json.dumps(selector)}, {json.dumps(for_click)})"
        deadline = time.monotonic() + timeout
        while True:
            try:
                found: dict[str, Any] = self.eval(script)
            except DevToolsError as exc:   # a malformed selector, or between documents
                found = {"reason": str(exc)[-300:]}
            if not found["reason"]:
                return found
            if time.monotonic() >= deadline:
                raise self.fail(f"timed out after {timeout:g} s: {found['reason']}")
            time.sleep(POLL_S)

    # ---- reading --------------------------------------------------------------
    def exists(self, selector: str) -> bool:
        """Whether ``selector`` matches an element now (no waiting)."""
        return bool(self.eval(f"document.querySelector({json.dumps(selector)}) !== null"))

    def text(self, selector: str, timeout: float = TIMEOUT_S) -> str:
        """The element's rendered text (innerText), once it exists."""
        self._element(selector, False, timeout)
        return str(self.eval(f"document.querySelector({json.dumps(selector)}).innerText"))

    # ---- acting ---------------------------------------------------------------
    def click(self, selector: str, timeout: float = TIMEOUT_S) -> None:
        """Click the element's centre with real mouse events
        (Input.dispatchMouseEvent), not element.click(): the browser
        hit-tests the point as for a user, so a hidden, disabled or covered
        button fails here instead of being clicked by script."""
        found = self._element(selector, True, timeout)
        point = {"x": found["x"], "y": found["y"]}
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", **point})
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": kind, "button": "left", "buttons": 1, "clickCount": 1, **point})

    def click_and_wait_for_load(self, selector: str, timeout: float = TIMEOUT_S) -> None:
        """Click (a submit button, a link) and wait for the page it leads to
        to load, through any redirects."""
        self.browser.drop_events("Page.loadEventFired", self.session)
        self.click(selector, timeout)
        self.wait_for_load(timeout, f"a page load after clicking {selector!r}")

    def fill(self, selector: str, text: str, timeout: float = TIMEOUT_S) -> None:
        """Replace the field's text by typing ``text`` into it
        (Input.insertText), so input events fire as when a user types."""
        self._element(selector, False, timeout)
        ready = self.eval(f"""((element, NOT_TYPED) => {{
            const typed = element instanceof HTMLTextAreaElement ||
              (element instanceof HTMLInputElement && !NOT_TYPED.includes(element.type));
            if (!typed) return element.tagName + ' is not a field one types into';
            if (element.disabled || element.readOnly) return 'it is disabled or read-only';
            element.focus();
            if (document.activeElement !== element) return 'it cannot take the focus';
            element.value = '';
            return '';
        }})(document.querySelector({json.dumps(selector)}), {json.dumps(NOT_TYPED)})""")
        if ready:
            raise self.fail(f"cannot type into {selector!r}: {ready}")
        if text:
            self.send("Input.insertText", {"text": text})
        else:   # typing nothing fires nothing: say the field changed
            self.eval(f"document.querySelector({json.dumps(selector)})"
                      ".dispatchEvent(new Event('input', {bubbles: true}))")

    def select(self, selector: str, value: str, timeout: float = TIMEOUT_S) -> None:
        """Choose the option whose value is ``value`` in a <select>, and fire
        the input and change events a user's choice fires."""
        self._element(selector, False, timeout)
        refused = self.eval(f"""((element, value) => {{
            if (element.tagName !== 'SELECT') return element.tagName + ' is not a <select>';
            const values = [...element.options].map(option => option.value);
            if (!values.includes(value))
              return 'no option ' + JSON.stringify(value) + ' among ' + JSON.stringify(values);
            element.value = value;
            element.dispatchEvent(new Event('input', {{bubbles: true}}));
            element.dispatchEvent(new Event('change', {{bubbles: true}}));
            return '';
        }})(document.querySelector({json.dumps(selector)}), {json.dumps(value)})""")
        if refused:
            raise self.fail(f"cannot select in {selector!r}: {refused}")

    def set_files(self, selector: str, paths: Sequence[Path | str],
                  timeout: float = TIMEOUT_S) -> None:
        """Put these files in an <input type=file>, as a user's file chooser
        would (DOM.setFileInputFiles; the input fires its change event)."""
        files = [str(Path(path).resolve()) for path in paths]
        missing = [path for path in files if not Path(path).is_file()]
        if missing:
            raise self.fail(f"cannot choose files for {selector!r}: no such file {missing}")
        self._element(selector, False, timeout)
        root = self.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = self.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        if not node:
            raise self.fail(f"cannot choose files: no element matches {selector!r}")
        try:
            self.send("DOM.setFileInputFiles", {"files": files, "nodeId": node})
        except DevToolsError as exc:
            raise self.fail(f"cannot choose files for {selector!r}: {exc}") from None

    def press(self, key: str) -> None:
        codes = {"ArrowLeft": 37, "ArrowRight": 39, "Home": 36, "End": 35}
        for kind in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key,
                                                 "windowsVirtualKeyCode": codes[key]})

    # ---- what the page did ----------------------------------------------------
    def errors(self, flush: bool = True) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (a
        resource that failed to load, with its URL) of this page, and any
        dialog (alert) a script opened. ``flush`` first lets the page hand
        over what it queued (skipped when reporting a failure, where the
        page may not answer)."""
        if flush:
            self.eval("0")
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                thrown = details.get("exception", {}).get("description") or details.get("text")
                found.append(f"uncaught: {thrown} (line {details.get('lineNumber')} of "
                             f"{details.get('url') or 'an inline script'})")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                words = [str(arg.get("value", arg.get("description", arg.get("type"))))
                         for arg in params.get("args", [])]
                found.append(f"console.{params['type']}: {' '.join(words)}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                entry = params["entry"]
                where = f" ({entry['url']})" if entry.get("url") else ""
                found.append(f"log: {entry.get('text')}{where}")
            elif method == "Page.javascriptDialogOpening":
                found.append(f"dialog: {params.get('message')}")
        return found

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        path.write_bytes(data)
        keep = os.environ.get("CARD_LEAGUE_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)
        return data

    def close(self) -> None:
        """Close the tab (and its private context: its cookies go with it)."""
        self.browser.send("Target.closeTarget", {"targetId": self.target})
        if self.context:
            self.browser.send("Target.disposeBrowserContext",
                              {"browserContextId": self.context})


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    """One headless Chromium for the test module (registered in conftest)."""
    binary = chromium_binary()
    chromium = Chromium(binary, tmp_path_factory.mktemp("chromium"))
    try:
        version = chromium.send("Browser.getVersion", timeout=60)
    except DevToolsError as exc:
        chromium.process.kill()
        pytest.fail(f"CHROMIUM ({binary}) DOES NOT START: {exc}", pytrace=False)
    assert "Chrome" in version["product"] or "Chromium" in version["product"]
    yield chromium
    chromium.close()


def assert_png(data: bytes, width: int = WIDTH, height: int = HEIGHT,
               min_bytes: int = 40_000) -> None:
    """A PNG of the window's size, big enough to hold more than a blank page."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert struct.unpack(">II", data[16:24]) == (width, height)
    assert len(data) > min_bytes, f"a {len(data)}-byte screenshot: is the page blank?"
