"""Unit tests of the bot client's states and errors, on a fake transport."""

from __future__ import annotations

import pytest

from harness.botproc import (
    BotBadMessage,
    BotClient,
    BotCrashed,
    BotIllegalAction,
    BotState,
    BotStateError,
    BotTimeout,
    FakeTransport,
)

HELLO = {"type": "hello", "protocol": 1, "name": "fake"}


def ready_client(*replies):
    client = BotClient(FakeTransport([HELLO, *replies]), "fake")
    client.handshake(1.0)
    client.start_match({"match_id": "m", "game": "limit", "seat": 0})
    return client


def test_handshake_then_actions_by_index_or_value():
    client = ready_client({"type": "action", "index": 1}, {"type": "action", "action": [2, "x"]})
    assert client.name == "fake" and client.state is BotState.PLAYING
    assert client.choose({}, ["a", "b"], 0, 1.0) == 1
    assert client.choose({}, [(1, "x"), [2, "x"]], 1, 1.0) == 1
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
        client.choose({}, ["a", "b"], 0, 1.0)
    assert caught.value.kind == error.kind
    assert client.state is BotState.FAULTED
    with pytest.raises(BotStateError):
        client.choose({}, ["a"], 1, 1.0)


def test_wrong_protocol_version_is_refused():
    client = BotClient(FakeTransport([{"type": "hello", "protocol": 99}]))
    with pytest.raises(BotBadMessage, match="protocol 99"):
        client.handshake(1.0)


def test_states_are_enforced_and_close_is_safe_twice():
    client = BotClient(FakeTransport([HELLO]))
    with pytest.raises(BotStateError):
        client.choose({}, ["a"], 0, 1.0)
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
    client.choose({}, ["a"], 0, 1.0)
    client.end_match({"scores": [1]})
    assert client.state is BotState.READY and client.matches_played == 1
