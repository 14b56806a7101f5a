"""Hostile bots, second wave (``tests/bots/hostile_kernel.py``): attacks through
the kernel state that sandboxes share (class 4) and through limits with holes
(class 5), as real bots in real sandboxed leagues. Every league is checked as
in ``test_hostile_bots.py``: it completes, every scheduled match is stored
exactly once, the attacker gets the expected fault and the innocents none, no
process survives and nothing is left behind; then each test asserts that its
attack failed.

- channels: two bots of one author at one table pass one's hidden hand to
  the other through locks (flock, fcntl F_SETLK and F_OFD_SETLK) or inotify
  events on files of /usr that every sandbox sees (the receiver proves what
  it got by the sender's later plays);
- per-user limits: a bot takes every inotify instance, or every byte of
  POSIX message queue, its user may have;
- system calls a card bot never needs (io_uring, userfaultfd, perf, keyrings,
  BPF, new namespaces, mounts);
- host paths a bot can read from inside;
- /dev written as a disk; shared memory (/dev/shm files, MAP_SHARED,
  memfd, SysV) beyond the memory limit; a memory breach near the deadline,
  which must be reported as the limit, not as a timeout.

Run them alone with ``pytest -m slow tests/test_hostile_kernel.py``.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import pytest

from harness.league import load_league
from harness.proc.catalog import default_cache_dir
from harness.proc.sandbox import Sandbox, _own_cgroup, probe
from harness.runner import run_league
from harness.store import Store

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(__file__).resolve().parent / "bots" / "hostile_kernel.py"
INNOCENTS = ["random", "heuristic"]
MEMORY_MB = 256
LIMITS = (f"decision_ms = 800\nstartup_ms = 10000\nmemory_mb = {MEMORY_MB}\ncpu_s = 2\n"
          "processes = 32\nfile_mb = 16\n")
MiB = 1 << 20

pytestmark = [
    pytest.mark.slow,
    # alone: the attacks strain the machine's memory and the kernel's per-user counts
    pytest.mark.serial,
    pytest.mark.skipif(not probe().bwrap_works,
                       reason=f"SANDBOX UNAVAILABLE, hostile bots not tested: {probe().bwrap_problem}"),
]


# ---- leagues of hostile bots --------------------------------------------------------------
def manifest(directory: Path, mode: str, extra_files: tuple[str, ...] = ()) -> str:
    """A manifest next to its own copy of the script (cwd and files stay in
    the manifest's folder)."""
    if not (directory / SCRIPT.name).exists():
        shutil.copy(SCRIPT, directory / SCRIPT.name)
    name = f"hk_{mode}"
    files = json.dumps([SCRIPT.name, *extra_files])
    (directory / f"{name}.toml").write_text(
        f'name = "{name}"\ncommand = ["{{python}}", "{SCRIPT.name}", "{mode}"]\n'
        f'cwd = "."\nfiles = {files}\ngames = "*"\n')
    return name


def play(tmp_path: Path, name: str, bots: list[str], sandbox: Sandbox | None = None):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\ngame = "target"\nbots = {json.dumps(bots)}\n'
                    f"players = 3\ndeals = 1\n[limits]\n{LIMITS}")
    league = load_league(str(path), [tmp_path])
    rss_before = psutil.Process().memory_info().rss
    summary = run_league(league, Store(tmp_path / "results.db"), workers=1, engine="inline",
                         sandbox=sandbox or Sandbox("bwrap"))
    rss_growth = psutil.Process().memory_info().rss - rss_before
    assert rss_growth < 150 * MiB, f"the harness grew by {rss_growth / MiB:.0f} MiB"
    return league, summary


def seat_faults(db: Path, league: str) -> dict[str, list[tuple[str | None, str, str]]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT s.bot, s.fault_kind, s.fault_detail, s.fault_stderr FROM seats s "
            "JOIN matches m ON m.id = s.match_id WHERE m.league = ?", [league]).fetchall()
    by_bot: dict[str, list[tuple[str | None, str, str]]] = {}
    for bot, kind, detail, stderr in rows:
        by_bot.setdefault(bot.split("@")[0], []).append((kind, detail or "", stderr or ""))
    return by_bot


def bot_processes() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(part == SCRIPT.name or part.endswith(f"/{SCRIPT.name}")
               for part in proc.info["cmdline"] or []):
            found.append(proc)
    return found


def shmem_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) << 10
    return 0


def contained(tmp_path: Path, league, summary, attackers: dict[str, set[str | None]],
              innocents: list[str]) -> dict[str, list[tuple[str | None, str, str]]]:
    """The checks every hostile league passes; ``attackers``: each hostile
    bot's allowed fault kinds (None: no fault). Returns the stored faults."""
    db = tmp_path / "results.db"
    assert summary.errors == 0, summary.error_lines
    assert summary.played == league.size()
    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM matches WHERE league = ?",
                                          [league.name])]
    assert sorted(ids) == sorted(m.match_id for m in league.schedule())
    faults = seat_faults(db, league.name)
    for innocent in innocents:
        assert all(kind is None for kind, *_ in faults[innocent]), faults[innocent]
    for bot, allowed in attackers.items():
        for kind, _detail, stderr in faults[bot]:
            assert "ATTACK SUCCEEDED" not in stderr, stderr
            assert kind in allowed, faults[bot]
            assert len(stderr.encode()) <= 4096
    assert not bot_processes(), "a bot's process outlived its slot"
    assert not psutil.Process().children(recursive=True), "bot processes left behind"
    parent = _own_cgroup("pids")
    if probe().cgroups and parent is not None:
        assert not list(parent.glob(f"card-league-{os.getpid()}-*")), "control groups left"
    claims = Path(tempfile.gettempdir()) / f"card-league-slot-uids-{os.geteuid()}"
    if claims.is_dir():
        assert not [c for c in claims.iterdir() if c.read_text() == str(os.getpid())], \
            "slot uids left claimed"
    return faults


class Sampler(threading.Thread):
    """Calls ``sample()`` every ``every_s`` while a league runs."""

    def __init__(self, sample, every_s: float = 0.01) -> None:
        super().__init__(daemon=True)
        self.sample, self.every_s, self.done = sample, every_s, threading.Event()

    def __enter__(self) -> Sampler:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.join()

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            time.sleep(self.every_s)


# ---- class 4a: channels between two bots of one author -------------------------------------
CHANNELS = ["flock", "fcntl", "ofd", "inotify"]


def channel_league(tmp_path: Path, channel: str, sandbox: Sandbox | None = None):
    sender, receiver = manifest(tmp_path, f"{channel}_sender"), \
        manifest(tmp_path, f"{channel}_receiver")
    league, summary = play(tmp_path, f"c_{channel}", [sender, receiver, "random"], sandbox)
    return league, summary, sender, receiver


@pytest.mark.parametrize("channel", CHANNELS)
def test_hand_passed_through_shared_inodes(tmp_path, channel):
    """The sender locks (or opens) files of /usr by the bits of its hand on
    every decision; the receiver, in another sandbox at the same table,
    decodes nothing."""
    league, summary, sender, receiver = channel_league(tmp_path, channel)
    contained(tmp_path, league, summary, {sender: {None}, receiver: {None}}, ["random"])


@pytest.mark.parametrize("channel", CHANNELS)
def test_the_same_channels_work_without_the_sandbox(tmp_path, channel):
    """Proof that the channel attacks are real: unsandboxed they carry the hand."""
    league, summary, sender, receiver = channel_league(tmp_path, channel, Sandbox("none"))
    faults = seat_faults(tmp_path / "results.db", league.name)
    assert any("ATTACK SUCCEEDED" in stderr and "hidden hand" in stderr
               for _, _, stderr in faults[receiver]), faults[receiver]


# ---- class 4b: per-user kernel limits ---------------------------------------------------------
def can_make_inotify() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(0)
    if fd < 0:
        return False
    os.close(fd)
    return True


def test_inotify_instances_taken_from_the_harness(tmp_path):
    """The bot takes every inotify instance its user may have and holds them
    for its whole life; meanwhile the harness's user must still get one."""
    assert can_make_inotify()
    hog = manifest(tmp_path, "inotify_hog")
    refusals: list[float] = []
    with Sampler(lambda: None if can_make_inotify() else refusals.append(time.monotonic()),
                 every_s=0.02):
        league, summary = play(tmp_path, "i_hog", [hog, *INNOCENTS])
    contained(tmp_path, league, summary, {hog: {None}}, INNOCENTS)
    assert not refusals, (f"the harness's user could not create an inotify instance "
                          f"{len(refusals)} times while the bot lived")
    assert can_make_inotify()


class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("reserved", ctypes.c_long * 4)]


def can_make_mqueue() -> bool:
    """A POSIX message queue of 80 KiB for the harness's user (one is made
    and removed at once, under a name of this process)."""
    libc = ctypes.CDLL(None, use_errno=True)
    name = f"/card-league-test-{os.getpid()}".encode()
    attr = MqAttr(0, 10, 8192, 0)
    fd = libc.mq_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, ctypes.byref(attr))
    if fd < 0:
        return False
    libc.mq_close(fd)
    libc.mq_unlink(name)
    return True


def test_message_queue_bytes_taken_from_the_harness(tmp_path):
    """The same for POSIX message queues: RLIMIT_MSGQUEUE caps the bytes of
    every queue of one uid together, whatever the IPC namespace."""
    assert can_make_mqueue()
    hog = manifest(tmp_path, "mqueue_hog")
    refusals: list[float] = []
    with Sampler(lambda: None if can_make_mqueue() else refusals.append(time.monotonic()),
                 every_s=0.02):
        league, summary = play(tmp_path, "q_hog", [hog, *INNOCENTS])
    contained(tmp_path, league, summary, {hog: {None}}, INNOCENTS)
    assert not refusals, (f"the harness's user could not create a message queue "
                          f"{len(refusals)} times while the bot lived")


# ---- class 4c: system calls a card bot never needs ----------------------------------------------
def test_syscalls_a_card_bot_never_needs(tmp_path):
    """io_uring_setup, userfaultfd, perf_event_open, keyctl, bpf,
    unshare(CLONE_NEWUSER), mount (also after unshare): none works."""
    bot = manifest(tmp_path, "syscalls")
    league, summary = play(tmp_path, "s_calls", [bot, *INNOCENTS])
    contained(tmp_path, league, summary, {bot: {None}}, INNOCENTS)


# ---- class 4d: host paths -------------------------------------------------------------------
# where a host path must not show; /proc/self/mountinfo and /proc/self/cgroup
# are reported (mount sources and cgroup paths are the kernel's to show)
MUST_HIDE = ("env", "/proc/self/environ", "cwd", "argv", "/proc/self/cmdline",
             "/proc/1/cmdline", "sys.executable", "realpath(sys.executable)", "sys.prefix",
             "sys.base_prefix", "sys.path")


def test_host_paths_seen_from_inside(tmp_path):
    needles = sorted({str(ROOT), str(Path(sys.prefix).resolve()),
                      str(Path(sys.base_prefix).resolve()), str(default_cache_dir()),
                      str(tmp_path.resolve()), str(Path.home()), "/root", "/work",
                      f"card-league-{os.getpid()}"})
    (tmp_path / "needles.txt").write_text("\n".join(needles) + "\n")
    bot = manifest(tmp_path, "host_paths", ("needles.txt",))
    uids: set[int] = set()  # the bots' real uids, seen from the host

    def look() -> None:
        for proc in bot_processes():  # the bot itself, not its launcher or bwrap
            try:
                if proc.cmdline()[1:2] == [SCRIPT.name]:
                    uids.update(proc.uids())
            except (psutil.Error, IndexError):
                pass

    with Sampler(look):
        league, summary = play(tmp_path, "h_paths", [bot, *INNOCENTS])
    faults = contained(tmp_path, league, summary, {bot: {"crash"}}, INNOCENTS)
    reports = [json.loads(stderr.split("REPORT ", 1)[1].splitlines()[0])
               for _, _, stderr in faults[bot]]
    assert len(reports) == league.size(), faults[bot]
    found = reports[0]
    print(f"\nhost paths seen from inside: {found['leaks']}\n  uid_map {found['uid_map']}, "
          f"real uids {sorted(uids)}\n  cgroup {found['cgroup']}\n"
          f"  mount roots {found['mount_roots']}")
    for found in reports:
        hidden = {k: v for k, v in found["leaks"].items() if k in MUST_HIDE}
        assert not hidden, hidden
    assert uids, "the bot was never seen running"
    if os.geteuid() == 0:
        assert 0 not in uids, "the bot runs as root outside its namespace"


# ---- class 5e: /dev -----------------------------------------------------------------------
def test_dev_written_as_a_disk(tmp_path):
    """200 MiB under /dev/shm, then under /dev, in files of 8 MiB (file_mb = 16
    caps each file): refused, or stopped as a limit."""
    bot = manifest(tmp_path, "dev_fill")
    shmem_before = shmem_bytes()
    league, summary = play(tmp_path, "d_fill", [bot, *INNOCENTS])
    contained(tmp_path, league, summary, {bot: {None, "limit"}}, INNOCENTS)
    assert shmem_bytes() - shmem_before < 64 * MiB, "tmpfs files outlived their sandbox"


# ---- class 5f: shared memory beyond the memory limit -----------------------------------------
class MemoryWatch:
    """Peaks, while a league runs, of the slots' memory control groups and of
    the machine's shared memory (tmpfs, SysV, memfd, MAP_SHARED)."""

    def __init__(self) -> None:
        self.slot_peak = 0
        self.shmem_base = shmem_bytes()
        self.shmem_peak = 0
        self.parent = _own_cgroup("memory")

    def sample(self) -> None:
        self.shmem_peak = max(self.shmem_peak, shmem_bytes() - self.shmem_base)
        if self.parent is None:
            return
        for slot in self.parent.glob(f"card-league-{os.getpid()}-*"):
            try:
                peak = int((slot / "memory.max_usage_in_bytes").read_text())
            except (OSError, ValueError):
                continue
            self.slot_peak = max(self.slot_peak, peak)


@pytest.mark.parametrize("mode", ["shm_files", "shm_mmap", "shm_memfd", "shm_sysv"])
def test_shared_memory_beyond_the_memory_limit(tmp_path, mode):
    """1 GiB of shared memory with memory_mb = 256: the bot is stopped (a
    limit fault) or refused before it holds much more than its limit."""
    bot = manifest(tmp_path, mode)
    watch = MemoryWatch()
    with Sampler(watch.sample, every_s=0.005):
        league, summary = play(tmp_path, f"m_{mode}", [bot, *INNOCENTS])
    faults = contained(tmp_path, league, summary, {bot: {None, "limit"}}, INNOCENTS)
    print(f"\n{mode}: faults {sorted(str(k) for k, *_ in faults[bot])}, slot peak "
          f"{watch.slot_peak / MiB:.0f} MiB, machine's shared memory peak "
          f"+{watch.shmem_peak / MiB:.0f} MiB")
    assert watch.shmem_peak < (MEMORY_MB + 64) * MiB
    assert watch.slot_peak <= (MEMORY_MB + 1) * MiB
    assert shmem_bytes() - watch.shmem_base < 64 * MiB, "shared memory outlived its sandbox"


# ---- class 5g: a memory breach is a limit, never a timeout ------------------------------------
@pytest.mark.parametrize("mode", ["memory_creep", "memory_thrash"])
def test_memory_breach_near_the_deadline_is_a_limit(tmp_path, mode):
    """The bot allocates in small steps with small sleeps, reaches its cap
    well before its decision's deadline and never answers: it dies of it
    (creep), or catches each refused allocation and tries again, staying at
    its cap until the deadline (thrash). Every one of its matches must be
    recorded as a limit fault, not as a timeout: where RLIMIT_DATA (the same
    figure as the memory group's limit) refuses the allocations first, the
    group sees no failure and a bot that catches MemoryError leaves no trace
    of its breach."""
    bot = manifest(tmp_path, mode)
    league, summary = play(tmp_path, f"g_{mode}", [bot, *INNOCENTS])
    faults = contained(tmp_path, league, summary, {bot: {"limit", "timeout"}}, INNOCENTS)
    kinds = [kind for kind, *_ in faults[bot]]
    print(f"\n{mode}: {kinds}: {[detail for _, detail, _ in faults[bot]]}")
    assert kinds == ["limit"] * league.size(), faults[bot]
