"""Unit tests of the bot client's states and errors, on a fake transport."""

from __future__ import annotations

import pytest

from harness.proc.botproc import (
    BotBadMessage,
    BotClient,
    BotCrashed,
    BotIllegalAction,
    BotLimitExceeded,
    BotState,
    BotStateError,
    BotTimeout,
    FakeTransport,
)

HELLO = {"type": "hello", "protocol": 1, "name": "fake"}


def ready_client(*replies, protocol: str = "msgpack"):
    client = BotClient(FakeTransport([HELLO, *replies], protocol), "fake")
    client.handshake(1.0)
    client.start_match({"match_id": "m", "game": "limit", "seat": 0})
    return client


def test_handshake_then_actions_by_index_or_value():
    client = ready_client({"type": "action", "index": 1}, {"type": "action", "action": [2, "x"]})
    assert client.name == "fake" and client.state is BotState.PLAYING
    assert client.choose({}, ["a", "b"], 0, 1000) == 1
    assert client.choose({}, [(1, "x"), [2, "x"]], 1, 1000) == 1
    sent = client.transport.sent
    assert [m["type"] for m in sent] == ["hello", "start", "act", "act"]
    assert sent[2]["time_left_ms"] == 1000


@pytest.mark.parametrize(
    "reply,error",
    [
        ({"type": "action", "index": 5}, BotIllegalAction),
        ({"type": "action", "index": -1}, BotIllegalAction),
        ({"type": "action", "action": "zzz"}, BotIllegalAction),
        ({"type": "action", "index": "0"}, BotBadMessage),
        ({"type": "action", "index": True}, BotBadMessage),
        ({"type": "action"}, BotBadMessage),
        ({"type": "hello"}, BotBadMessage),
        ([1, 2, 3], BotBadMessage),
        (BotTimeout("slow"), BotTimeout),
        (BotCrashed("gone"), BotCrashed),
    ],
)
def test_bad_replies_fault_the_client(reply, error):
    client = ready_client(reply)
    with pytest.raises(error) as caught:
        client.choose({}, ["a", "b"], 0, 1000)
    assert caught.value.kind == error.kind
    assert client.state is BotState.FAULTED
    with pytest.raises(BotStateError):
        client.choose({}, ["a"], 1, 1000)


def test_wrong_protocol_version_is_refused():
    client = BotClient(FakeTransport([{"type": "hello", "protocol": 99}]))
    with pytest.raises(BotBadMessage, match="protocol 99"):
        client.handshake(1.0)


def test_states_are_enforced_and_close_is_safe_twice():
    client = BotClient(FakeTransport([HELLO]))
    with pytest.raises(BotStateError):
        client.choose({}, ["a"], 0, 1000)
    client.handshake(1.0)
    with pytest.raises(BotStateError):
        client.end_match({})
    client.close()
    client.close()
    assert client.transport.closed == 1
    assert client.transport.sent[-1] == {"type": "quit"}
    assert client.state is BotState.CLOSED and not client.usable


def test_end_returns_client_to_ready():
    client = ready_client({"type": "action", "index": 0})
    client.choose({}, ["a"], 0, 1000)
    client.end_match({"scores": [1]})
    assert client.state is BotState.READY and client.matches_played == 1


# ---- the reader: no reply can break it ------------------------------------------
import msgpack  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.proc.botproc import (  # noqa: E402
    MAX_REPLY_BYTES,
    BotError,
    ReplyReader,
)

LEGAL = [(1, "x"), (2, "y"), 3, "pass"]

scalars = st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats() | \
    st.text(max_size=20) | st.binary(max_size=20)
keys = st.text(max_size=8) | st.integers(-5, 5) | st.binary(max_size=4) | st.none() | \
    st.tuples(st.integers(0, 3))
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=30)
replies = st.fixed_dictionaries(
    {"type": st.sampled_from(["action", "hello", 1, None])},
    optional={"index": values | st.integers(-3, 6), "action": values | st.sampled_from(LEGAL),
              "decision": values | st.just(0)}) | values


def choose_from_bytes(data: bytes, protocol: str = "msgpack"):
    """What a client makes of ``data`` as the reply to one decision: the
    index chosen, or the fault (never anything else)."""
    client = ready_client(data, protocol=protocol)
    try:
        index = client.choose({}, LEGAL, 0, 1000)
    except BotError as error:
        assert client.state is BotState.FAULTED
        return error
    assert 0 <= index < len(LEGAL)
    return index


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_give_an_action_or_a_fault(data):
    choose_from_bytes(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies)
def test_arbitrary_msgpack_values_give_an_action_or_a_fault(reply):
    try:
        data = msgpack.packb(reply)
    except (TypeError, ValueError, OverflowError):
        return  # not representable in MessagePack at all
    choose_from_bytes(data)


@given(st.integers(0, 10_000))
@settings(max_examples=50, deadline=None)
def test_deep_nesting_is_a_fault_not_a_crash(depth):
    outcome = choose_from_bytes(b"\x81\xa1x" + b"\x91" * depth + b"\x00")  # in a map, as replies are
    assert isinstance(outcome, BotBadMessage)


def test_caps_bound_what_one_reply_may_cost():
    reader = ReplyReader()
    with pytest.raises(BotBadMessage, match="larger than the protocol allows"):
        reader.feed(b"\x80" * (MAX_REPLY_BYTES + 1))
    reader = ReplyReader()
    reader.feed(b"\xdd\x00\x3d\x09\x00" + b"\x80" * 1000)  # array32 of 4M empty maps
    with pytest.raises(BotBadMessage):
        reader.next_message()


def test_non_string_keys_are_a_bad_message_not_a_type_error():
    data = b"\x83\xa4type\xa6action\xa5index\x00\x91\x00\x00"  # {..., [0]: 0}
    assert isinstance(choose_from_bytes(data), BotBadMessage)


def test_index_and_action_together_are_a_bad_message():
    outcome = choose_from_bytes(msgpack.packb({"type": "action", "index": 0, "action": [1, "x"]}))
    assert isinstance(outcome, BotBadMessage) and "not both" in outcome.detail


def test_answering_by_value_works_for_array_actions():
    assert choose_from_bytes(msgpack.packb({"type": "action", "action": [2, "y"]})) == 1
    assert choose_from_bytes(msgpack.packb({"type": "action", "action": 3})) == 2
    assert isinstance(choose_from_bytes(msgpack.packb({"type": "action", "action": [2]})),
                      BotIllegalAction)
    assert isinstance(choose_from_bytes(msgpack.packb({"type": "action", "action": True})),
                      BotIllegalAction)


def test_a_reply_for_another_decision_is_stale():
    client = ready_client({"type": "action", "index": 0, "decision": 4})
    with pytest.raises(BotBadMessage, match="stale"):
        client.choose({}, LEGAL, 5, 1000)


def test_two_messages_for_one_request_are_a_bad_message():
    one = msgpack.packb({"type": "action", "index": 0})
    assert isinstance(choose_from_bytes(one + one), BotBadMessage)


def test_text_on_stdout_is_named_as_such():
    outcome = choose_from_bytes(b"thinking...\n")
    assert isinstance(outcome, BotBadMessage)
    assert outcome.detail == ("your bot wrote text to stdout (use stderr for debug output): "
                              "b'thinking...\\n'")



# ---- the reader's cost: small caps and a depth check at C speed -------------------
import re  # noqa: E402
from pathlib import Path  # noqa: E402

from harness.bench import reader as bench_reader  # noqa: E402
from harness.proc import botproc  # noqa: E402
from harness.proc.botproc import _within_depth  # noqa: E402


def nesting(value) -> int:
    """The definition: each array or map is one level."""
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    return 0


nested = st.recursive(
    st.none() | st.integers() | st.text(max_size=3) | st.binary(max_size=2),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=40)


@settings(max_examples=500, deadline=None)
@given(nested, st.integers(0, 10))
def test_the_depth_check_agrees_with_the_definition(value, depth):
    assert _within_depth(value, depth) is (nesting(value) <= depth)


@pytest.mark.parametrize("depth", [7, 8, 9])
def test_one_deep_branch_among_many_flat_ones_is_found(depth):
    deep: object = 0
    for _ in range(depth - 4):
        deep = [deep]
    reply = {"type": "action", "index": 0, "x": [{}, [], [1, 2], {"a": [deep]}, []]}
    assert nesting(reply) == depth
    assert _within_depth(reply, botproc.MAX_DEPTH) is (depth <= botproc.MAX_DEPTH)


SHAPES = bench_reader.shapes(botproc)


@pytest.mark.parametrize("name,data", SHAPES, ids=[name for name, _ in SHAPES])
def test_each_hostile_shape_is_read_or_refused_whole(name, data):
    """The benchmark's shapes are what they say: as large as the caps allow,
    accepted unless named refused, and refused only as a bad message."""
    assert len(data) <= botproc.MAX_REPLY_BYTES
    outcome = bench_reader.read_once(botproc, data)
    if name.startswith("refused"):
        assert outcome.startswith("refused: ")
    else:
        assert outcome == "ok"


def test_checking_a_reply_runs_no_python_code_per_value():
    """A reply's cost is linear at C speed: the checks make a bounded number
    of Python calls whatever the reply holds (a walk per value made a 64 KiB
    reply cost 13 ms). Counted, not timed: `python -m harness.bench.reader`
    prints the figures."""
    import sys

    def python_calls(data: bytes) -> int:
        calls = 0

        def count(frame, event, arg):
            nonlocal calls
            calls += event == "call"

        sys.setprofile(count)
        try:
            bench_reader.read_once(botproc, data)
        finally:
            sys.setprofile(None)
        return calls

    flat = python_calls(msgpack.packb({"type": "action", "index": 1}))
    for name, data in SHAPES:
        # a fault message costs a few dozen calls once; a walk would cost one a value
        assert python_calls(data) <= flat + 100, name


def test_the_largest_legitimate_reply_is_far_under_the_caps():
    size, action, game = bench_reader.largest_game_reply(seeds=1)
    assert size * 16 <= botproc.MAX_REPLY_BYTES, (game, action)
    assert nesting(msgpack.unpackb(msgpack.packb(action))) + 1 <= botproc.MAX_DEPTH


def test_the_protocol_states_the_reply_caps_in_force():
    text = " ".join((Path(__file__).resolve().parent.parent / "PROTOCOL.md").read_text().split())
    kib = {botproc.MAX_REPLY_BYTES, botproc.MAX_STRING_BYTES}
    assert kib <= {n << 10 for n in range(1, 65)}, "the sentence below speaks in KiB"
    stated = re.search(r"A reply is at most (\d+) KiB, with at most ([\d,]+) items in any array or "
                       r"map, strings of at most (\d+) KiB, nesting at most (\d+) levels", text)
    assert stated, "PROTOCOL.md no longer states the reply caps in its Framing section"
    assert [int(group.replace(",", "")) for group in stated.groups()] == [
        botproc.MAX_REPLY_BYTES >> 10, botproc.MAX_CONTAINER_ITEMS,
        botproc.MAX_STRING_BYTES >> 10, botproc.MAX_DEPTH]


tokens = st.sampled_from([b"\x91", b"\x9f", b"\x81\xa1k", b"\xdc\x00\x40", b"\xde\x00\x40",
                          b"\x80", b"\x90", b"\x00", b"\xa1x", b"\xc1", b"\xd6\xff\x00\x00\x00\x00",
                          b"\xda\x04\x00", b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"]) | st.binary(max_size=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(tokens, max_size=600).map(b"".join), max_size=6))
def test_any_bytes_in_any_chunks_give_messages_or_a_bad_message(chunks):
    """The reader itself, fed as a pipe delivers: nothing but BotBadMessage
    ever comes out of it, whatever the bytes and however they are split."""
    reader = ReplyReader()
    try:
        for chunk in chunks:
            reader.feed(chunk)
            complete = True
            while complete:
                complete, message = reader.next_message()
                assert not complete or nesting(message) <= botproc.MAX_DEPTH
    except BotBadMessage:
        pass


@pytest.mark.parametrize("value", [
    b"\xd6\xff\x00\x00\x00\x00",                   # a timestamp: an extension type
    b"\xc1",                                       # never used
    b"\xdc\x00\x41" + b"\x00" * 65,                  # 65 items: one over the cap
    b"\xda\x04\x01" + b"x" * 1025,                   # a string one byte over the cap
    (b"\xdc\x00\x40" * 1400)[:4090],                 # claimed lengths past the decoder's stack
])
def test_cap_breaking_bytes_are_a_bad_message(value):
    # as the value of a map's key, as a reply starts: the decoder meets them
    outcome = choose_from_bytes(b"\x82\xa4type\xa6action\xa1x" + value)
    assert isinstance(outcome, BotBadMessage)
    assert "must be a MessagePack map" not in outcome.detail


# ---- the pipe transport's own regressions ---------------------------------------------
import select  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import psutil  # noqa: E402

from harness.proc.botproc import PipeTransport  # noqa: E402
from tests.helpers import wait_until  # noqa: E402


def test_a_bot_that_stops_reading_gets_the_decision_deadline_not_more():
    """A write that blocked would last until the bot exits (60 s) and then
    fail as a crash ("closed its input"): the deadline ends it as a timeout."""
    transport = PipeTransport([sys.executable, "-c", "import time; time.sleep(60)"])
    started = time.monotonic()
    try:
        with pytest.raises(BotTimeout, match="stopped reading"):
            transport.send({"type": "act", "obs": "x" * (4 << 20)}, time.monotonic() + 0.3)
        # generous (30 times the deadline) for a loaded machine, far below the bot's 60 s
        assert time.monotonic() - started < 10
    finally:
        transport.close(0.0)


def test_the_stderr_reader_stops_and_closes_its_own_file():
    """It owns the descriptor: a number reused for another bot's pipe after
    close can never be read by it (a child keeps this stderr open here)."""
    script = ("import subprocess, sys, time; sys.stderr.write('x' * 6000); sys.stderr.flush(); "
              "subprocess.Popen(['sleep', '30']); time.sleep(30)")
    transport = PipeTransport([sys.executable, "-c", script])
    wait_until(lambda: len(transport.stderr_tail()) == 4096, "the bot's stderr to be read")
    wait_until(psutil.Process(transport.process.pid).children, "the child that holds stderr")
    transport.close(0.0)
    drain = transport._stderr
    # close() gives the reader a second to stop: a loaded machine may need longer
    wait_until(lambda: not drain._thread.is_alive(), "the stderr reader to stop")
    assert drain._stream.closed
    tail = transport.stderr_tail()
    assert len(tail) == 4096 and set(tail) == {"x"}, "the last 4 KiB, as PROTOCOL.md says"


class FakeSlot:
    """A sandbox slot whose bot broke (or kept) its limits."""

    def __init__(self, breach: str) -> None:
        self.breach = breach

    def cpu_seconds(self, pid: int) -> float:
        return 0.0

    def live_breach(self) -> str:
        return ""

    def limit_breach(self, exit_code, stderr_tail: str) -> str:
        return self.breach

    def release(self) -> None:
        pass


@pytest.mark.parametrize("breach,fault", [("", BotTimeout), ("memory limit: 256 MiB", BotLimitExceeded)])
def test_a_silent_bot_times_out_unless_it_broke_a_limit_first(breach, fault):
    """A memory bomb thrashing against its cap misses the deadline: the limit
    is the cause, and the fault says so."""
    transport = PipeTransport([sys.executable, "-c", "import time; time.sleep(30)"],
                              slot=FakeSlot(breach))
    try:
        transport.send({"type": "act"}, time.monotonic() + 1)
        with pytest.raises(fault) as caught:
            transport.receive(time.monotonic() + 0.2)
        assert (breach or "no reply") in str(caught.value)
    finally:
        transport.close(0.0)


def test_a_reply_already_in_the_pipe_at_the_deadline_counts():
    """The harness may read late (another match's turn, or descheduled): bytes
    the bot wrote before the deadline are its answer, not a timeout."""
    code = ("import sys, time, msgpack; sys.stdout.buffer.write(msgpack.packb("
            "{'type': 'action', 'index': 1})); sys.stdout.flush(); time.sleep(30)")
    answering = PipeTransport([sys.executable, "-c", code])
    silent = PipeTransport([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        # wait until the reply is in the pipe (a loaded machine may take a
        # while to start Python); the deadline below has then passed
        assert select.select([answering.process.stdout], [], [], 30)[0], "no reply written"
        assert answering.receive(time.monotonic() - 0.5) == {"type": "action", "index": 1}
        started = time.monotonic()
        with pytest.raises(BotTimeout):
            silent.receive(time.monotonic() - 0.5)
        # at once; generous for a loaded machine: a receive that waited on would
        # end only when the bot exits (30 s), and as a crash
        assert time.monotonic() - started < 10
    finally:
        answering.close(0)
        silent.close(0)
