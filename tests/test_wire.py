"""The wire: both encodings (MessagePack, JSON lines), text on stdout named
as such from any language, raw bytes in --trace, output after the last
reply caught by `league check`. Real bot processes in the real sandbox where
a language matters (C built with the system's cc, Python, Node)."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.proc import botproc
from harness.proc.botproc import (
    MAX_REPLY_BYTES,
    BotBadMessage,
    BotIllegalAction,
    JsonReplyReader,
    ReplyReader,
    message_encoder,
)
from tests.test_botproc import LEGAL
from tests.test_botproc import choose_from_bytes as choose_from  # with the protocol given
from tests.test_cli import league

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).parent / "bots"
TEXT_FAULT = "your bot wrote text to stdout (use stderr for debug output)"


def json_line(value) -> bytes:
    return json.dumps(value).encode() + b"\n"


def nesting(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    return 0


# ---- the JSON reader: the msgpack reader's guarantees --------------------------------
json_scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | \
    st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=5) |
    st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=30)
json_replies = st.fixed_dictionaries(
    {"type": st.sampled_from(["action", "hello", 1, None])},
    optional={"index": json_values | st.integers(-3, 6),
              "action": json_values | st.sampled_from([list(a) if isinstance(a, tuple) else a
                                                       for a in LEGAL]),
              "decision": json_values | st.just(0)}) | json_values


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_give_an_action_or_a_fault_in_json(data):
    choose_from(data, "json")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_replies)
def test_arbitrary_json_values_give_an_action_or_a_fault(reply):
    choose_from(json_line(reply), "json")


json_tokens = st.sampled_from([b"{", b"}", b"[", b"]", b",", b":", b'"k"', b"0", b"1e999", b"-",
                               b"NaN", b"\n", b"\r\n", b" ", b'"\\u00e9"', b'"\\ud800"', b"\xff",
                               b"true", b"null", b'{"type":"action","index":0}\n']) | \
    st.binary(max_size=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(json_tokens, max_size=600).map(b"".join), max_size=6))
def test_any_bytes_in_any_chunks_give_json_messages_or_a_bad_message(chunks):
    """The JSON reader fed as a pipe delivers: only BotBadMessage comes out,
    whatever the bytes and however they are split, and it never holds more
    than MAX_REPLY_BYTES."""
    reader = JsonReplyReader()
    try:
        for chunk in chunks:
            reader.feed(chunk)
            assert reader.buffered() <= MAX_REPLY_BYTES
            complete = True
            while complete:
                complete, message = reader.next_message()
                assert not complete or (type(message) is dict
                                        and nesting(message) <= botproc.MAX_DEPTH)
    except BotBadMessage:
        pass


@pytest.mark.parametrize("line,words", [
    (b'{"type":"action","index":1e999}\n', "index must be an int"),       # inf: no int
    (b'{"type":"action","index":' + b"9" * 4000 + b"}\n", "64-bit"),      # fits the line
    (b'{"type":"action","index":' + b"9" * 5000 + b"}\n", "larger than"),  # does not
    (b'{"type":"action","index":NaN}\n', "not valid JSON"),
    (b'{"type":"action","index":-Infinity}\n', "not valid JSON"),
    (b'{"type":"action","index":0,"x":"\xff"}\n', "not valid UTF-8"),
    (b'{"x":' + b"[" * 3000 + b"]" * 3000 + b"}\n", "larger than"),
    (b'{"x":' + b"[" * 1500 + b"]" * 1500 + b"}\n", "nested deeper"),      # past recursion
    (b'{"x":' + b"[" * 300 + b"]" * 300 + b"}\n", "nested deeper"),
    (b'{"x":[[[[[[[[0]]]]]]]]}\n', "nested deeper"),                      # 9 levels
    (b'{"x":[' + b"0," * 64 + b"0]}\n", "caps"),                          # 65 items
    (b'{"x":"' + b"x" * 1025 + b'"}\n', "caps"),                          # a 1025-byte string
    (b'{"type":"action","index":0}', None),                               # no newline yet
    (b"[0]\n", "must be a JSON object, got an array"),
    (b"true\r\n", "must be a JSON object, got a boolean"),
    (b"\n", "not valid JSON"),
    (b"debug", TEXT_FAULT),                                               # judged at once
    (b"thinking\n", TEXT_FAULT),
    (b'\x81\xa4type\xa6action', 'looks like MessagePack'),
    (b'{"type":"action","index":0}{"type":"action","index":1}\n', "not valid JSON"),
    (b'{"type":"action","index":0}\n{"type":"action","index":1}\n', "more than one message"),
])
def test_hostile_json_lines_are_a_bad_message(line, words):
    outcome = choose_from(line, "json")
    if words is None:
        assert outcome.kind == "timeout", outcome  # the fake's "incomplete reply"
    else:
        assert isinstance(outcome, BotBadMessage), outcome
        assert words in outcome.detail, outcome.detail


def test_a_line_without_newline_is_refused_at_the_cap_not_held_forever():
    reader = JsonReplyReader()
    reader.feed(b'{"x":"' + b"a" * (MAX_REPLY_BYTES - 10))
    assert reader.next_message() == (False, None)
    with pytest.raises(BotBadMessage, match=f"larger than the protocol allows \\({MAX_REPLY_BYTES}"):
        reader.feed(b"a" * 20)


def test_json_replies_read_like_msgpack_ones():
    """CR LF is accepted; a key given twice keeps its last value (as the
    MessagePack reader does); an action answered by value compares as in
    MessagePack (arrays element-wise, true is not 1)."""
    assert choose_from(b'{"type":"action","index":2,"decision":0}\r\n', "json") == 2
    assert choose_from(b'  {"type":"action","index":0,"index":1}\n', "json") == 1
    assert choose_from(msgpack.packb({"type": "action", "index": 0, "index2": 1}),
                       "msgpack") == 0
    assert choose_from(json_line({"type": "action", "action": [2, "y"]}), "json") == 1
    assert choose_from(json_line({"type": "action", "action": "pass"}), "json") == 3
    assert isinstance(choose_from(json_line({"type": "action", "action": True}), "json"),
                      BotIllegalAction)
    assert isinstance(choose_from(json_line({"type": "action", "action": 3.0}), "json"), int)


def test_the_harness_writes_plain_ascii_json_lines():
    encode = message_encoder("json")
    data = encode({"type": "act", "obs": {"name": "caf\u00e9", "x": (1, 2)}, "legal": ["a"]})
    assert data.endswith(b"\n") and data.count(b"\n") == 1 and b" " not in data
    assert data.isascii() and b"\\u00e9" in data
    assert json.loads(data) == {"type": "act", "obs": {"name": "caf\u00e9", "x": [1, 2]},
                                "legal": ["a"]}
    assert message_encoder("msgpack")({"type": "quit"}) == msgpack.packb({"type": "quit"})


def test_reading_a_json_reply_runs_no_python_code_per_value():
    """As the MessagePack reader's cost test: counted calls, not time. The
    JSON reader's caps go through C (json, then msgpack under the same caps)."""
    def python_calls(data: bytes) -> int:
        calls = 0

        def count(frame, event, arg):
            nonlocal calls
            calls += event == "call"

        reader = JsonReplyReader()
        sys.setprofile(count)
        try:
            reader.feed(data)
            reader.next_message()
        except BotBadMessage:
            pass
        finally:
            sys.setprofile(None)
        return calls

    flat = python_calls(b'{"type":"action","index":1}\n')
    for body in (b"[]," * 1300, b"{}," * 1300, b"1," * 2000, b'"x",' * 1000, b"[[[[[0]]]]]," * 350,
                 b"[" * 2000):
        line = b'{"type":"action","index":0,"x":[' + body + b"0]}\n"
        assert python_calls(line[:MAX_REPLY_BYTES - 1] + b"\n") <= flat + 100, body[:12]


# ---- the protocol field and the SDK -------------------------------------------------
def write_manifest(folder: Path, extra: str) -> Path:
    (folder / "bot.py").write_text("")
    path = folder / "bot.toml"
    path.write_text(f'name = "b"\ncommand = ["{{python}}", "bot.py"]\nfiles = ["bot.py"]\n{extra}')
    return path


def test_a_manifest_names_its_encoding_or_is_refused(tmp_path):
    from harness.proc.catalog import ManifestError, load_manifest

    plain = load_manifest(write_manifest(tmp_path, ""))
    assert plain.protocol == "msgpack"
    version = plain.version_hash()
    assert load_manifest(write_manifest(tmp_path, 'protocol = "msgpack"\n')).version_hash() == version
    as_json = load_manifest(write_manifest(tmp_path, 'protocol = "json"\n'))
    assert as_json.protocol == "json" and as_json.version_hash() != version
    for bad in ('"xml"', '"JSON"', "1"):
        with pytest.raises(ManifestError, match="field 'protocol'") as refused:
            load_manifest(write_manifest(tmp_path, f"protocol = {bad}\n"))
        assert "msgpack" in str(refused.value) and "json" in str(refused.value)


@pytest.mark.parametrize("protocol", ["msgpack", "json"])
def test_the_sdk_speaks_the_encoding_the_harness_names(protocol, monkeypatch):
    from bots.sdk import Bot, run

    class Second(Bot):
        name = "second"

        def choose(self, obs, legal, time_left_ms):
            return len(legal) - 1

    encode = message_encoder(protocol)
    messages = [{"type": "hello", "protocol": 1}, {"type": "start", "seat": 0},
                {"type": "act", "decision": 7, "obs": {}, "legal": ["a", "b"], "time_left_ms": 9},
                {"type": "quit"}]
    out = io.BytesIO()
    monkeypatch.setenv("LEAGUE_PROTOCOL", protocol)
    run(Second(), stdin=io.BytesIO(b"".join(map(encode, messages))), stdout=out)
    reader = botproc.reply_reader(protocol)
    reader.feed(out.getvalue())
    replies = [reader.next_message()[1] for _ in range(2)]
    assert replies == [{"type": "hello", "protocol": 1, "name": "second"},
                       {"type": "action", "index": 1, "decision": 7}]
    assert not reader.buffered()


# ---- real bots: C with no library, text from any language, --trace, late output ------
@pytest.fixture(scope="module")
def c_bots(tmp_path_factory) -> Path:
    """tests/bots/c/c_json and c_printf, built with the system's C compiler
    in a folder of their own (the repository keeps no binaries; the folder
    is not on the other tests' bot path, where an unbuilt bot is refused)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc or gcc) on this machine: the C bots cannot be built")
    folder = tmp_path_factory.mktemp("c_bots")
    for name in ("c_json", "c_printf"):
        shutil.copytree(TEST_BOTS / "c" / name, folder / name)
        subprocess.run([compiler, "-O2", "-o", "bot", "bot.c"], cwd=folder / name, check=True)
    return folder


def test_a_c_bot_speaking_json_lines_plays_and_passes_check(c_bots):
    out = league("play", "limit", "c_json", "random", "random", "--bots", str(c_bots)).stdout
    assert "c_json" in out and "FAULT" not in out
    out = league("check", "c_json", "-g", "limit", "--bots", str(c_bots)).stdout
    assert "all checks passed" in out and "FAIL" not in out and "limit, 5 players" in out


@pytest.mark.slow
def test_a_c_bot_speaking_json_lines_plays_a_league(c_bots, tmp_path):
    import sqlite3

    (tmp_path / "json.toml").write_text(
        'name = "json"\ngame = "limit"\nbots = ["c_json", "random", "heuristic"]\n'
        "players = 3\ndeals = 1\nseed = 1\n")
    db = tmp_path / "results.db"
    result = league("run", str(tmp_path / "json.toml"), "--bots", str(c_bots), "--db", str(db),
                    "--workers", "1", "--max-matches", "3")
    assert "played 3 matches" in result.stdout + result.stderr
    with sqlite3.connect(db) as connection:
        seats = connection.execute("SELECT bot, fault_kind FROM seats").fetchall()
    assert len(seats) == 9 and [fault for _, fault in seats] == [None] * 9
    assert sum(bot.startswith("c_json@") for bot, _ in seats) == 3


def text_bots(folder: Path, c_bots: Path) -> dict[str, Path]:
    """Bots that write a debug line to stdout before their reply, each in its
    language's ordinary way: C printf (flushed with the reply), Python print
    with flush, Node console.log, and a JSON bot printing with Python."""
    sdk = (ROOT / "bots" / "sdk.py").read_text()
    bots = {"c_printf": c_bots / "c_printf" / "bot.toml"}
    for name, protocol in (("py_print", "msgpack"), ("py_print_json", "json")):
        (folder / name).mkdir()
        (folder / name / "sdk.py").write_text(sdk)
        (folder / name / "bot.py").write_text(
            "from sdk import Bot, run\n\nclass Talker(Bot):\n    name = 'talker'\n\n"
            "    def choose(self, obs, legal, time_left_ms):\n"
            "        print('thinking about', len(legal), 'actions', flush=True)\n"
            "        return 0\n\nrun(Talker())\n")
        (folder / name / "bot.toml").write_text(
            f'name = "{name}"\ncommand = ["{{python}}", "bot.py"]\nfiles = ["bot.py", "sdk.py"]\n'
            f'protocol = "{protocol}"\n')
        bots[name] = folder / name / "bot.toml"
    if shutil.which("node") is not None:
        (folder / "node_log").mkdir()
        source = (ROOT / "bots" / "js_random" / "bot.js").read_text()
        marker = "if (reply) process.stdout.write(encode(reply));"
        assert marker in source, "bots/js_random/bot.js changed: find where it replies"
        source = source.replace(marker, "if (reply) { console.log('thinking'); "
                                        "process.stdout.write(encode(reply)); }", 1)
        (folder / "node_log" / "bot.js").write_text(source)
        (folder / "node_log" / "bot.toml").write_text(
            'name = "node_log"\ncommand = ["node", "bot.js"]\nfiles = ["bot.js"]\n')
        bots["node_log"] = folder / "node_log" / "bot.toml"
    return bots


def test_text_on_stdout_is_named_at_the_first_decision_in_any_language(c_bots, tmp_path):
    from harness.match import BotPool, Limits, run_match
    from harness.proc.catalog import discover, load_manifest

    specs = {name: load_manifest(path) for name, path in text_bots(tmp_path, c_bots).items()}
    assert "node_log" in specs or shutil.which("node") is None
    pool = BotPool({**discover(), **specs}, Limits(decision_ms=5000, startup_ms=15000))
    try:
        for name in specs:
            result = run_match("limit", 1, [name, "random", "random"], pool, f"text-{name}")
            fault = result.faults[0]
            assert fault is not None and fault.kind == "bad_message", (name, fault)
            assert fault.decision == 0 and fault.detail.startswith(TEXT_FAULT), (name, fault)
            assert "thinking" in fault.detail or "debug" in fault.detail, fault.detail
    finally:
        pool.close()


def test_a_python_sdk_bot_plays_in_json_when_its_manifest_says_so(tmp_path):
    """The manifest alone decides: the SDK follows LEAGUE_PROTOCOL."""
    from harness.match import BotPool, Limits, run_match
    from harness.proc.catalog import discover, load_manifest

    (tmp_path / "sdk.py").write_text((ROOT / "bots" / "sdk.py").read_text())
    (tmp_path / "bot.py").write_text(
        "from sdk import Bot, run\n\nclass Last(Bot):\n    name = 'last'\n\n"
        "    def choose(self, obs, legal, time_left_ms):\n"
        "        return len(legal) - 1\n\nrun(Last())\n")
    (tmp_path / "bot.toml").write_text('name = "py_json"\ncommand = ["{python}", "bot.py"]\n'
                                       'files = ["bot.py", "sdk.py"]\nprotocol = "json"\n')
    pool = BotPool({**discover(), "py_json": load_manifest(tmp_path / "bot.toml")},
                   Limits(decision_ms=5000, startup_ms=15000))
    try:
        result = run_match("tateyoko", 1, ["py_json", "random", "random"], pool, "py-json")
        assert result.faults == [None, None, None] and not result.capped
    finally:
        pool.close()


def test_trace_shows_the_bytes_that_did_not_decode(c_bots):
    result = league("play", "limit", "c_printf", "random", "random", "--trace",
                    "--bots", str(c_bots), code=3)
    lines = result.stdout.splitlines()
    raw = [line for line in lines if "decode to no message" in line]
    assert raw == ["<< c_printf: 36 bytes that decode to no message: "
                   "b'debug: thinking\\n\\x82\\xa4type\\xa6action\\xa5index\\x00'"]
    assert lines.index(raw[0]) > [i for i, line in enumerate(lines)
                                  if line.startswith(">> c_printf") and '"act"' in line][0]


def test_check_fails_a_bot_whose_output_comes_after_its_last_reply():
    """print() without flush: the text waits in Python's buffer until exit,
    after the last reply; `league check` catches it at quit."""
    from harness.check import run_checks
    from harness.proc.catalog import resolve
    from harness.proc.sandbox import Sandbox

    spec = resolve("print_unflushed", [TEST_BOTS])
    verdicts = list(run_checks(spec, ["limit"], 5000, Sandbox()))
    assert all(verdict.ok for verdict in verdicts[:-1]), verdicts
    quit_step = verdicts[-1]
    assert quit_step.step == "quit" and not quit_step.ok
    assert quit_step.detail.startswith("output after the last reply: ")
    assert "b'thinking about " in quit_step.detail and "stderr" in quit_step.detail


def test_bytes_after_a_reply_or_unasked_are_named_as_text_too():
    reply = msgpack.packb({"type": "action", "index": 0})
    outcome = choose_from(reply + b"done\n", "msgpack")
    assert outcome.detail.startswith(TEXT_FAULT) and "b'done\\n'" in outcome.detail
    outcome = choose_from(reply + b"\x01", "msgpack")
    assert outcome.detail.startswith("sent more than one message for one request: b'\\x01'")
    assert botproc.unasked_fault(b"hi\n").detail == f"{TEXT_FAULT}: b'hi\\n'"


@pytest.mark.parametrize("data,text", [
    (b"debug: thinking\n" + msgpack.packb({"type": "action", "index": 0}), True),
    ("d\u00e9bogage\n".encode(), True),
    (b"\x1b[2J\x1b]52;c;aGk=\x07", False),                # escapes: shown, never run
    (b"\x93\x01\x02\x03", False),                         # an array, not a map
    (b"thinking " * 600, True),                           # text past the size cap
])
def test_a_reply_must_start_as_a_map_and_text_is_named_as_such(data, text):
    with pytest.raises(BotBadMessage) as caught:
        reader = ReplyReader()
        reader.feed(data)
        reader.next_message()
    detail = caught.value.detail
    assert detail.startswith(TEXT_FAULT) is text, detail
    assert detail.isprintable() and detail.isascii(), "shown escaped"
    assert isinstance(caught.value, botproc.BadReplyBytes) and caught.value.raw


def test_floats_and_infinities_never_match_a_legal_action():
    assert isinstance(choose_from(b'{"type":"action","action":1e999}\n', "json"),
                      BotIllegalAction)
    assert math.isinf(json.loads("1e999"))
