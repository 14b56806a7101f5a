"""`league play GAME --human SEAT`: a person plays one seat from stdin, seeing
that seat's view only. Driven as a person would drive it, through a real
`league` process, bot processes in their sandbox, and answers written to
stdin (no terminal)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from bots.random_bot import RandomBot
from harness.cli import EXIT_USAGE, app
from harness.human import compact, view_lines
from harness.local import play

ROOT = Path(__file__).resolve().parent.parent
GENEROUS_S = 120  # turns a hang into a failure; a game takes about a second


def league_play(answers: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.cli", "play", *args], cwd=ROOT,
                          input=answers, capture_output=True, text=True, timeout=GENEROUS_S)


class WatchedRandom(RandomBot):
    """The random bot, named as ever (so the match is the same), keeping
    every hand its seat was shown."""

    hands: list[list[int]] = []

    def choose(self, obs: dict, legal: list, time_left_ms: int) -> int:
        WatchedRandom.hands.append(obs["hand"])
        return super().choose(obs, legal, time_left_ms)


def test_a_person_plays_a_game_to_its_end_seeing_only_their_own_hand():
    # two answers that are not moves, then always the first move
    answers = "x\n99\n" + "1\n" * 200
    done = league_play(answers, "target", "--human", "1", "random", "--seed", "3")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("'x' is not a move") == 1 and out.count("'99' is not a move") == 1
    assert "final standings" in out and "seat 1 human" in out

    # the same match in process: the person's answers as a function named
    # like the seat, the random seat watched
    def human(obs: dict, legal: list, info: dict) -> int:
        own_hands.append(obs["hand"])
        return 0

    own_hands: list[list[int]] = []
    WatchedRandom.hands = []
    same = play("target", [WatchedRandom, human], seed=3)
    assert f"seat 0 random score {same.scores[0]:g}" in out.replace("  ", " ")
    assert f"seat 1 human score {same.scores[1]:g}" in out.replace("  ", " ")
    shown = [line.split("hand", 1)[1].strip() for line in out.splitlines()
             if line.strip().startswith(("hand ", "* hand "))]
    assert shown[:len(own_hands)] == [compact(hand) for hand in own_hands]
    hidden = [hand for hand in WatchedRandom.hands if hand not in own_hands and len(hand) > 2]
    assert hidden, "the other seat held hands of its own"
    assert not [hand for hand in hidden if compact(hand) in out], "another seat's hand was shown"
    assert not re.search(r"^\[\d+\] |^  -- ", out, re.MULTILINE), "no harness log lines"


def test_q_and_end_of_input_quit_cleanly():
    for answers, how in (("q\n", "(q)"), ("", "(end of input)")):
        done = league_play(answers, "target", "--human", "0", "random", "--seed", "3")
        assert done.returncode == 0, done.stderr
        assert f"you quit {how}: the match is abandoned, nothing is recorded" in done.stdout
        assert "final standings" not in done.stdout and "Traceback" not in done.stderr


def test_options_that_would_show_the_other_seats_are_refused():
    runner = CliRunner()
    for extra in (["-v"], ["--trace"], ["--json"]):
        result = runner.invoke(app, ["play", "target", "--human", "0", "random", *extra])
        assert result.exit_code == EXIT_USAGE and "your seat's view only" in result.stderr
    result = runner.invoke(app, ["play", "target", "--human", "2", "random"])
    assert result.exit_code == EXIT_USAGE and "the seats are 0 to 1" in result.stderr


def test_a_view_marks_what_changed_since_the_last_one():
    first = {"hand": [3, 7], "trick": [], "scores": [0, 0]}
    second = {"hand": [7], "trick": [[0, 3]], "scores": [0, 0]}
    assert [line[:3] for line in view_lines(first)] == ["   "] * 3, "nothing to compare with"
    changed = [line.split()[1] for line in view_lines(second, first) if line.startswith(" *")]
    assert changed == ["hand", "trick"]
