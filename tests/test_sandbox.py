"""The sandbox's parts: bot bundles and their cache, limits in league files,
secret deals, the isolation a sandboxed process really gets, and `doctor`."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.league import LeagueFileError, load_league
from harness.proc.catalog import BotCache, ManifestError, load_manifest
from harness.proc.sandbox import ResourceLimits, Sandbox, SandboxUnavailable, probe
from harness.store import Store

ROOT = Path(__file__).resolve().parent.parent
needs_bwrap = pytest.mark.skipif(not probe().bwrap_works,
                                 reason=f"SANDBOX UNAVAILABLE: {probe().bwrap_problem}")


def manifest(directory: Path, body: str, name: str = "b") -> Path:
    path = directory / f"{name}.toml"
    path.write_text(f'name = "{name}"\ncommand = ["{{python}}", "bot.py"]\n{body}')
    return path


# ---- bundles and the cache --------------------------------------------------------
def test_a_bundle_holds_exactly_the_listed_files_and_its_version_names_them(tmp_path):
    (tmp_path / "bot.py").write_text("print(1)\n")
    (tmp_path / "weights.bin").write_bytes(b"\x00\x01")
    (tmp_path / "notes.txt").write_text("not part of the bot")
    spec = load_manifest(manifest(tmp_path, 'files = ["bot.py", "*.bin"]\n'))
    bundle = spec.bundle()
    assert [f[0] for f in bundle.files] == ["bot.py", "weights.bin"]
    (tmp_path / "notes.txt").write_text("changed, but not listed")
    assert spec.bundle().version == bundle.version
    (tmp_path / "weights.bin").write_bytes(b"\x00\x02")
    assert spec.bundle().version != bundle.version


def test_a_link_out_of_the_bot_directory_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("harness secret")
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("")
    (bot / "steal.txt").symlink_to(secret)
    spec = load_manifest(manifest(bot, ""))
    with pytest.raises(ManifestError, match="outside the bot's directory"):
        spec.bundle()
    with pytest.raises(ManifestError, match="outside"):  # refused as the manifest loads
        load_manifest(manifest(bot, 'files = ["../secret.txt"]\n', "c"))


def test_manifest_comments_and_description_make_no_new_version(tmp_path):
    (tmp_path / "bot.py").write_text("x = 1\n")
    path = manifest(tmp_path, 'files = ["bot.py"]\n')
    version = load_manifest(path).bundle().version
    path.write_text("# a comment\n" + path.read_text() + 'description = "now described"\n')
    assert load_manifest(path).bundle().version == version
    path.write_text(path.read_text() + '[env]\nDEPTH = "3"\n')
    assert load_manifest(path).bundle().version != version, "env changes how it runs"


def test_the_cache_materialises_a_version_once_read_only(tmp_path):
    (tmp_path / "bot.py").write_text("x = 1\n")
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "run.sh").chmod(0o755)
    bundle = load_manifest(manifest(tmp_path, 'files = ["bot.py", "run.sh"]\n')).bundle()
    cache = BotCache(tmp_path / "cache")
    first = cache.materialise("b", bundle)
    assert first.name == f"b-{bundle.version}"
    assert (first / "bot.py").read_text() == "x = 1\n"
    assert not os.access(first / "bot.py", os.W_OK) or os.geteuid() == 0
    assert (first / "bot.py").stat().st_mode & 0o222 == 0
    assert (first / "run.sh").stat().st_mode & 0o111
    assert list((first / "__pycache__").glob("bot.*.pyc")), "Python files are compiled"
    stamp = (first / "bot.py").stat().st_mtime_ns
    assert cache.materialise("b", bundle) == first
    assert (first / "bot.py").stat().st_mtime_ns == stamp


def test_the_heuristic_version_covers_the_engines_it_imports():
    from harness.proc.catalog import resolve

    files = [f[0] for f in resolve("heuristic").bundle().files]
    assert "games/limit.py" in files and "bots/heuristics/limit.py" in files


# ---- league files: limits and seeds ----------------------------------------------------
LEAGUE = 'name = "s"\ngame = "limit"\nbots = ["random", "heuristic"]\nplayers = 3\ndeals = 3\n'


def test_limits_come_from_the_league_file(tmp_path):
    path = tmp_path / "l.toml"
    path.write_text(LEAGUE + "[limits]\nmemory_mb = 300\ncpu_s = 5\nprocesses = 9\n"
                             "file_mb = 2\nopen_files = 40\ndecision_ms = 700\n")
    limits = load_league(str(path)).limits
    assert limits.resources == ResourceLimits(memory_mb=300, cpu_s=5, processes=9, file_mb=2,
                                              open_files=40)
    assert limits.for_bot()["decision_ms"] == 700 and limits.for_bot()["memory_mb"] == 300
    path.write_text(LEAGUE + "[limits]\nmemory = 300\n")
    with pytest.raises(LeagueFileError, match="limits.memory .*known: decision_ms"):
        load_league(str(path))
    path.write_text(LEAGUE + "[limits]\nprocesses = 0\n")
    with pytest.raises(LeagueFileError, match="processes"):
        load_league(str(path))


def test_deals_are_secret_per_database_and_stable_across_resumes(tmp_path):
    path = tmp_path / "l.toml"
    path.write_text(LEAGUE)
    league = load_league(str(path))
    assert league.seed is None
    key = Store(tmp_path / "a.db").league_secret("s")
    assert Store(tmp_path / "a.db").league_secret("s") == key, "a resume gets the same deals"
    other = Store(tmp_path / "b.db").league_secret("s")
    assert other != key
    seeds = [league.deal_seed(d, key) for d in range(3)]
    assert seeds == [load_league(str(path)).deal_seed(d, key) for d in range(3)]
    assert seeds != [league.deal_seed(d, other) for d in range(3)], "another database, other deals"
    public = replace(league, seed=0)
    assert seeds != [public.deal_seed(d, key) for d in range(3)]
    assert [m.match_id for m in public.schedule()] == [m.match_id for m in league.schedule()], \
        "IDs do not depend on the deal"
    assert key not in repr(league) and key not in repr(vars(league)), "a league holds no key"
    assert (tmp_path / "a.db").stat().st_mode & 0o077 == 0, "results are private"


def test_a_public_seed_gives_the_same_deals_everywhere(tmp_path):
    path = tmp_path / "l.toml"
    path.write_text(LEAGUE + "seed = 4\n")
    assert [load_league(str(path)).deal_seed(d, "00" * 32) for d in range(3)] == \
        [load_league(str(path)).deal_seed(d, "11" * 32) for d in range(3)], "whatever the database"


def test_play_ids_say_nothing_of_the_seed_yet_repeat(tmp_path, monkeypatch):
    from harness.league import play_match_id

    bots = ["random", "heuristic", "random"]
    first = play_match_id("limit", 7, bots)
    assert first == play_match_id("limit", 7, bots) != play_match_id("limit", 8, bots)
    # keyed by a secret of this machine: elsewhere the same seed gives another ID
    monkeypatch.setenv("LEAGUE_CACHE_DIR", str(tmp_path / "elsewhere" / "bots"))
    assert play_match_id("limit", 7, bots) != first


# ---- a sandboxed process, really ----------------------------------------------------------
PROBE_BOT = '''
import json, os, socket, sys
report = {"pid": os.getpid(), "uid": os.getuid(), "cwd": os.getcwd(), "env": dict(os.environ),
          "procs": sorted(p for p in os.listdir("/proc") if p.isdigit()),
          "root": sorted(os.listdir("/")), "bot_files": sorted(os.listdir("."))}
try:
    open("/bot/new.txt", "w")
    report["bot_writable"] = True
except OSError:
    report["bot_writable"] = False
open("/tmp/scratch", "w").write("mine")
report["repo_visible"] = os.path.exists(sys.argv[2])
report["uid_map"] = open("/proc/self/uid_map").read().split()
report["python"] = [sys.executable, sys.prefix, sys.base_prefix, os.path.realpath(sys.executable)]
report["dev"] = sorted(os.listdir("/dev"))
for path in ("/dev/new", "/dev/shm/new"):
    try:
        open(path, "w").write("x")
        report[path] = "written"
    except OSError as exc:
        report[path] = exc.strerror
report["shm_in_tmp"] = os.path.exists("/tmp/new")
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.5)
    report["loopback"] = True
except OSError:
    report["loopback"] = False
sys.stderr.write(json.dumps(report))
'''


@needs_bwrap
def test_a_sandboxed_bot_sees_only_its_own_world(tmp_path):
    import json
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    (tmp_path / "bot.py").write_text(PROBE_BOT)
    spec = load_manifest(manifest(tmp_path, 'files = ["bot.py"]\n[env]\nMINE = "1"\n'))
    os.environ["HARNESS_ONLY_SECRET"] = "x"
    try:
        bot_dir = BotCache(tmp_path / "cache").materialise("b", spec.bundle())
        transport = Sandbox("bwrap").spawn(bot_dir, spec.argv() + [str(port), str(ROOT / "harness")],
                                           spec.env,
                                           ResourceLimits())
        transport.process.wait(timeout=20)
        report = json.loads(transport.stderr_tail(wait_s=2))
        transport.close()
    finally:
        del os.environ["HARNESS_ONLY_SECRET"]
        server.close()
    # PID 1 is the sandbox's init (bwrap's own), the bot the one process it started
    assert report["pid"] == 2 and report["procs"] == ["1", "2"], "no other process is visible"
    assert report["uid"] != 0
    assert report["cwd"] == "/bot" and "bot.py" in report["bot_files"]
    assert report["bot_writable"] is False
    assert report["loopback"] is False, "the host's loopback must be out of reach"
    assert set(report["env"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "MINE", "PWD", "LC_CTYPE",
                                  "LD_LIBRARY_PATH", "LEAGUE_PROTOCOL", "PYTHONPATH"}
    assert report["env"]["PYTHONPATH"] == "/sdk", "a {python} bot imports league_sdk from /sdk"
    host_paths = [str(ROOT), str(tmp_path), sys.prefix, sys.base_prefix, "/root"]
    seen = json.dumps([report["env"], report["python"], report["cwd"]])
    assert not [p for p in host_paths if p in seen], "a host path is visible to the bot"
    inside_uid, outside_uid = int(report["uid_map"][0]), int(report["uid_map"][1])
    assert inside_uid == report["uid"] and (outside_uid != 0 or os.geteuid() != 0), \
        "outside its namespace the bot must not be the harness's root"
    assert report["dev"] == ["fd", "full", "null", "random", "shm", "stderr", "stdin",
                             "stdout", "urandom", "zero"]
    assert report["/dev/new"] != "written", "/dev is read-only"
    assert report["/dev/shm/new"] == "written" and report["shm_in_tmp"], \
        "shared memory lives in the capped /tmp"
    assert report["env"]["MINE"] == "1"
    assert report["repo_visible"] is False, "the harness's source must be out of reach"
    assert not (tmp_path / "cache").joinpath("b-" + spec.bundle().version, "new.txt").exists()


@needs_bwrap
def test_a_sandbox_refuses_nothing_it_needs_to_run_the_reference_bots(tmp_path):
    from harness.match import BotPool, Limits, run_match
    from harness.proc.catalog import discover

    specs = discover()
    pool = BotPool({n: specs[n] for n in ("random", "heuristic", "js_random")}, Limits(),
                   Sandbox("bwrap"), cache=BotCache(tmp_path / "cache"))
    try:
        result = run_match("target", 3, ["random", "heuristic", "js_random"], pool, "m1")
    finally:
        pool.close()
    assert result.faults == [None, None, None]


def test_an_unknown_sandbox_is_refused():
    with pytest.raises(ValueError, match="unknown sandbox 'docker'"):
        Sandbox("docker")


def test_doctor_says_what_isolation_works():
    result = CliRunner().invoke(app, ["doctor"])
    if probe().bwrap_works:
        assert result.exit_code == 0 and "bubblewrap" in result.stdout and "works" in result.stdout
    else:
        assert result.exit_code == 1 and "UNAVAILABLE" in result.stdout


def test_play_without_a_sandbox_warns(tmp_path):
    result = CliRunner().invoke(app, ["play", "target", "random", "random", "--sandbox", "none"])
    assert result.exit_code == 0
    assert "--sandbox none" in result.stderr and "trust" in result.stderr


def test_editing_an_engine_makes_a_new_heuristic_version(tmp_path):
    import shutil

    root = Path(__file__).resolve().parent.parent
    for folder in ("bots", "games"):
        shutil.copytree(root / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "search*"))
    # beside the copies, cwd "." (a manifest outside bots/ may not reach its parent)
    manifest = tmp_path / "heuristic.toml"
    text = (root / "bots" / "heuristic.toml").read_text()
    assert 'cwd = ".."' in text
    manifest.write_text(text.replace('cwd = ".."', 'cwd = "."'))
    before = load_manifest(manifest).bundle().version
    with open(tmp_path / "games" / "limit.py", "a") as engine:
        engine.write("\n# an engine change\n")
    assert load_manifest(manifest).bundle().version != before


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_slots_left_by_a_killed_run_are_swept_and_live_ones_kept(tmp_path):
    """A run killed with SIGKILL cannot remove its bot slots; the next one
    removes them (a pid given to a new process once named them), but never
    a live process's slot or one that still holds a process."""
    from harness.proc.sandbox import sweep_stale_slots

    dead = _dead_pid()
    stale = [tmp_path / f"card-league-{dead}-1", tmp_path / f"card-league-{dead}-a1b2c3-0",
             tmp_path / f"card-league-probe-{dead}-a1b2c3"]
    live = tmp_path / f"card-league-{os.getpid()}-a1b2c3-0"
    busy = tmp_path / f"card-league-{dead}-a1b2c3-1"
    other = tmp_path / "someone-else-7"
    for path in [*stale, live, busy, other]:
        path.mkdir()
    (busy / "cgroup.procs").write_text("4242\n")  # rmdir refuses, as for a cgroup in use
    assert sweep_stale_slots([tmp_path, tmp_path / "missing"]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (live, busy, other))


def test_a_new_slot_does_not_collide_with_a_killed_runs_slot():
    """Slot names carry a per-process token: a leftover slot named with this
    very pid (a killed run whose pid came back) is no obstacle."""
    from harness.proc import sandbox

    if not probe().cgroups:
        pytest.skip("no cgroup-v1 control groups here: slots are rlimits only")
    base = sandbox._own_cgroup("pids")
    leftover = base / f"card-league-{os.getpid()}-{next(sandbox._slot_numbers) + 1}"
    leftover.mkdir()
    try:
        slot = sandbox.CgroupSlot(ResourceLimits())
        try:
            assert all(path.is_dir() for path in slot.dirs.values())
        finally:
            slot.remove()
    finally:
        if leftover.exists():
            leftover.rmdir()


def test_weaker_limits_are_refused_unless_accepted():
    if not probe().bwrap_works:
        pytest.skip(f"SANDBOX UNAVAILABLE: {probe().bwrap_problem}")
    # without control groups, memory shared through /dev/shm or MAP_SHARED escapes the limit
    with pytest.raises(SandboxUnavailable, match="accept-weak-limits"):
        Sandbox("bwrap", cgroups=False).check()
    Sandbox("bwrap", cgroups=False, weak_limits_ok=True).check()


@pytest.mark.skipif(os.geteuid() != 0, reason="uids of their own need a harness running as root")
def test_each_slot_claims_a_uid_of_its_own_and_gives_it_back():
    from harness.proc.sandbox import SLOT_UID_BASE, SlotUid

    slots = [SlotUid() for _ in range(50)]
    uids = {slot.uid for slot in slots}
    assert len(uids) == 50 and min(uids) >= SLOT_UID_BASE
    claims = {slot._claim for slot in slots}
    assert all(claim.exists() for claim in claims)
    for slot in slots:
        slot.release()
        slot.release()  # safe twice
    assert not any(claim.exists() for claim in claims)
