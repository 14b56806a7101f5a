"""Bots' text is escaped wherever it is shown (harness.proc.safe_text), and stored
as it came. The end-to-end test plays a real league with a bot whose stderr
and ``hello`` name hold terminal escape sequences, then runs every command
that shows them."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.proc.safe_text import printable
from harness.web.page import esc

ROOT = Path(__file__).resolve().parent.parent

# What must never reach a terminal raw: C0 but LF and TAB (a CR only before
# an LF), DEL, C1, and the format characters that reorder or hide text.
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e"
                       "\u2028\u2029\u2060-\u2064\u2066-\u2069\ufeff]|\r(?!\n)")


# ---- the function ------------------------------------------------------------------
@pytest.mark.parametrize("raw,shown", [
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),                       # clear the screen
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),                  # window title (OSC 0, BEL)
    ("\x1b]52;c;cHduZWQ=\x1b\\", "\\x1b]52;c;cHduZWQ=\\x1b\\"),  # clipboard (OSC 52, ST)
    ("\x1bP1$r\x1b\\", "\\x1bP1$r\\x1b\\"),                      # DCS
    ("\x9b31m\x9d0;t\x9c\x85", "\\x9b31m\\x9d0;t\\x9c\\x85"),    # C1: CSI, OSC, ST, NEL
    ("crash\rno faults", "crash\\rno faults"),                   # overwrite a line
    ("\x00\x08\x7f", "\\x00\\x08\\x7f"),                          # NUL, backspace, DEL
    ("abc\u202edcba", "abc\\u202edcba"),                         # right-to-left override
    ("\u2066\u2069\u200b\u200e\ufeff", "\\u2066\\u2069\\u200b\\u200e\\ufeff"),
    ("line\u2028sep", "line\\u2028sep"),
    ("tag\U000e0041", "tag\\U000e0041"),                         # invisible tag character
    ("lone \udcff", "lone \\udcff"),                             # a surrogate cannot be printed
])
def test_controls_and_invisible_characters_are_shown_as_escapes(raw, shown):
    assert printable(raw) == shown
    assert printable(raw, multiline=False) == shown


def test_ordinary_text_is_left_as_it_is():
    text = "Traceback (most recent call last):\n\tFile \"bot.py\", line 3\nnaïve 日本語 🙂 C:\\path"
    assert printable(text) == text


def test_one_line_fields_stay_one_line_and_logs_keep_their_lines():
    assert printable("a\nb\tc\r\nd", multiline=False) == "a\\nb\\tc\\r\\nd"
    assert printable("a\nb\tc\r\nd") == "a\nb\tc\r\nd", "a CR LF line end cannot overwrite"
    assert printable("a\r\rb\n") == "a\\r\\rb\n"


@settings(max_examples=300, deadline=None)
@given(st.text(), st.booleans())
def test_nothing_unsafe_survives_and_safe_text_is_unchanged(text, multiline):
    shown = printable(text, multiline)
    assert not FORBIDDEN.search(shown)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in shown)
    shown.encode("utf-8")  # printable on any terminal that takes UTF-8
    if not multiline:
        assert "\n" not in shown and "\t" not in shown
    if text.isascii() and text.isprintable():
        assert shown == text


def test_pages_escape_html_after_the_controls():
    assert esc("<b>\x1b]0;t\x07</b> & \u202e") == "&lt;b&gt;\\x1b]0;t\\x07&lt;/b&gt; &amp; \\u202e"


# ---- end to end: a real league, every command that shows a bot's text ---------------------
EVIL_STDERR = ("\x1b[2J\x1b[H"                       # clear the screen, cursor home
               "\x1b]0;pwned window title\x07"        # set the window title
               "\x1b]52;c;cHduZWQgY2xpcGJvYXJk\x07"   # write to the clipboard
               "crashed at decision 0\r"              # overwritten by the next words:
               "league: no faults, all bots clean\n"  # the forged all-clear
               "\u202eslaf era stluaf\n"              # reads 'faults are false' reversed
               "\x9b31m C1 CSI \x9d0;t\x9c\n")        # 8-bit controls, as UTF-8
HELLO_NAME = "evil\x1b]0;hello title\x07\u202e"
# A manifest's name is limited to NAME_PATTERN (an escape in it is refused as the
# manifest loads: tests/test_manifest_security.py); the hello name may hold anything.
NAME = "evil"
BOT = f"""import sys, msgpack
out = sys.stdout.buffer
unpacker = msgpack.Unpacker(raw=False)
while chunk := sys.stdin.buffer.read1(65536):
    unpacker.feed(chunk)
    for msg in unpacker:
        if msg["type"] == "hello":
            out.write(msgpack.packb({{"type": "hello", "protocol": 1, "name": {HELLO_NAME!r}}}))
            out.flush()
        elif msg["type"] == "act":
            sys.stderr.write({EVIL_STDERR!r})
            sys.stderr.flush()
            sys.exit(1)
        elif msg["type"] == "quit":
            sys.exit(0)
"""


def league(*args: str) -> str:
    """A real ``league`` process with its output piped: what a script or a
    pager gets (the same text a terminal gets, less click's CSI stripping)."""
    done = subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT,
                          capture_output=True, timeout=120)
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    return (done.stdout + done.stderr).decode("utf-8")


def assert_safe(output: str, where: str) -> None:
    unsafe = FORBIDDEN.search(output)
    assert unsafe is None, f"{where} printed {unsafe.group()!r} raw: ...{output[:2000]}"


@pytest.mark.slow
def test_a_bots_escape_sequences_reach_no_output_raw_and_are_stored_raw(tmp_path):
    bots = tmp_path / "evil"
    bots.mkdir()
    (bots / "bot.py").write_text(BOT)
    (bots / "evil.toml").write_text(f'name = {json.dumps(NAME)}\ncommand = ["{{python}}", "bot.py"]\n'
                                    'files = ["bot.py"]\ngames = "*"\n')
    path = tmp_path / "e2e.toml"
    path.write_text(f'name = "e2e"\ngame = "target"\nbots = ["random", {json.dumps(NAME)}]\n'
                    "players = 2\ndeals = 1\n")
    db = str(tmp_path / "r.db")
    outputs = {"run": league("run", str(path), "--db", db, "--workers", "1", "--engine", "inline",
                             "--bots", str(bots), "--quiet")}
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT match_id, fault_stderr, bot FROM seats "
                              "WHERE fault_kind = 'crash'").fetchall()
    assert stored and all(stderr == EVIL_STDERR and bot.startswith(NAME + "@")
                          for _, stderr, bot in stored), "the database keeps the bytes as they came"
    match_id = stored[0][0]
    outputs["logs"] = league("logs", match_id, "--db", db)
    outputs["matches --fault"] = league("matches", "--db", db, "--fault", "crash")
    outputs["replay"] = league("replay", match_id, "--db", db)
    outputs["table"] = league("table", "e2e", "--db", db)
    outputs["bots"] = league("bots", "--bots", str(bots))
    outputs["play"] = league("play", "target", "random", NAME, "--bots", str(bots))
    outputs["check"] = league("check", NAME, "--game", "target", "--bots", str(bots))
    league("report", "e2e", "--db", db, "-o", str(tmp_path / "report.html"))
    league("replay", match_id, "--db", db, "--html", str(tmp_path / "replay.html"))
    for page in ("report.html", "replay.html"):
        outputs[page] = (tmp_path / page).read_text()
    for where, output in outputs.items():
        assert_safe(output, where)
    for where in ("logs", "replay", "play", "replay.html"):
        assert "\\x1b]52;c;cHduZWQgY2xpcGJvYXJk\\x07" in outputs[where], where
        assert "crashed at decision 0\\rleague: no faults" in outputs[where], where
        assert "\\u202eslaf era stluaf" in outputs[where], where
    assert "\\x9b31m C1 CSI \\x9d0;t\\x9c" in outputs["logs"]
    assert "\\x1b]0;pwned window title\\x07" in outputs["matches --fault"]
    assert "\\x1b]0;hello title\\x07\\u202e" in outputs["check"], "the hello name, escaped"
