"""A benchmark bot that does as little as a bot can: the pipe ceiling's
trivial bot (harness/bench/ceiling.py) plus what the protocol requires (the
handshake, and the decision echoed). It answers a random legal index, so
matches are ordinary games; it does not use the SDK, so the figures measure
the harness and the pipe, not the bot."""

from __future__ import annotations

import os
import random
import sys

import msgpack


def main() -> None:
    fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
    rng = random.Random(os.environ.get("TRIVIAL_SEED", "0"))
    unpacker = msgpack.Unpacker(raw=False)
    pack = msgpack.Packer().pack
    while data := os.read(fd_in, 65536):
        unpacker.feed(data)
        for message in unpacker:
            kind = message["type"]
            if kind == "act":
                os.write(fd_out, pack({"type": "action", "index": rng.randrange(len(message["legal"])),
                                       "decision": message["decision"]}))
            elif kind == "hello":
                os.write(fd_out, pack({"type": "hello", "protocol": 1, "name": "trivial"}))
            elif kind == "quit":
                return


if __name__ == "__main__":
    main()
