"""Sequential test: is the candidate B better than the baseline A?

Paired duplicate deals. Each deal is played once with A and once with B, in
the same seat against the same field (the other seats as they were). A
pair's outcome compares B's result with A's on those cards: 1 if B finished
ahead of where A finished, 1/2 if at the same rank, 0 if behind (a
trinomial). The pairing takes the cards' luck out of each comparison, which
is why a pair says more than two unpaired matches. When every deal is
played in two seatings (two pairs), the mean of its two pairs, in quarters,
is one pentanomial outcome, as fastchess and OpenBench count game pairs;
that also takes out what the two pairs share.

The Elo here is the logistic Elo of the pair score: B is ``elo`` better
than A when its expected pair score is 1 / (1 + 10 ** (-elo / 400)), on the
same cards and seat (ties half). It is not the rating table's Elo, which
leaves ties out and compares every bot with every other.

The test is Van den Bergh's generalised SPRT, as in fastchess: the
log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0) is

    LLR = sum_i n_i log(p1_i / p0_i)

where n_i counts outcome i and p_k is the distribution over outcomes closest
to the observed one (maximum likelihood) whose mean is the score of elo_k.
The test stops for H1 when LLR >= log((1 - beta) / alpha) and for H0 when
LLR <= log(beta / (1 - alpha)); alpha is the chance of taking H1 when B is
elo0 better, beta the chance of taking H0 when B is elo1 better.

API for the scheduler and the ``league sprt`` command::

    test = Sprt(elo0=0, elo1=10, alpha=0.05, beta=0.05)  # pentanomial=True for pairs of pairs
    test.update(pair_outcome(rank_a, rank_b))             # after each finished pair
    test.verdict()        # "H1" (B is better), "H0" (it is not), None: play on
    test.llr(), test.bounds(), test.estimate()            # Elo, 95% interval, LOS
    pairs = paired_results(seat_rows, "A", "B")           # pairs from stored matches
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TRINOMIAL = np.array([0.0, 0.5, 1.0])
PENTANOMIAL = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
REGULARISE = 1e-3   # stands in for an outcome not seen yet, as fastchess does
Z95 = 1.959963984540054


def score_of_elo(elo: float | np.ndarray) -> float | np.ndarray:
    """Expected score of a player ``elo`` better (logistic Elo)."""
    return 1 / (1 + 10 ** (-np.asarray(elo, dtype=float) / 400))


def elo_of_score(score: float) -> float:
    """Logistic Elo of an expected score (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def pair_outcome(rank_a: int, rank_b: int) -> float:
    """B's pair outcome: 1 if it finished ahead of A's rank on the same deal
    and seat, 1/2 at the same rank, 0 behind (rank 1 is best)."""
    return 1.0 if rank_b < rank_a else 0.5 if rank_b == rank_a else 0.0


def closest_with_mean(freq: np.ndarray, values: np.ndarray, mean: float | np.ndarray,
                      iterations: int = 60) -> np.ndarray:
    """The distribution over ``values`` that maximises sum_i freq_i log p_i
    subject to sum_i p_i values_i = mean, batched over freq's leading axes:
    p_i = freq_i / (1 + lam (values_i - mean)), lam found by Newton's method
    kept inside the interval where every p_i is positive (by bisection
    when a Newton step leaves it)."""
    mean = np.asarray(mean, dtype=float)[..., None]
    d = values - mean                                    # (..., outcomes)
    # lam must keep 1 + lam d_i > 0: between -1 / max(d) and -1 / min(d)
    low = -1 / d.max(-1) + 1e-12
    high = -1 / d.min(-1) - 1e-12
    if len(values) == 3:
        lam = _three_outcome_root(freq, d, low, high)
        return freq / (1 + lam[..., None] * d)
    # start from the root of g's linearisation at 0: sum f d - lam sum f d^2
    lam = (freq * d).sum(-1) / (freq * d**2).sum(-1)
    lam = np.clip(lam, low + 0.1 * (0 - low), high - 0.1 * (high - 0))
    for _ in range(iterations):
        denominator = 1 + lam[..., None] * d
        g = (freq * d / denominator).sum(-1)             # decreasing in lam
        slope = -(freq * d**2 / denominator**2).sum(-1)
        low = np.where(g > 0, lam, low)
        high = np.where(g > 0, high, lam)
        step = lam - g / np.where(slope < 0, slope, -1.0)
        step = np.where((step >= low) & (step <= high), step, (low + high) / 2)
        done = np.all(np.abs(step - lam) <= 1e-13 * (1 + np.abs(lam)))
        lam = step
        if done:
            break
    return freq / (1 + lam[..., None] * d)


def _three_outcome_root(freq: np.ndarray, d: np.ndarray, low: np.ndarray,
                        high: np.ndarray) -> np.ndarray:
    """With three outcomes, sum_i f_i d_i / (1 + lam d_i) = 0 is the
    quadratic a lam^2 + b lam + c = 0 (a = d0 d1 d2, b = c sum(d) -
    sum(f d^2), c = sum(f d)); its root between low and high."""
    c = (freq * d).sum(-1)
    b = c * d.sum(-1) - (freq * d**2).sum(-1)
    a = np.broadcast_to(d.prod(-1), c.shape)
    q = -0.5 * (b + np.copysign(np.sqrt(np.maximum(b * b - 4 * a * c, 0)), b))
    with np.errstate(divide="ignore", invalid="ignore"):
        roots = np.stack([np.where(a != 0, q / a, np.inf), np.where(q != 0, c / q, 0.0)])
    inside = (roots > low) & (roots < high)
    return np.where(inside[1], roots[1], np.where(inside[0], roots[0], 0.0))


def llr(counts: np.ndarray, values: np.ndarray, elo0: float, elo1: float) -> np.ndarray:
    """The generalised log-likelihood ratio of H1 against H0 for outcome
    counts (..., outcomes), batched."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(-1, keepdims=True)
    regular = np.where(counts > 0, counts, REGULARISE)
    freq = regular / regular.sum(-1, keepdims=True)
    p0 = closest_with_mean(freq, values, float(score_of_elo(elo0)))
    p1 = closest_with_mean(freq, values, float(score_of_elo(elo1)))
    ratio = np.where(counts > 0, np.log(p1 / p0), 0.0)
    return np.where(total[..., 0] > 0, (counts * ratio).sum(-1), 0.0)


@dataclass
class EloEstimate:
    """B's Elo over A with its 95% interval and the likelihood of
    superiority (the probability that B is better)."""

    elo: float
    elo_low: float
    elo_high: float
    los: float
    pairs: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Sprt:
    """A running GSPRT of H1: B is ``elo1`` better than A, against H0: it is
    ``elo0`` better (logistic Elo of the pair score)."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    pentanomial: bool = False
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per outcome value

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError("elo0 must be below elo1")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("alpha and beta must lie between 0 and 1")
        if not len(self.counts):
            self.counts = np.zeros(len(self.values))
        elif len(self.counts) != len(self.values):
            raise ValueError(f"counts must have {len(self.values)} entries")
        self.counts = np.asarray(self.counts, dtype=float)

    @property
    def values(self) -> np.ndarray:
        return PENTANOMIAL if self.pentanomial else TRINOMIAL

    def update(self, outcomes: float | Iterable[float]) -> None:
        """Count pair outcomes: 0, 1/2 or 1 (pentanomial: 0, 1/4, ..., 1)."""
        for outcome in np.atleast_1d(np.asarray(outcomes, dtype=float)):
            matches = np.flatnonzero(np.isclose(self.values, outcome))
            if not len(matches):
                raise ValueError(f"outcome {outcome} is not one of {self.values.tolist()}")
            self.counts[matches[0]] += 1

    def llr(self) -> float:
        return float(llr(self.counts, self.values, self.elo0, self.elo1))

    def bounds(self) -> tuple[float, float]:
        """LLR at or below the first: H0; at or above the second: H1."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def verdict(self) -> str | None:
        """"H1" (B is better by elo1), "H0" (B is not better than elo0), or
        None while the test goes on."""
        low, high = self.bounds()
        value = self.llr()
        return "H1" if value >= high else "H0" if value <= low else None

    def estimate(self) -> EloEstimate:
        """B's Elo over A from the mean pair score, a 95% interval from its
        standard error (mapped through the logistic), and LOS."""
        pairs = int(self.counts.sum())
        if not pairs:
            return EloEstimate(0.0, -math.inf, math.inf, 0.5, 0)
        freq = self.counts / pairs
        score = float(freq @ self.values)
        error = math.sqrt(float(freq @ (self.values - score) ** 2) / pairs)
        los = 0.5 if error == 0 and score == 0.5 else \
            0.5 * math.erfc(-(score - 0.5) / (error * math.sqrt(2))) if error > 0 else float(score > 0.5)
        return EloEstimate(elo_of_score(score), elo_of_score(score - Z95 * error),
                           elo_of_score(score + Z95 * error), los, pairs)

    def summary(self) -> dict[str, Any]:
        low, high = self.bounds()
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "pentanomial": self.pentanomial, "counts": self.counts.tolist(),
                "llr": self.llr(), "lower_bound": low, "upper_bound": high,
                "verdict": self.verdict(), **self.estimate().as_dict()}


# ---- pairs from stored results ---------------------------------------------------
@dataclass(frozen=True)
class PairResult:
    """One deal and seating played with A and with B, and B's outcome."""

    league: Any
    deal: int
    seating: tuple[str, ...]   # bots by seat, "*" where A or B sat
    rank_a: int
    rank_b: int

    @property
    def outcome(self) -> float:
        return pair_outcome(self.rank_a, self.rank_b)


def paired_results(seat_rows: Iterable[dict[str, Any]], baseline: str,
                   candidate: str) -> list[PairResult]:
    """Pairs of matches on the same deal and seating where one has the
    baseline and the other the candidate in the same seat(s), from seat rows
    that carry the deal (and league). Bots are named as in the rows
    (name@version) or by name alone. Matches with both bots, or whose twin
    is not played yet, are left out. Sorted by league, deal and seating,
    the order in which to feed them to a test that is resumed."""
    matches: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in seat_rows:
        if row.get("deal") is None:
            raise ValueError("seat rows must carry the deal to pair matches")
        matches[row["match_id"]].append(row)
    halves: dict[tuple[Any, ...], dict[str, int]] = defaultdict(dict)
    for rows in matches.values():
        rows.sort(key=lambda r: r["seat"])
        bots = [_named(r["bot"], baseline, candidate) for r in rows]
        for name, other in ((baseline, candidate), (candidate, baseline)):
            if name in bots and other not in bots:
                seating = tuple("*" if b == name else b for b in bots)
                rank = min(r["rank"] for r, b in zip(rows, bots, strict=True) if b == name)
                halves[(rows[0].get("league"), rows[0]["deal"], seating)][name] = rank
    return sorted((PairResult(league, deal, seating, half[baseline], half[candidate])
                   for (league, deal, seating), half in halves.items() if len(half) == 2),
                  key=lambda p: (str(p.league), p.deal, p.seating))


def _named(bot: str, *names: str) -> str:
    """``bot`` as one of ``names`` when it is that bot (any version)."""
    for name in names:
        if bot == name or bot.split("@")[0] == name:
            return name
    return bot


def pentanomial_outcomes(pairs: Iterable[PairResult]) -> list[float]:
    """The mean outcome of the two pairs of each deal (0, 1/4, ..., 1), for
    schedules that play each deal in two seatings; deals with another number
    of pairs are left out."""
    by_deal: dict[tuple[Any, int], list[float]] = defaultdict(list)
    for pair in pairs:
        by_deal[(pair.league, pair.deal)].append(pair.outcome)
    return [sum(o) / 2 for _, o in sorted(by_deal.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))
            if len(o) == 2]
