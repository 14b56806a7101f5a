"""The bot sandboxes' syscall filter (harness/proc/seccomp.py): a well-formed BPF
program, the calls it denies fail inside bubblewrap (and work without it, so
each test proves the filter answered), and ordinary bots in Python, C and
JavaScript still run under it.

The sandboxes here are bwrap run directly with the shape of
``harness.proc.sandbox.bwrap_arguments`` (namespaces, read-only /usr, a private
/tmp), so these tests need neither the launcher nor control groups."""

from __future__ import annotations

import errno
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.proc import seccomp
from harness.proc.botproc import PipeTransport
from harness.proc.sandbox import ETC_FILES, SANDBOX_PATH, bwrap_binary, probe

PROBE_DIR = Path(__file__).resolve().parent / "bots" / "seccomp"
ARCH = seccomp.machine_arch()
needs_bwrap = pytest.mark.skipif(
    not probe().bwrap_works,
    reason=f"SANDBOX UNAVAILABLE, syscall filter not tested: {probe().bwrap_problem}")
needs_filter = pytest.mark.skipif(
    ARCH is None, reason="no syscall filter for this architecture (only x86_64 and aarch64)")


# ---- the program ------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_program_is_well_formed(arch):
    data = seccomp.program(arch)
    assert data is not None and len(data) % 8 == 0
    count = len(data) // 8
    assert 10 < count <= seccomp.MAX_INSTRUCTIONS
    known = {seccomp.LD_W_ABS, seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K, seccomp.RET_K}
    for index in range(count):
        code, jt, jf, k = struct.unpack_from("<HBBI", data, index * 8)
        assert code in known, f"instruction {index}: unknown code {code:#x}"
        if code & 0x07 == 0x05:  # a jump: both targets inside the program
            assert index + 1 + max(jt, jf) < count, f"instruction {index} jumps out"
        if code == seccomp.LD_W_ABS:
            assert k % 4 == 0 and k < 64, "loads stay inside struct seccomp_data"
        if code == seccomp.RET_K:
            assert k in (seccomp.RET_ALLOW, seccomp.RET_KILL_PROCESS) or \
                k & 0xFFFF0000 == seccomp.RET_ERRNO
    last = struct.unpack_from("<HBBI", data, len(data) - 8)
    assert last == (seccomp.RET_K, 0, 0, seccomp.RET_ALLOW), "everything else is allowed"
    # the architecture is checked first: another ABI's numbers mean other calls
    assert struct.unpack_from("<HBBI", data, 0) == (seccomp.LD_W_ABS, 0, 0, 4)
    assert struct.unpack_from("<HBBI", data, 8)[3] == seccomp.ARCHES[arch]


def _interpret(data: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Runs the program on one seccomp_data, the way the kernel would."""
    words = [nr, arch, 0, 0] + [w for a in (*args, 0, 0, 0, 0, 0, 0)[:6]
                                for w in (a & 0xFFFFFFFF, a >> 32)]
    pc, accumulator = 0, 0
    while True:
        code, jt, jf, k = struct.unpack_from("<HBBI", data, pc * 8)
        pc += 1
        if code == seccomp.LD_W_ABS:
            accumulator = words[k // 4]
        elif code == seccomp.RET_K:
            return k
        else:
            taken = {seccomp.JEQ_K: accumulator == k, seccomp.JGE_K: accumulator >= k,
                     seccomp.JSET_K: bool(accumulator & k)}[code]
            pc += jt if taken else jf


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_program_answers_every_rule_and_nothing_else(arch):
    data = seccomp.program(arch)
    assert data is not None
    numbers, audit = seccomp.SYSCALLS[arch], seccomp.ARCHES[arch]
    for denial in seccomp.DENIED:
        if denial.name in numbers and denial.arg is None:
            assert _interpret(data, numbers[denial.name], audit) == \
                seccomp.RET_ERRNO | denial.errno, denial.name
    assert _interpret(data, numbers["flock"], audit) == seccomp.RET_ERRNO | 0, \
        "flock returns 0 without reaching the kernel"
    allowed = set(range(500)) - set(numbers.values())
    assert all(_interpret(data, nr, audit) == seccomp.RET_ALLOW for nr in allowed)
    fcntl, clone, sock = numbers["fcntl"], numbers["clone"], numbers["socket"]
    eperm = seccomp.RET_ERRNO | 1
    for command in seccomp.FCNTL_DENIED.values():
        assert _interpret(data, fcntl, audit, (3, command)) == eperm
        assert _interpret(data, fcntl, audit, (3, command | 1 << 32)) == eperm, \
            "the kernel reads cmd as 32 bits"
    for command in seccomp.FCNTL_LOCKS.values():
        assert _interpret(data, fcntl, audit, (3, command)) == seccomp.RET_ERRNO | 0
    for command in (0, 1, 2, 3, 4, 1030, 1031, 1032, 1033):  # DUPFD, GETFD, SETFD, GETFL...
        assert _interpret(data, fcntl, audit, (3, command)) == seccomp.RET_ALLOW
    assert _interpret(data, clone, audit, (0x01200011,)) == seccomp.RET_ALLOW  # fork
    assert _interpret(data, clone, audit, (0x003D0F00,)) == seccomp.RET_ALLOW  # a thread
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                 0x40000000):
        assert _interpret(data, clone, audit, (flag | 17,)) == eperm
    assert _interpret(data, sock, audit, (40, 1)) == eperm
    assert all(_interpret(data, sock, audit, (family, 1)) == seccomp.RET_ALLOW
               for family in (1, 2, 10, 16))
    other = seccomp.ARCHES["aarch64" if arch == "x86_64" else "x86_64"]
    assert _interpret(data, 0, other) == seccomp.RET_KILL_PROCESS
    assert _interpret(data, 0, 0x40000003) == seccomp.RET_KILL_PROCESS  # i386
    if arch == "x86_64":
        assert _interpret(data, 0x40000000 | 39, audit) == eperm, "the x32 ABI is refused"


def test_an_unknown_architecture_has_no_filter():
    assert seccomp.program("riscv64") is None and seccomp.machine_arch("mips") is None
    assert seccomp.machine_arch("amd64") == "x86_64" and seccomp.machine_arch("arm64") == "aarch64"


def test_every_rule_has_a_number_reason_and_a_line_in_the_description():
    text = seccomp.describe()
    names = [d.name for d in seccomp.DENIED]
    assert len({(d.name, d.condition) for d in seccomp.DENIED}) == len(names)
    for denial in seccomp.DENIED:
        assert denial.reason and denial.errno in (0, 1, 38)
        assert (denial.arg is None) == (not denial.condition) == \
            (not denial.equals and not denial.mask), denial
        assert f"- `{denial.name}`" in text
        assert denial.name in seccomp.SYSCALLS["x86_64"] or denial.name in \
            seccomp.SYSCALLS["aarch64"], f"{denial.name} has no number"
    for arch, numbers in seccomp.SYSCALLS.items():
        assert set(numbers) <= set(names), f"{arch} numbers a call that is not denied"
        assert len(set(numbers.values())) == len(numbers), f"{arch}: two calls share a number"
    # numbers the kernel headers of this machine know (x86_64 only: the
    # generic table's header needs per-arch macros)
    header = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    if header.exists():
        defined = {}
        for line in header.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "#define" and parts[1].startswith("__NR_"):
                defined[parts[1][5:]] = int(parts[2])
        for name, number in seccomp.SYSCALLS["x86_64"].items():
            if name in defined:
                assert defined[name] == number, name


# ---- inside a sandbox ---------------------------------------------------------------
def _python_binds() -> list[str]:
    roots = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    args = []
    for root in sorted(roots):
        if not (root == Path("/usr") or Path("/usr") in root.parents):
            args += ["--ro-bind", str(root), str(root)]
    return args


def _sandbox_args(bot_dir: Path) -> list[str]:
    """bwrap's options, the shape of ``harness.proc.sandbox.bwrap_arguments``."""
    args = ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
            "--disable-userns", "--die-with-parent", "--new-session",
            "--cap-drop", "ALL", "--hostname", "bot", "--ro-bind", "/usr", "/usr",
            "--proc", "/proc", "--dev", "/dev", "--size", str(64 << 20), "--tmpfs", "/tmp"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        target = Path("/") / name
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            args += ["--ro-bind", str(target), str(target)]
    for name in ETC_FILES:
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args + [*_python_binds(), "--ro-bind", str(bot_dir), "/bot", "--chdir", "/bot",
                   "--clearenv", "--setenv", "PATH", SANDBOX_PATH, "--setenv", "HOME", "/tmp"]


def _bwrap(bot_dir: Path, command: list[str], filtered: bool, timeout: float = 60
           ) -> subprocess.CompletedProcess[str]:
    """``command`` in a sandbox shaped like the harness's, with or without the filter."""
    args = [str(bwrap_binary())]
    descriptors: tuple[int, ...] = ()
    if filtered:
        data = seccomp.program()
        assert data is not None
        descriptors = (seccomp.program_fd(data),)
        args += ["--seccomp", str(descriptors[0])]
    try:
        return subprocess.run([*args, *_sandbox_args(bot_dir), "--", *command],
                              pass_fds=descriptors, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    finally:
        for descriptor in descriptors:
            os.close(descriptor)


def _probe(filtered: bool) -> dict[str, str]:
    assert ARCH is not None
    numbers: dict[str, int] = dict(seccomp.SYSCALLS[ARCH])
    if ARCH == "x86_64":
        numbers["x32 getpid"] = seccomp.X32_SYSCALL_BIT | 39
    result = _bwrap(PROBE_DIR, ["/usr/bin/python3", "/bot/probe.py", json.dumps(numbers)],
                    filtered)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def probed() -> tuple[dict[str, str], dict[str, str]]:
    return _probe(filtered=False), _probe(filtered=True)


DENIED_CHECKS = {
    # check -> what the filter answers
    # taking a lock "succeeds" but no lock reaches the inode
    "flock": "ok", "flock lock": "none", "fcntl F_SETLK": "ok", "fcntl F_SETLK lock": "none",
    "fcntl F_OFD_SETLK": "ok", "fcntl F_OFD_SETLK lock": "none",
    "fcntl F_GETLK": "EPERM", "fcntl F_OFD_GETLK": "EPERM", "fcntl F_GETLEASE": "EPERM",
    "fcntl F_SETLEASE": "EPERM", "fcntl F_NOTIFY": "EPERM", "inotify_init1": "EPERM",
    "fanotify_init": "EPERM", "mincore": "EPERM", "cachestat": "EPERM",
    "socket AF_VSOCK": "EPERM", "io_uring_setup": "ENOSYS", "io_uring_enter": "ENOSYS",
    "io_uring_register": "ENOSYS", "userfaultfd": "EPERM", "perf_event_open": "EPERM",
    "bpf": "EPERM", "keyctl": "EPERM", "add_key": "EPERM", "request_key": "EPERM",
    "ptrace": "EPERM", "process_vm_readv": "EPERM", "pidfd_getfd": "EPERM", "kcmp": "EPERM",
    "unshare": "EPERM", "setns": "EPERM", "mount": "EPERM", "umount2": "EPERM",
    "chroot": "EPERM", "pivot_root": "EPERM", "open_tree": "EPERM", "fsopen": "EPERM",
    "shmget": "EPERM", "memfd_secret": "EPERM", "syslog": "EPERM", "settimeofday": "EPERM",
    "name_to_handle_at": "EPERM", "clone CLONE_NEWNS": "EPERM", "clone3": "ENOSYS",
}
if ARCH == "x86_64":
    DENIED_CHECKS.update({"inotify_init": "EPERM", "x32 getpid": "EPERM"})
# Without the filter these succeed, or fail with another errno, on any Linux:
# the channels and escapes of the issue, and calls whose arguments make the
# kernel answer something else first.
OPEN_WITHOUT_FILTER = {
    "flock lock": "held", "fcntl F_SETLK lock": "held", "fcntl F_OFD_SETLK lock": "held",
    "fcntl F_GETLK": "ok", "fcntl F_OFD_GETLK": "ok", "fcntl F_GETLEASE": "ok",
    "fcntl F_NOTIFY": "ok",
    "inotify_init1": "ok", "mincore": "ok", "unshare": "ok", "shmget": "ok",
    "setns": "EBADF", "pidfd_getfd": "EBADF", "chroot": "ENOENT", "keyctl": errno.errorcode[errno.EOPNOTSUPP],
    "ptrace": "ESRCH", "clone CLONE_NEWNS": "EINVAL", "clone3": "EINVAL",
    "add_key": "EFAULT", "request_key": "EFAULT", "mount": "ENOENT",
}
ORDINARY = ["fcntl F_GETFL", "fcntl F_SETFD", "read a file", "mmap a file", "mmap anonymous",
            "threads", "fork", "subprocess", "time", "urandom", "socketpair"]


@needs_bwrap
@needs_filter
def test_the_filter_denies_each_call_inside_a_sandbox(probed):
    _, filtered = probed
    wrong = {name: (filtered.get(name), want) for name, want in DENIED_CHECKS.items()
             if filtered.get(name) != want}
    assert not wrong, f"check: (got, wanted) {wrong}"


@needs_bwrap
@needs_filter
def test_without_the_filter_the_channels_are_open(probed):
    """The denial test proves something only if these calls work unfiltered."""
    unfiltered, _ = probed
    wrong = {name: (unfiltered.get(name), want) for name, want in OPEN_WITHOUT_FILTER.items()
             if unfiltered.get(name) != want}
    assert not wrong, f"check: (got, wanted) {wrong}"


@needs_bwrap
@needs_filter
def test_what_an_ordinary_bot_does_still_works_under_the_filter(probed):
    unfiltered, filtered = probed
    for results in (unfiltered, filtered):
        assert {name: results.get(name) for name in ORDINARY} == dict.fromkeys(ORDINARY, "ok")


LOCKER = """
import fcntl, os, struct, sys, time
shared = os.open("/bot/locker.py", os.O_RDONLY)  # read-only, seen by both sandboxes
if sys.argv[1] == "hold":  # one bot holds locks: a bit set
    fcntl.flock(shared, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.lockf(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)
    print("holding", flush=True)
    time.sleep(30)
else:  # the other reads the bit
    try:
        fcntl.flock(shared, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("flock free", end=" ")
    except OSError:
        print("flock taken", end=" ")
    query = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0)
    try:
        answer = struct.unpack("hhqqi4x", fcntl.fcntl(shared, fcntl.F_GETLK, query))
        print("posix free" if answer[0] == fcntl.F_UNLCK else "posix taken")
    except OSError as exc:
        print("posix", exc.strerror)
"""


@needs_bwrap
@needs_filter
@pytest.mark.parametrize("filtered", [False, True], ids=["unfiltered", "filtered"])
def test_two_sandboxes_cannot_pass_a_bit_through_a_lock(tmp_path, filtered):
    """The attack of the issue: one bot locks an inode both sandboxes see
    read-only (a /usr file, or /bot shared by two copies of one bot), the
    other sees it. Unfiltered the bit gets through; filtered it does not."""
    (tmp_path / "locker.py").write_text(LOCKER)
    args = [str(bwrap_binary())]
    descriptors: tuple[int, ...] = ()
    if filtered:
        descriptors = (seccomp.program_fd(seccomp.program() or b""),)
        args += ["--seccomp", str(descriptors[0])]
    holder = subprocess.Popen([*args, *_sandbox_args(tmp_path), "--", "/usr/bin/python3",
                               "/bot/locker.py", "hold"], pass_fds=descriptors,
                              stdout=subprocess.PIPE, text=True)
    try:
        for descriptor in descriptors:
            os.close(descriptor)
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        reader = _bwrap(tmp_path, ["/usr/bin/python3", "/bot/locker.py", "read"], filtered)
    finally:
        holder.kill()
        holder.wait()
    assert reader.returncode == 0, reader.stderr
    if filtered:
        assert reader.stdout.strip() == "flock free posix Operation not permitted"
    else:
        assert reader.stdout.strip() == "flock taken posix taken"


# ---- bots in three languages --------------------------------------------------------
PYTHON_BOT = """
import fcntl, json, os, sqlite3, threading, time, numpy
out = {}
def work(i):
    out[i] = float(numpy.linalg.norm(numpy.arange(1000.0) * i))
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
db = sqlite3.connect("/tmp/book.db")  # SQLite locks its files
db.execute("create table moves (card)")
db.executemany("insert into moves values (?)", [(i,) for i in range(52)])
db.commit()
shared = os.open("/bot/bot.py", os.O_RDONLY)
fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)
info = os.fstat(shared)
where = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino} "
print(json.dumps({"threads": len(out), "norm": round(out[1]),
                  "sqlite": db.execute("select sum(card) from moves").fetchone()[0],
                  "lock_seen": any(where in line for line in open("/proc/locks")),
                  "random": len(os.urandom(8)), "time": time.time() > 1e9}))
"""

C_BOT = r"""
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

static void *work(void *arg) {
    long n = (long)arg, *sum = malloc(sizeof *sum);
    int *cards = malloc(52 * sizeof *cards);
    *sum = 0;
    for (int i = 0; i < 52; i++) { cards[i] = (int)((i * 7 + n) % 52); *sum += cards[i]; }
    free(cards);
    return sum;
}

int main(void) {
    pthread_t threads[4];
    long total = 0;
    for (long i = 0; i < 4; i++) pthread_create(&threads[i], NULL, work, (void *)i);
    for (int i = 0; i < 4; i++) { void *r; pthread_join(threads[i], &r); total += *(long *)r; free(r); }
    char *big = malloc(64 << 20);
    memset(big, 1, 64 << 20);
    int locked = flock(open("/bot/bot.c", O_RDONLY), LOCK_SH | LOCK_NB);
    int watch = inotify_init1(IN_CLOEXEC);
    printf("{\"total\": %ld, \"big\": %d, \"flock\": %d, \"inotify\": \"%s\"}\n",
           total, big[12345], locked, watch >= 0 ? "ok" : strerror(errno));
    return 0;
}
"""

JS_BOT = """
const { Worker } = require("worker_threads");
const fs = require("fs");
const crypto = require("crypto");
const result = { random: crypto.randomBytes(8).length, read: fs.readFileSync("/bot/bot.js").length > 0 };
try { fs.watch("/usr/bin").close(); result.watch = "ok"; } catch (e) { result.watch = e.code; }
const worker = new Worker("const { parentPort } = require('worker_threads'); parentPort.postMessage(6 * 7);",
                          { eval: true });
worker.on("message", async (answer) => {
  result.worker = answer;
  result.asyncRead = (await fs.promises.readFile("/usr/bin/env")).length > 0;  // libuv's pool
  setTimeout(() => { result.timer = true; console.log(JSON.stringify(result)); worker.terminate(); }, 10);
});
"""


def _both(bot_dir: Path, command: list[str]) -> tuple[dict, dict]:
    outcomes = []
    for filtered in (False, True):
        result = _bwrap(bot_dir, command, filtered)
        assert result.returncode == 0, (filtered, result.stderr[-3000:])
        outcomes.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return outcomes[0], outcomes[1]


@needs_bwrap
@needs_filter
def test_a_python_bot_with_numpy_and_threads_runs_under_the_filter(tmp_path):
    pytest.importorskip("numpy", reason="numpy is not installed with the harness's Python")
    (tmp_path / "bot.py").write_text(PYTHON_BOT)
    plain, filtered = _both(tmp_path, [sys.executable, "/bot/bot.py"])
    expected = {"threads": 4, "norm": 18244, "sqlite": 1326, "random": 8, "time": True}
    assert plain == {**expected, "lock_seen": True}, "the lock channel exists unfiltered"
    assert filtered == {**expected, "lock_seen": False}


@needs_bwrap
@needs_filter
def test_a_c_bot_with_pthreads_and_malloc_runs_under_the_filter(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc, gcc) on this machine: the C bot is not tested")
    (tmp_path / "bot.c").write_text(C_BOT)
    built = subprocess.run([compiler, "-O1", "-pthread", "-o", str(tmp_path / "bot"),
                            str(tmp_path / "bot.c")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    plain, filtered = _both(tmp_path, ["/bot/bot"])
    expected = {"total": 4 * 1326, "big": 1, "flock": 0}
    assert plain == {**expected, "inotify": "ok"}, "inotify works unfiltered"
    assert filtered == {**expected, "inotify": "Operation not permitted"}


I386_CALL = r"""
#include <stdio.h>
int main(void) {
    long pid;
    __asm__ volatile ("int $0x80" : "=a"(pid) : "a"(20) : "memory");  /* i386 getpid */
    printf("%ld\n", pid);
    return 0;
}
"""


@needs_bwrap
@needs_filter
def test_a_system_call_of_another_abi_kills_the_process(tmp_path):
    """i386 calls (int 0x80) have numbers of another table: the arch check kills."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if ARCH != "x86_64" or compiler is None:
        pytest.skip("needs x86_64 and a C compiler (cc, gcc)")
    (tmp_path / "i386.c").write_text(I386_CALL)
    built = subprocess.run([compiler, "-O1", "-o", str(tmp_path / "i386"),
                            str(tmp_path / "i386.c")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    plain = _bwrap(tmp_path, ["/bot/i386"], filtered=False)
    if plain.returncode != 0:
        pytest.skip(f"this kernel runs no i386 calls anyway: {plain.returncode}")
    assert plain.stdout == "2\n", "getpid of the bot, under the sandbox's init"
    filtered = _bwrap(tmp_path, ["/bot/i386"], filtered=True)
    assert filtered.returncode == 128 + 31 and filtered.stdout == "", "killed by SIGSYS"


@needs_bwrap
@needs_filter
def test_a_javascript_bot_with_a_worker_and_a_timer_runs_under_the_filter(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript bot is not tested")
    (tmp_path / "bot.js").write_text(JS_BOT)
    plain, filtered = _both(tmp_path, [node, "/bot/bot.js"])
    expected = {"random": 8, "read": True, "worker": 42, "asyncRead": True, "timer": True}
    assert plain == {**expected, "watch": "ok"}, "inotify works unfiltered"
    assert filtered == {**expected, "watch": "EPERM"}


@needs_bwrap
@needs_filter
def test_the_example_javascript_bot_starts_and_ends_under_the_filter():
    """bots/js_random itself: node loads it and it leaves cleanly at EOF."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript bot is not tested")
    root = Path(__file__).resolve().parent.parent / "bots" / "js_random"
    result = _bwrap(root, [node, "/bot/bot.js"], filtered=True)
    assert result.returncode == 0 and not result.stderr


class _FilteredBwrap:
    """Stands in for ``harness.proc.sandbox.Sandbox`` in a BotPool: each bot under
    bwrap and the filter (read from a file the shell opens as fd 3)."""

    def __init__(self, program: Path) -> None:
        self.program = program

    def spawn(self, bot_dir: Path, argv: list[str], manifest_env: dict[str, str],
              limits: object, protocol: str = "msgpack") -> PipeTransport:
        return PipeTransport(["/bin/sh", "-c", 'exec 3<"$0" && exec "$@"', str(self.program),
                              str(bwrap_binary()), "--seccomp", "3", *_sandbox_args(bot_dir),
                              "--", *argv], protocol=protocol)


@needs_bwrap
@needs_filter
def test_the_reference_bots_play_a_match_under_the_filter(tmp_path):
    """random and heuristic (Python) and js_random (node) through the protocol."""
    from harness.match import BotPool, Limits, run_match
    from harness.proc.catalog import BotCache, discover

    if shutil.which("node") is None:
        pytest.skip("node is not installed: js_random cannot play")
    data = seccomp.program()
    assert data is not None
    (tmp_path / "filter.bpf").write_bytes(data)
    specs = discover()
    pool = BotPool({n: specs[n] for n in ("random", "heuristic", "js_random")},
                   Limits(decision_ms=5000, startup_ms=15000),
                   _FilteredBwrap(tmp_path / "filter.bpf"),  # type: ignore[arg-type]
                   cache=BotCache(tmp_path / "cache"))
    try:
        for game in ("target", "limit"):
            result = run_match(game, 3, ["random", "heuristic", "js_random"], pool, game)
            assert result.faults == [None, None, None], (game, result.faults)
    finally:
        pool.close()


# ---- cost -------------------------------------------------------------------------------
@needs_bwrap
@needs_filter
def test_the_filter_costs_little_at_start(tmp_path):
    def start_ms(filtered: bool) -> float:
        began = time.perf_counter()
        assert _bwrap(tmp_path, ["true"], filtered).returncode == 0
        return (time.perf_counter() - began) * 1000

    plain, filtered = [], []
    for _ in range(10):
        plain.append(start_ms(False))
        filtered.append(start_ms(True))
    plain.sort()
    filtered.sort()
    print(f"bwrap start, median of 10: {plain[5]:.1f} ms plain, {filtered[5]:.1f} ms filtered")
    # medians of interleaved starts: a loaded machine slows both alike, and
    # the margin grows with them
    assert filtered[5] < 1.5 * plain[5] + 50
