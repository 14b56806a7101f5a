"""A small SDK for bot authors writing in Python (protocol v1, PROTOCOL.md).

Standalone: it needs only ``msgpack``, so it can be copied next to a bot.

    from bots.sdk import Bot, run

    class MyBot(Bot):
        name = "my-bot"
        def choose(self, obs, legal, time_left_ms):
            return 0          # index into legal

    if __name__ == "__main__":
        run(MyBot())
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

import msgpack

PROTOCOL_VERSION = 1


class Bot:
    """Override ``choose``; the other hooks are optional."""

    name = "unnamed-bot"

    def on_start(self, match: dict[str, Any]) -> None:
        """A match begins: ``match`` holds game, seat, players, teams, limits."""

    def choose(self, obs: dict[str, Any], legal: list[Any], time_left_ms: int) -> int:
        """Return the index of the chosen action in ``legal``."""
        raise NotImplementedError

    def on_end(self, result: dict[str, Any]) -> None:
        """The match is over: scores, ranks, capped, and obs (this seat's
        view of the final state: what happened after its last decision)."""


def run(bot: Bot, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Serve the protocol until ``quit`` or end of input."""
    read, write = _reader(stdin), _writer(stdout)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    pack = msgpack.Packer().pack
    while True:
        data = read(65536)
        if not data:
            return
        unpacker.feed(data)
        for message in unpacker:
            kind = message.get("type")
            if kind == "act":
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
