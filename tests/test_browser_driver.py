"""The browser driver (tests/browser.py) against a small form app on
loopback: http.server in a thread serves a form (a text field, a select, a
file input, a submit that posts multipart), sets a session cookie on the
first page, and after the upload redirects to a page that shows what it
received and whether the cookie came with it. A second page fails on
purpose, to show that the driver's failures name the page and its console
errors. Like the other browser tests, these fail loudly without Chromium
unless CARD_LEAGUE_NO_BROWSER=1."""

from __future__ import annotations

import email.message
import email.parser
import email.policy
import hashlib
import html
import secrets
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.browser import Chromium, PageError, Tab

FORM_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>form</title>
<link rel="icon" href="data:,"></head><body>
<form method="post" action="/upload" enctype="multipart/form-data">
  <input id="who" name="who"> <output id="echo"></output>
  <select id="colour" name="colour">
    <option value="red">Red</option><option value="green">Green</option>
    <option value="blue">Blue</option></select> <output id="chosen"></output>
  <input id="upload" name="upload" type="file"> <output id="picked"></output>
  <button id="send" type="submit">Send</button>
</form>
<button id="count" type="button">Count</button> <output id="clicks">0</output>
<script>
  const show = (id, text) => { document.getElementById(id).textContent = text; };
  document.getElementById('who').addEventListener('input', e => show('echo', e.target.value));
  document.getElementById('colour').addEventListener('change', e => show('chosen', e.target.value));
  document.getElementById('upload').addEventListener('change',
    e => show('picked', [...e.target.files].map(f => f.name + ':' + f.size).join(',')));
  document.getElementById('count').addEventListener('click', e => {
    window.trustedClick = e.isTrusted;   // true only for an event the browser made
    show('clicks', String(Number(document.getElementById('clicks').textContent) + 1));
  });
</script></body></html>"""

BROKEN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>broken</title>
<link rel="icon" href="data:,"></head><body>
<button id="hidden" style="display:none">hidden</button>
<button id="covered" style="position:absolute;top:10px;left:10px">covered</button>
<div id="cover" style="position:absolute;top:0;left:0;width:300px;height:100px"></div>
<div style="margin-top:200px"><select id="colour"><option value="red">Red</option></select>
<button id="stay" type="button">goes nowhere</button></div>
<script>console.error('deliberate failure for the test');</script></body></html>"""


@dataclass
class Upload:
    fields: dict[str, str]
    filename: str
    content: bytes
    cookie: str


@dataclass
class FormApp:
    """What the app saw: the session token it issued, and the Cookie header
    of each request by path."""
    base: str
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    cookies: list[tuple[str, str]] = field(default_factory=list)
    uploads: list[Upload] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def parse_form(content_type: str, body: bytes, cookie: str) -> Upload:
    """A multipart/form-data body: its text fields and its one file."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    assert isinstance(message, email.message.EmailMessage)
    fields: dict[str, str] = {}
    filename, content = "", b""
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        if part.get_filename():
            filename, content = str(part.get_filename()), payload
        else:
            fields[str(part.get_param("name", header="content-disposition"))] = payload.decode()
    return Upload(fields, filename, content, cookie)


def make_handler(app: FormApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:   # quiet tests
            pass

        def answer(self, status: int, body: str = "", headers: dict[str, str] | None = None) -> None:
            data = body.encode()
            self.send_response(status)
            for name, value in {"Content-Type": "text/html; charset=utf-8",
                                "Content-Length": str(len(data)), **(headers or {})}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            cookie = self.headers.get("Cookie", "")
            with app.lock:
                app.cookies.append((self.path, cookie))
            if self.path == "/":
                # a new session only for a browser that brings none, as a server does
                fresh = {} if cookie else {
                    "Set-Cookie": f"visit={app.token}; Path=/; HttpOnly; SameSite=Lax"}
                self.answer(200, FORM_PAGE, fresh)
            elif self.path == "/broken":
                self.answer(200, BROKEN_PAGE)
            elif self.path.startswith("/result/"):
                self.answer(200, self.result_page(int(self.path.rsplit("/", 1)[1]), cookie))
            else:
                self.answer(404, "not here")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            upload = parse_form(self.headers.get("Content-Type", ""), self.rfile.read(length),
                                self.headers.get("Cookie", ""))
            with app.lock:
                app.uploads.append(upload)
                number = len(app.uploads) - 1
            self.answer(303, "", {"Location": f"/result/{number}"})   # post, redirect, get

        def result_page(self, number: int, cookie: str) -> str:
            upload = app.uploads[number]
            shown = {"who": upload.fields.get("who", ""), "colour": upload.fields.get("colour", ""),
                     "filename": upload.filename, "size": str(len(upload.content)),
                     "sha256": hashlib.sha256(upload.content).hexdigest(),
                     "post-cookie": upload.cookie, "get-cookie": cookie}
            rows = "".join(f'<p><span id="{key}">{html.escape(value)}</span></p>'
                           for key, value in shown.items())
            return f'<!doctype html><html><head><link rel="icon" href="data:,"></head><body>{rows}</body></html>'

    return Handler


@pytest.fixture
def form_app() -> Iterator[FormApp]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    app = FormApp(f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = make_handler(app)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield app
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.slow
def test_a_form_round_trip_keeps_the_session_cookie(browser: Chromium, form_app: FormApp,
                                                    tmp_path: Path) -> None:
    upload = tmp_path / "bot.py"
    content = bytes(range(256)) * 7 + "# é\n".encode()   # every byte value, and UTF-8
    upload.write_bytes(content)
    session = f"visit={form_app.token}"

    tab = Tab(browser, form_app.base + "/", private=True)
    assert tab.status() == 200 and tab.exists("#send") and not tab.exists("#nothing")
    tab.fill("#who", "Ada <b>&")
    assert tab.wait_for("document.getElementById('echo').textContent") == "Ada <b>&"
    tab.fill("#who", "Ada Lovelace")   # replaces, not appends
    assert tab.wait_for("document.getElementById('echo').textContent") == "Ada Lovelace"
    tab.select("#colour", "green")
    assert tab.text("#chosen") == "green"
    tab.set_files("#upload", [upload])
    assert tab.wait_for("document.getElementById('picked').textContent") == \
        f"bot.py:{len(content)}"
    tab.click("#count")
    assert tab.wait_for("document.getElementById('clicks').textContent === '1' && "
                        "window.trustedClick") is True

    tab.click_and_wait_for_load("#send")
    assert tab.url() == form_app.base + "/result/0" and tab.status() == 200
    assert tab.text("#who") == "Ada Lovelace" and tab.text("#colour") == "green"
    assert tab.text("#filename") == "bot.py" and tab.text("#size") == str(len(content))
    assert tab.text("#sha256") == hashlib.sha256(content).hexdigest()
    assert tab.text("#post-cookie") == session and tab.text("#get-cookie") == session
    assert form_app.uploads[0].content == content
    assert tab.errors() == []

    tab.navigate(form_app.base + "/")   # the cookie stays for the next navigation
    assert form_app.cookies[-1] == ("/", session)
    other = Tab(browser, form_app.base + "/", private=True)   # another user: no cookie
    assert form_app.cookies[-1] == ("/", "")
    assert tab.errors() == [] and other.errors() == []
    other.close()
    tab.close()


@pytest.mark.slow
def test_driver_failures_name_the_page_and_its_console_errors(
        browser: Chromium, form_app: FormApp, tmp_path: Path) -> None:
    page = form_app.base + "/broken"
    tab = Tab(browser, page, private=True)
    assert any("deliberate failure for the test" in error for error in tab.errors())
    # The timeouts are short only because these conditions can never come true.
    failures = {
        "timed out after 0.3 s waiting for 'false' to be true":
            lambda: tab.wait_for("false", timeout=0.3),
        "\"#hidden\" is not visible (its box is 0 x 0 px)": lambda: tab.click("#hidden", timeout=0.3),
        "\"#covered\" is covered at its centre by <div id=\"cover\"":
            lambda: tab.click("#covered", timeout=0.3),
        "no element matches \"#missing\"": lambda: tab.fill("#missing", "x", timeout=0.3),
        "no option \"purple\" among [\"red\"]": lambda: tab.select("#colour", "purple"),
        "BUTTON is not a field one types into": lambda: tab.fill("#covered", "x"),
        "no such file": lambda: tab.set_files("#upload", [tmp_path / "absent.py"]),
        "timed out after 0.3 s waiting for a page load after clicking '#colour'":
            lambda: tab.click_and_wait_for_load("#colour", timeout=0.3),
    }
    for expected, action in failures.items():
        with pytest.raises(PageError) as failure:
            action()
            pytest.fail(f"no failure where expected: {expected}")
        message = str(failure.value)
        assert expected in message, message
        assert f"page: {page}" in message and "console.error: deliberate failure for the test" in message

    with socket.socket() as probe:   # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    with pytest.raises(PageError, match=f"cannot open {closed}: net::ERR_CONNECTION_REFUSED"):
        tab.navigate(closed)
    tab.close()
