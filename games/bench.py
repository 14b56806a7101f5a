"""Engine speed: random play and re-deal + playout, per game.

    python -m games.bench                       # every game, 4 players
    python -m games.bench --games limit,target --seconds 2
    python -m games.bench --baseline DIR        # also the engines in DIR/games
    python -m games.bench --baseline-git HEAD   # also the engines of a commit

Two figures per game:

* ``random``: decisions/s of uniformly random play from the first decision to
  the end (``legal_actions`` + ``apply_unchecked``), new matches as needed;
* ``redeal``: re-deals + random playouts to the end per second, from states
  sampled along random matches (``redeal(actor, seed)`` then random play),
  what a determinized Monte Carlo search does per iteration.

With a baseline the same measurement runs for both engine sets, each in its
own interpreter (``PYTHONPATH`` puts the baseline's ``games`` first),
alternating game by game so both see the same machine load, and the table
shows the speed-up. Each figure is the best of ``--repeat`` measurements
(load from other processes only ever slows a run down); on a shared machine
single figures still move by 10-20% from run to run, so compare figures
taken in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # games is imported lazily at run time
    from games.base import Game

PLAYERS = 4


def _random_play(slug: str, players: int, seconds: float) -> float:
    from games import get_game

    cls = get_game(slug)
    picker = random.Random(1)
    decisions = 0
    seed = 0
    started = time.perf_counter()
    deadline = started + seconds
    while time.perf_counter() < deadline:
        game = cls.new(players, seed)
        seed += 1
        cap = game.INFO.max_decisions
        while not game.is_terminal() and game.decisions < cap:
            legal = game.legal_actions()
            game.apply_unchecked(legal[picker.randrange(len(legal))])
        decisions += game.decisions
    return decisions / (time.perf_counter() - started)


def _sample_states(slug: str, players: int, count: int) -> list[Game]:
    """States along seeded random matches (not timed)."""
    from games import get_game

    cls = get_game(slug)
    states: list[Game] = []
    picker = random.Random(7)
    seed = 100
    while len(states) < count:
        game = cls.new(players, seed)
        seed += 1
        cap = game.INFO.max_decisions
        trail = []
        while not game.is_terminal() and game.decisions < cap:
            trail.append(game.clone())
            legal = game.legal_actions()
            game.apply_unchecked(legal[picker.randrange(len(legal))])
        # a spread of points in the match, the end excluded
        for k in range(1, 5):
            states.append(trail[len(trail) * k // 5 - 1])
    return states[:count]


def _redeal_playout(slug: str, players: int, seconds: float) -> float:
    states = _sample_states(slug, players, 40)
    picker = random.Random(3)
    done = 0
    started = time.perf_counter()
    deadline = started + seconds
    i = 0
    while time.perf_counter() < deadline:
        state = states[i % len(states)]
        i += 1
        game = state.redeal(state.current_player(), i)
        cap = game.INFO.max_decisions
        while not game.is_terminal() and game.decisions < cap:
            legal = game.legal_actions()
            game.apply_unchecked(legal[picker.randrange(len(legal))])
        done += 1
    return done / (time.perf_counter() - started)


def measure(slug: str, players: int, seconds: float) -> dict:
    return {
        "game": slug,
        "players": players,
        "random": _random_play(slug, players, seconds),
        "redeal": _redeal_playout(slug, players, seconds),
    }


def players_for(slug: str, players: int) -> int:
    from games import get_game

    counts = get_game(slug).INFO.player_counts()
    return players if players in counts else counts[0]


def _in_subprocess(engines: Path | None, slug: str, players: int, seconds: float) -> dict:
    """Measure in a fresh interpreter; ``engines``: a folder holding ``games/``
    put first on the path (None: this checkout)."""
    env = dict(os.environ)
    here = Path(__file__).resolve().parent.parent
    root = engines if engines is not None else here
    env["PYTHONPATH"] = str(root)
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); "
        "sys.modules.pop('games', None); "
        "import importlib.util; "
        "spec = importlib.util.spec_from_file_location('_bench', sys.argv[2]); "
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); "
        "print(json.dumps(mod.measure(sys.argv[3], int(sys.argv[4]), float(sys.argv[5]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root), __file__, slug, str(players), str(seconds)],
        env=env, check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(figures: list[dict]) -> dict:
    """The best of repeated measurements (others' load only ever slows a run)."""
    best = dict(figures[0])
    for key in ("random", "redeal"):
        best[key] = max(f[key] for f in figures)
    return best


def _git_engines(ref: str) -> Path:
    """The ``games`` package of a commit, in a temporary folder."""
    here = Path(__file__).resolve().parent.parent
    root = Path(tempfile.mkdtemp(prefix="bench-engines-"))
    (root / "games").mkdir()
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{ref}:games"], cwd=here,
        check=True, capture_output=True, text=True,
    ).stdout.split()
    for name in names:
        if name.endswith(".py"):
            data = subprocess.run(["git", "show", f"{ref}:games/{name}"], cwd=here,
                                  check=True, capture_output=True).stdout
            (root / "games" / name).write_bytes(data)
    return root


def main() -> None:
    from games import implemented_games

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", help="comma-separated slugs (default: all)")
    parser.add_argument("--players", type=int, default=PLAYERS)
    parser.add_argument("--seconds", type=float, default=1.5, help="per figure")
    parser.add_argument("--baseline", type=Path, help="a folder holding a games/ package")
    parser.add_argument("--baseline-git", metavar="REF", help="the engines of a git commit")
    parser.add_argument("--repeat", type=int, default=3,
                        help="measurements per figure, alternating; the best is kept")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    slugs = args.games.split(",") if args.games else implemented_games()
    baseline = args.baseline
    if args.baseline_git:
        baseline = _git_engines(args.baseline_git)
    try:
        _compare(slugs, baseline, args)
    finally:
        if args.baseline_git and baseline is not None:
            shutil.rmtree(baseline, ignore_errors=True)  # the extracted commit's engines


def _compare(slugs: list[str], baseline: Path | None, args: argparse.Namespace) -> None:
    rows = []
    for slug in slugs:
        players = players_for(slug, args.players)
        if baseline is None:
            now = _best([measure(slug, players, args.seconds) for _ in range(args.repeat)])
            rows.append({"now": now})
            if not args.json:
                print(f"{slug:15} {players}p  random {now['random']:>9,.0f} dec/s   "
                      f"redeal+playout {now['redeal']:>7,.0f}/s", flush=True)
            continue
        befores, nows = [], []
        for _ in range(args.repeat):
            befores.append(_in_subprocess(baseline, slug, players, args.seconds))
            nows.append(_in_subprocess(None, slug, players, args.seconds))
        before, now = _best(befores), _best(nows)
        rows.append({"before": before, "now": now})
        if not args.json:
            print(
                f"{slug:15} {players}p  random {before['random']:>9,.0f} -> {now['random']:>9,.0f} "
                f"dec/s (x{now['random'] / before['random']:.2f})   redeal+playout "
                f"{before['redeal']:>7,.0f} -> {now['redeal']:>7,.0f}/s "
                f"(x{now['redeal'] / before['redeal']:.2f})",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
