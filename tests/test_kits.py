"""Starter kits (`league new`), the build step (`league build`, and `league
check` building first) and the SDK a bot imports from its own folder
(`league_sdk`), through the real command line: real kits written to disk,
real compilers, real sandboxed bot processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import EXIT_BOT, EXIT_USAGE, app
from harness.proc.build import BuildError, toolchain_for
from harness.proc.catalog import ManifestError, load_manifest
from harness.proc.sandbox import probe

needs_bwrap = pytest.mark.skipif(not probe().bwrap_works,
                                 reason=f"SANDBOX UNAVAILABLE: {probe().bwrap_problem}")
# `check` refuses a machine that cannot keep every limit unless told; a kit's
# test is about the kit, so it accepts such a machine.
WEAK = [] if probe().strong else ["--accept-weak-limits"]
# a few games, one of them for 4 and 6 players (teams): check runs every player count
CHECKED_GAMES = ["-g", "limit", "-g", "twin_shoot"]


def league(*args: str, code: int = 0):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr,
                                      result.exception)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def toolchain_problem(lang: str) -> str:
    """Why this machine cannot build or run the kit ('' if it can)."""
    program = {"python": None, "javascript": "node", "c": "gcc", "rust": "cargo"}[lang]
    if program is None:
        return ""
    try:
        toolchain_for(program)
    except BuildError as exc:
        return str(exc)
    return ""


# ---- league new: what it refuses ------------------------------------------------------
def test_new_refuses_a_bad_name_an_unknown_language_and_a_used_folder(tmp_path):
    bad_name = league("new", "../oops", "--dir", str(tmp_path / "a"), code=EXIT_USAGE)
    assert "'../oops' is not a bot name" in bad_name.stderr
    assert not (tmp_path / "a").exists()

    typo = league("new", "ok", "--lang", "pyton", "--dir", str(tmp_path / "b"), code=EXIT_USAGE)
    assert "did you mean 'python'" in typo.stderr
    assert "python, javascript, c, rust" in typo.stderr and "go" in typo.stderr
    assert not (tmp_path / "b").exists()

    taken = league("new", "random", "--dir", str(tmp_path / "r"), code=EXIT_USAGE)
    assert "'random' is taken by" in taken.stderr and "random.toml" in taken.stderr
    assert not (tmp_path / "r").exists()

    used = tmp_path / "used"
    used.mkdir()
    (used / "mine.txt").write_text("keep me")
    refused = league("new", "ok", "--dir", str(used), code=EXIT_USAGE)
    assert "not empty" in refused.stderr
    assert sorted(p.name for p in used.iterdir()) == ["mine.txt"]
    assert (used / "mine.txt").read_text() == "keep me"

    empty = tmp_path / "empty"
    empty.mkdir()
    written = league("new", "ok", "--dir", str(empty)).stdout
    assert f"league check {empty / 'bot.toml'}" in written
    assert load_manifest(empty / "bot.toml").name == "ok"
    assert (empty / "docs" / "games" / "limit.md").is_file(), "the game pages come with it"


def test_new_help_names_every_kit_and_why_go_is_not_one():
    out = league("new", "--help").stdout
    for lang in ("python", "javascript", "c", "rust", "go"):
        assert lang in out


# ---- a kit from `new` to a passing `check` -----------------------------------------------
@pytest.mark.slow
@needs_bwrap
@pytest.mark.parametrize("lang", ["python", "javascript", "c", "rust"])
def test_each_kit_builds_and_passes_check_in_the_sandbox(tmp_path, lang):
    problem = toolchain_problem(lang)
    if problem:
        pytest.skip(f"the {lang} kit cannot be built here: {problem}")
    folder = tmp_path / f"kit-{lang}"
    written = league(*WEAK, "new", f"kit-{lang}", "--lang", lang, "--dir", str(folder)).stdout
    spec = load_manifest(folder / "bot.toml")
    if spec.build:
        assert "ok   build" in written, written
    spec.version_hash()  # every file the manifest lists is there: built
    checked = league(*WEAK, "check", str(folder / "bot.toml"), *CHECKED_GAMES).stdout
    assert f"kit-{lang}: all checks passed" in checked, checked
    assert "twin_shoot, 6 players" in checked and "FAIL" not in checked
    assert f"name 'kit-{lang}'" in checked, "the kit answers hello with its own name"


def test_the_python_kit_imports_the_sdk_unsandboxed_too(tmp_path):
    folder = tmp_path / "loose"
    league("new", "loose", "--dir", str(folder))
    assert "league_sdk" in (folder / "bot.py").read_text()
    assert not (folder / "sdk.py").exists() and not (folder / "league_sdk.py").exists()
    checked = league("check", str(folder / "bot.toml"), "-g", "limit", "--sandbox", "none")
    assert "loose: all checks passed" in checked.stdout, checked.stdout


# ---- the build step -----------------------------------------------------------------
def write_bot(folder: Path, build: str, files: str = '["out.txt"]') -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "bot.toml"
    manifest.write_text(f'name = "builder"\ncommand = ["{{python}}", "-c", "pass"]\n'
                        f"build = {build}\nfiles = {files}\n")
    return manifest


@pytest.mark.parametrize("build", ['"make"', "[]", '["gcc", 3]', '["", "x"]'])
def test_a_build_that_is_not_an_argv_is_refused_naming_the_field(tmp_path, build):
    with pytest.raises(ManifestError, match="field 'build' must be a non-empty list"):
        load_manifest(write_bot(tmp_path, build))


@needs_bwrap
def test_the_build_runs_in_the_bot_folder_and_sees_nothing_else(tmp_path):
    folder = tmp_path / "bot"
    secret = tmp_path / "secret.txt"
    secret.write_text("harness files")
    script = (f"cat {secret} > leaked.txt 2>/dev/null; ls / > root.txt; "
              "echo built > out.txt; echo halfway >&2")
    manifest = write_bot(folder, f'["sh", "-c", "{script}"]')
    out = league(*WEAK, "build", str(manifest)).stdout
    assert "ok   build `sh -c" in out and "builder: version" in out
    assert (folder / "out.txt").read_text() == "built\n"
    assert (folder / "leaked.txt").read_text() == "", "the build saw a file outside its folder"
    assert "bot" in (folder / "root.txt").read_text().split(), "its folder is /bot"


@needs_bwrap
def test_a_failed_build_shows_its_output_and_check_stops_there(tmp_path):
    script = "printf '\\\\033[2Jwiped\\\\n'; echo bot.c:3: error: oops; exit 2"
    manifest = write_bot(tmp_path / "bot", f'["sh", "-c", "{script}"]')
    failed = league(*WEAK, "build", str(manifest), code=EXIT_BOT).stdout
    assert "failed with exit code 2" in failed and "| bot.c:3: error: oops" in failed
    assert "\x1b" not in failed and "| \\x1b[2Jwiped" in failed, "its output is shown escaped"
    checked = league(*WEAK, "check", str(manifest), "-g", "limit", code=EXIT_BOT).stdout
    assert "failed with exit code 2" in checked and "handshake" not in checked


def test_a_build_past_its_time_limit_is_killed(tmp_path):
    manifest = write_bot(tmp_path / "bot", '["sh", "-c", "echo started; sleep 60"]')
    mode = [] if probe().bwrap_works else ["--sandbox", "none"]
    out = league(*WEAK, "build", str(manifest), "--timeout", "1", *mode, code=EXIT_BOT).stdout
    assert "killed after its time limit of 1 s" in out and "| started" in out


def test_check_without_building_names_the_missing_output_and_build(tmp_path):
    manifest = write_bot(tmp_path / "bot", '["sh", "-c", "echo built > out.txt"]')
    refused = league("check", str(manifest), "--no-build", "--sandbox", "none", code=EXIT_USAGE)
    assert "out.txt" in refused.stderr and "league build builder" in refused.stderr


def test_build_of_a_bot_without_a_build_step_says_so():
    assert "no build step" in league("build", "random").stdout


def test_an_unsandboxed_build_runs_too(tmp_path):
    manifest = write_bot(tmp_path / "bot", '["sh", "-c", "echo built > out.txt"]')
    out = league("build", str(manifest), "--sandbox", "none").stdout
    assert "ok   build" in out and (tmp_path / "bot" / "out.txt").is_file()


def test_a_build_in_a_folder_shared_with_other_bots_is_refused(tmp_path):
    """Its build may write anywhere in its cwd: not where another entrant lives."""
    write_bot(tmp_path, '["sh", "-c", "echo built > out.txt"]')
    (tmp_path / "neighbour.toml").write_text('name = "neighbour"\ncommand = ["true"]\n')
    refused = league("build", str(tmp_path / "bot.toml"), "--sandbox", "none", code=EXIT_BOT)
    assert "holds other bots' manifests (neighbour.toml)" in refused.stderr
    assert not (tmp_path / "out.txt").exists()


def test_build_timeout_default_is_the_build_modules():
    """`league build --timeout` states the limit harness.proc.build applies."""
    import inspect

    from harness.cli.new import build
    from harness.proc.build import BUILD_TIMEOUT_S

    option = inspect.signature(build).parameters["timeout_s"].default  # typer's OptionInfo
    assert option.default == BUILD_TIMEOUT_S
