"""Hostile bots, second wave: attacks through the kernel state that sandboxes
share, and through limits with holes.

    python hostile_kernel.py MODE

Like ``hostile.py``: every mode answers the handshake and plays index 0; an
attack that *works* makes the bot exit with code 42 and "ATTACK SUCCEEDED:
..." on stderr, so the harness records it as a crash with that text; an
attack that fails leaves the bot playing on (or faulting in the expected
way). Modes that only *report* what they saw (``host_paths``) exit with code
3 and a ``REPORT {json}`` line, for the test to judge.

Channels between two bots of one author at one table (class 4a): a
``*_sender`` transmits, at every one of its decisions, a frame of its seat
and its hidden hand; a ``*_receiver`` decodes frames at each of its own
decisions. A frame starts with a 16-bit magic, so noise never passes for
one, and the receiver proves the bits are the sender's real hand when the
sender later plays, face up, a card the receiver had decoded from its hand.
"""

import ctypes
import errno
import json
import mmap
import os
import struct
import sys
import time

import msgpack

MODE = sys.argv[1]
inp = sys.stdin.buffer
out = sys.stdout.buffer
current_decision = None
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def send(message):
    if isinstance(message, dict) and message.get("type") == "action":
        message = {**message, "decision": current_decision}
    out.write(msgpack.packb(message))
    out.flush()


def say(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def succeeded(what):
    say(f"ATTACK SUCCEEDED: {what}")
    os._exit(42)


def report(data):
    say("REPORT " + json.dumps(data, sort_keys=True))
    os._exit(3)


# ---- class 4a: channels through inodes every sandbox sees -----------------------------
MAGIC = 0xC0DE
FRAME_BITS = 16 + 2 + 5 * 7  # magic, seat, up to five cards (card + 1, 0: none)


def shared_files(count):
    """Files of /usr nothing else touches, the same list in every sandbox."""
    names = sorted(os.listdir("/usr/share/doc"))
    found, inodes = [], set()
    for name in names:
        path = f"/usr/share/doc/{name}/copyright"
        try:
            info = os.stat(path)
        except OSError:
            continue
        # one bit per inode: many packages' files are links to one another's
        if os.path.isfile(path) and os.access(path, os.R_OK) and \
                (info.st_dev, info.st_ino) not in inodes:
            inodes.add((info.st_dev, info.st_ino))
            found.append(path)
        if len(found) == count:
            return found
    raise RuntimeError(f"only {len(found)} files to signal through")


def encode(seat, hand):
    value = MAGIC
    value = (value << 2) | (seat & 3)
    cards = sorted(hand)[:5]
    cards += [-1] * (5 - len(cards))
    for card in cards:
        value = (value << 7) | ((card + 1) & 0x7F)
    return [(value >> (FRAME_BITS - 1 - i)) & 1 for i in range(FRAME_BITS)]


def decode(bits):
    """(seat, hand) of a frame, or None when its magic is wrong."""
    value = 0
    for bit in bits:
        value = (value << 1) | (1 if bit else 0)
    if value >> (FRAME_BITS - 16) != MAGIC:
        return None
    seat = (value >> 35) & 3
    hand = [((value >> (7 * (4 - i))) & 0x7F) - 1 for i in range(5)]
    return seat, [card for card in hand if card >= 0]


class Flock:
    """A bit per file: a shared flock on it means 1 (a read-only fd suffices)."""

    name = "flock"

    def __init__(self):
        import fcntl

        self.fcntl = fcntl
        paths = shared_files(FRAME_BITS + 1)
        self.fds = [os.open(path, os.O_RDONLY) for path in paths]
        self.busy, self.bits = self.fds[0], self.fds[1:]

    def _locked(self, fd):
        try:
            self.fcntl.flock(fd, self.fcntl.LOCK_EX | self.fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        self.fcntl.flock(fd, self.fcntl.LOCK_UN)
        return False

    def transmit(self, bits):
        fcntl = self.fcntl
        fcntl.flock(self.busy, fcntl.LOCK_SH)
        for fd, bit in zip(self.bits, bits):
            fcntl.flock(fd, fcntl.LOCK_SH if bit else fcntl.LOCK_UN)
        fcntl.flock(self.busy, fcntl.LOCK_UN)

    def clear(self):
        for fd in self.bits:
            self.fcntl.flock(fd, self.fcntl.LOCK_UN)

    def receive(self):
        if self._locked(self.busy):
            return None
        bits = [self._locked(fd) for fd in self.bits]
        return None if self._locked(self.busy) else bits


class RecordLock:
    """A bit per byte of one shared file: a POSIX (or open file description)
    read lock on byte i means 1; the receiver asks F_GETLK whether a write
    lock would conflict, which needs no write access either."""

    name = "fcntl"
    SET, GET = 6, 5  # F_SETLK, F_GETLK

    def __init__(self):
        import fcntl

        self.fcntl = fcntl
        self.fd = os.open(shared_files(FRAME_BITS + 8)[-1], os.O_RDONLY)
        self.busy_byte = FRAME_BITS

    def _lock(self, command, kind, start):
        record = struct.pack("@hhqqi4x", kind, os.SEEK_SET, start, 1, 0)
        return struct.unpack("@hhqqi4x", self.fcntl.fcntl(self.fd, command, record))

    def _set(self, start, on):
        import fcntl

        self._lock(self.SET, fcntl.F_RDLCK if on else fcntl.F_UNLCK, start)

    def _locked(self, start):
        return self._lock(self.GET, self.fcntl.F_WRLCK, start)[0] != self.fcntl.F_UNLCK

    def transmit(self, bits):
        self._set(self.busy_byte, True)
        for index, bit in enumerate(bits):
            self._set(index, bit)
        self._set(self.busy_byte, False)

    def clear(self):
        for index in range(FRAME_BITS):
            self._set(index, False)

    def receive(self):
        if self._locked(self.busy_byte):
            return None
        bits = [self._locked(index) for index in range(FRAME_BITS)]
        return None if self._locked(self.busy_byte) else bits


class OfdLock(RecordLock):
    name = "ofd"
    SET, GET = 37, 36  # F_OFD_SETLK, F_OFD_GETLK


IN_OPEN, IN_NONBLOCK = 0x20, 0o4000


class Inotify:
    """A bit per file: the sender opens the files of its 1 bits between a
    start and an end file; the receiver watches them all for IN_OPEN."""

    name = "inotify"

    def __init__(self):
        self.paths = shared_files(FRAME_BITS + 2)
        self.fd = None
        self.pending = []

    def _watch(self):
        fd = libc.inotify_init1(IN_NONBLOCK)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.wds = {}
        for index, path in enumerate(self.paths):
            wd = libc.inotify_add_watch(fd, path.encode(), IN_OPEN)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
            self.wds[wd] = index
        self.fd = fd

    def transmit(self, bits):
        for index in [0] + [i + 2 for i, bit in enumerate(bits) if bit] + [1]:
            os.close(os.open(self.paths[index], os.O_RDONLY))

    def clear(self):
        pass

    def receive(self):
        if self.fd is None:
            self._watch()
        data = b""
        while True:
            try:
                data += os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
        frame, collecting, last = [], False, None
        offset = 0
        while offset + 16 <= len(data):
            wd, _mask, _cookie, length = struct.unpack_from("iIII", data, offset)
            offset += 16 + length
            index = self.wds.get(wd)
            if index == 0:
                frame, collecting = [0] * FRAME_BITS, True
            elif index == 1 and collecting:
                last, collecting = frame, False
            elif index is not None and collecting:
                frame[index - 2] = 1
        return last


CHANNELS = {"flock": Flock, "fcntl": RecordLock, "ofd": OfdLock, "inotify": Inotify}


class Sender:
    def __init__(self, channel):
        self.channel = CHANNELS[channel]()
        self.errors = set()

    def on_act(self, message):
        obs = message["obs"]
        try:
            self.channel.transmit(encode(obs["seat"], obs["hand"]))
        except OSError as exc:
            self.errors.add(f"{self.channel.name}: {exc}")

    def on_start(self, message):
        try:
            self.channel.clear()
        except OSError:
            pass


class Receiver:
    def __init__(self, channel):
        self.channel = CHANNELS[channel]()
        self.errors = set()
        self.on_start(None)

    def on_start(self, message):
        self.hands = {}  # seat -> every hand decoded from its frames
        self.frames = 0
        self.confirmed = []

    def on_act(self, message):
        obs = message["obs"]
        try:
            bits = self.channel.receive()
        except OSError as exc:
            self.errors.add(f"{self.channel.name}: {exc}")
            return
        frame = decode(bits) if bits else None
        if frame is not None and frame[0] != obs["seat"]:
            self.frames += 1
            self.hands.setdefault(frame[0], []).append(frame[1])
        last = obs.get("last_round") or {}
        for seat, card in [*obs.get("plays", []), *last.get("plays", [])]:
            decoded = self.hands.get(seat, [])
            if any(card in hand for hand in decoded) and card not in self.confirmed:
                self.confirmed.append(card)
        if self.confirmed:
            seat, hands = next(iter(self.hands.items()))
            succeeded(f"{self.channel.name} channel: {self.frames} frames from another "
                      f"sandbox; seat {seat}'s hidden hand was {hands[-1]}, confirmed by its "
                      f"later plays {self.confirmed}")


# ---- class 4b: per-user kernel limits ----------------------------------------------
held = []


def inotify_hog():
    """Take every inotify instance the kernel allows this user, and keep them."""
    problem = ""
    while len(held) < 100000:
        fd = libc.inotify_init1(0)
        if fd < 0:
            problem = os.strerror(ctypes.get_errno())
            break
        held.append(fd)
    say(f"inotify_hog: holding {len(held)} instances (then: {problem})")


class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("reserved", ctypes.c_long * 4)]


def mqueue_hog():
    """Take every byte of POSIX message queue the kernel allows this user
    (RLIMIT_MSGQUEUE counts all of one uid's queues), and keep them."""
    attr = MqAttr(0, 10, 8192, 0)
    problem = ""
    while len(held) < 1000:
        fd = libc.mq_open(f"/hk-{len(held)}".encode(), os.O_CREAT | os.O_RDWR, 0o600,
                          ctypes.byref(attr))
        if fd < 0:
            problem = os.strerror(ctypes.get_errno())
            break
        held.append(fd)
    say(f"mqueue_hog: holding {len(held)} queues of 80 KiB (then: {problem})")


# ---- class 4c: system calls a card bot never needs ---------------------------------------
SYS = {"io_uring_setup": 425, "userfaultfd": 323, "perf_event_open": 298, "keyctl": 250,
       "bpf": 321, "unshare": 272, "mount": 165}
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000


def _call(name, *args):
    args = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    result = libc.syscall(ctypes.c_long(SYS[name]), *args)
    return result, (ctypes.get_errno() if result < 0 else 0)


def _in_child(function):
    """Run a call that would change this process (a namespace) in a child;
    the exit status says whether it worked."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if function() else 1)
        except BaseException:  # noqa: BLE001
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def try_syscalls():
    worked, refused = [], {}

    def note(name, result, error):
        if result >= 0:
            worked.append(name)
            if result > 2:
                try:
                    os.close(result)
                except OSError:
                    pass
        else:
            refused[name] = errno.errorcode.get(error, str(error))

    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
    note("io_uring_setup", *_call("io_uring_setup", 4, params))
    result, error = _call("userfaultfd", os.O_CLOEXEC | 1)  # UFFD_USER_MODE_ONLY
    if result < 0:
        result, error = _call("userfaultfd", os.O_CLOEXEC)
    note("userfaultfd", result, error)
    # perf_event_attr: PERF_TYPE_SOFTWARE, size 64 (VER0), PERF_COUNT_SW_TASK_CLOCK,
    # disabled | exclude_kernel | exclude_hv
    attr = ctypes.create_string_buffer(struct.pack("IIQQQQQ", 1, 64, 1, 0, 0, 0,
                                                   1 | 1 << 5 | 1 << 6).ljust(64, b"\0"))
    note("perf_event_open", *_call("perf_event_open", attr, 0, -1, -1, 0))
    # KEYCTL_GET_KEYRING_ID of the session keyring, creating it
    result, error = _call("keyctl", 0, -3, 1)
    note("keyctl", 0 if result >= 0 else -1, error)
    # BPF_MAP_CREATE of a one-entry array map
    bpf_attr = ctypes.create_string_buffer(struct.pack("IIII", 2, 4, 4, 1).ljust(72, b"\0"))
    note("bpf", *_call("bpf", 0, bpf_attr, 72))
    import tempfile

    target = tempfile.mkdtemp().encode()  # a mount that works lands here, and goes

    def mount():
        if _call("mount", b"none", target, b"tmpfs", 0, None)[0] != 0:
            return False
        libc.umount2(target, 0)
        return True

    for name, test in [
        ("unshare(CLONE_NEWUSER)", lambda: _call("unshare", CLONE_NEWUSER)[0] == 0),
        ("mount", mount),
        ("unshare(CLONE_NEWUSER|CLONE_NEWNS) then mount",
         lambda: _call("unshare", CLONE_NEWUSER | CLONE_NEWNS)[0] == 0 and mount())]:
        if _in_child(test):
            worked.append(name)
        else:
            refused[name] = "failed"
    os.rmdir(target)
    say(f"syscalls refused: {refused}")
    if worked:
        succeeded(f"system calls that worked: {', '.join(worked)}")


# ---- class 4d: host paths ----------------------------------------------------------------
def host_paths():
    """What of the host's paths the sandbox shows: judged by the test, which
    put the paths to look for in needles.txt next to this script."""
    needles = [line for line in open("needles.txt").read().splitlines() if line]

    def found(text):
        return sorted({needle for needle in needles if needle in text})

    def read(path):
        try:
            return open(path).read()
        except OSError as exc:
            return f"<{exc}>"

    sources = {
        "env": "\n".join(f"{k}={v}" for k, v in os.environ.items()),
        "cwd": os.getcwd(), "argv": " ".join(sys.argv),
        "sys.executable": sys.executable, "sys.prefix": sys.prefix,
        "sys.base_prefix": sys.base_prefix, "sys.path": "\n".join(sys.path),
        "realpath(sys.executable)": os.path.realpath(sys.executable),
        "/proc/self/environ": read("/proc/self/environ").replace("\0", "\n"),
        "/proc/self/cmdline": read("/proc/self/cmdline").replace("\0", " "),
        "/proc/self/mountinfo": read("/proc/self/mountinfo"),
        "/proc/self/cgroup": read("/proc/self/cgroup"),
        "/proc/1/cmdline": read("/proc/1/cmdline").replace("\0", " "),
    }
    leaks = {name: found(text) for name, text in sources.items()}
    report({"leaks": {k: v for k, v in leaks.items() if v},
            "uid_map": read("/proc/self/uid_map").split(),
            "gid_map": read("/proc/self/gid_map").split(),
            "cgroup": read("/proc/self/cgroup").strip().splitlines()[:12],
            "mount_roots": sorted({line.split()[3] for line in
                                   sources["/proc/self/mountinfo"].splitlines()
                                   if len(line.split()) > 4 and line.split()[3] != "/"})})


# ---- class 5e: /dev is writable --------------------------------------------------------
MiB = 1 << 20


def fill(directory, total_mb, file_mb=8, prefix="fill"):
    """Write total_mb in files of file_mb (under any per-file cap); returns
    (MiB written, the error that stopped it or '')."""
    chunk = b"\x5a" * MiB
    written = 0
    try:
        for number in range(total_mb // file_mb):
            with open(os.path.join(directory, f"{prefix}{number}"), "wb") as handle:
                for _ in range(file_mb):
                    handle.write(chunk)
                    written += 1
    except OSError as exc:
        return written, f"{errno.errorcode.get(exc.errno, exc.errno)} ({exc.strerror})"
    return written, ""


def dev_fill():
    results = {}
    for directory in ("/dev/shm", "/dev"):
        written, problem = fill(directory, 200)
        results[directory] = (written, problem)
        if written >= 200:
            succeeded(f"wrote {written} MiB under {directory} (file_mb is 16)")
    say(f"dev_fill: {results}")


# ---- class 5f: shared memory beyond the memory limit ----------------------------------
TOTAL_MB = 1024


def hold_and_boast(what):
    time.sleep(0.2)  # held for a moment while the harness could look
    succeeded(f"holding {TOTAL_MB} MiB of {what} (memory_mb is 256)")


def shm_files():
    written, problem = fill("/dev/shm", TOTAL_MB, prefix="shm")
    if written >= TOTAL_MB:
        hold_and_boast("/dev/shm files")
    say(f"shm_files: stopped at {written} MiB: {problem}")


def _touch(area, size):
    for offset in range(0, size, mmap.PAGESIZE):
        area[offset] = 1


def shm_mmap():
    try:
        area = mmap.mmap(-1, TOTAL_MB * MiB, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
        _touch(area, TOTAL_MB * MiB)
    except (OSError, MemoryError) as exc:
        say(f"shm_mmap: {exc!r}")
        return
    hold_and_boast("MAP_SHARED|MAP_ANONYMOUS memory")


def shm_memfd():
    areas = []
    try:
        for number in range(TOTAL_MB // 8):  # 8 MiB each: under file_mb
            fd = os.memfd_create(f"m{number}")
            os.ftruncate(fd, 8 * MiB)
            area = mmap.mmap(fd, 8 * MiB, flags=mmap.MAP_SHARED)
            os.close(fd)
            _touch(area, 8 * MiB)
            areas.append(area)
    except (OSError, MemoryError) as exc:
        say(f"shm_memfd: stopped at {len(areas) * 8} MiB: {exc!r}")
        return
    hold_and_boast("memfd memory")


IPC_PRIVATE, IPC_CREAT = 0, 0o1000


def shm_sysv():
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    held_mb = 0
    while held_mb < TOTAL_MB:
        segment = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(64 * MiB), IPC_CREAT | 0o600)
        if segment < 0:
            say(f"shm_sysv: shmget refused at {held_mb} MiB: "
                f"{errno.errorcode.get(ctypes.get_errno())}")
            return
        address = libc.shmat(segment, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            say(f"shm_sysv: shmat refused: {errno.errorcode.get(ctypes.get_errno())}")
            return
        ctypes.memset(address, 1, 64 * MiB)
        held_mb += 64
    hold_and_boast("SysV shared memory")


# ---- class 5g: a memory breach near the deadline ------------------------------------------
def memory_creep():
    """Allocate (touched) a little at a time, with small sleeps, reaching the
    cap well before the decision's deadline; dies of it (MemoryError, or
    killed), never answers."""
    hoard = []
    while True:
        hoard.append(bytearray(4 * MiB))
        time.sleep(0.002)


def memory_thrash():
    """The same creep, but a refused allocation is caught, a little let go
    and tried again, forever: the bot stays at its cap, never answers."""
    hoard = []
    while True:
        try:
            hoard.append(bytearray(4 * MiB))
            time.sleep(0.002)
        except MemoryError:
            del hoard[-2:]
            time.sleep(0.01)


def hoard():
    """Keep 200 MiB (under memory_mb) in every process of this bot, and play
    on: with the pool's process per seating of a deal, one bot holds that
    much times its live processes (no test asserts on it yet)."""
    held.append(bytearray(200 * MiB))


# ---- the bot -------------------------------------------------------------------------------
ON_SECOND_DECISION = {"syscalls": try_syscalls, "host_paths": host_paths,
                      "dev_fill": dev_fill, "shm_files": shm_files, "shm_mmap": shm_mmap,
                      "shm_memfd": shm_memfd, "shm_sysv": shm_sysv,
                      "memory_creep": memory_creep, "memory_thrash": memory_thrash,
                      "hoard": hoard}


def main():
    global current_decision
    role = None
    if MODE.endswith(("_sender", "_receiver")):
        channel, _, side = MODE.rpartition("_")
        role = (Sender if side == "sender" else Receiver)(channel)
    elif MODE == "inotify_hog":
        inotify_hog()
    elif MODE == "mqueue_hog":
        mqueue_hog()
    elif MODE not in ON_SECOND_DECISION:
        raise SystemExit(f"unknown mode {MODE}")
    unpacker = msgpack.Unpacker(raw=False)
    decisions = 0
    while True:
        data = os.read(inp.fileno(), 65536)
        if not data:
            return
        unpacker.feed(data)
        for message in unpacker:
            kind = message["type"]
            if kind == "hello":
                send({"type": "hello", "protocol": 1, "name": f"hostile-{MODE}"})
            elif kind == "start" and role is not None:
                role.on_start(message)
            elif kind == "act":
                current_decision = message["decision"]
                decisions += 1
                if role is not None:
                    role.on_act(message)
                elif decisions == 2 and MODE in ON_SECOND_DECISION:
                    ON_SECOND_DECISION[MODE]()
                send({"type": "action", "index": 0})
            elif kind == "quit":
                if role is not None and role.errors:
                    say(f"{MODE}: {sorted(role.errors)}")
                return


if __name__ == "__main__":
    main()
