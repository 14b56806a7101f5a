"""Hostile bots in real leagues: real sandboxed processes, a real SQLite file,
the real runner. Each attack of ``tests/bots/hostile.py`` gets its own league
against two innocent bots; for each we assert that the league completes, that
every scheduled match is stored exactly once, that the fault is the expected
one and innocents have none, that no process survives, that the harness's
memory stays bounded and that the attack itself failed.

Run them alone with ``pytest -m slow tests/test_hostile_bots.py``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import psutil
import pytest

from harness.league import load_league
from harness.proc.sandbox import Sandbox, probe
from harness.runner import run_league
from harness.store import Store
from tests.helpers import wait_until

TEST_BOTS = Path(__file__).resolve().parent / "bots"
MARKER = "card-league-hostile-escapee"
INNOCENTS = ["random", "heuristic"]
LIMITS = ("decision_ms = 800\nstartup_ms = 10000\nmemory_mb = 256\ncpu_s = 2\n"
          "processes = 32\nfile_mb = 16\n")

# attack -> the fault it must get (None: it plays on and its attack fails)
EXPECTED = {
    "hang": "timeout",
    "crash": "crash",
    "garbage": "bad_message",
    "text_to_stdout": "bad_message",
    "giant": "bad_message",
    "amplify": "bad_message",
    "huge_array": "bad_message",
    "deep": "bad_message",
    "nonstring_keys": "bad_message",
    "both_index_and_action": "bad_message",
    "extra_replies": "bad_message",
    "late_extra": "bad_message",
    "child_holds_stdout": "crash",
    "stderr_flood": None,
    "memory_bomb": "limit",
    "fork_bomb": "limit",
    "cpu_burner": "limit",
    "writes_big_file": "limit",
    "escape": None,
    "sabotage": None,
    "db_forgery": None,
    "spy": None,
}

pytestmark = [
    pytest.mark.slow,
    # alone: the attacks reach for every process on the machine (sabotage writes to
    # their pipes, spy reads them), fork bombs and CPU burners strain its limits
    pytest.mark.serial,
    pytest.mark.skipif(not probe().bwrap_works,
                       reason=f"SANDBOX UNAVAILABLE, hostile bots not tested: {probe().bwrap_problem}"),
]


def hostile_manifest(directory: Path, mode: str, env: dict[str, str] | None = None) -> str:
    """A manifest beside its own copy of hostile.py: a bot's cwd and files
    stay in the manifest's folder."""
    name = f"hostile_{mode}"
    table = "".join(f'{key} = "{value}"\n' for key, value in (env or {}).items())
    shutil.copyfile(TEST_BOTS / "hostile.py", directory / "hostile.py")
    (directory / f"{name}.toml").write_text(
        f'name = "{name}"\ncommand = ["{{python}}", "hostile.py", "{mode}"]\n'
        f'files = ["hostile.py"]\ngames = "*"\n[env]\n{table}')
    return name


def league_path(tmp_path: Path, name: str, bots: list[str], deals: int = 1) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\ngame = "target"\nbots = {bots!r}\nplayers = 3\n'
                    f"deals = {deals}\nrotation = 'cyclic'\n[limits]\n{LIMITS}".replace("'", '"'))
    return path


def escapees() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(MARKER in part for part in proc.info["cmdline"] or []):
            found.append(proc)
    return found


def leftover_cgroups() -> list[Path]:
    """This process's bot slots still in the pids hierarchy (where the sandbox
    makes them: under the harness's own group; no walk through other runs')."""
    from harness.proc.sandbox import _own_cgroup

    parent = _own_cgroup("pids")
    if not probe().cgroups or parent is None:
        return []
    return list(parent.glob(f"card-league-{os.getpid()}-*"))


def play(tmp_path: Path, name: str, bots: list[str], sandbox: Sandbox, engine: str = "inline",
         deals: int = 1, in_flight: int = 1):
    league = load_league(str(league_path(tmp_path, name, bots, deals)), [tmp_path])
    store = Store(tmp_path / "results.db")
    summary = run_league(league, store, workers=1 if engine == "inline" else 2, engine=engine,
                         sandbox=sandbox, concurrency=in_flight)
    return league, store, summary


def seat_faults(db: Path, league: str) -> dict[str, list[tuple]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT s.bot, s.fault_kind, s.fault_detail, s.fault_stderr, s.score FROM seats s "
            "JOIN matches m ON m.id = s.match_id WHERE m.league = ?", [league]).fetchall()
    by_bot: dict[str, list[tuple]] = {}
    for bot, kind, detail, stderr, score in rows:
        by_bot.setdefault(bot.split("@")[0], []).append((kind, detail, stderr or "", score))
    return by_bot


def assert_exactly_the_schedule(db: Path, league) -> None:
    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM matches WHERE league = ?",
                                          [league.name])]
    assert sorted(ids) == sorted(m.match_id for m in league.schedule())


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_hostile_bot_is_contained(tmp_path, mode, monkeypatch):
    monkeypatch.setenv("HOSTILE_SECRET_TOKEN", "do-not-leak")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")
    canary = tmp_path / "canary.txt"
    canary.write_text("secret")
    monkeypatch.setenv("HOSTILE_CANARY_PATH", str(canary))
    name = hostile_manifest(tmp_path, mode, {"HOSTILE_DB_ROOT": f"{tmp_path.resolve()}/"})
    rss_before = psutil.Process().memory_info().rss
    started = time.monotonic()
    league, store, summary = play(tmp_path, f"h_{mode}", [name, *INNOCENTS], Sandbox("bwrap"))
    elapsed = time.monotonic() - started
    rss_growth = psutil.Process().memory_info().rss - rss_before

    assert summary.errors == 0, summary.error_lines
    assert summary.played == league.size() == 3
    assert_exactly_the_schedule(tmp_path / "results.db", league)
    faults = seat_faults(tmp_path / "results.db", league.name)
    for innocent in INNOCENTS:
        assert all(kind is None for kind, *_ in faults[innocent]), faults[innocent]
    kinds = {kind for kind, *_ in faults[name]}
    expected = EXPECTED[mode]
    if mode in ("cpu_burner", "late_extra", "fork_bomb"):
        # The attack starts at the bot's second decision. Refused forks are
        # read once more when play ends, so the bomb is that match's fault;
        # a burn (or an unasked message) just before the end may be caught
        # only in the bot's next match, or its slot ends first.
        assert expected in kinds and kinds <= {expected, None}, faults[name]
    else:
        assert kinds == ({expected} if expected else {None}), faults[name]
    for _kind, _detail, stderr, score in faults[name]:
        assert "ATTACK SUCCEEDED" not in stderr, stderr
        assert len(stderr.encode()) <= 4096
        assert score != 999
    if mode == "text_to_stdout":
        assert all("wrote text to stdout" in detail and "thinking" in detail
                   for _, detail, *_ in faults[name])
    if mode == "child_holds_stdout":
        # seen as the exit it is (the kind above is not a timeout), with its status
        assert all("exit code 5" in detail for _, detail, *_ in faults[name]), faults[name]
    assert not escapees(), "a bot's process outlived its slot"
    assert not psutil.Process().children(recursive=True), "bot processes left behind"
    assert not leftover_cgroups()
    assert rss_growth < 150 << 20, f"harness grew by {rss_growth >> 20} MiB"
    print(f"\nhostile {mode}: faults {sorted(map(str, kinds))}, innocents' faults 0, "
          f"stored {summary.played}/{league.size()}, harness RSS +{rss_growth / 2**20:.1f} MiB "
          f"(peak {psutil.Process().memory_info().rss / 2**20:.0f} MiB), {elapsed:.1f} s")


@pytest.mark.parametrize("mode", ["spy", "db_forgery"])
def test_the_same_attack_works_without_the_sandbox(tmp_path, mode, monkeypatch):
    """Proof that the attacks are real: unsandboxed they succeed."""
    monkeypatch.setenv("HOSTILE_SECRET_TOKEN", "do-not-leak")
    play(tmp_path, "earlier", INNOCENTS, Sandbox("none"))  # results there are to forge
    name = hostile_manifest(tmp_path, mode, {"HOSTILE_DB_ROOT": f"{tmp_path.resolve()}/"})
    league, store, summary = play(tmp_path, f"u_{mode}", [name, *INNOCENTS], Sandbox("none"),
                                  deals=8)
    faults = seat_faults(tmp_path / "results.db", league.name)
    # it crashes once its attack is done: broken after BROKEN_AFTER matches in
    # a row, the rest left for a later run
    assert summary.played + summary.unplayed == 24 and summary.played >= 3
    assert any("ATTACK SUCCEEDED" in stderr for _, _, stderr, _ in faults[name]), faults[name]


def ray_listening_addresses() -> list[str]:
    """Every address:port a Ray process of this machine listens on, with the
    wildcard ones made concrete (loopback and this host's own address)."""
    import socket

    host_ips = {"127.0.0.1"}
    try:
        host_ips.add(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    ray_pids = {p.pid for p in psutil.process_iter(["cmdline"])
                if "ray" in " ".join(p.info["cmdline"] or [])}
    targets = set()
    for conn in psutil.net_connections("inet"):
        if conn.status == "LISTEN" and conn.pid in ray_pids:
            ips = host_ips if conn.laddr.ip in ("0.0.0.0", "::") else {conn.laddr.ip}
            targets.update(f"{ip}:{conn.laddr.port}" for ip in ips if ":" not in ip)
    return sorted(targets)


def test_hostile_bots_together_on_ray(tmp_path):
    import socket

    import ray

    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False,
             _node_ip_address="127.0.0.1")  # as RayEngine does; it reuses this
    targets = ray_listening_addresses()
    reachable = []
    for target in targets:
        host, _, port = target.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=0.3).close()
            reachable.append(target)
        except OSError:
            pass
    assert reachable, "the test must aim the spy at ports that do answer outside the sandbox"
    spy = hostile_manifest(tmp_path, "spy", {"HOSTILE_TARGETS": ",".join(reachable)})
    bots = [hostile_manifest(tmp_path, m) for m in ("escape", "crash", "extra_replies")] + [spy]
    # three matches in flight per worker: hostile bots interleaved with each other
    league, store, summary = play(tmp_path, "h_ray", [*bots, "random"], Sandbox("bwrap"),
                                  engine="ray", in_flight=3)
    assert summary.errors == 0, summary.error_lines
    # a bot that faults in BROKEN_AFTER of its matches in a row is broken: the
    # rest of its matches are left for a later run, every other one is stored
    assert summary.played + summary.unplayed == league.size()
    left = [m for m in league.schedule() if any(s in summary.broken for s in m.seats)]
    with sqlite3.connect(tmp_path / "results.db") as conn:
        stored = {r[0] for r in conn.execute("SELECT id FROM matches")}
    assert {m.match_id for m in league.schedule()} - stored <= {m.match_id for m in left}
    faults = seat_faults(tmp_path / "results.db", league.name)
    assert all(kind is None for kind, *_ in faults["random"])
    assert {k for k, *_ in faults["hostile_crash"]} == {"crash"}
    assert {k for k, *_ in faults["hostile_extra_replies"]} == {"bad_message"}
    assert {k for k, *_ in faults["hostile_spy"]} == {None}
    assert {k for k, *_ in faults["hostile_escape"]} == {None}
    wait_until(lambda: not escapees(), "the bot processes outside their slots to end",
               describe=escapees)
