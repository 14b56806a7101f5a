"""Runs inside a sandbox (see tests/test_seccomp.py): tries each call the
syscall filter denies and each thing an ordinary bot does, and prints one JSON
object, check -> "ok" or the errno's name. Arguments are chosen so that
without the filter the kernel answers something other than the filter's
errno wherever it can (ENOENT, EBADF, EFAULT...), which proves the filter
answered. Usage: probe.py NUMBERS_JSON (name -> syscall number)."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import mmap
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

NR = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# A read-only inode that other sandboxes see too (as /usr is; the same bot's
# copies share /bot), and that no other test locks, so runs in parallel agree.
SHARED_FILE = "/bot/probe.py"
results: dict[str, str] = {}


def outcome(value: int) -> str:
    return "ok" if value >= 0 else errno.errorcode.get(ctypes.get_errno(), "E?")


def call(name: str, *args: int | bytes | None) -> str:
    ctypes.set_errno(0)
    return outcome(libc.syscall(NR[name], *args))


def check(label: str, action) -> None:
    try:
        value = action()
        results[label] = value if isinstance(value, str) else "ok"
    except OSError as exc:
        results[label] = errno.errorcode.get(exc.errno or 0, str(exc))
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        results[label] = f"{type(exc).__name__}: {exc}"


def fresh(name: str, *args) -> str:
    """A call that may create a resource: closes the fd it returns."""
    ctypes.set_errno(0)
    value = libc.syscall(NR[name], *args)
    if value >= 0:
        os.close(value)
    return outcome(value)


shared = os.open(SHARED_FILE, os.O_RDONLY)
usr = os.open("/usr", os.O_RDONLY | os.O_DIRECTORY)
flock_struct = struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 0, 0)
F_OFD_GETLK, F_OFD_SETLK, F_SETLEASE, F_GETLEASE, F_NOTIFY = 36, 37, 1024, 1025, 1026
signal.signal(signal.SIGIO, signal.SIG_IGN)  # dnotify's signal, if F_NOTIFY gets through



def lock_held(kind: str) -> str:
    """Whether /proc/locks (every lock of the machine) shows a ``kind`` lock
    on SHARED_FILE: "held", or "none" where the call took no lock."""
    info = os.fstat(shared)
    where = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino} "
    with open("/proc/locks") as locks:
        return "held" if any(kind in line and where in line for line in locks) else "none"


# --- the hidden channels between sandboxes
check("flock", lambda: fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB))
check("flock lock", lambda: lock_held("FLOCK"))
check("fcntl F_SETLK", lambda: fcntl.lockf(shared, fcntl.LOCK_SH | fcntl.LOCK_NB))
check("fcntl F_SETLK lock", lambda: lock_held("POSIX"))
check("fcntl F_GETLK", lambda: fcntl.fcntl(shared, fcntl.F_GETLK, flock_struct))
check("fcntl F_OFD_SETLK", lambda: fcntl.fcntl(shared, F_OFD_SETLK, flock_struct))
check("fcntl F_OFD_SETLK lock", lambda: lock_held("OFDLCK"))
check("fcntl F_OFD_GETLK", lambda: fcntl.fcntl(shared, F_OFD_GETLK, flock_struct))
check("fcntl F_GETLEASE", lambda: fcntl.fcntl(shared, F_GETLEASE))
check("fcntl F_SETLEASE", lambda: fcntl.fcntl(shared, F_SETLEASE, fcntl.F_RDLCK))
check("fcntl F_NOTIFY", lambda: fcntl.fcntl(usr, F_NOTIFY, 1))  # DN_ACCESS
if "inotify_init" in NR:
    check("inotify_init", lambda: fresh("inotify_init"))
check("inotify_init1", lambda: fresh("inotify_init1", os.O_CLOEXEC))
check("fanotify_init", lambda: fresh("fanotify_init", 0, 0))
page = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)
address = ctypes.addressof(ctypes.c_char.from_buffer(page))
vector = ctypes.create_string_buffer(1)
check("mincore", lambda: call("mincore", ctypes.c_void_p(address), 4096, vector))
check("cachestat", lambda: call("cachestat", -1, None, None, 0))
check("socket AF_VSOCK", lambda: socket.socket(40, socket.SOCK_STREAM).close())

# --- kernel attack surface, other processes, mounts, namespaces
check("io_uring_setup", lambda: call("io_uring_setup", 1, None))  # EFAULT unfiltered
check("io_uring_enter", lambda: call("io_uring_enter", -1, 0, 0, 0, None, 0))
check("io_uring_register", lambda: call("io_uring_register", -1, 0, None, 0))
check("userfaultfd", lambda: fresh("userfaultfd", 1 | os.O_CLOEXEC))  # UFFD_USER_MODE_ONLY
check("perf_event_open", lambda: call("perf_event_open", None, 0, -1, -1, 0))  # EFAULT
check("bpf", lambda: call("bpf", 9999, None, 0))
check("keyctl", lambda: call("keyctl", 9999, 0, 0, 0, 0))  # EOPNOTSUPP unfiltered
check("add_key", lambda: call("add_key", None, None, None, 0, 0))
check("request_key", lambda: call("request_key", None, None, None, 0))
check("ptrace", lambda: call("ptrace", 2, 4194303, 0, 0))  # PEEKDATA, no such pid: ESRCH
check("process_vm_readv", lambda: call("process_vm_readv", 4194303, None, 1, None, 1, 0))
check("pidfd_getfd", lambda: call("pidfd_getfd", -1, 0, 0))  # EBADF unfiltered
check("kcmp", lambda: call("kcmp", os.getpid(), os.getpid(), 99, 0, 0))
check("unshare", lambda: call("unshare", 0))  # a no-op unfiltered
check("setns", lambda: call("setns", -1, 0))  # EBADF unfiltered
check("mount", lambda: call("mount", None, b"/nonexistent", None, 0, None))
check("umount2", lambda: call("umount2", b"/nonexistent", 0))
check("chroot", lambda: call("chroot", b"/nonexistent"))  # ENOENT unfiltered
check("pivot_root", lambda: call("pivot_root", b"/nonexistent", b"/nonexistent"))
check("open_tree", lambda: call("open_tree", -1, b"/nonexistent", 0))
check("fsopen", lambda: call("fsopen", b"nonexistent-fs", 0))
check("shmget", lambda: call("shmget", 0, 4096, 0o1600))  # IPC_PRIVATE, IPC_CREAT
check("memfd_secret", lambda: fresh("memfd_secret", 0))
check("syslog", lambda: call("syslog", 10, None, 0))  # SYSLOG_ACTION_SIZE_BUFFER
check("settimeofday", lambda: call("settimeofday", None, None))
check("name_to_handle_at", lambda: call("name_to_handle_at", -1, None, None, None, 0))


def clone_new_namespace() -> str:
    # CLONE_NEWNS | CLONE_FS together: EINVAL from the kernel, before any
    # capability check, so EPERM can only come from the filter.
    ctypes.set_errno(0)
    value = libc.syscall(NR["clone"], 0x00020000 | 0x00000200 | signal.SIGCHLD, 0, 0, 0, 0)
    if value == 0:
        os._exit(0)
    if value > 0:
        os.waitpid(value, 0)
    return outcome(value)


check("clone CLONE_NEWNS", clone_new_namespace)
check("clone3", lambda: call("clone3", None, 0))  # EINVAL unfiltered
if "x32 getpid" in NR:  # x86_64: getpid through the x32 ABI
    check("x32 getpid", lambda: call("x32 getpid"))

# --- what an ordinary bot does, all of which must work
check("fcntl F_GETFL", lambda: fcntl.fcntl(shared, fcntl.F_GETFL))
check("fcntl F_SETFD", lambda: fcntl.fcntl(shared, fcntl.F_SETFD, fcntl.FD_CLOEXEC))
check("read a file", lambda: "ok" if os.pread(shared, 64, 0) else "empty")
check("mmap a file", lambda: mmap.mmap(shared, 4096, prot=mmap.PROT_READ).close())
check("mmap anonymous", lambda: mmap.mmap(-1, 1 << 20).close())


def threads() -> None:
    done = []
    workers = [threading.Thread(target=lambda: done.append(sum(range(10_000))))
               for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(done) == 4


def fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7


check("threads", threads)
check("fork", fork)
check("subprocess", lambda: subprocess.run(["true"], check=True) and "ok")
check("time", lambda: "ok" if time.sleep(0.001) or time.time() > 1e9 else "wrong")
check("urandom", lambda: "ok" if len(os.urandom(16)) == 16 else "short")
check("socketpair", lambda: [end.close() for end in socket.socketpair()] and "ok")
print(json.dumps(results))
