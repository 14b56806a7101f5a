"""Issue 44, second round: what a hostile manifest could reach before any
sandbox exists, names as identities, and a bot cache no one can alter.

Each protection was checked to be the one these tests need: disabled in a
working copy (the cwd containment check, the pattern check, the size caps
before reading, the duplicate-name refusal, the leave-out in load_league, the
seal check in BotCache._problem, the bench's refusal to run foreign bots
unsandboxed), the matching tests here failed; restored, they pass."""

from __future__ import annotations

import argparse
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.league import LeagueFileError, load_league
from harness.proc import catalog
from harness.proc.catalog import (
    MAX_BOT_FILES,
    MAX_FILE_BYTES,
    BotCache,
    ManifestError,
    discover_all,
    load_manifest,
    resolve,
)

ROOT = Path(__file__).resolve().parent.parent
BOT = "import sys\nsys.exit(0)\n"


def entrant(folder: Path, name: str, body: str = "", manifest: str = "bot.toml") -> Path:
    """A bot folder: bot.py and a manifest with ``body`` appended."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(BOT)
    path = folder / manifest
    path.write_text(f'name = "{name}"\ncommand = ["{{python}}", "bot.py"]\ngames = "*"\n{body}')
    return path


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(size)  # apparent size only: no disk, no bytes to read
    return path


def league_file(tmp_path: Path, bots: list[str], name: str = "sec") -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\ngame = "target"\nbots = {bots!r}\nplayers = 2\n'
                    "deals = 1\n".replace("'", '"'))
    return str(path)


# ---- a manifest stays in its folder ---------------------------------------------------
@pytest.mark.parametrize("cwd", ["..", "/", "../..", "inside/../.."])
def test_a_cwd_outside_the_manifest_folder_is_refused_naming_manifest_bot_and_field(
        tmp_path, cwd):
    path = entrant(tmp_path / "alice", "alice", f'cwd = "{cwd}"\n')
    (tmp_path / "alice" / "inside").mkdir()
    with pytest.raises(ManifestError) as refused:
        load_manifest(path)
    message = str(refused.value)
    assert str(path) in message and "(bot 'alice')" in message and "field 'cwd'" in message
    assert refused.value.bot == "alice"


def test_a_cwd_that_is_a_link_out_of_the_folder_is_refused(tmp_path):
    (tmp_path / "victim").mkdir()
    path = entrant(tmp_path / "alice", "alice", 'cwd = "there"\n')
    (tmp_path / "alice" / "there").symlink_to(tmp_path / "victim")
    with pytest.raises(ManifestError, match="field 'cwd'.*outside"):
        load_manifest(path)


def test_a_cwd_inside_the_folder_is_fine(tmp_path):
    path = entrant(tmp_path / "alice", "alice", 'cwd = "src"\nfiles = ["*.py"]\n')
    (tmp_path / "alice" / "src").mkdir()
    (tmp_path / "alice" / "src" / "main.py").write_text("x = 1\n")
    assert [f[0] for f in load_manifest(path).bundle().files] == ["main.py"]


@pytest.mark.parametrize("pattern", ["/etc/hostname", "../bob/bot.py", "lib/../../x", ""])
def test_an_absolute_or_climbing_files_pattern_is_refused_as_the_manifest_loads(
        tmp_path, pattern):
    path = entrant(tmp_path / "alice", "alice", f'files = ["{pattern}"]\n')
    with pytest.raises(ManifestError, match=r"\(bot 'alice'\): field 'files'"):
        load_manifest(path)


@pytest.mark.parametrize("pattern", ["*", "lib/*.py"])
def test_links_to_files_outside_the_folder_are_refused(tmp_path, pattern):
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "secret.py").write_text("KEY = 'bob'\n")
    folder = tmp_path / "alice"
    path = entrant(folder, "alice", f'files = ["{pattern}"]\n')
    (folder / "stolen.py").symlink_to(tmp_path / "bob" / "secret.py")
    (folder / "lib").symlink_to(tmp_path / "bob")
    spec = load_manifest(path)
    with pytest.raises(ManifestError, match="field 'files'.*outside the bot's directory"):
        spec.bundle()


def test_the_repositorys_own_manifests_may_reach_the_repository_and_no_others():
    assert catalog.containment_root(ROOT / "bots") == ROOT
    assert catalog.containment_root(ROOT / "bots" / "js_random") == ROOT / "bots" / "js_random"
    assert catalog.containment_root(ROOT / "leagues") == ROOT / "leagues"
    for name in ("random", "heuristic", "search", "js_random"):
        assert resolve(name).bundle().files


# ---- caps, judged before reading -----------------------------------------------------------
RSS_PROBE = """
import sys
from pathlib import Path
from harness.proc.catalog import ManifestError, load_manifest
spec = load_manifest(Path(sys.argv[1]))
for read in (spec.bundle, spec.version_hash):
    try:
        read()
        print("read it")
    except ManifestError as exc:
        print("refused:", exc)
# VmHWM, not ru_maxrss: exec keeps the forking parent's maxrss (a busy pytest worker's)
peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
print("peak_rss_kib", peak.split()[1])
"""


def test_a_sparse_gigabyte_is_refused_unread_and_the_process_stays_small(tmp_path):
    path = entrant(tmp_path / "alice", "alice")
    sparse(tmp_path / "alice" / "weights.bin", 1 << 30)
    done = subprocess.run([sys.executable, "-c", RSS_PROBE, str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len([line for line in lines if line.startswith("refused:")]) == 2, lines
    assert "weights.bin" in lines[0] and "1,073,741,824 bytes" in lines[0]
    assert "MAX_FILE_BYTES" in lines[0] and "(bot 'alice')" in lines[0]
    peak_mib = int(lines[-1].split()[1]) / 1024
    print(f"peak RSS with a 1 GiB sparse file in the bot's folder: {peak_mib:.0f} MiB")
    assert peak_mib < 200, "the file was read (the old harness peaked at 1.1 GB)"


def test_files_over_the_total_cap_are_refused_though_each_is_under_its_own(tmp_path):
    path = entrant(tmp_path / "alice", "alice")
    for index in range(3):  # 3 x 30 MiB > 64 MiB
        sparse(tmp_path / "alice" / f"part{index}.bin", 30 << 20)
    assert 30 << 20 < MAX_FILE_BYTES
    with pytest.raises(ManifestError, match="MAX_BUNDLE_BYTES"):
        load_manifest(path).version_hash()


def test_more_files_than_the_cap_are_refused(tmp_path):
    path = entrant(tmp_path / "alice", "alice")
    data = tmp_path / "alice" / "data"
    data.mkdir()
    for index in range(MAX_BOT_FILES):  # with bot.py and bot.toml: over the cap
        (data / str(index)).touch()
    with pytest.raises(ManifestError, match="MAX_BOT_FILES"):
        load_manifest(path).bundle()


def test_a_fifo_among_the_files_is_skipped_not_waited_on(tmp_path):
    path = entrant(tmp_path / "alice", "alice")
    os.mkfifo(tmp_path / "alice" / "pipe")
    assert [f[0] for f in load_manifest(path).bundle().files] == ["bot.py", "bot.toml"]


# ---- names are identities ----------------------------------------------------------------
def two_alices(tmp_path: Path) -> tuple[Path, Path]:
    first = entrant(tmp_path / "entrants" / "alice", "alice")
    second = entrant(tmp_path / "entrants" / "mallory", "alice")
    return first, second


def test_a_name_two_manifests_claim_is_refused_for_both_naming_both_folders(tmp_path):
    first, second = two_alices(tmp_path)
    entrant(tmp_path / "entrants" / "bob", "bob")
    bots, problems = discover_all([tmp_path / "entrants"])
    assert "alice" not in bots and "bob" in bots, "the first found does not win"
    (problem,) = [p for p in problems if "'alice'" in p]
    assert str(first.resolve()) in problem and str(second.resolve()) in problem
    for asked in ("alice", str(first), str(second)):
        with pytest.raises(ManifestError) as refused:
            resolve(asked, [tmp_path / "entrants"])
        assert "alice" in str(refused.value) and str(second.resolve().parent) in str(refused.value)


def test_a_manifest_named_by_path_cannot_take_a_name_on_the_bot_path(tmp_path):
    impostor = entrant(tmp_path / "impostor", "random")
    with pytest.raises(ManifestError, match="'random'.*also claimed by.*bots/random.toml"):
        resolve(str(impostor))


def test_a_broken_manifest_still_holds_its_name(tmp_path):
    entrant(tmp_path / "entrants" / "alice", "alice", 'cwd = "/"\n')
    entrant(tmp_path / "entrants" / "mallory", "alice")
    with pytest.raises(ManifestError, match="claimed by 2 manifests"):
        resolve("alice", [tmp_path / "entrants"])


def test_league_commands_refuse_a_claimed_name(tmp_path, monkeypatch):
    from harness.cli import EXIT_USAGE, app

    two_alices(tmp_path)
    monkeypatch.setenv("LEAGUE_BOT_PATH", str(tmp_path / "entrants"))
    runner = CliRunner()
    listed = runner.invoke(app, ["bots"])
    assert listed.exit_code == 0 and "claimed by 2 manifests" in listed.stderr
    assert not any(line.startswith("alice ") for line in listed.stdout.splitlines())
    for command in (["play", "target", "alice", "random"], ["check", "alice"]):
        refused = runner.invoke(app, command)
        assert refused.exit_code == EXIT_USAGE, (command, refused.stdout, refused.stderr)
        assert "entrants/mallory" in refused.stderr and "entrants/alice" in refused.stderr


@pytest.mark.parametrize("name", ["evil\u202e\x1b]0;title\x07", "../../etc", ".hidden", "-x",
                                  "a" * 65, "", "with space", "ünï"])
def test_a_name_outside_the_charset_is_refused_and_shown_escaped(tmp_path, name):
    path = tmp_path / "x.toml"
    path.write_text(f'name = "{name}"\ncommand = ["true"]\n'.replace("\x1b", "\\u001b")
                    .replace("\x07", "\\u0007"))
    with pytest.raises(ManifestError, match="field 'name'") as refused:
        load_manifest(path)
    assert str(refused.value).isascii() and str(refused.value).isprintable()


def test_every_shipped_and_test_manifest_has_a_usable_name():
    bots, problems = discover_all([ROOT / "tests" / "bots", ROOT / "harness" / "bench" / "bots"])
    assert not problems
    assert {"random", "heuristic", "search", "js_random", "trivial_a", "faulty_exit"} <= set(bots)


# ---- a league with a broken entrant plays the others -----------------------------------------
def broken_entrants(tmp_path: Path) -> Path:
    folder = tmp_path / "entrants"
    entrant(folder / "abs", "abs_pattern", 'files = ["/etc/hostname"]\n')
    entrant(folder / "big", "big")
    sparse(folder / "big" / "weights.bin", 1 << 30)
    entrant(folder / "up", "up", 'cwd = ".."\n')
    return folder


def test_a_league_leaves_out_its_broken_entrants_and_says_why(tmp_path):
    folder = broken_entrants(tmp_path)
    league = load_league(league_file(tmp_path, ["random", "abs_pattern", "big", "up", "heuristic"]),
                         [folder])
    assert sorted(league.bots) == ["heuristic", "random"]
    assert league.size() > 0
    (absolute,) = [m for m in league.left_out if m.startswith("bot 'abs_pattern' left out")]
    assert "field 'files'" in absolute and "/etc/hostname" in absolute
    (big,) = [m for m in league.left_out if m.startswith("bot 'big' left out")]
    assert "weights.bin" in big and "MAX_FILE_BYTES" in big
    (up,) = [m for m in league.left_out if m.startswith("bot 'up' left out")]
    assert "field 'cwd'" in up


def test_a_league_leaves_out_a_claimed_name_and_needs_two_bots(tmp_path):
    two_alices(tmp_path)
    league = load_league(league_file(tmp_path, ["random", "alice", "heuristic"]),
                         [tmp_path / "entrants"])
    assert sorted(league.bots) == ["heuristic", "random"]
    assert "entrants/mallory" in league.left_out[0]
    with pytest.raises(LeagueFileError, match="fewer than two bots can play.*alice"):
        load_league(league_file(tmp_path, ["random", "alice"]), [tmp_path / "entrants"])


def test_a_name_no_manifest_claims_is_still_the_league_files_mistake(tmp_path):
    with pytest.raises(LeagueFileError, match="unknown bot 'nobody'"):
        load_league(league_file(tmp_path, ["random", "heuristic", "nobody"]))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_league_run_plays_the_others_warns_and_will_not_resume_as_another_league(tmp_path):
    folder = broken_entrants(tmp_path)
    path = league_file(tmp_path, ["random", "big", "heuristic"])
    db = str(tmp_path / "r.db")
    run = cli("run", path, "--db", db, "--workers", "1", "--engine", "inline", "--quiet",
              "--bots", str(folder))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "warning: bot 'big' left out" in run.stderr and "MAX_FILE_BYTES" in run.stderr
    assert "played 2 matches" in run.stderr
    (folder / "big" / "weights.bin").unlink()  # fixed: it is a three-bot league now
    again = cli("run", path, "--db", db, "--workers", "1", "--engine", "inline", "--quiet",
                "--bots", str(folder))
    assert again.returncode == 2 and "played as another league" in again.stderr
    assert "'big'" in again.stderr and "Traceback" not in again.stderr


# ---- the cache: sealed, checked, rebuilt ---------------------------------------------------
@pytest.fixture
def cached(tmp_path):
    """A bot with a module (compiled in the cache), materialised."""
    path = entrant(tmp_path / "alice", "alice", 'files = ["bot.py", "lib/*.py"]\n')
    (tmp_path / "alice" / "lib").mkdir()
    (tmp_path / "alice" / "lib" / "util.py").write_text("ANSWER = 42\n")
    bundle = load_manifest(path).bundle()
    cache = BotCache(tmp_path / "cache")
    return cache, bundle, cache.materialise("alice", bundle)


def tamper(path: Path, data: bytes | None) -> None:
    """What a process with the harness's rights could do to a copy."""
    os.chmod(path.parent, 0o755)
    if data is None:
        path.unlink()
    else:
        if path.exists():
            os.chmod(path, 0o644)
        path.write_bytes(data)
        os.chmod(path, 0o444)
    os.chmod(path.parent, 0o555)


@pytest.mark.parametrize("change", ["source", "compiled", "added", "removed"])
@pytest.mark.parametrize("in_a_new_process", [False, True])
def test_an_altered_copy_is_rebuilt_and_logged(cached, caplog, change, in_a_new_process):
    cache, bundle, copy = cached
    compiled = next((copy / "lib" / "__pycache__").glob("util.*.pyc"))
    target, data, what = {
        "source": (copy / "lib" / "util.py", b"ANSWER = 'pwned'\n", "changed: lib/util.py"),
        # a .pyc keeps its header (source mtime and size): Python would run it
        "compiled": (compiled, compiled.read_bytes()[:16] + b"\xe3pwned", "changed: lib/__pycache"),
        "added": (copy / "lib" / "evil.py", b"import os\n", "added: lib/evil.py"),
        "removed": (copy / "lib" / "util.py", None, "removed: lib/util.py"),
    }[change]
    tamper(target, data)
    if in_a_new_process:  # no listing remembered: the files are hashed
        catalog._VERIFIED.clear()
    with caplog.at_level(logging.WARNING, logger="harness.proc.catalog"):
        assert cache.materialise("alice", bundle) == copy
    assert (copy / "lib" / "util.py").read_text() == "ANSWER = 42\n"
    assert not (copy / "lib" / "evil.py").exists()
    assert b"pwned" not in next((copy / "lib" / "__pycache__").glob("util.*.pyc")).read_bytes()
    (record,) = caplog.records
    assert "bot alice" in record.getMessage() and what in record.getMessage()


def test_an_intact_copy_is_used_as_it_is(cached, caplog):
    cache, bundle, copy = cached
    stamp = (copy / "bot.py").stat().st_ino
    for forget in (False, True):
        if forget:
            catalog._VERIFIED.clear()
        with caplog.at_level(logging.WARNING, logger="harness.proc.catalog"):
            assert cache.materialise("alice", bundle) == copy
    assert (copy / "bot.py").stat().st_ino == stamp and not caplog.records


def test_a_copy_without_a_seal_is_rebuilt(cached, caplog):
    cache, bundle, copy = cached
    (cache.root / ".seals" / f"{copy.name}.json").unlink()
    catalog._VERIFIED.clear()
    with caplog.at_level(logging.WARNING, logger="harness.proc.catalog"):
        cache.materialise("alice", bundle)
    assert "has no seal" in caplog.records[0].getMessage()
    assert (cache.root / ".seals" / f"{copy.name}.json").exists()


def test_the_cache_modes_keep_bots_out_of_each_other_and_of_the_seals(cached):
    cache, _, copy = cached

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.lstat().st_mode)

    assert mode(cache.root) == 0o711, "others may pass through to their copy, not list"
    assert mode(cache.root / ".seals") == 0o700
    assert {mode(p) for p in (cache.root / ".seals").iterdir()} == {0o600}
    assert {mode(p) for p in [copy, *copy.rglob("*")] if p.is_dir()} == {0o555}
    assert {mode(p) for p in copy.rglob("*") if p.is_file()} == {0o444}
    assert len(list(copy.rglob("*.pyc"))) == 2


def test_a_pool_runs_the_genuine_code_after_its_copy_was_altered(tmp_path):
    """End to end: the cached copy of random crashes when altered; the pool
    starts a process that completes its handshake."""
    from harness.match import BotPool, Limits
    from harness.proc.sandbox import Sandbox

    spec = resolve("random")
    bundle = spec.bundle()
    cache = BotCache(tmp_path / "cache")
    tamper(cache.materialise("random", bundle) / "bots" / "random_bot.py",
           b"raise SystemExit(3)\n")
    pool = BotPool({"random": spec}, Limits(), Sandbox("none"), {"random": bundle}, cache)
    try:
        client = pool.acquire("random")
        assert client.usable
    finally:
        pool.close()


# ---- nothing runs a league's bots unsandboxed unasked ---------------------------------------
def test_the_decision_bench_runs_only_its_own_bots_unsandboxed(tmp_path, monkeypatch, capsys):
    from harness.bench import decisions as bench

    entrant(tmp_path / "entrants" / "stranger", "stranger")
    monkeypatch.setenv("LEAGUE_BOT_PATH", str(tmp_path / "entrants"))
    foreign = league_file(tmp_path, ["random", "stranger"])
    assert bench.foreign_bots(bench.load_bench_league("trivial")) == []
    assert bench.foreign_bots(bench.load_bench_league("demo")) == []
    assert bench.foreign_bots(bench.load_bench_league(foreign)) == ["stranger"]
    with pytest.raises(bench.UntrustedBots, match="--unsandboxed-i-trust-these-bots"):
        bench.play(foreign, sandbox="none", matches=1)

    def modes(sandbox: str | None, trust: bool) -> list[str]:
        args = argparse.Namespace(league=foreign, sandbox=sandbox, trust_bots=trust)
        return bench._sandbox_modes(argparse.ArgumentParser(), args)

    assert modes(None, False) == ["bwrap"], "by default, a stranger is measured sandboxed"
    with pytest.raises(SystemExit):
        modes("none,bwrap", False)
    assert "--unsandboxed-i-trust-these-bots" in capsys.readouterr().err
    assert modes("none", True) == ["none"]
    assert "warning: --unsandboxed-i-trust-these-bots: stranger run unisolated" in \
        capsys.readouterr().err
