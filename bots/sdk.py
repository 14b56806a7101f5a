"""A small SDK for bot authors writing in Python (protocol v1, PROTOCOL.md).

A bot in its own folder imports it as ``league_sdk``, with nothing copied:
the sandbox mounts this very file as ``/sdk/league_sdk.py`` for every
``{python}`` bot, and the installed harness has a ``league_sdk`` module
that re-exports it (``league_sdk.py``). So it must stay standalone: the
standard library and ``msgpack`` only, no import from this repository.
The repository's own bots import it as ``bots.sdk``.

    from league_sdk import Bot, run

    class MyBot(Bot):
        name = "my-bot"
        def choose(self, obs, legal, time_left_ms):
            return 0          # index into legal

    if __name__ == "__main__":
        run(MyBot())

It speaks the encoding the bot's manifest names (``protocol = "msgpack"``,
the default, or ``"json"``), which the harness passes in LEAGUE_PROTOCOL.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

import msgpack

PROTOCOL_VERSION = 1


class Bot:
    """Override ``choose``; the other hooks are optional."""

    name = "unnamed-bot"
    # The current ``act``'s clock (PROTOCOL.md, "Clocks"), set before each
    # choose(): clock_ms left on the match clock (None: no clock), the
    # increment_ms added after each decision, the bank_ms of overage left.
    # ``time_left_ms`` is already the most this decision may take.
    clock: dict[str, Any] = {"clock_ms": None, "increment_ms": 0, "bank_ms": 0}

    def on_start(self, match: dict[str, Any]) -> None:
        """A match begins: ``match`` holds game, seat, players, teams, limits."""

    def choose(self, obs: dict[str, Any], legal: list[Any], time_left_ms: int) -> int:
        """Return the index of the chosen action in ``legal``."""
        raise NotImplementedError

    def on_end(self, result: dict[str, Any]) -> None:
        """The match is over: scores, ranks, capped, and obs (this seat's
        view of the final state: what happened after its last decision)."""


def run(bot: Bot, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
        protocol: str | None = None) -> None:
    """Serve the protocol until ``quit`` or end of input. ``protocol``: the
    wire encoding, "msgpack" or "json"; by default the one the harness names
    in LEAGUE_PROTOCOL (from the bot's manifest), else "msgpack"."""
    read, write = _reader(stdin), _writer(stdout)
    messages, pack = _codec(protocol or os.environ.get("LEAGUE_PROTOCOL", "msgpack"))
    while True:
        data = read(65536)
        if not data:
            return
        for message in messages(data):
            kind = message.get("type")
            if kind == "act":
                bot.clock = clock_of(message)
                index = bot.choose(message["obs"], message["legal"], message["time_left_ms"])
                # echoing the decision lets the harness tell a late reply from an answer
                write(pack({"type": "action", "index": int(index),
                            "decision": message.get("decision")}))
            elif kind == "start":
                bot.on_start(message)
            elif kind == "end":
                bot.on_end(message)
            elif kind == "hello":
                write(pack({"type": "hello", "protocol": PROTOCOL_VERSION, "name": bot.name}))
            elif kind == "quit":
                return


def clock_of(act: dict[str, Any]) -> dict[str, Any]:
    """An ``act``'s clock fields; a harness before clocks sent none (no clock)."""
    return {"clock_ms": act.get("clock_ms"), "increment_ms": act.get("increment_ms") or 0,
            "bank_ms": act.get("bank_ms") or 0}


def _codec(protocol: str) -> tuple[Callable[[bytes], Iterable[dict[str, Any]]],
                                   Callable[[dict[str, Any]], bytes]]:
    """(the messages completed by newly read bytes, the bytes of a reply) in
    ``protocol``: MessagePack maps back to back, or JSON objects one a line
    (PROTOCOL.md, "Framing")."""
    if protocol == "json":
        pending = bytearray()

        def json_messages(data: bytes) -> list[dict[str, Any]]:
            pending.extend(data)
            *lines, rest = pending.split(b"\n")
            pending[:] = rest
            return [json.loads(line) for line in lines if line.strip()]

        return json_messages, lambda reply: json.dumps(reply, separators=(",", ":")).encode() + b"\n"
    if protocol != "msgpack":
        raise ValueError(f"unknown protocol {protocol!r}: use 'msgpack' or 'json'")
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)

    def msgpack_messages(data: bytes) -> Iterable[dict[str, Any]]:
        unpacker.feed(data)
        return unpacker

    return msgpack_messages, msgpack.Packer().pack


def _reader(stdin: BinaryIO | None) -> Callable[[int], bytes]:
    """Whatever has arrived, up to n bytes; b"" at end of input. The process's
    own stdin is read with one system call per read, no buffer in between."""
    if stdin is None:
        fd = sys.stdin.fileno()
        return lambda n: os.read(fd, n)
    return stdin.read1 if hasattr(stdin, "read1") else stdin.read


def _writer(stdout: BinaryIO | None) -> Callable[[bytes], None]:
    """Writes one whole message and sends it on at once."""
    if stdout is None:
        sys.stdout.flush()
        fd = sys.stdout.fileno()

        def write_fd(data: bytes) -> None:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]

        return write_fd
    sink = stdout

    def write_stream(data: bytes) -> None:
        sink.write(data)
        sink.flush()

    return write_stream
