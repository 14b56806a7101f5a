"""`league sprt` end to end: paired deals played and stored like a league,
stopped by the test as soon as it has its answer, resumed without
replaying; its stop messages say why it stopped, and its resume hint gives
back the very test."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import harness.cli.sprt as cli  # the module whose _play_league `league sprt` calls
from harness.cli import EXIT_BOT, EXIT_HARNESS_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, app
from harness.cli.sprt_run import SEATINGS_PER_DEAL, SprtLeague, sprt_league, tally
from harness.runner import RunSummary
from harness.stats.sprt import DealTally

TEST_BOTS = str(Path(__file__).parent / "bots")


def sprt(*args: str, code: int = 0):
    result = CliRunner().invoke(app, ["sprt", *args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def deals_of(stdout: str) -> int:
    return int(stdout.split("deals: ")[1].split()[0])


def test_a_clear_difference_stops_early_and_resumes_without_replaying(tmp_path):
    db = str(tmp_path / "s.db")
    first = sprt("target", "random", "heuristic", "--db", db, "--engine", "inline").stdout
    assert "verdict: H1: heuristic is better than random (by 20 Elo or more); the LLR " \
           "reached the upper bound at deal" in first
    assert "field random" in first, "the field is A by default"
    deals = deals_of(first)
    assert deals < 200, "it stopped long before the cap"
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    assert deals * 2 * SEATINGS_PER_DEAL <= stored <= (deals + 8) * 2 * SEATINGS_PER_DEAL
    again = sprt("target", "random", "heuristic", "--db", db, "--engine", "inline").stdout
    assert again == first, "a decided test is reported again, nothing replayed"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == stored


def test_a_clearly_worse_candidate_is_h0_at_the_lower_bound(tmp_path):
    result = sprt("target", "heuristic", "random", "--db", str(tmp_path / "s.db"), "--engine",
                  "inline").stdout
    assert "verdict: H0: random is not better than heuristic by 20 Elo" in result
    assert "the LLR reached the lower bound at deal" in result and deals_of(result) < 200


def test_twins_share_cards_seat_and_field():
    from harness.match import Limits
    from harness.proc.catalog import resolve

    league: SprtLeague = sprt_league("limit", resolve("random"), resolve("heuristic"),
                                     [resolve("random")], 3, 5, Limits())
    matches = list(league.schedule())
    assert len(matches) == league.size() == 5 * SEATINGS_PER_DEAL * 2
    assert len({m.match_id for m in matches}) == len(matches)
    for a, b in zip(matches[::2], matches[1::2]):
        assert a.deal == b.deal, "twins play one deal: the same cards"
        differ = [s for s in range(3) if a.seats[s] != b.seats[s]]
        assert len(differ) == 1 and b.seats[differ[0]].startswith("heuristic@")
    other = sprt_league("limit", resolve("random"), resolve("heuristic"), [resolve("heuristic")],
                        3, 5, Limits(), seed=4)
    assert league.name != other.name, "another field or seed is another stored test"
    assert other.deal_seed(0, "00" * 32) == other.deal_seed(0, "11" * 32) and other.seed == 4


def test_a_deals_tally_counts_the_tested_seat_against_each_field_seat():
    from harness.match import Limits
    from harness.proc.catalog import resolve

    league = sprt_league("limit", resolve("random"), resolve("heuristic"), [resolve("random")],
                         3, 2, Limits())
    a0, b0, a1, b1 = league.deal_matches(1)
    # deal 1: A and B in seat 1, then seat 2
    ranks = {a0.match_id: {0: 1, 1: 2, 2: 3}, b0.match_id: {0: 2, 1: 1, 2: 2},
             a1.match_id: {0: 1, 1: 1, 2: 1}}
    assert tally(league, 1, ranks) is None, "a deal counts once all four matches are stored"
    ranks[b1.match_id] = {0: 3, 1: 2, 2: 1}
    # B first in both seatings; A second of three, then level with all (ties say nothing)
    assert tally(league, 1, ranks) == DealTally(b_wins=4, b_losses=0, a_wins=1, a_losses=1)
    team = sprt_league("tenos_square", resolve("random"), resolve("heuristic"),
                       [resolve("random")], 4, 1, Limits())
    assert team.team_size == 2 and team._units() == [(0, 2), (1, 3)]
    a0, b0, a1, b1 = team.deal_matches(0)
    assert [b0.seats[s].split("@")[0] for s in range(4)] == ["heuristic", "random"] * 2
    ranks = {a0.match_id: {0: 2, 1: 1, 2: 2, 3: 1}, b0.match_id: {0: 1, 1: 2, 2: 1, 3: 2},
             a1.match_id: {0: 1, 1: 1, 2: 1, 3: 1}, b1.match_id: {0: 2, 1: 1, 2: 2, 3: 1}}
    assert tally(team, 0, ranks) == DealTally(b_wins=2, b_losses=0, a_wins=0, a_losses=1)


def test_bad_sprt_input_is_refused():
    assert "same bot" in sprt("target", "random", "random", code=EXIT_USAGE).stderr
    assert "elo0 must be below" in sprt("target", "random", "heuristic", "--elo0", "5",
                                        "--elo1", "0", code=EXIT_USAGE).stderr


# ---- stop messages and the resume hint ----------------------------------------------
class Played:
    """Stands in for the run: records what `league sprt` asked it to play and
    answers with a RunSummary (an interrupt, a broken bot, harness errors)."""

    def __init__(self, **summary: Any) -> None:
        self.summary = summary
        self.calls: list[dict[str, Any]] = []

    def __call__(self, league: Any, store: Any, **options: Any) -> RunSummary:
        test = options.pop("stop_when").__self__
        self.calls.append({
            "league": league.name, "config": league.config(), "limits": league.limits,
            "specs": {name: str(spec.manifest) for name, spec in league.specs.items()},
            "db": Path(store.path).resolve(), "sandbox": options.pop("sandbox").mode,
            "test": (test.elo0, test.elo1, test.alpha, test.beta), **options})
        fields = {"scheduled": league.size(), "already_done": 0, "played": 0, "faulted": 0,
                  "process_starts": 0, "elapsed_s": 0.0, "interrupted": False}
        return RunSummary(**{**fields, **self.summary})


def hint_of(stderr: str) -> list[str]:
    line = next(line for line in stderr.splitlines() if line.startswith("resume with: "))
    return shlex.split(line.removeprefix("resume with: "))


def parsed(args: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The global and the sprt command's parameters as click reads ``args``."""
    group = typer.main.get_command(app)
    with group.make_context("league", list(args), resilient_parsing=True) as ctx:
        rest = [*ctx._protected_args, *ctx.args] if hasattr(ctx, "_protected_args") \
            else [*ctx.protected_args, *ctx.args]
        name, command, rest = group.resolve_command(ctx, rest)
        with command.make_context(name, rest, parent=ctx, resilient_parsing=True) as sub:
            given = {p.name for p in command.params
                     if sub.get_parameter_source(p.name).name == "COMMANDLINE"}
            return ({k: v for k, v in ctx.params.items() if v},
                    {k: v for k, v in sub.params.items() if k in given})


@pytest.mark.parametrize("options", [
    [],
    ["--field", "random", "--field", "heuristic", "--players", "3", "--elo0", "-5",
     "--elo1", "15.5", "--alpha", "0.1", "--beta", "0.02", "--max-deals", "77", "--seed", "9",
     "--decision-ms", "500", "--bots", TEST_BOTS, "--sandbox", "none", "--workers", "2",
     "--address", "auto"],
])
def test_the_resume_hint_gives_back_the_same_test(tmp_path, monkeypatch, options):
    folder = tmp_path / "a folder with spaces"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    played = Played(interrupted=True)
    monkeypatch.setattr(cli, "_play_league", played)
    lead = ["--accept-weak-limits"] if options else []
    original = [*lead, "sprt", "limit", "heuristic", "random", "--db",
                str(folder / "s.db"), "--engine", "inline", *options]
    first = CliRunner().invoke(app, original)
    assert first.exit_code == EXIT_INTERRUPTED, (first.stdout, first.stderr)
    hint = hint_of(first.stderr)
    assert hint[0] == "league" or hint[0].endswith("league")
    again = CliRunner().invoke(app, hint[1:])
    assert again.exit_code == EXIT_INTERRUPTED, (again.stdout, again.stderr)
    assert played.calls[0] == played.calls[1], "the hint plays the very same test"
    assert hint_of(again.stderr) == hint, "and says so again"
    globals_given, given = parsed(original)
    globals_hint, from_hint = parsed(hint[1:])
    assert globals_hint == globals_given
    assert {k: from_hint[k] for k in given} == given, "every option given is in the hint"


def test_an_interrupted_test_says_so_and_how_to_resume(tmp_path, monkeypatch):
    """Ctrl-C mid-test: the matches in flight are stored, the message says
    interrupted (not that the deals ran out), and the hint resumes it."""
    real = cli._play_league
    db = str(tmp_path / "s.db")

    def interrupted_after_a_few_batches(league: Any, store: Any, **options: Any) -> Any:
        decided, calls = options["stop_when"], [0]

        def stop_when() -> bool:
            calls[0] += 1
            if calls[0] == 6:
                os.kill(os.getpid(), signal.SIGINT)
            return decided()
        return real(league, store, **{**options, "stop_when": stop_when})

    monkeypatch.setattr(cli, "_play_league", interrupted_after_a_few_batches)
    args = ["target", "heuristic_half", "heuristic", "--bots", TEST_BOTS, "--elo0", "-1",
            "--elo1", "1", "--db", db, "--engine", "inline"]
    result = sprt(*args, code=EXIT_INTERRUPTED)
    assert "verdict: none yet: interrupted" in result.stdout
    assert "ran out" not in result.stdout + result.stderr
    assert 0 < deals_of(result.stdout) < 50
    assert hint_of(result.stderr)[1:] == ["sprt", "target", "heuristic_half", "heuristic",
                                          "--field", "heuristic_half", "--players", "2",
                                          "--elo0", "-1.0", "--elo1", "1.0", "--alpha", "0.05",
                                          "--beta", "0.05", "--max-deals", "5000", "--db", db,
                                          "--decision-ms", "1000", "--bots", TEST_BOTS,
                                          "--sandbox", "bwrap", "--engine", "inline"]


def test_a_broken_bot_stops_the_test_and_is_named(tmp_path):
    result = sprt("target", "random", "faulty_garbage", "--bots", TEST_BOTS, "--db",
                  str(tmp_path / "s.db"), "--engine", "inline", code=EXIT_BOT)
    assert "verdict: none yet: stopped before a verdict: bot faulty_garbage@" in result.stdout
    assert "faulted in 3 matches in a row" in result.stdout
    assert "`league check faulty_garbage`" in result.stdout
    assert "ran out" not in result.stdout and hint_of(result.stderr)


def test_harness_errors_stop_the_test_and_say_so(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "_play_league", Played(errors=2))
    result = sprt("target", "random", "heuristic", "--db", str(tmp_path / "s.db"), "--engine",
                  "inline", code=EXIT_HARNESS_ERROR)
    assert "none yet: stopped before a verdict: 2 matches ended in a harness error" in \
        result.stdout
    assert hint_of(result.stderr)


@pytest.mark.slow
def test_the_cap_decides_or_says_why_not(tmp_path):
    db = str(tmp_path / "s.db")
    common = ["target", "heuristic_half", "heuristic", "--bots", TEST_BOTS, "--db", db,
              "--engine", "inline", "--elo0", "-1", "--elo1", "1"]
    short = sprt(*common, "--max-deals", "3")
    assert "verdict: none: the cap (3 deals) came before a bound" in short.stdout
    assert "--max-deals 6" in short.stderr, "how to test on"
    longer = sprt(*common, "--max-deals", "150")
    assert "verdict: H1: heuristic is better than heuristic_half (by 1 Elo or more); decided " \
           "at the cap (150 deals) with no bound crossed" in longer.stdout
    assert deals_of(longer.stdout) == 150
