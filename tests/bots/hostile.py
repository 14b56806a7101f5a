"""A hostile bot: each MODE is one attack a stranger's bot could try.

    python hostile.py MODE

Every mode answers the handshake and plays legal moves at first (index 0),
then attacks at its second decision. An attack that *works* makes the bot
exit with code 42 and "ATTACK SUCCEEDED: ..." on stderr, so the test sees the
harness's failure as a recorded fault with that text; an attack that fails
leaves the bot playing on (or faulting in the expected way).
"""

import glob
import itertools
import os
import socket
import sys
import threading
import time

import msgpack

MODE = sys.argv[1]
MARKER = "card-league-hostile-escapee"
inp = sys.stdin.buffer
out = sys.stdout.buffer
decisions = 0
thinking_s = 0.0


current_decision = None


def send(message):
    if isinstance(message, dict) and message.get("type") == "action":
        message = {**message, "decision": current_decision}
    out.write(msgpack.packb(message))
    out.flush()


def succeeded(what):
    sys.stderr.write(f"ATTACK SUCCEEDED: {what}\n")
    sys.stderr.flush()
    os._exit(42)


def other_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]


def sandbox_init():
    """PID 1 is bwrap's init, which starts the bot and reaps what it leaves."""
    try:
        return open("/proc/1/cmdline", "rb").read().startswith(b"bwrap\0")
    except OSError:
        return False


# ---- the attacks ---------------------------------------------------------------------
def hang(message):
    time.sleep(3600)


def crash(message):
    sys.exit(3)


def garbage(message):
    out.write(b"\xc1\xc1\xc1 not msgpack at all")
    out.flush()
    time.sleep(3600)


def text_to_stdout(message):
    print("thinking about my move...", flush=True)
    time.sleep(3600)


def giant(message):
    chunk = b"\x91" * (1 << 20)  # an endless nest of one-element arrays
    for _ in range(16):
        out.write(chunk)
    out.flush()
    time.sleep(3600)


def amplify(message):
    # about 60 KB that would decode to ~60,000 dicts without caps; 4 million
    # empty maps in one array is refused by the array-length cap
    send([[{}] * 1000] * 60)
    time.sleep(3600)


def huge_array(message):
    out.write(b"\xdd\x00\x3d\x09\x00" + b"\x80" * 4_000_000)  # array32 of 4M empty maps
    out.flush()
    time.sleep(3600)


def deep(message):
    out.write(b"\x91" * 5000 + b"\x00")
    out.flush()
    time.sleep(3600)


def nonstring_keys(message):
    out.write(b"\x83\xa4type\xa6action\xa5index\x00\x91\x00\x00")  # {..., [0]: 0}
    out.flush()
    time.sleep(3600)


def both_index_and_action(message):
    send({"type": "action", "index": 0, "action": message["legal"][0]})
    time.sleep(3600)


def extra_replies(message):
    send({"type": "action", "index": 0})
    send({"type": "action", "index": 0})
    time.sleep(3600)


def late_extra(message):
    # a valid answer, then an unasked one between decisions
    send({"type": "action", "index": 0})
    time.sleep(0.05)
    send({"type": "action", "index": 0})
    return "answered"


def child_holds_stdout(message):
    if os.fork() == 0:
        time.sleep(3600)  # keeps stdout and stderr open
        os._exit(0)
    os._exit(5)


def stderr_flood(message):
    def flood():
        line = b"x" * 1023 + b"\n"
        while True:
            os.write(2, line * 64)

    threading.Thread(target=flood, daemon=True).start()
    send({"type": "action", "index": 0})
    return "answered"


def memory_bomb(message):
    hoard = []
    for _ in range(64):
        hoard.append(bytearray(64 << 20))  # 4 GiB in all, touched
    succeeded(f"allocated {len(hoard) * 64} MiB")


def fork_bomb(message):
    children = 0
    for _ in range(2000):
        try:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
            children += 1
        except OSError:
            break
    if children >= 1000:
        succeeded(f"started {children} processes")
    send({"type": "action", "index": 0})
    return "answered"


def cpu_burner(message):
    for _ in range(2):  # processes, not threads: no GIL slows the bot itself
        if os.fork() == 0:
            while True:
                pass
    global thinking_s
    thinking_s = 0.4  # and takes its time from now on, as a thinking bot would
    send({"type": "action", "index": 0})
    return "answered"


def escape(message):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sh", ["/bin/sh", "-c", f"exec -a {MARKER} sleep 600"])
        os._exit(0)
    send({"type": "action", "index": 0})
    return "answered"


def sabotage(message):
    hits = []
    for pid in other_pids():
        try:
            with open(f"/proc/{pid}/fd/1", "wb", buffering=0) as stream:
                stream.write(b"\xc1")
            hits.append(pid)
        except OSError:
            pass
    sys.stderr.write(f"sabotage reached processes {hits}\n")


def db_forgery(message):
    candidates = set()
    for pid in other_pids():  # files the harness holds open
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.endswith(".db"):
                    candidates.add(target)
        except OSError:
            pass
    for pid in other_pids():
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        for i, arg in enumerate(argv[:-1]):
            if arg == b"--db":
                candidates.add(argv[i + 1].decode())
    # The test's own results only: unsandboxed, this attack would work on any
    # results file of the machine, so the test keeps it on a leash.
    leash = os.environ.get("HOSTILE_DB_ROOT", "/nonexistent/")

    def on_leash(paths):
        return {path for path in paths if os.path.realpath(path).startswith(leash)}

    candidates = on_leash(candidates)
    if not candidates:
        # Nothing in the harness's open files or arguments: search the disk,
        # only then, since a recursive walk of a crowded /tmp can take longer
        # than a decision's deadline (the attack would time out unproven)
        for pattern in ("/tmp/**/*.db", os.path.expanduser("~/**/*.db"), "*.db"):
            candidates.update(itertools.islice(glob.iglob(pattern, recursive=True), 50))
        candidates = on_leash(candidates)
    import sqlite3

    for _ in range(5 if candidates else 0):  # the harness may be writing: try again
        for path in candidates:
            try:
                db = sqlite3.connect(path, timeout=0.5)
                changed = db.execute("UPDATE seats SET rank = 1, score = 999").rowcount
                db.commit()
                if changed:
                    succeeded(f"rewrote {changed} results in {path}")
            except Exception:  # noqa: BLE001 - any failure: try the next file
                pass
        time.sleep(0.2)


SECRET_NAMES = ("canary.txt", "auth_token", "league.py", "results.db", "session_latest")


def _walk_for_secrets():
    """Look everywhere but the interpreter's own files for what a bot must not see."""
    skip = {"/proc", "/sys", "/dev", "/usr", os.path.realpath(sys.prefix),
            os.path.realpath(sys.base_prefix), os.getcwd()}
    found, seen = [], 0
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip]
        for name in files:
            seen += 1
            if name in SECRET_NAMES or name.endswith((".db", ".toml")):
                found.append(f"found {os.path.join(top, name)}")
        if seen > 50000:
            break
    return found


BOT_ENV = {"LEAGUE_PROTOCOL": ("msgpack", "json"), "PYTHONPATH": ("/sdk",)}


def spy(message):
    found = []
    for key, value in os.environ.items():
        # what the harness gives every bot on purpose: the encoding its
        # manifest chose, and the SDK's folder inside the sandbox
        if value in BOT_ENV.get(key, ()):
            continue
        if key.startswith(("RAY", "PYTHONPATH", "HOSTILE_SECRET", "LEAGUE")):
            found.append(f"env {key}={value[:40]!r}")
    if found:
        succeeded("; ".join(found))
    canary = os.environ.get("HOSTILE_CANARY_PATH", "")
    if canary and os.path.exists(canary):
        found.append(f"saw canary {canary}")
    for pid in other_pids():
        if pid == 1 and sandbox_init():
            continue  # bwrap, the sandbox's init: its argv is this sandbox's own layout
        for name in ("environ", "cmdline", "mem"):
            try:
                data = open(f"/proc/{pid}/{name}", "rb").read(64)
                if data:
                    found.append(f"read /proc/{pid}/{name}")
            except OSError:
                pass
    if found:
        succeeded("; ".join(found[:20]))
    try:
        __import__("harness")
        found.append("imported the harness")
    except Exception:  # noqa: BLE001 - not importable is the point
        pass
    found += _walk_for_secrets()
    targets = [("127.0.0.1", port) for port in (6379, 8265, 10001, 22)]
    for target in filter(None, os.environ.get("HOSTILE_TARGETS", "").split(",")):
        host, _, port = target.rpartition(":")
        targets.append((host, int(port)))
    for host, port in targets:
        try:
            socket.create_connection((host, port), timeout=0.3).close()
            found.append(f"connected to {host}:{port}")
        except OSError:
            pass
    if found:
        succeeded("; ".join(found[:20]))


def writes_big_file(message):
    try:
        with open("/tmp/big", "wb") as handle:
            for _ in range(256):
                handle.write(b"\0" * (1 << 20))
        succeeded("wrote 256 MiB")
    except OSError as exc:
        sys.stderr.write(f"File too large: {exc}\n")
        sys.exit(1)


def synchronously(attack):
    """Attack before answering: an answer then proves the attack ran to its end
    (and failed), where an attack from a thread might not have finished."""

    def wrapper(message):
        attack(message)
        send({"type": "action", "index": 0})
        return "answered"

    return wrapper


spy = synchronously(spy)
db_forgery = synchronously(db_forgery)
sabotage = synchronously(sabotage)

ATTACKS = {name: function for name, function in globals().items()
           if callable(function) and not name.startswith("_")
           and name not in ("send", "succeeded", "other_pids", "flood", "synchronously")}


def main():
    global decisions
    unpacker = msgpack.Unpacker(raw=False)
    attacked = False
    while True:
        data = os.read(inp.fileno(), 65536)
        if not data:
            return
        unpacker.feed(data)
        for message in unpacker:
            kind = message["type"]
            if kind == "hello":
                send({"type": "hello", "protocol": 1, "name": f"hostile-{MODE}"})
            elif kind == "act":
                global current_decision
                current_decision = message["decision"]
                decisions += 1
                if decisions == 2 and not attacked:
                    attacked = True
                    if ATTACKS[MODE](message) == "answered":
                        continue
                time.sleep(thinking_s)
                send({"type": "action", "index": 0})
            elif kind == "quit":
                return


if __name__ == "__main__":
    main()
