"""Refit the search's fitted chances of finishing ahead from heuristic self-play.

    python -m bots.search.lab.fitting tile_hunt [--players 4] [--matches 20000]
                                                [--first-seed N] [--workers 2]
    python -m bots.search.lab.fitting target

Two of the search's evaluations are fitted, not hand-set: tile_hunt's
(``bots.search.games.tile_hunt.evaluate``, the values of a turn's ends for
the tuned default move) and target's (``bots.search.games.target.evaluate``,
the score of a playout cut at a round start). Both are one model: each seat gets a
strength, linear in its features, with one weight row per stage of the
match, and the chance that seat ``a`` finishes ahead of seat ``b`` is
``logistic(s[a] - s[b])``. This module makes the data and fits it, so the
weights in those modules can be checked and refitted with one command.

Data: matches of heuristic self-play (the search's playout policy at every
seat, ``GameConfig.rollout``), one per seed from ``--first-seed``. At each
snapshot (tile_hunt: every round's start but the first; target: every round
start, after the reveal) every pair of seats gives one row: the difference
of their features, and 1 / 0.5 / 0 as the first finished ahead of / tied
with / behind the second.

Fit: per stage, pairwise logistic regression without an intercept (the
features are differences), by Newton's method, with an L2 penalty of 1e-3:
on the mean log-loss for tile_hunt, on the summed log-loss for target
(which is how each was first fitted; target's one-hot features leave
directions the data hardly see, and there the penalty decides the weights).
The matches whose index (seed - first seed) is a multiple of 5 are held
out; the printout gives each stage's held-out log-loss for the refit and
for the weights in the repo, and the rows in the repo's format.

How long a run takes and what it reproduces: docs/search.md.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from bots.local_match import play_match
from bots.search.games.target import evaluate as target_evaluate
from bots.search.games.target.rollout import policy as target_policy
from bots.search.games.tile_hunt import evaluate as tile_hunt_evaluate
from bots.search.games.tile_hunt.dice import policy as tile_hunt_policy
from games import get_game
from games.tile_hunt import scores_of

L2 = 1e-3
HELD_OUT_EVERY = 5

# a snapshot: (stage, features per seat)
Snapshot = tuple[int, list[list[float]]]


@dataclass(frozen=True)
class Match:
    seed: int
    ranks: list[int]             # per seat, 1 = first; equal ranks tie
    snapshots: list[Snapshot]


# ---- the data ----------------------------------------------------------------------
def self_play(slug: str, players: int, seed: int, policy: Callable[..., int],
              snapshot: Callable[[Any], Snapshot | None]) -> Match:
    """One match with ``policy`` at every seat; ``snapshot`` is taken at
    each round's start (``None``: not this one)."""
    game: Any = get_game(slug).new(players, seed)  # snapshots read the engine's own fields
    snapshots: list[Snapshot] = []
    seen = -1

    def mover(state: Any, legal: list, rng: random.Random) -> int:
        # asked at every decision (forced), so a snapshot is taken before
        # the first decision of each round, whatever it offers
        nonlocal seen
        if state.round != seen:
            seen = state.round
            taken = snapshot(state)
            if taken is not None:
                snapshots.append(taken)
        return policy(state, state.current_player(), legal, rng) if len(legal) > 1 else 0

    rng = random.Random(seed)
    play_match(game, [mover] * players, [rng] * players, view="state", checked=False,
               capped=False)
    return Match(seed, list(game.standings()), snapshots)


def tile_hunt_match(players: int, seed: int) -> Match:
    """A snapshot at each round's start but the first, staged by rounds
    still to play (``total_rounds - round``)."""
    def snapshot(game: Any) -> Snapshot | None:
        if game.round == 0:
            return None
        chips = list(game.chips)
        return (game.total_rounds - game.round,
                tile_hunt_evaluate.features(game.owner, chips, scores_of(game.owner, chips),
                                            game.order))

    return self_play("tile_hunt", players, seed, tile_hunt_policy, snapshot)


def target_match(players: int, seed: int) -> Match:
    """A snapshot at each round's start, after the reveal, staged by the
    most targets anyone holds (0-4)."""
    def snapshot(game: Any) -> Snapshot:
        target = target_evaluate.next_target(game)
        return target_evaluate.stage(game), [
            [float(f) for f in target_evaluate.features(game, seat, target)]
            for seat in range(players)]

    return self_play("target", players, seed, target_policy, snapshot)


@dataclass(frozen=True)
class Spec:
    play: Callable[[int, int], Match]
    first_seed: int
    l2_on_sum: bool  # the penalty is on the summed log-loss, not the mean


GAMES = {
    "target": Spec(target_match, 700_000, l2_on_sum=True),
    "tile_hunt": Spec(tile_hunt_match, 800_000, l2_on_sum=False),
}


def pair_rows(match: Match) -> Iterator[tuple[int, list[float], float]]:
    """(stage, feature difference, outcome) for every pair of seats at every
    snapshot."""
    ranks = match.ranks
    for stage, features in match.snapshots:
        for a in range(len(ranks)):
            for b in range(a + 1, len(ranks)):
                outcome = 1.0 if ranks[a] < ranks[b] else 0.5 if ranks[a] == ranks[b] else 0.0
                yield stage, [fa - fb for fa, fb in zip(features[a], features[b])], outcome


# ---- the fit -----------------------------------------------------------------------
def fit_pairwise(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Weights minimising the mean log-loss of ``logistic(x @ w)`` against
    ``y`` (in [0, 1]) plus ``l2 / 2 |w|^2``: Newton's method."""
    weights = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ weights)))
        gradient = x.T @ (p - y) / len(x) + l2 * weights
        hessian = (x.T * (p * (1 - p))) @ x / len(x) + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < 1e-12:
            break
    return weights


def log_loss(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> float:
    z = x @ weights
    # log(1 + e^-z) and log(1 + e^z), without overflow
    return float(np.mean(y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)))


@dataclass
class StageFit:
    stage: int
    train_rows: int
    weights: np.ndarray
    held_out_loss: float
    repo_loss: float | None


def fit_stages(matches: list[Match], first_seed: int,
               repo: dict[int, tuple[float, ...]] | None = None,
               l2_on_sum: bool = False) -> list[StageFit]:
    """One fit per stage, on the matches not held out; the held-out log-loss
    of the refit and of the repo's weights for that stage, where given."""
    rows: dict[int, dict[bool, tuple[list, list]]] = {}
    for match in matches:
        held_out = (match.seed - first_seed) % HELD_OUT_EVERY == 0
        for stage, difference, outcome in pair_rows(match):
            xs, ys = rows.setdefault(stage, {True: ([], []), False: ([], [])})[held_out]
            xs.append(difference)
            ys.append(outcome)
    fits = []
    for stage in sorted(rows):
        (train_x, train_y), (test_x, test_y) = rows[stage][False], rows[stage][True]
        if not train_x or not test_x:
            continue
        weights = fit_pairwise(np.array(train_x), np.array(train_y),
                               L2 / len(train_x) if l2_on_sum else L2)
        x, y = np.array(test_x), np.array(test_y)
        repo_loss = log_loss(x, y, np.array(repo[stage])) if repo and stage in repo else None
        fits.append(StageFit(stage, len(train_x), weights, log_loss(x, y, weights), repo_loss))
    return fits


# ---- the command -------------------------------------------------------------------
def repo_weights(game: str, players: int) -> dict[int, tuple[float, ...]]:
    """The weights the repo plays with, by stage (none for a player count
    it has no fit for)."""
    if game == "target":
        return dict(enumerate(target_evaluate.WEIGHTS)) if players == 4 else {}
    return dict(enumerate(tile_hunt_evaluate.WEIGHTS.get(players, ()), 1))


def _play(args: tuple[str, int, int]) -> Match:
    game, players, seed = args
    return GAMES[game].play(players, seed)


def play_matches(game: str, players: int, seeds: range, workers: int) -> list[Match]:
    tasks = [(game, players, seed) for seed in seeds]
    if workers <= 1:
        return [_play(task) for task in tasks]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return pool.map(_play, tasks, chunksize=64)


def report(fits: list[StageFit]) -> str:
    lines = ["stage  train pairs  held-out log-loss: refit  repo   weights (the repo's format)"]
    for fit in fits:
        repo = f"{fit.repo_loss:.4f}" if fit.repo_loss is not None else "   -  "
        row = ", ".join(f"{w:.3f}" for w in fit.weights)
        lines.append(f"{fit.stage:5d}  {fit.train_rows:11,d}  {fit.held_out_loss:27.4f}  {repo}"
                     f"   ({row}),")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("game", choices=sorted(GAMES))
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--matches", type=int, default=20_000)
    parser.add_argument("--first-seed", type=int, help="default: the seeds of the fit in the repo")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    spec = GAMES[args.game]
    first = spec.first_seed if args.first_seed is None else args.first_seed
    seeds = range(first, first + args.matches)
    matches = play_matches(args.game, args.players, seeds, args.workers)
    fits = fit_stages(matches, first, repo_weights(args.game, args.players), spec.l2_on_sum)
    print(f"{args.game}, {args.players} players, {args.matches:,} matches of heuristic "
          f"self-play (seeds {seeds.start:,}-{seeds.stop - 1:,}); every "
          f"{HELD_OUT_EVERY}th held out")
    print(report(fits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
