"""A real two-node Ray cluster on this machine: a head (`ray start --head`)
and a second node (`ray start --address`), each with its own temp dir and
one CPU. A league run through `--address` plays on both nodes; killing the
second node mid-run still ends with exactly the schedule. The bots' files
reach the workers inside the league (bundles), not through a shared path.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.league import load_league

ROOT = Path(__file__).resolve().parent.parent
RAY = str(Path(sys.executable).with_name("ray"))

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ray_cmd(*args: str, env: dict[str, str]) -> None:
    done = subprocess.run([RAY, *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def cluster(tmp_path):
    """(address, env, temp dir of the second node); both nodes stopped after.
    The cluster's token is its own, in the environment of every process that
    joins it: a fresh machine has no ~/.ray/auth_token, and `ray start
    --head` in token mode does not make one."""
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32),
               RAY_USAGE_STATS_ENABLED="0")
    port = free_port()
    head_dir, second_dir = Path("/tmp") / f"ray-head-{port}", Path("/tmp") / f"ray-second-{port}"
    ray_cmd("start", "--head", "--port", str(port), "--num-cpus", "1", "--temp-dir", str(head_dir),
            "--include-dashboard", "false", "--disable-usage-stats", env=env)
    try:
        ray_cmd("start", "--address", f"127.0.0.1:{port}", "--num-cpus", "1",
                "--temp-dir", str(second_dir), "--disable-usage-stats", env=env)
        yield f"127.0.0.1:{port}", env, second_dir
    finally:
        for directory in (second_dir, head_dir):
            kill_node(directory)
            # the nodes' session files: /tmp, not tmp_path (Ray's socket paths must stay short)
            shutil.rmtree(directory, ignore_errors=True)


def kill_node(temp_dir: Path) -> int:
    """SIGKILL every process of the Ray node whose temp dir this is: its
    raylet and services, and their children (the workers, and their bots)."""
    victims: set[psutil.Process] = set()
    for proc in psutil.process_iter(["cmdline"]):
        if any(str(temp_dir) in part for part in proc.info["cmdline"] or []):
            victims.add(proc)
            try:
                victims.update(proc.children(recursive=True))
            except psutil.NoSuchProcess:
                pass
    for proc in victims:
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    return len(victims)


def league_file(tmp_path: Path, name: str, deals: int) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\ngame = "target"\nbots = ["random", "heuristic"]\n'
                    f"players = 2\ndeals = {deals}\n")
    return path


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def stored(db: Path, league: str) -> list[tuple[str, str]]:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT id, node FROM matches WHERE league = ?", [league]).fetchall()
    except sqlite3.OperationalError:
        return []


def schedule_ids(path: Path) -> list[str]:
    return sorted(m.match_id for m in load_league(str(path)).schedule())


def test_a_league_plays_on_both_nodes_and_survives_losing_one(cluster, tmp_path):
    address, env, second_dir = cluster
    db = tmp_path / "results.db"

    both = league_file(tmp_path, "spread", deals=30)
    run = run_cli(["run", str(both), "--db", str(db), "--address", address, "--workers", "2",
                   "-q"], env)
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    rows = stored(db, "spread")
    assert sorted(r[0] for r in rows) == schedule_ids(both)
    assert len({node for _, node in rows}) == 2, "matches ran on both nodes"

    # without --address a league starts a Ray of its own, even with RAY_ADDRESS
    # naming this cluster (Ray would join it)
    alone = league_file(tmp_path, "alone", deals=2)
    run = run_cli(["run", str(alone), "--db", str(db), "-q"], dict(env, RAY_ADDRESS=address))
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    embedded = {node for _, node in stored(db, "alone")}
    assert embedded and not embedded & {node for _, node in rows}, "not on the cluster's nodes"

    lossy = league_file(tmp_path, "lossy", deals=150)
    run = run_cli(["run", str(lossy), "--db", str(db), "--address", address, "--workers", "2",
                   "-q"], env)
    deadline = time.monotonic() + 180
    while len(stored(db, "lossy")) < 40:
        assert time.monotonic() < deadline and run.poll() is None, run.communicate()[1]
        time.sleep(0.2)
    assert kill_node(second_dir) > 0
    out, err = run.communicate(timeout=400)
    assert run.returncode == 0, err
    ids = [r[0] for r in stored(db, "lossy")]
    assert sorted(ids) == schedule_ids(lossy), "exactly the schedule, once each"
    assert "died" in err, "the lost worker was replaced"
