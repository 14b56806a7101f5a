"""Ratings from all results at once: Bradley-Terry on pairwise outcomes.

Each match is turned into pairwise outcomes between seats of different teams
(individual games: different seats) held by different bots: the better rank
wins, equal ranks are a draw (half a win each way). Copies of one bot at one
table teach nothing about it and are skipped; in team games each bot is
credited with its team's result. The strengths maximise

    sum_ij W_ij log sigmoid(theta_i - theta_j)  -  alpha/2 * |theta|^2

solved by Newton's method, then shown on the Elo scale (400/ln 10 per unit,
mean 1500). As in BayesElo, every pair of bots that met gets one virtual draw
(half a win each way), and a tiny L2 prior anchors the scale, so a bot that
never loses still gets a finite rating.

95% intervals: the wider of a bootstrap over whole matches (fixed seed) and
the normal approximation from the fit's curvature. The bootstrap alone
collapses to a point when one bot wins every comparison: every resample is
the same.

Results are sorted by match ID first, so the table never depends on the
order in which matches finished.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

ELO_PER_UNIT = 400 / math.log(10)
ELO_MEAN = 1500.0
PRIOR_ALPHA = 0.01
BOOTSTRAP_SAMPLES = 200
VIRTUAL_DRAWS = 1.0


@dataclass
class Comparisons:
    """Pairwise outcomes: for each, the match index, winner, loser, weight."""

    bots: list[str]
    match_ids: list[str]
    match_of: np.ndarray
    winner: np.ndarray
    loser: np.ndarray
    weight: np.ndarray

    def wins_matrix(self, match_weights: np.ndarray | None = None) -> np.ndarray:
        n = len(self.bots)
        weights = self.weight if match_weights is None else self.weight * match_weights[self.match_of]
        wins = np.zeros((n, n))
        np.add.at(wins, (self.winner, self.loser), weights)
        return wins


def comparisons(seat_rows: Iterable[dict[str, Any]]) -> Comparisons:
    """Pairwise outcomes from seat rows (match_id, seat, bot, team, rank)."""
    by_match: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in seat_rows:
        by_match[row["match_id"]].append(row)
    bots = sorted({row["bot"] for rows in by_match.values() for row in rows})
    index = {bot: i for i, bot in enumerate(bots)}
    match_ids = sorted(by_match)
    match_of, winner, loser, weight = [], [], [], []
    for m, match_id in enumerate(match_ids):
        # One entrant per (team, bot): partners that are copies count once.
        entrants = sorted({(r["team"], r["bot"], r["rank"]) for r in by_match[match_id]})
        for a in range(len(entrants)):
            for b in range(a + 1, len(entrants)):
                team_a, bot_a, rank_a = entrants[a]
                team_b, bot_b, rank_b = entrants[b]
                if team_a == team_b or bot_a == bot_b:
                    continue
                i, j = index[bot_a], index[bot_b]
                if rank_a == rank_b:
                    match_of += [m, m]
                    winner += [i, j]
                    loser += [j, i]
                    weight += [0.5, 0.5]
                else:
                    match_of.append(m)
                    winner.append(i if rank_a < rank_b else j)
                    loser.append(j if rank_a < rank_b else i)
                    weight.append(1.0)
    return Comparisons(bots, match_ids, np.array(match_of, dtype=np.int64),
                       np.array(winner, dtype=np.int64), np.array(loser, dtype=np.int64),
                       np.array(weight, dtype=float))


def _hessian(wins: np.ndarray, theta: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of the penalised log-likelihood at theta."""
    n = wins.shape[0]
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))  # P(i beats j)
    gradient = (wins * (1 - p)).sum(1) - (wins.T * p).sum(1) - alpha * theta
    curvature = (wins + wins.T) * p * (1 - p)
    return gradient, curvature - np.diag(curvature.sum(1)) - alpha * np.eye(n)


def fit_bradley_terry(wins: np.ndarray, alpha: float = PRIOR_ALPHA,
                      tol: float = 1e-10, max_iter: int = 100) -> np.ndarray:
    """MAP log-strengths for a wins matrix (wins[i, j] = i beat j)."""
    theta = np.zeros(wins.shape[0])
    for _ in range(max_iter):
        gradient, hessian = _hessian(wins, theta, alpha)
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.max(np.abs(step)) < tol:
            break
    return theta


def with_virtual_draws(wins: np.ndarray, draws: float = VIRTUAL_DRAWS) -> np.ndarray:
    """Add ``draws`` virtual draws between every pair of bots that met."""
    met = (wins + wins.T) > 0
    return wins + met * (draws / 2)


def elo_standard_errors(wins: np.ndarray, theta: np.ndarray, alpha: float = PRIOR_ALPHA) -> np.ndarray:
    """Standard errors of the Elo ratings (relative to their mean) from the
    curvature of the fit: the Laplace approximation."""
    n = len(theta)
    covariance = np.linalg.inv(-_hessian(wins, theta, alpha)[1])
    centre = np.eye(n) - 1 / n
    return ELO_PER_UNIT * np.sqrt(np.clip(np.diag(centre @ covariance @ centre.T), 0, None))


def to_elo(theta: np.ndarray) -> np.ndarray:
    return ELO_MEAN + ELO_PER_UNIT * (theta - theta.mean())


@dataclass
class RatingRow:
    bot: str
    elo: float
    elo_low: float
    elo_high: float
    games: int
    avg_score: float
    avg_rank: float
    faults: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def rate(seat_rows: list[dict[str, Any]], samples: int = BOOTSTRAP_SAMPLES,
         seed: int = 0) -> list[RatingRow]:
    """The rating table, best first."""
    seat_rows = sorted(seat_rows, key=lambda r: (r["match_id"], r["seat"]))
    data = comparisons(seat_rows)
    if not data.bots:
        return []
    wins = with_virtual_draws(data.wins_matrix())
    theta = fit_bradley_terry(wins)
    elo = to_elo(theta)
    rng = np.random.default_rng(seed)
    draws = np.empty((samples, len(data.bots)))
    for s in range(samples):
        counts = rng.multinomial(len(data.match_ids), np.full(len(data.match_ids),
                                                              1 / len(data.match_ids)))
        resampled = with_virtual_draws(data.wins_matrix(counts.astype(float)))
        draws[s] = to_elo(fit_bradley_terry(resampled))
    low, high = np.percentile(draws, [2.5, 97.5], axis=0)
    spread = 1.96 * elo_standard_errors(wins, theta)
    low, high = np.minimum(low, elo - spread), np.maximum(high, elo + spread)
    stats = _seat_stats(seat_rows)
    rows = [RatingRow(bot, float(elo[i]), float(low[i]), float(high[i]), *stats[bot])
            for i, bot in enumerate(data.bots)]
    return sorted(rows, key=lambda r: (-r.elo, r.bot))


def _seat_stats(seat_rows: list[dict[str, Any]]) -> dict[str, tuple[int, float, float, int]]:
    """Games, average score, average rank and faults per bot, counting one
    entry per (match, team, bot): partners that are copies play one game,
    which is faulted if either copy faulted."""
    units: dict[tuple[str, int, str], list[Any]] = {}
    for row in seat_rows:
        unit = units.setdefault((row["match_id"], row["team"], row["bot"]),
                                [row["score"], row["rank"], False])
        unit[2] = unit[2] or bool(row["fault_kind"])
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0])
    for (_, _, bot), (score, rank, faulted) in units.items():
        entry = totals[bot]
        entry[0] += 1
        entry[1] += score
        entry[2] += rank
        entry[3] += int(faulted)
    return {bot: (int(g), s / g, r / g, int(f)) for bot, (g, s, r, f) in totals.items()}


def head_to_head(seat_rows: list[dict[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Score rate of row bot against column bot (wins + draws/2) and counts."""
    data = comparisons(seat_rows)  # groups and sorts by match itself
    wins = data.wins_matrix()
    games = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_matrix = np.where(games > 0, wins / games, np.nan)
    return data.bots, rate_matrix, games
