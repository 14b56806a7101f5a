"""The first program of every bot slot: join the slot's control groups, open
what the sandbox mounts from descriptors, set resource limits, become the
slot's own unprivileged uid, then exec the sandbox (or the bot itself with
``--sandbox none``).

It runs as ``python -I -S launch.py CONFIG_JSON -- ARGV...`` so it needs
nothing but the standard library and starts in a few milliseconds. Limits set
here are inherited by everything the bot starts, and no bot code has run yet
when they are set. Doing this in a separate program rather than a
``preexec_fn`` keeps it safe in the harness's threads.
"""

from __future__ import annotations

import json
import os
import resource
import sys

TYPE_CHECKING = False  # typing itself would slow every launch
if TYPE_CHECKING:
    import ctypes

EXIT_LAUNCH_FAILED = 121  # the harness reads this as a start-up fault


def _set_limit(name: str, value: int) -> None:
    kind = getattr(resource, name)
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value))


def _join_cgroups(dirs: list[str]) -> None:
    # Writing 0 moves the writing process itself, before any bot code exists.
    for directory in dirs:
        with open(os.path.join(directory, "cgroup.procs"), "w") as handle:
            handle.write("0")


def _open_all(entries: list[dict[str, str]]) -> tuple[list[int], int | None]:
    """Opens what bwrap mounts or reads from descriptors, while this process
    still has the harness's rights: paths (O_PATH; the bwrap binary itself to
    exec), and data (the syscall filter, generated files) in memory files."""
    import base64

    descriptors: list[int] = []
    exec_fd = None
    for entry in entries:
        if "path" in entry:
            flags = os.O_RDONLY if entry.get("exec") else os.O_PATH
            descriptor = os.open(entry["path"], flags)
            if entry.get("exec"):
                exec_fd = descriptor
        else:
            data = (base64.b64decode(entry["base64"]) if "base64" in entry
                    else entry["data"].encode())
            descriptor = os.memfd_create("card-league", 0)
            os.write(descriptor, data)
            os.lseek(descriptor, 0, os.SEEK_SET)
        os.set_inheritable(descriptor, True)
        descriptors.append(descriptor)
    return descriptors, exec_fd


MS_BIND, MS_REC, MS_PRIVATE, MS_NOSUID, MS_NODEV = 0x1000, 0x4000, 0x40000, 0x2, 0x4
CLONE_NEWNS = 0x00020000


def _stage(stage: dict) -> None:
    """Binds each source at DIR/N in a mount namespace of this slot's own
    (private: the host sees none of it), so that the slot's uid, which may
    not pass along the sources' host paths, finds them there."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> None:
        if result != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"{what}: {os.strerror(error)}")

    check(libc.unshare(CLONE_NEWNS), "unshare")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private mounts")
    directory = stage["dir"].encode()
    check(libc.mount(b"tmpfs", directory, b"tmpfs", MS_NOSUID | MS_NODEV,
                     b"mode=0755,size=65536"), f"tmpfs on {stage['dir']}")
    for index, source in enumerate(stage["sources"]):
        target = os.path.join(stage["dir"], str(index))
        if os.path.isdir(source):
            os.mkdir(target, 0o755)
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o444))
        check(libc.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None),
              f"bind {source}")


def _become(uid: int) -> None:
    """The slot's own unprivileged uid and gid, no supplementary groups."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


PR_SET_PDEATHSIG, SIGKILL = 1, 9


def _libc() -> ctypes.CDLL:
    """libc through ctypes, loaded before the uid change: the slot's uid may
    not be able to read the Python installation's modules."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _die_with_parent(libc: ctypes.CDLL, parent: int) -> None:
    """SIGKILL for this process when the harness that started it dies, and
    no start at all if it is gone already. bwrap's ``--die-with-parent``
    asks the kernel for the same, but only once bwrap runs: a harness killed
    while this launcher was still starting left a sandbox whose parent had
    died before it asked, running on as an orphan. Asked for here, after the
    uid change (a change of credentials clears it); exec keeps it."""
    import ctypes  # noqa: PLC0415 - loaded already by _libc

    if libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:  # it died before the request above could count
        sys.stderr.write("the harness that started this bot has exited\n")
        sys.exit(EXIT_LAUNCH_FAILED)


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: launch.py CONFIG_JSON -- ARGV...\n")
        sys.exit(EXIT_LAUNCH_FAILED)
    config = json.loads(argv[1])
    command = argv[3:]
    try:
        _join_cgroups(config.get("cgroups", []))
        if config.get("stage"):
            _stage(config["stage"])
        descriptors, exec_fd = _open_all(config.get("opens", []))
        for index, descriptor in enumerate(descriptors):
            placeholder = f"@fd{index}@"
            command = [str(descriptor) if part == placeholder else part for part in command]
        for name, value in config.get("rlimits", {}).items():
            _set_limit(name, int(value))
        if config.get("cwd"):
            os.chdir(config["cwd"])
        parent = config.get("parent")
        libc = _libc() if parent is not None else None
        if config.get("uid") is not None:
            os.chdir("/")
            _become(int(config["uid"]))
        if libc is not None:
            _die_with_parent(libc, int(parent))
        env = config.get("env", {})
        if exec_fd is not None:
            os.execve(exec_fd, command, env)
        os.execvpe(command[0], command, env)
    except OSError as exc:
        sys.stderr.write(f"cannot start {command[0]!r}: {exc}\n")
        sys.exit(EXIT_LAUNCH_FAILED)


if __name__ == "__main__":
    main(sys.argv)
