"""A bot that writes to stderr at every step, for the per-decision stderr
tests: a line as it starts a match, ``decision N seat S`` and markup before
each reply (the decision number the harness sent, then HOSTILE), a line as the match
ends. ``--flood``: also 10 KiB and 80 more lines at each decision, to meet
the caps. It plays the first legal action; its stdout carries replies only."""

from __future__ import annotations

import sys

import msgpack

FLOOD = "--flood" in sys.argv
# markup that must stay text on a page, and an escape that must not reach a terminal
HOSTILE = "</script><script>alert(1)</script><img src=x onerror=alert(2)>\x1b[31m"


def main() -> None:
    out, err = sys.stdout.buffer, sys.stderr
    unpacker = msgpack.Unpacker(raw=False)
    seat = None
    while True:
        data = sys.stdin.buffer.read1(65536)
        if not data:
            return
        unpacker.feed(data)
        for message in unpacker:
            kind = message.get("type")
            if kind == "hello":
                out.write(msgpack.packb({"type": "hello", "protocol": 1, "name": "stderr_chatty"}))
            elif kind == "start":
                seat = message.get("seat")
                err.write(f"starting at seat {seat}\n")
                err.flush()
            elif kind == "act":
                decision = message["decision"]
                err.write(f"decision {decision} seat {seat} {HOSTILE}\n")
                if FLOOD:
                    err.write("x" * 10240 + "\n" + "".join(f"line {n}\n" for n in range(80)))
                err.flush()
                out.write(msgpack.packb({"type": "action", "index": 0, "decision": decision}))
            elif kind == "end":
                err.write("match over\n")
                err.flush()
            elif kind == "quit":
                return
            out.flush()


if __name__ == "__main__":
    main()
