"""PROTOCOL.md is enough to write a bot: its example bot plays a real match."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.match import BotPool, Limits, run_match
from harness.proc.catalog import load_manifest

ROOT = Path(__file__).resolve().parent.parent


def test_the_documented_example_bot_plays_without_faults(tmp_path):
    text = (ROOT / "PROTOCOL.md").read_text()
    section = text.split("## A complete bot in Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "first.py").write_text(code)
    (tmp_path / "first.toml").write_text(
        'name = "first"\ncommand = ["{python}", "first.py"]\ngames = "*"\n')
    spec = load_manifest(tmp_path / "first.toml")
    from harness.proc.catalog import discover

    specs = {**discover(), "first": spec}
    limits = Limits(decision_ms=2000, startup_ms=10000)
    pool = BotPool(specs, limits)
    try:
        for game in ("limit", "tateyoko"):
            result = run_match(game, 1, ["first", "random", "random"], pool, f"doc-{game}")
            assert result.faults == [None, None, None]
            assert not result.capped
        assert pool.starts["first"] == 1, "one process played both matches"
    finally:
        pool.close()


def test_a_javascript_bot_plays_every_game_through_the_protocol():
    """Any language: the dependency-free JavaScript example bot plays one
    match of every game (requires node, present on the project's machines)."""
    import shutil

    from games import get_game, implemented_games
    from harness.proc.catalog import discover

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    specs = discover()
    limits = Limits(decision_ms=5000, startup_ms=15000)
    pool = BotPool(specs, limits)
    try:
        for game in implemented_games():
            players = get_game(game).INFO.player_counts()[0]
            bots = ["js_random"] + ["random"] * (players - 1)
            result = run_match(game, 5, bots, pool, f"js-{game}")
            assert result.faults[0] is None, (game, result.faults[0])
            assert not result.capped
        assert pool.starts["js_random"] == 1, "one node process played every game"
    finally:
        pool.close()


def test_the_security_model_lists_the_syscall_filter_as_it_is():
    from harness.proc import seccomp

    text = (Path(__file__).resolve().parent.parent / "PROTOCOL.md").read_text()
    assert seccomp.describe().strip() in text, \
        "PROTOCOL.md's filter list is stale: paste harness.proc.seccomp.describe() into it"
