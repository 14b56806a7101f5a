"""Sequential test: is the candidate B better than the baseline A, in the
rating table's Elo?

What is compared
----------------
Paired duplicate deals. Each deal is played with A in one seat (a team of
copies of A, in team games) and with B in the same seat, on the same cards,
against the same field in the other seats; then both again from the next
seat. Every such match gives one comparison of the tested seat with each
field seat (team): ahead (a win), behind (a loss) or level (a tie, which
says nothing, as in the table). A deal's tally is four counts over its two
seatings: B's wins and losses against the field, A's wins and losses.

The Elo is the table's (harness.stats.ratings): for any two players or teams,
P(ahead) / P(behind) = 10 ** (Elo difference / 400) when they do not tie,
a team's Elo being the sum of its members' (copies count twice). So with p_B
and p_A the chances that B and A finish ahead of a field seat they do not
tie with,

    Elo(B) - Elo(A) = 400 / m * (log10(p_B / (1 - p_B)) - log10(p_A / (1 - p_A)))

per member, m the team size (1 in individual games). This is what the table
would fit for B - A from these matches when the field is one bot (copies of
it): each bot's comparisons with that field. The field cancels: against a
field of any strength the difference is the same when the table's model
holds, and a field near A's strength tells most per deal (the default field
is A itself). With a field of several bots the test pools their comparisons.

The test
--------
The estimate after n deals is D = ln(W_B / L_B) - ln(W_A / L_A) (totals,
each plus 1/2) in natural log-odds, m * Elo / ELO_PER_UNIT, shown with a 95%
interval from its delta-method variance over deals, the unit that is
independent (the same cards tie a deal's four matches together, which is
what makes the pairing pay).

The log-likelihood ratio works on the score scale, where a lopsided
result (B nearly always ahead) is not blown up by the log-odds: with s_A
and s_B the shares of decisive comparisons won, d = s_B - s_A, and d_k =
logistic(logit(s_A) + t_k) - s_A what d would be were B t_k log-odds better
(t = elo in log-odds),

    LLR = (d1 - d0) (2 d - d0 - d1) / (2 V)

the generalised (GSPRT) log-likelihood ratio of a normal estimate with its
measured variance V, and near the hypotheses that of the log-odds. V is
the delta method's over deals, n g' C g (C the covariance of one deal's four
counts, g the gradient of d); for the first few deals it leans on the
variance the counts would have were every comparison independent, with the
weight of PRIOR_DEALS deals, as the ratings mix the model's and the
measured variance. The test looks after every deal, in deal order, and
stops at the first deal where LLR >= log((1 - beta) / alpha) (H1: B is
better) or LLR <= log(beta / (1 - alpha)) (H0: it is not better by elo1; B
is elo0 better or worse). Deals played after that (in flight when it
stopped) do not change the verdict, so a resumed or re-reported test says
the same.

The cap: a test that reaches ``max_deals`` deals without crossing a bound
gets a fixed-sample test's verdict there, at half the error rates
(``cap_verdict``): H1 if d rejects elo0, H0 if it rejects elo1, the LLR's
sign if it rejects both, and no verdict if neither (the cap came too soon
for the difference) or if a count is under MIN_CELL.

Defaults: elo0 0, elo1 20, alpha = beta = 0.05, a cap of 5,000 deals.
Simulated under the table's model (``simulate``; ``python -m harness.stats.sprt
--simulate --runs 10000 --seed 100 --elo 0 --elo 20``), two players, the
field A, no ties, no card luck: H1 taken 4.84% of the time when B is no
better and H0 5.22% when it is 20 better; median 1,299 and 1,284 deals, 90th
percentile 3,115 and 3,110, 95th 3,908 and 3,917; 98.2% and 98.1% end at a
bound before the cap, the rest with a verdict there. With 4,000 runs each:
median deals 840-852 with 3 players, 708-723 with 4, 328-329 for two teams
of two copies, 942-957 with card luck of sd 1 (log-odds, per seat and
deal), 1,857-1,925 with a field 200 Elo below A (3% no verdict), 1,814-1,882
when 30% of matches are a tie of all (2-3% no verdict); wrong verdicts
4.6-5.9% throughout. B 100 Elo better: median 187 deals; 400 better: 41.

API for ``league sprt``::

    test = Sprt(elo0=0, elo1=20, alpha=0.05, beta=0.05, team_size=1, max_deals=5000)
    test.update([DealTally(b_wins, b_losses, a_wins, a_losses), ...])   # in deal order
    test.verdict()        # "H1", "H0" or None (play on)
    test.stop()           # Stop(deals, verdict, reason "bounds" or "cap", llr, ...) or None
    test.llr(), test.bounds(), test.estimate()   # at the stop (or the last deal)
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np

from harness.stats.sprt_defaults import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_ELO0,
    DEFAULT_ELO1,
    DEFAULT_MAX_DEALS,
)

ELO_PER_UNIT = 400 / math.log(10)   # the ratings' scale: Elo per natural log-odds
PSEUDO = 0.5          # added to each of the four totals (no infinite log-odds)
PRIOR_DEALS = 5.0     # weight of the independent-comparison variance, in deals
MIN_CELL = 5          # a verdict at the cap needs this many of each count
Z95 = 1.959963984540054

class DealTally(NamedTuple):
    """One deal's comparisons with the field seats, both seatings: B's wins
    and losses (ties left out), and A's."""

    b_wins: int
    b_losses: int
    a_wins: int
    a_losses: int


# ---- the estimate and the LLR, batched ------------------------------------------
class Estimates(NamedTuple):
    """After n deals (batched): the log-odds difference D and its variance,
    for the Elo shown; and on the score scale, which the LLR uses, A's share
    of decisive comparisons won s_A, B's minus A's, and its variance."""

    log_odds: Any      # arrays, or floats for one test after one deal
    variance: Any
    score_a: Any
    difference: Any
    score_variance: Any


def _delta_variance(n: np.ndarray, gradient: np.ndarray, covariance: np.ndarray,
                    model: np.ndarray) -> np.ndarray:
    """The delta method's variance over deals, leaning on ``model`` (the
    variance were every comparison independent) for the first deals."""
    measured = n * np.einsum("...i,...ij,...j->...", gradient, covariance, gradient)
    return (n * np.maximum(measured, 0) + PRIOR_DEALS * model) / (n + PRIOR_DEALS)


def _estimate(n: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> Estimates:
    """The estimates after ``n`` deals, from the sums of the tallies ``s1``
    (..., 4) and of their outer products ``s2`` (..., 4, 4)."""
    n = np.asarray(n, dtype=float)
    mean = s1 / n[..., None]
    covariance = s2 / n[..., None, None] - mean[..., :, None] * mean[..., None, :]
    totals = s1 + PSEUDO
    logs = np.log(totals)
    log_odds = logs[..., 0] - logs[..., 1] - logs[..., 2] + logs[..., 3]
    variance = _delta_variance(n, np.array([1.0, -1.0, -1.0, 1.0]) / totals, covariance,
                               (1 / totals).sum(-1))
    decisive_b = totals[..., 0] + totals[..., 1]
    decisive_a = totals[..., 2] + totals[..., 3]
    score_b, score_a = totals[..., 0] / decisive_b, totals[..., 2] / decisive_a
    gradient = np.stack([totals[..., 1] / decisive_b**2, -totals[..., 0] / decisive_b**2,
                         -totals[..., 3] / decisive_a**2, totals[..., 2] / decisive_a**2], -1)
    model = score_b * (1 - score_b) / decisive_b + score_a * (1 - score_a) / decisive_a
    return Estimates(log_odds, variance, score_a, score_b - score_a,
                     _delta_variance(n, gradient, covariance, model))


def _hypothesis(score_a: np.ndarray, t: float) -> np.ndarray:
    """B's score minus A's when B is ``t`` log-odds better than A (whose
    score against the field is ``score_a``)."""
    logit = np.log(score_a / (1 - score_a))
    return 1 / (1 + np.exp(-(logit + t))) - score_a


def _llr(estimates: Estimates, t0: float, t1: float) -> np.ndarray:
    d0, d1 = _hypothesis(estimates.score_a, t0), _hypothesis(estimates.score_a, t1)
    return (d1 - d0) * (2 * estimates.difference - d0 - d1) / (2 * estimates.score_variance)


def _needed(estimates: Estimates, t0: float, t1: float, alpha: float, beta: float) -> Any:
    """The information (1 / variance, score scale) at which a fixed-sample
    test of t0 against t1 has error rates alpha and beta."""
    z = NormalDist().inv_cdf
    width = _hypothesis(estimates.score_a, t1) - _hypothesis(estimates.score_a, t0)
    return ((z(1 - alpha) + z(1 - beta)) / width) ** 2


def _paths(tallies: np.ndarray, start_n: np.ndarray | None = None,
           start_s1: np.ndarray | None = None, start_s2: np.ndarray | None = None,
           ) -> tuple[Estimates, np.ndarray, np.ndarray, np.ndarray]:
    """The estimates after each deal of ``tallies`` (..., deals, 4), going
    on from sums (deals, tallies, outer products) already counted; and the
    sums at the end."""
    tallies = np.asarray(tallies, dtype=float)
    batch, deals = tallies.shape[:-2], tallies.shape[-2]
    start_n = np.zeros(batch) if start_n is None else start_n
    start_s1 = np.zeros((*batch, 4)) if start_s1 is None else start_s1
    start_s2 = np.zeros((*batch, 4, 4)) if start_s2 is None else start_s2
    n = start_n[..., None] + np.arange(1, deals + 1)
    s1 = start_s1[..., None, :] + np.cumsum(tallies, axis=-2)
    outer = tallies[..., :, None] * tallies[..., None, :]
    s2 = start_s2[..., None, :, :] + np.cumsum(outer, axis=-3)
    return _estimate(n, s1, s2), n[..., -1], s1[..., -1, :], s2[..., -1, :, :]


def log_odds(elo: float, team_size: int = 1) -> float:
    """Table Elo per member as the log-odds of finishing ahead, for teams of
    ``team_size`` copies (the table's scale: a team's Elo is its members')."""
    return team_size * elo / ELO_PER_UNIT


def elo_of_log_odds(value: float, team_size: int = 1) -> float:
    return float(value * ELO_PER_UNIT / team_size)


def cap_verdict(estimates: Estimates, totals: Any, t: tuple[float, float], alpha: float,
                beta: float) -> Any:
    """The verdict of a test that reaches the cap without crossing a bound
    (batched: +1 H1, -1 H0, 0 none; or "H1", "H0", None for one test): a
    fixed-sample test's, at half the error rates (part of them is spent
    already). H1 when the estimate rejects elo0 (one-sided), H0 when it
    rejects elo1; when it rejects both (the information is then at least
    what a fixed-sample test needs), the LLR's sign; neither: no verdict.
    None either while a count (``totals``: B's wins and losses, A's) is
    under MIN_CELL: too few for the normal approximation (a field that A
    and B nearly always beat)."""
    z = NormalDist().inv_cdf
    d0, d1 = (_hypothesis(estimates.score_a, t_k) for t_k in t)
    error = np.sqrt(estimates.score_variance)
    rejects0 = estimates.difference - d0 >= z(1 - alpha / 2) * error
    rejects1 = d1 - estimates.difference >= z(1 - beta / 2) * error
    sign = np.where(2 * estimates.difference > d0 + d1, 1, -1)
    verdict = np.where(rejects0 & rejects1, sign, np.where(rejects0, 1, np.where(rejects1, -1, 0)))
    verdict = np.where(np.min(totals, axis=-1) >= MIN_CELL, verdict, 0)
    if np.ndim(verdict):
        return verdict
    return {1: "H1", -1: "H0", 0: None}[int(verdict)]


# ---- the running test ----------------------------------------------------------------
@dataclass
class EloEstimate:
    """B's table Elo over A (per member) with its 95% interval and the
    likelihood of superiority (the probability that B is better)."""

    elo: float
    elo_low: float
    elo_high: float
    los: float
    deals: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Stop:
    """Where and why the test stopped: ``deal`` deals in, at a bound or at
    the cap, with this LLR."""

    deals: int
    verdict: str | None   # "H1" or "H0"; None: the cap came too soon to decide
    reason: str           # "bounds" or "cap"
    llr: float
    information: float    # 1 / the estimate's variance (log-odds), at the stop
    needed: float         # what a fixed-sample test of elo0 against elo1 needs


@dataclass
class Sprt:
    """A running sequential test of H1: B is ``elo1`` better than A, against
    H0: it is ``elo0`` better (table Elo per member); truncated at
    ``max_deals`` (None: no cap)."""

    elo0: float = DEFAULT_ELO0
    elo1: float = DEFAULT_ELO1
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA
    team_size: int = 1
    max_deals: int | None = DEFAULT_MAX_DEALS
    tallies: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError("elo0 must be below elo1")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("alpha and beta must lie between 0 and 1")
        if self.team_size < 1:
            raise ValueError("team_size must be 1 or more")
        if self.max_deals is not None and self.max_deals < 1:
            raise ValueError("max_deals must be 1 or more")
        self.tallies = np.asarray(self.tallies, dtype=float).reshape(-1, 4)
        self._path: tuple[np.ndarray, Estimates] | None = None

    @property
    def deals(self) -> int:
        """Deals counted so far (played after a stop included)."""
        return len(self.tallies)

    def update(self, tallies: DealTally | Iterable[Sequence[int]]) -> None:
        """Add deals' tallies, in deal order."""
        rows = np.asarray([tallies] if isinstance(tallies, DealTally) else list(tallies),
                          dtype=float).reshape(-1, 4)
        if (rows < 0).any():
            raise ValueError("tallies count comparisons: none can be negative")
        self.tallies = np.concatenate([self.tallies, rows])
        self._path = None

    def bounds(self) -> tuple[float, float]:
        """LLR at or below the first: H0; at or above the second: H1."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def _t(self) -> tuple[float, float]:
        return log_odds(self.elo0, self.team_size), log_odds(self.elo1, self.team_size)

    def _llr_path(self) -> tuple[np.ndarray, Estimates]:
        """The LLR after each deal, and the estimates."""
        if self._path is None and not self.deals:
            self._path = (np.zeros(0), Estimates(*[np.zeros(0)] * 5))
        if self._path is None:
            estimates = Estimates(*(field[0] for field in _paths(self.tallies[None])[0]))
            self._path = (_llr(estimates, *self._t()), estimates)
        return self._path

    def _at(self, deal: int) -> Estimates:
        """The estimates after ``deal`` deals."""
        return Estimates(*(float(field[deal - 1]) for field in self._llr_path()[1]))

    def stop(self) -> Stop | None:
        """The first deal at which the LLR crossed a bound. Else, at the cap,
        a fixed-sample test's answer (see cap_verdict). None while the test
        goes on."""
        llr = self._llr_path()[0]
        low, high = self.bounds()
        cap = self.max_deals if self.max_deals is not None else len(llr)
        looked = llr[:cap]
        crossed = np.flatnonzero((looked >= high) | (looked <= low))
        if len(crossed):
            deal = int(crossed[0]) + 1
            verdict = "H1" if looked[deal - 1] >= high else "H0"
            reason = "bounds"
        elif self.max_deals is not None and len(llr) >= self.max_deals:
            deal = self.max_deals
            verdict = cap_verdict(self._at(deal), self.tallies[:deal].sum(0), self._t(),
                                  self.alpha, self.beta)
            reason = "cap"
        else:
            return None
        at = self._at(deal)
        needed = float(_needed(at, *self._t(), self.alpha, self.beta))
        return Stop(deal, verdict, reason, float(llr[deal - 1]), 1 / at.score_variance, needed)

    def verdict(self) -> str | None:
        """"H1" (B is better by elo1), "H0" (B is not better by elo1), or
        None while the test goes on."""
        stop = self.stop()
        return stop.verdict if stop else None

    def used(self) -> int:
        """Deals the test's answer rests on: up to its stop, else all."""
        stop = self.stop()
        return stop.deals if stop else self.deals

    def llr(self) -> float:
        """The LLR at the stop, or after the last deal."""
        used = self.used()
        return float(self._llr_path()[0][used - 1]) if used else 0.0

    def estimate(self, deals: int | None = None) -> EloEstimate:
        """B's table Elo over A from the deals up to the stop (or the first
        ``deals``): the estimate, a 95% interval from its standard error,
        and LOS."""
        used = self.used() if deals is None else min(deals, self.deals)
        if not used:
            return EloEstimate(0.0, -math.inf, math.inf, 0.5, 0)
        at = self._at(used)
        value, variance = at.log_odds, at.variance
        error = math.sqrt(variance)
        los = 0.5 * math.erfc(-value / (error * math.sqrt(2)))
        elo = (elo_of_log_odds(value, self.team_size),
               elo_of_log_odds(value - Z95 * error, self.team_size),
               elo_of_log_odds(value + Z95 * error, self.team_size))
        return EloEstimate(*elo, los, used)

    def counts(self) -> DealTally:
        """Total comparisons of the deals used: B's wins and losses, A's."""
        totals = self.tallies[:self.used()].sum(0)
        return DealTally(*(int(t) for t in totals))

    def summary(self) -> dict[str, Any]:
        low, high = self.bounds()
        stop = self.stop()
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "team_size": self.team_size, "max_deals": self.max_deals,
                "counts": list(self.counts()), "llr": self.llr(), "lower_bound": low,
                "upper_bound": high, "verdict": stop.verdict if stop else None,
                "stopped_by": stop.reason if stop else None, "deals_played": self.deals,
                **self.estimate().as_dict()}


# ---- simulation -------------------------------------------------------------------
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(61)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _ahead(x: float, spread: float) -> float:
    """P(ahead) of a side x log-odds better when card luck adds a normal
    shift of sd ``spread`` to the difference (a table of no luck: spread 0)."""
    return float(_WEIGHTS @ (1 / (1 + np.exp(-(x + spread * _NODES)))))


def _strength_for(target: float, field: float, spread: float) -> float:
    """B's conditional strength (log-odds, A at 0) whose table Elo (the
    marginal odds, luck averaged out) is ``target`` log-odds above A's."""
    def logit(p: float) -> float:
        return math.log(p / (1 - p))

    if not spread:
        return target
    goal = logit(_ahead(-field, spread)) + target
    low, high = field - 30.0, field + 30.0
    for _ in range(200):
        middle = (low + high) / 2
        if logit(_ahead(middle - field, spread)) < goal:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def simulated_tallies(rng: np.random.Generator, shape: tuple[int, ...], first_deal: int,
                      units: int, strengths: tuple[float, float, float], luck: float = 0.0,
                      draws: float = 0.0) -> np.ndarray:
    """Tallies (*shape, 4) of simulated deals under the table's model:
    Plackett-Luce finishing orders (a Gumbel draw added to each unit's
    strength), ``units`` seats or teams, strengths (A, B, field) in log-odds
    per unit. Card luck: each seat position of a deal gets a normal shift of
    sd ``luck``, the same in the A and B matches of the deal and in both
    seatings (B and A sit at positions deal and deal + 1). ``draws``: the
    chance that a match is a tie of all (no comparison counts)."""
    a, b, f = strengths
    deals = shape[-1]
    shift = rng.normal(0.0, luck, (*shape, units)) if luck else np.zeros((*shape, units))
    tally = np.zeros((*shape, 4))
    index = np.arange(first_deal, first_deal + deals)
    for turn in range(2):
        position = ((index + turn) % units)[:, None] == np.arange(units)     # (deals, units)
        for column, strength in ((0, b), (2, a)):
            utility = np.where(position, strength, f) + shift + rng.gumbel(size=(*shape, units))
            mine = np.where(position, utility, -np.inf).max(-1, keepdims=True)
            wins = ((utility < mine) & ~position).sum(-1)
            if draws:
                tied = rng.random(shape) < draws
                wins = np.where(tied, 0, wins)
                losses = np.where(tied, 0, units - 1 - wins)
            else:
                losses = units - 1 - wins
            tally[..., column] += wins
            tally[..., column + 1] += losses
    return tally


@dataclass
class Simulation:
    """Simulated tests: each run's verdict (+1 H1, -1 H0), deals and whether
    it was decided at the cap."""

    elo: float
    verdict: np.ndarray
    deals: np.ndarray
    capped: np.ndarray

    def share(self, verdict: str) -> float:
        return float(np.mean(self.verdict == (1 if verdict == "H1" else -1)))

    @property
    def decided_by_bounds(self) -> float:
        return float(np.mean(~self.capped))

    def line(self) -> str:
        deals = np.percentile(self.deals, [50, 90, 95])
        return (f"true Elo {self.elo:+6.1f}: H1 {self.share('H1'):6.2%}, H0 {self.share('H0'):6.2%}, "
                f"no verdict {np.mean(self.verdict == 0):5.2%}; deals median {deals[0]:5.0f}, "
                f"90% {deals[1]:5.0f}, 95% {deals[2]:5.0f}; ended at a bound before the cap "
                f"{self.decided_by_bounds:6.2%}")


def simulate(elo: float, runs: int = 1000, *, elo0: float = DEFAULT_ELO0,
             elo1: float = DEFAULT_ELO1, alpha: float = DEFAULT_ALPHA,
             beta: float = DEFAULT_BETA, max_deals: int | None = DEFAULT_MAX_DEALS,
             units: int = 2, team_size: int = 1, field_elo: float = 0.0, luck: float = 0.0,
             draws: float = 0.0, seed: int = 0, block: int = 250,
             limit: int = 100_000) -> Simulation:
    """Run ``runs`` tests of a B that is ``elo`` better than A (table Elo per
    member) with ``units`` seats (teams of ``team_size``), the field
    ``field_elo`` above A, looking after every deal as ``league sprt``
    does. Without a cap, runs stop at ``limit`` deals (counted undecided,
    as capped)."""
    rng = np.random.default_rng(seed)
    spread = luck * math.sqrt(2)
    field = log_odds(field_elo, team_size)
    strengths = (0.0, _strength_for(log_odds(elo, team_size), field, spread), field)
    t0, t1 = log_odds(elo0, team_size), log_odds(elo1, team_size)
    low, high = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    cap = max_deals if max_deals is not None else limit
    verdict = np.zeros(runs, dtype=int)
    length = np.full(runs, cap)
    capped = np.zeros(runs, dtype=bool)
    n = np.zeros(runs)
    s1, s2 = np.zeros((runs, 4)), np.zeros((runs, 4, 4))
    active = np.arange(runs)
    for start in range(0, cap, block):
        size = min(block, cap - start)
        tallies = simulated_tallies(rng, (len(active), size), start, units, strengths, luck, draws)
        estimates, n_end, s1_end, s2_end = _paths(tallies, n[active], s1[active], s2[active])
        value = _llr(estimates, t0, t1)
        crossed = (value >= high) | (value <= low)
        first = np.where(crossed.any(1), crossed.argmax(1), -1)
        stop = first >= 0
        at = first[stop]
        verdict[active[stop]] = np.where(value[stop, at] >= high, 1, -1)
        length[active[stop]] = start + at + 1
        if start + size >= cap:
            rest = ~stop
            capped[active[rest]] = True
            if max_deals is not None:
                last = Estimates(*(field[rest, -1] for field in estimates))
                verdict[active[rest]] = cap_verdict(last, s1_end[rest], (t0, t1), alpha, beta)
        n[active], s1[active], s2[active] = n_end, s1_end, s2_end
        active = active[~stop]
        if not len(active):
            break
    return Simulation(elo, verdict, length, capped)


def _main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m harness.stats.sprt",
        description="Simulate `league sprt` under the table's model: error rates and deals.")
    parser.add_argument("--simulate", action="store_true", help="run the simulation")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--elo0", type=float, default=DEFAULT_ELO0)
    parser.add_argument("--elo1", type=float, default=DEFAULT_ELO1)
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
    parser.add_argument("--beta", type=float, default=DEFAULT_BETA)
    parser.add_argument("--max-deals", type=int, default=DEFAULT_MAX_DEALS,
                        help="the cap (0: none)")
    parser.add_argument("--units", type=int, default=2, help="seats, or teams")
    parser.add_argument("--team-size", type=int, default=1)
    parser.add_argument("--field-elo", type=float, default=0.0, help="the field above A")
    parser.add_argument("--luck", type=float, default=0.0,
                        help="sd of a seat's card luck per deal, in log-odds")
    parser.add_argument("--draws", type=float, default=0.0, help="chance a match is all tied")
    parser.add_argument("--elo", type=float, action="append",
                        help="true Elo of B over A (repeatable; default elo0, the middle, elo1)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if not args.simulate:
        parser.print_help()
        return
    cap = args.max_deals or None
    print(f"elo0 {args.elo0:g}, elo1 {args.elo1:g}, alpha {args.alpha:g}, beta {args.beta:g}, "
          f"cap {cap} deals; {args.units} units of {args.team_size}, field {args.field_elo:+g}, "
          f"luck {args.luck:g}, draws {args.draws:g}; {args.runs} runs each")
    for index, elo in enumerate(args.elo or [args.elo0, (args.elo0 + args.elo1) / 2, args.elo1]):
        result = simulate(elo, args.runs, elo0=args.elo0, elo1=args.elo1, alpha=args.alpha,
                          beta=args.beta, max_deals=cap, units=args.units,
                          team_size=args.team_size, field_elo=args.field_elo, luck=args.luck,
                          draws=args.draws, seed=args.seed + index)
        print(result.line())


if __name__ == "__main__":
    _main()
