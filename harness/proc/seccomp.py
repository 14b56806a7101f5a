"""A seccomp filter for bot sandboxes, for ``bwrap --seccomp FD``.

Bots come in any language (Python, C, JavaScript, whatever the machine can
run), so the filter is a *deny-list*: an allow-list would have to know every
system call of every runtime and would break the first bot that uses a
runtime we did not try. What it denies is what a card bot never needs and
what reaches past the bot's own namespaces: kernel attack surface (io_uring,
BPF, perf, userfaultfd, keyrings), other processes (ptrace), mounts and new
namespaces, and the channels two bots could use to pass hidden information
through inodes every sandbox sees read-only (``/usr``): file locks, leases,
inotify/fanotify/dnotify events and page-cache residency. Taking a lock
returns success without locking anything: the channel is closed all the
same, and SQLite and the JVM, which lock their own files and fail (or warn
on stdout) when refused, run unchanged. ``DENIED`` holds every rule with
its reason; ``describe()`` renders it for PROTOCOL.md.

The program is classic BPF, built here (no libseccomp needed): check the
architecture (a system call of another ABI kills the process: it would be
numbered from another table), refuse x32 on x86_64, then one ``JEQ nr`` /
``RET ERRNO`` pair per denied call, a few calls checked on an argument
(``fcntl`` lock commands, ``clone`` namespace flags, ``socket(AF_VSOCK)``),
and ``RET ALLOW``. Every jump is short, so no jump offset overflows. The
result depends on arguments only for those three calls, so the kernel's
per-syscall action cache lets everything else skip the filter entirely.

Left allowed on purpose: ``personality`` (it changes only the caller),
``mbind``/``set_mempolicy``/``move_pages`` (the caller's own memory, and no
other process is visible), ``memfd_create`` and ``MAP_SHARED`` (runtimes use
them; the memory control group counts them, RLIMIT_DATA does not), and
``futex``: a shared futex on a page of a shared read-only file is keyed by
the inode, so two sandboxes can wake each other through it, but telling
that use apart from ``pthread_join``'s is beyond a filter (as are timing
channels through the shared CPU and page cache).
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# <linux/seccomp.h>, <linux/filter.h>, <linux/audit.h>
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
OFFSET_NR, OFFSET_ARCH = 0, 4  # struct seccomp_data


def _arg_low(index: int) -> int:
    """Offset of the low 32 bits of args[index] (both arches are little-endian)."""
    return 16 + 8 * index


X32_SYSCALL_BIT = 0x40000000
MAX_INSTRUCTIONS = 4096  # BPF_MAXINSNS

ARCHES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}  # AUDIT_ARCH_*
ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

# fcntl commands on locks, leases and directory notification: a lock on a
# shared read-only inode is a channel between sandboxes (it needs only a
# read-only fd). Taking a lock "succeeds" without reaching the kernel; the
# others fail.
FCNTL_LOCKS = {"F_SETLK": 6, "F_SETLKW": 7, "F_OFD_SETLK": 37, "F_OFD_SETLKW": 38}
FCNTL_DENIED = {"F_GETLK": 5, "F_OFD_GETLK": 36, "F_SETLEASE": 1024, "F_GETLEASE": 1025,
                "F_NOTIFY": 1026}
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
# (CLONE_NEWTIME, 0x80, exists only for clone3 and unshare: in clone's flags
# that bit belongs to the exit signal.)
CLONE_NEW_MASK = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 \
    | 0x20000000 | 0x40000000
AF_VSOCK = 40


@dataclass(frozen=True)
class Denial:
    """One rule: the call ``name`` fails with ``errno``, or with ``errno`` 0
    returns 0 having done nothing. With ``arg`` set, only where the low 32
    bits of that argument equal one of ``equals`` or share a bit with
    ``mask``; ``condition`` says so in words."""

    name: str
    reason: str
    errno: int = errno.EPERM
    condition: str = ""
    arg: int | None = None
    equals: tuple[int, ...] = ()
    mask: int = 0


_E, _N = errno.EPERM, errno.ENOSYS
DENIED: tuple[Denial, ...] = (
    # kernel attack surface a bot never needs
    Denial("io_uring_setup", "io_uring: a large, often-exploited kernel interface; "
           "ENOSYS so runtimes (libuv) fall back to ordinary calls", _N),
    Denial("io_uring_enter", "io_uring (see io_uring_setup)", _N),
    Denial("io_uring_register", "io_uring (see io_uring_setup)", _N),
    Denial("userfaultfd", "Stalls kernel page faults at will: a classic exploit aid"),
    Denial("perf_event_open", "Performance counters: kernel attack surface and "
           "cache/timing side channels"),
    Denial("bpf", "Loads programs into the kernel"),
    Denial("keyctl", "Kernel keyrings: their quotas are shared by every sandbox of the "
           "same user, and a large attack surface"),
    Denial("add_key", "Kernel keyrings (see keyctl)"),
    Denial("request_key", "Kernel keyrings (see keyctl)"),
    # other processes
    Denial("ptrace", "Tracing processes; also a way around seccomp on old kernels"),
    Denial("process_vm_readv", "Reads another process's memory"),
    Denial("process_vm_writev", "Writes another process's memory"),
    Denial("process_madvise", "Acts on another process's memory"),
    Denial("pidfd_getfd", "Takes a file descriptor from another process"),
    Denial("kcmp", "Compares kernel objects of processes: leaks kernel pointer order"),
    # mounts and namespaces
    *(Denial(name, "Mounts: the sandbox's file system is fixed by bwrap")
      for name in ("mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
                   "open_tree_attr", "fsopen", "fsconfig", "fsmount", "fspick",
                   "mount_setattr")),
    Denial("unshare", "New namespaces: the sandbox's are fixed by bwrap"),
    Denial("setns", "Joining namespaces (see unshare)"),
    Denial("clone", "New namespaces (see unshare); plain clone (fork, threads) works",
           condition="flags & CLONE_NEW* (0x7E020000)", arg=0, mask=CLONE_NEW_MASK),
    Denial("clone3", "Its flags sit behind a pointer a filter cannot read; ENOSYS makes "
           "glibc and other runtimes fall back to clone", _N),
    # channels between sandboxes through inodes they all see
    Denial("flock", "A lock on a shared read-only inode (/usr) is visible to other "
           "sandboxes: a hidden channel. It returns 0 and takes no lock, so programs "
           "that lock their own files (SQLite, the JVM) run unchanged", 0),
    Denial("fcntl", "Taking a lock (see flock)", 0, "cmd in " + ", ".join(FCNTL_LOCKS),
           arg=1, equals=tuple(FCNTL_LOCKS.values())),
    Denial("fcntl", "Querying locks, leases and dnotify on shared inodes (see flock); "
           "other commands work. SQLite's WAL mode queries locks and fails here; its "
           "default journal works", condition="cmd in " + ", ".join(FCNTL_DENIED),
           arg=1, equals=tuple(FCNTL_DENIED.values())),
    Denial("inotify_init", "File events (IN_OPEN, IN_ACCESS) on shared files are a "
           "channel, and instances are a per-user quota one bot could exhaust"),
    Denial("inotify_init1", "inotify (see inotify_init)"),
    Denial("fanotify_init", "File events on shared files (see inotify_init)"),
    Denial("mincore", "Page-cache residency of shared files is a channel"),
    Denial("cachestat", "Page-cache state of shared files (see mincore)"),
    Denial("socket", "vsock is not confined by the network namespace: it reaches the "
           "host and other guests", condition="domain == AF_VSOCK (40)", arg=0,
           equals=(AF_VSOCK,)),
    # memory outside the bot's limits
    Denial("shmget", "SysV shared memory is not counted by RLIMIT_DATA"),
    Denial("shmat", "SysV shared memory (see shmget)"),
    Denial("shmctl", "SysV shared memory (see shmget)"),
    Denial("memfd_secret", "Unswappable memory outside the bot's limits"),
    # administration (needs capabilities a bot lacks: defence in depth)
    *(Denial(name, "System administration: " + what) for name, what in (
        ("kexec_load", "loads a new kernel"), ("kexec_file_load", "loads a new kernel"),
        ("init_module", "loads kernel modules"), ("finit_module", "loads kernel modules"),
        ("delete_module", "unloads kernel modules"), ("reboot", "reboots"),
        ("swapon", "swap"), ("swapoff", "swap"), ("acct", "process accounting"),
        ("quotactl", "disk quotas"), ("quotactl_fd", "disk quotas"),
        ("syslog", "reads the kernel log"), ("settimeofday", "sets the clock"),
        ("clock_settime", "sets the clock"), ("clock_adjtime", "adjusts the clock"),
        ("adjtimex", "adjusts the clock"), ("lookup_dcookie", "profiling internals"),
        ("name_to_handle_at", "file handles bypass path checks"),
        ("open_by_handle_at", "file handles bypass path checks"),
        ("vhangup", "hangs up the terminal"), ("iopl", "raw I/O ports"),
        ("ioperm", "raw I/O ports"), ("modify_ldt", "x86 segment tables: exploit aid"),
        ("uselib", "obsolete library loader"))),
)

# System call numbers: x86_64 from arch/x86/entry/syscalls/syscall_64.tbl,
# aarch64 from the generic table (include/uapi/asm-generic/unistd.h); calls
# that an architecture lacks are absent from its table.
_COMMON = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
           "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
           "fsmount": 432, "fspick": 433, "clone3": 435, "pidfd_getfd": 438,
           "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
           "memfd_secret": 447, "cachestat": 451, "open_tree_attr": 467}
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {**_COMMON,
               "mincore": 27, "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41,
               "clone": 56, "fcntl": 72, "flock": 73, "ptrace": 101, "syslog": 103,
               "uselib": 134, "vhangup": 153, "modify_ldt": 154, "pivot_root": 155,
               "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164,
               "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168,
               "reboot": 169, "iopl": 172, "ioperm": 173, "init_module": 175,
               "delete_module": 176, "quotactl": 179, "lookup_dcookie": 212,
               "clock_settime": 227, "kexec_load": 246, "add_key": 248,
               "request_key": 249, "keyctl": 250, "inotify_init": 253, "unshare": 272,
               "inotify_init1": 294, "perf_event_open": 298, "fanotify_init": 300,
               "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305,
               "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
               "kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
               "userfaultfd": 323},
    "aarch64": {**_COMMON,
                "lookup_dcookie": 18, "fcntl": 25, "inotify_init1": 26, "flock": 32,
                "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51,
                "vhangup": 58, "quotactl": 60, "acct": 89, "unshare": 97,
                "kexec_load": 104, "init_module": 105, "delete_module": 106,
                "clock_settime": 112, "syslog": 116, "ptrace": 117, "reboot": 142,
                "settimeofday": 170, "adjtimex": 171, "shmget": 194, "shmctl": 195,
                "shmat": 196, "socket": 198, "add_key": 217, "request_key": 218,
                "keyctl": 219, "clone": 220, "swapon": 224, "swapoff": 225,
                "mincore": 232, "perf_event_open": 241, "fanotify_init": 262,
                "name_to_handle_at": 264, "open_by_handle_at": 265,
                "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270,
                "process_vm_writev": 271, "kcmp": 272, "finit_module": 273,
                "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294},
}


def machine_arch(arch: str | None = None) -> str | None:
    """``arch`` (default: this machine's) as a key of ``SYSCALLS``, or None."""
    name = (arch or platform.machine()).lower()
    name = ALIASES.get(name, name)
    return name if name in SYSCALLS else None


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _ret(value: int) -> bytes:
    return _insn(RET_K, value)


def _block(rules: list[Denial]) -> list[bytes]:
    """What runs once ``nr`` matched one call's rules (so no later rule applies):
    one return, or per argument test a jump over its return, then allow."""
    if len(rules) == 1 and rules[0].arg is None:
        return [_ret(RET_ERRNO | rules[0].errno)]
    arg = rules[0].arg
    assert arg is not None and all(r.arg == arg for r in rules), "one argument per call"
    block = [_insn(LD_W_ABS, _arg_low(arg))]
    for rule in rules:
        tests = [(JEQ_K, value) for value in rule.equals]
        tests += [(JSET_K, rule.mask)] if rule.mask else []
        for code, k in tests:
            block += [_insn(code, k, 0, 1), _ret(RET_ERRNO | rule.errno)]
    return block + [_ret(RET_ALLOW)]


def program(arch: str | None = None) -> bytes | None:
    """The filter as a raw ``struct sock_filter[]`` (what ``bwrap --seccomp FD``
    reads), or None where the architecture has no table here."""
    name = machine_arch(arch)
    if name is None:
        return None
    numbers = SYSCALLS[name]
    eperm = RET_ERRNO | errno.EPERM
    out = [_insn(LD_W_ABS, OFFSET_ARCH), _insn(JEQ_K, ARCHES[name], 1, 0),
           _ret(RET_KILL_PROCESS), _insn(LD_W_ABS, OFFSET_NR)]
    if name == "x86_64":
        out += [_insn(JGE_K, X32_SYSCALL_BIT, 0, 1), _ret(eperm)]
    rules: dict[str, list[Denial]] = {}
    for denial in DENIED:
        rules.setdefault(denial.name, []).append(denial)
    for call, its_rules in rules.items():
        if call in numbers:
            block = _block(its_rules)
            assert len(block) < 256, "a jump offset is one byte"
            out += [_insn(JEQ_K, numbers[call], 0, len(block)), *block]
    out.append(_ret(RET_ALLOW))
    assert len(out) <= MAX_INSTRUCTIONS
    return b"".join(out)


def program_fd(data: bytes) -> int:
    """A fresh fd holding ``data`` at offset 0 (an anonymous memfd, close-on-exec
    until ``subprocess``'s ``pass_fds`` hands it to bwrap), for ``bwrap --seccomp
    FD``. bwrap reads it to the end, so each start needs its own; close it once
    bwrap has started."""
    fd = os.memfd_create("bot-seccomp")
    try:
        os.write(fd, data)  # a few KiB: one write
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def describe() -> str:
    """The deny-list as a markdown list (for PROTOCOL.md)."""
    lines = []
    for denial in DENIED:
        when = f" when {denial.condition}" if denial.condition else ""
        answer = errno.errorcode[denial.errno] if denial.errno else "returns 0, does nothing"
        lines.append(f"- `{denial.name}`{when}: {answer}. {denial.reason}.")
    return "\n".join(lines) + "\n"
