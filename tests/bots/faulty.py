"""A bot that misbehaves on purpose, for the fault tests.

    python faulty.py MODE     MODE: sleep | exit | garbage | out_of_range |
                                    spawn_and_sleep | no_hello | slow_start |
                                    slow_start_then_crash (2 s before its hello, then
                                    exits at its first decision) |
                                    record_start (a well-behaved bot that logs starts) |
                                    think (well-behaved, 20 ms per decision) |
                                    crash_at_end (plays well, then abort()s on `end`) |
                                    garbage_at_end (plays well, writes garbage on `end`)
"""

import os
import subprocess
import sys
import time

import msgpack

mode = sys.argv[1]
inp = sys.stdin.buffer
out = sys.stdout.buffer
unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
decisions = 0
if mode == "slow_start":
    time.sleep(30)
elif mode == "slow_start_then_crash":
    time.sleep(2)


def send(message):
    out.write(msgpack.packb(message))
    out.flush()


while True:
    data = os.read(inp.fileno(), 65536)
    if not data:
        break
    unpacker.feed(data)
    for message in unpacker:
        kind = message["type"]
        if kind == "hello":
            if mode == "no_hello":
                send({"type": "greetings"})
            else:
                send({"type": "hello", "protocol": 1, "name": f"faulty-{mode}"})
        elif kind == "start" and mode == "record_start":
            with open(os.environ["RECORD_START_FILE"], "a") as f:
                f.write(repr(message) + "\n")
        elif kind == "act":
            decisions += 1
            if mode == "slow_start_then_crash":
                print("faulty bot misbehaving: crash at the first decision", file=sys.stderr,
                      flush=True)
                sys.exit(3)
            if mode == "think":
                time.sleep(0.02)
            if decisions < 2 or mode in ("record_start", "think", "crash_at_end",
                                         "garbage_at_end"):  # play properly first
                send({"type": "action", "index": 0})
                continue
            print(f"faulty bot misbehaving: {mode}", file=sys.stderr, flush=True)
            if mode == "sleep":
                time.sleep(60)
            elif mode == "exit":
                sys.exit(3)
            elif mode == "garbage":
                out.write(b"\xc1\xc1 this is not msgpack\n")
                out.flush()
            elif mode == "out_of_range":
                send({"type": "action", "index": len(message["legal"]) + 5})
            elif mode == "spawn_and_sleep":
                subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)",
                                  "faulty-spawned-child"])
                time.sleep(60)
        elif kind == "end" and mode in ("crash_at_end", "garbage_at_end"):
            # plays every decision well, then fails on the match's end
            print(f"faulty bot misbehaving: {mode}", file=sys.stderr, flush=True)
            if mode == "garbage_at_end":
                out.write(b"\xc1 garbage after the end\n")
                out.flush()
            else:
                os.abort()
        elif kind == "quit":
            sys.exit(0)
