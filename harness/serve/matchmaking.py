"""Matchmaking for a live ladder: which bots play the next duplicate group.

A duplicate group is one deal played by one line-up in all its balanced
seatings (``harness.league.balanced_orders``): the caller plays the seatings,
so the deal's seat luck cancels within the group, as in a league. This module
only picks line-ups. It is pure: no server, no store, no clock. The caller
passes the entrants (active versions only: a retired or paused version is
simply left out), their standings from the last rating fit, how often each
pair has met, and a ``random.Random``; the same inputs and the same random
state give the same line-up.

The method
----------
Every rule aims at one thing: the ladder's 95% intervals (the fit of
``harness.stats.ratings``, refitted every so often) should shrink as fast as
possible, everywhere, without starving anyone.

1. **Placement.** An entrant with fewer than ``placement`` groups (played
   plus in flight), or with no rating and nothing in flight, is seeded
   first, at most ``placement_in_flight`` groups at a time so that each
   result can move the next. It plays the boss
   nearest its current estimate and the rated entrants nearest it: the
   field median (or ``start_elo``, say its parent's rating) before it has a
   rating, then the fit's estimate, which a won group moves up and a lost
   one down, so placement homes in on its level like a bisection.
2. **Whole tables** (given the fit's covariance). Otherwise the table is
   chosen whole: the allowed table whose one group most lowers the sum over
   entrants of their centred variance to the fourth (half-width to
   ``focus`` = 8, so the widest intervals count most; the max alone is too
   greedy) while the half-width is under ``saturation_half_width`` (100
   Elo, the width a ladder aims at), and of its logarithm past it (joined
   with the same slope). Past that width, halving a variance is worth the
   same however wide it was: a bot whose games say little, far below or
   above the field (one that always passes loses every game, so its
   interval barely narrows), would otherwise stay the widest and take
   four tables in five (measured, tests/test_matchmaking.py), starving
   everyone else of games. A group's effect is the Laplace
   update of the fit's covariance by the information of its pairs
   (``comparisons`` x p(1 - p) each); the line-ups in flight since that fit
   (``in_flight``) are applied first, so a batch scheduled on one fit
   spreads out instead of repeating the best table. The covariance planned
   on is a blend, ``fit_weight`` (1/2) of the fit's and the rest of the
   one the pairs met so far (``pair_counts``) would give at the current
   estimates, scaled to the fit's median: the fit's alone also carries the
   noise of its measured variance, and a planner that plays the widest
   intervals then leaves alone the bots whose width came out narrow by
   chance, which lowers coverage (85-88% against uniform tables' 92%);
   the meetings alone do not see the extremes' wider intervals and are
   slower (docs/matchmaking.md has both). Every table is scored
   when there are at most ``beam`` x entrants of them, else a beam search
   keeps the ``beam`` best partial tables seat by seat. Scoring the whole
   table lets an extreme bot, whose centred interval also carries the
   uncertainty of the chain linking it to the mean, meet the middle of the
   field when that helps more than a neighbour. A share
   ``starvation_share`` of tables must hold the least recently played
   entrant, so nobody waits forever.
3. **Seed and opponents** (no covariance: the rule before whole tables).
   The seed is drawn with weight ``half_width**4 / (1 + in_flight)``
   (``seed_power``), or is the least recently played entrant for a share
   ``starvation_share``. Each further seat is drawn with weight equal to the
   expected reduction of the variance of its rating differences with those
   already seated, after one group: for a pair with difference variance v
   and information I = comparisons x p(1 - p), v goes to v / (1 + v I), a
   reduction of v^2 I / (1 + v I), raised to ``opponent_power`` and times
   the candidate's half-width to ``own_power``.
4. **Constraints.** At most one entrant of each owner per table (bosses,
   the house's bots, are exempt), and a pair that has met ``pair_cap``
   groups (in flight included) is left out while any other choice fills the
   seat; when none does, the least-met pair is taken, so a ladder never
   stops.

Where it comes from, and how it differs
---------------------------------------
* TrueSkill (Herbrich, Minka and Graepel, NIPS 2007) pairs players by its
  match quality, the draw probability sqrt(2b^2 / c^2) exp(-d^2 / (2 c^2))
  with c^2 = 2 b^2 + s1^2 + s2^2. That favours close, fair games but falls
  as the uncertainty s grows: it is built for players' enjoyment. Our
  weight grows with the uncertainty, because the ladder's aim is to measure.
* Halite (II and III) seeds a game with the bot that has played least or
  waited longest and draws opponents from a random window of nearest mu,
  one bot per user. We keep the per-owner rule and the waiting share, but
  seed by interval width, which our fit gives calibrated (Halite left
  sigma-based seeding because TrueSkill's sigma could grow; our widths
  never grow as results are added).
* Choosing the next experiment to shrink the worst posterior variance is
  sequential optimal design (A- and minimax-optimal designs, as in Fedorov's
  *Theory of Optimal Experiments*, 1972), here over tables, on the
  covariance the ladder's own fit reports.
* Kaggle Simulations play "episodes between agents of similar ratings", more
  for new agents. Placement plays that part here, against bosses first.
Ratings come from the batch fit, not an online update, so the order in which
these tables are played does not change anyone's rating.

docs/matchmaking.md has the simulation (``python -m harness.bench.matchmaking``)
that compares this with uniform random tables.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

ELO_PER_UNIT = 400 / math.log(10)
Z95 = 1.959964  # half-width / standard error (the fit's t is near z after a few deals)
PairCounts = Mapping[tuple[str, str], int]


@dataclass(frozen=True)
class Entrant:
    """One active bot version. ``groups``: duplicate groups it has played;
    ``in_flight``: groups scheduled and not yet reported; ``last_played``:
    when its last group was scheduled, on any clock that only grows (a group
    counter, a timestamp); ``start_elo``: where placement starts before it
    has a rating of its own (its parent's, say), else the field median."""

    key: str
    owner: str
    boss: bool = False
    groups: int = 0
    in_flight: int = 0
    last_played: float = 0.0
    start_elo: float | None = None


@dataclass(frozen=True)
class Standing:
    """An entrant's rating from the last fit: Elo and the half-width of its
    95% interval. A new entrant has none (``None`` in the mapping, or absent)."""

    elo: float
    half_width: float


@dataclass(frozen=True)
class Covariance:
    """The fit's covariance of the Elo (``RatingFit.covariance``, Elo^2),
    its rows and columns in the order of ``keys``."""

    keys: tuple[str, ...]
    matrix: np.ndarray

    @classmethod
    def from_fit(cls, fit: Any) -> Covariance:
        return cls(tuple(fit.bots), np.asarray(fit.covariance))


def standings_from_fit(fit: Any) -> dict[str, Standing]:
    """Standings from a ``harness.stats.ratings.RatingFit`` (its table rows)."""
    return {row.bot: Standing(row.elo, (row.elo_high - row.elo_low) / 2) for row in fit.rows}


def pair_key(first: str, second: str) -> tuple[str, str]:
    """The key of a pair in ``pair_counts``: the two keys, sorted."""
    return (first, second) if first <= second else (second, first)


def win_probability(elo_difference: float) -> float:
    """The chance of finishing ahead, for a difference in Elo (the fit's scale)."""
    return 1 / (1 + 10 ** (-elo_difference / 400))


@dataclass(frozen=True)
class _Rated:
    """An entrant with the rating the scheduler reasons with: the fit's, or
    for a new entrant its start and the widest interval in the field."""

    entrant: Entrant
    elo: float
    half_width: float
    rated: bool

    @property
    def key(self) -> str:
        return self.entrant.key

    def variance(self) -> float:
        """Variance of its rating, in the fit's natural units squared."""
        return (self.half_width / Z95 / ELO_PER_UNIT) ** 2


@dataclass(frozen=True)
class Matchmaker:
    """Picks line-ups for a ladder (the method is the module's docstring).

    ``comparisons``: how many times a pair finishes one against the other in
    a group (the seatings of one deal: 6 at three seats); it scales the
    information of a group."""

    placement: int = 1
    placement_in_flight: int = 2
    boss_groups: int = 1
    pair_cap: int = 40
    starvation_share: float = 0.05
    one_per_owner: bool = True
    comparisons: int = 6
    seed_power: float = 4.0
    opponent_power: float = 2.0
    own_power: float = 4.0
    whole_tables: bool = True
    focus: float = 8.0
    beam: int = 64
    fit_weight: float = 0.5
    saturation_half_width: float | None = 100.0

    def next_lineup(self, entrants: Sequence[Entrant], standings: Mapping[str, Standing | None],
                    players: int, rng: random.Random,
                    pair_counts: PairCounts | None = None,
                    covariance: Covariance | None = None,
                    in_flight: Sequence[Sequence[str]] = ()) -> tuple[str, ...]:
        """The keys of the next group's line-up, seed first, or ``()`` when no
        table of ``players`` can be made (too few entrants or owners).
        ``covariance``: the fit's; with it (and ``whole_tables``) the table
        is chosen whole, to shrink the widest intervals most (else seed and
        opponents are drawn one by one). ``in_flight``: the line-ups
        scheduled since that fit and not yet reported, counted as results on
        the way."""
        counts: PairCounts = pair_counts or {}
        field = _rate(sorted(entrants, key=lambda e: e.key), standings)
        design = _Design.of(covariance, field) if covariance is not None else None
        for newcomer in self._placement_order(field):
            table = self._placement_table(newcomer, field, players, rng, counts, design)
            if table:
                return table
        if covariance is not None and self.whole_tables:
            planner = _TablePlanner.of(covariance, field, in_flight, self.comparisons)
            if self.fit_weight < 1:
                planner = _TablePlanner.from_counts(field, counts, self.comparisons, planner,
                                                    self.fit_weight)
            if self.saturation_half_width is not None:
                planner.saturation = (self.saturation_half_width / Z95 / ELO_PER_UNIT) ** 2
            return self._best_table(planner, field, players, rng, counts)
        seeds = list(field)
        while len(seeds) >= 1:
            seed = self._seed(seeds, rng)
            table = self._fill([seed], field, players, rng, counts, design)
            if table:
                return table
            seeds.remove(seed)
        return ()

    # ---- placement ---------------------------------------------------------------
    def _placement_order(self, field: list[_Rated]) -> list[_Rated]:
        """Entrants still in placement that may start another group, fewest first."""
        waiting = [r for r in field
                   if (r.entrant.groups + r.entrant.in_flight < self.placement
                       or not r.rated and r.entrant.in_flight == 0)
                   and r.entrant.in_flight < self.placement_in_flight]
        return sorted(waiting, key=lambda r: (r.entrant.groups + r.entrant.in_flight, r.key))

    def _placement_table(self, newcomer: _Rated, field: list[_Rated], players: int,
                         rng: random.Random, counts: PairCounts,
                         design: _Design | None) -> tuple[str, ...]:
        """The newcomer, the boss nearest its estimate, then the rated entrants
        nearest it (ties broken at random)."""
        table = [newcomer]
        others = [r for r in field if r is not newcomer]
        jitter = {r.key: rng.random() for r in others}
        # the unrated sort after the rated: they would tell the newcomer little
        def distance(r: _Rated) -> tuple[bool, float, float]:
            return (not r.rated, abs(r.elo - newcomer.elo), jitter[r.key])
        # the nearest boss, while the newcomer has met it less than a third
        # of placement: bosses pin the scale, the field near it says the most
        bosses = [r for r in sorted(others, key=distance) if r.entrant.boss][:1]
        if bosses and counts.get(pair_key(newcomer.key, bosses[0].key), 0) >= self.boss_groups:
            bosses = []
        rest = [r for r in sorted(others, key=distance) if not r.entrant.boss]
        for candidate in bosses + rest + [r for r in others if r.entrant.boss]:
            if len(table) == players:
                break
            if candidate not in table and self._allowed(candidate, table, counts):
                table.append(candidate)
        if len(table) < players:
            return self._fill(table, field, players, rng, counts, design)
        return tuple(r.key for r in table)

    # ---- after placement ----------------------------------------------------------
    def _best_table(self, planner: _TablePlanner, field: list[_Rated], players: int,
                    rng: random.Random, counts: PairCounts) -> tuple[str, ...]:
        """The allowed table whose group most shrinks the widest intervals
        (``_TablePlanner.gain``); a share ``starvation_share`` of tables must
        hold the least recently played entrant. When every table has a pair
        at ``pair_cap``, the seed-and-fill rule (least-met pair) takes over."""
        must = None
        if rng.random() < self.starvation_share:
            must = min(field, key=lambda r: (r.entrant.last_played, r.key))
        tables = self._candidate_tables(planner, field, players, counts, must)
        if not tables:
            seeds = sorted(field, key=lambda r: -r.half_width)
            for seed in seeds:
                table = self._fill([seed], field, players, rng, counts, None)
                if table:
                    return table
            return ()
        gains = planner.gain(np.array(tables), self.focus)
        jitter = np.array([rng.random() for _ in tables])
        best = tables[int(np.argmax(gains * (1 + 1e-9 * jitter)))]
        ordered = sorted(best, key=lambda i: -planner.spread[i])
        return tuple(field[i].key for i in ordered)

    def _candidate_tables(self, planner: _TablePlanner, field: list[_Rated], players: int,
                          counts: PairCounts, must: _Rated | None) -> list[tuple[int, ...]]:
        """Allowed tables (indexes into ``field``, ascending): every one when
        there are few, else a beam search seat by seat keeping the ``beam``
        best partial tables."""
        def allowed(table: tuple[int, ...]) -> bool:
            members = [field[i] for i in table]
            return all(self._allowed(members[k], members[:k], counts) for k in range(1, len(members)))

        everyone = range(len(field))
        start = [field.index(must)] if must is not None else None
        if math.comb(len(field), players) <= self.beam * len(field):
            tables = [t for t in itertools.combinations(everyone, players)
                      if (start is None or start[0] in t) and allowed(t)]
            return tables
        partial = [tuple(sorted(pair)) for pair in itertools.combinations(everyone, 2)
                   if start is None or start[0] in pair]
        partial = [t for t in partial if allowed(t)]
        while partial and len(partial[0]) < players:
            gains = planner.gain(np.array(partial), self.focus)
            kept = [partial[i] for i in np.argsort(-gains, kind="stable")[:self.beam]]
            grown = {tuple(sorted(t + (i,))) for t in kept for i in everyone if i not in t}
            partial = sorted(t for t in grown if allowed(t))
        return partial

    def _seed(self, candidates: list[_Rated], rng: random.Random) -> _Rated:
        if rng.random() < self.starvation_share:
            return min(candidates, key=lambda r: (r.entrant.last_played, r.key))
        weights = [r.half_width ** self.seed_power / (1 + r.entrant.in_flight) for r in candidates]
        return _draw(candidates, weights, rng)

    def _fill(self, table: list[_Rated], field: list[_Rated], players: int,
              rng: random.Random, counts: PairCounts,
              design: _Design | None) -> tuple[str, ...]:
        """Complete ``table`` seat by seat, each opponent drawn by the
        information it adds; ``()`` if no allowed entrant is left for a seat."""
        table = list(table)
        while len(table) < players:
            free = [r for r in field if r not in table and self._owner_allowed(r, table)]
            under_cap = [r for r in free if self._under_cap(r, table, counts)]
            if under_cap:
                weights = [self._information(r, table, design) ** self.opponent_power
                           * r.half_width ** self.own_power for r in under_cap]
                table.append(_draw(under_cap, weights, rng))
            elif free:  # every pair capped: the least-met one, so the ladder goes on
                table.append(min(free, key=lambda r: (_most_met(r, table, counts), r.key)))
            else:
                return ()
        return tuple(r.key for r in table)

    def _information(self, candidate: _Rated, table: list[_Rated],
                     design: _Design | None) -> float:
        """Expected reduction, after one group, of the variances of the
        candidate's differences with those seated (a Laplace update)."""
        if design is not None:
            return design.gain(candidate, table, self.comparisons, self.own_power)
        total = 0.0
        for seated in table:
            variance = candidate.variance() + seated.variance()
            p = win_probability(candidate.elo - seated.elo)
            information = self.comparisons * p * (1 - p)
            total += variance ** 2 * information / (1 + variance * information)
        return total

    def _allowed(self, candidate: _Rated, table: list[_Rated], counts: PairCounts) -> bool:
        return self._owner_allowed(candidate, table) and self._under_cap(candidate, table, counts)

    def _owner_allowed(self, candidate: _Rated, table: list[_Rated]) -> bool:
        if not self.one_per_owner or candidate.entrant.boss:
            return True
        return all(r.entrant.boss or r.entrant.owner != candidate.entrant.owner for r in table)

    def _under_cap(self, candidate: _Rated, table: list[_Rated], counts: PairCounts) -> bool:
        return _most_met(candidate, table, counts) < self.pair_cap


@dataclass
class _Design:
    """The fit's covariance (natural units) restricted to the entrants it
    knows, for the expected reduction of every bot's centred variance."""

    index: dict[str, int]
    matrix: np.ndarray

    @classmethod
    def of(cls, covariance: Covariance, field: list[_Rated]) -> _Design:
        position = {key: i for i, key in enumerate(covariance.keys)}
        known = [r.key for r in field if r.key in position]
        rows = [position[k] for k in known]
        matrix = covariance.matrix[np.ix_(rows, rows)] / ELO_PER_UNIT**2
        return cls({k: i for i, k in enumerate(known)}, matrix)

    def gain(self, candidate: _Rated, table: list[_Rated], comparisons: int,
             focus: float) -> float:
        """Sum over bots, weighted by their variance to the power ``focus`` / 2
        (the widest count most), of the reduction of their centred variance
        when the candidate meets each seated bot once per seating (a
        Laplace update per pair). Unknown bots: the independent formula."""
        centred = self.matrix - self.matrix.mean(0) - self.matrix.mean(1)[:, None] + self.matrix.mean()
        weight = np.maximum(np.diag(centred), 0) ** (focus / 2)
        total = 0.0
        for seated in table:
            p = win_probability(candidate.elo - seated.elo)
            information = comparisons * p * (1 - p)
            a, b = self.index.get(candidate.key), self.index.get(seated.key)
            if a is None or b is None:
                variance = candidate.variance() + seated.variance()
                total += variance ** 2 * information / (1 + variance * information)
                continue
            column = centred[:, a] - centred[:, b]
            variance = float(column[a] - column[b])
            total += float(weight @ column**2) * information / (1 + variance * information)
        return total


class _TablePlanner:
    """The fit's covariance over the whole field, centred as the table centres
    Elo, in natural units, with the line-ups in flight already counted, to
    score candidate tables by what one more group would do to it.

    A group gives each pair at the table ``comparisons`` comparisons with
    Fisher information p(1 - p) each (p from the current estimates); the
    Laplace update of a Gaussian posterior then takes the covariance C to
    C - C D' (W^-1 + D C D')^-1 D C, D the pairs' difference rows and W
    their information. Differences are orthogonal to the mean, so the
    centred covariance updates by the same formula. Entrants the fit does
    not know yet enter as independent, as wide as ``_rate`` makes them."""

    def __init__(self, centred: np.ndarray, elo: np.ndarray, comparisons: int,
                 saturation: float | None = None) -> None:
        self.centred = centred
        self.elo = elo
        self.comparisons = comparisons
        self.saturation = saturation

    @classmethod
    def of(cls, covariance: Covariance, field: list[_Rated], in_flight: Sequence[Sequence[str]],
           comparisons: int) -> _TablePlanner:
        position = {key: i for i, key in enumerate(covariance.keys)}
        known = [i for i, r in enumerate(field) if r.key in position]
        rows = [position[field[i].key] for i in known]
        matrix = np.diag([r.variance() for r in field])
        matrix[np.ix_(known, known)] = covariance.matrix[np.ix_(rows, rows)] / ELO_PER_UNIT**2
        centred = matrix - matrix.mean(0) - matrix.mean(1)[:, None] + matrix.mean()
        planner = cls(centred, np.array([r.elo / ELO_PER_UNIT for r in field]), comparisons)
        index = {r.key: i for i, r in enumerate(field)}
        for lineup in in_flight:
            table = sorted({index[k] for k in lineup if k in index})
            if len(table) >= 2:
                planner.centred = planner.centred - planner._reduction(np.array([table]))[0]
        return planner

    @classmethod
    def from_counts(cls, field: list[_Rated], counts: PairCounts, comparisons: int,
                    fitted: _TablePlanner, fit_weight: float) -> _TablePlanner:
        """The covariance that the groups met so far (in flight included)
        would give at the current estimates, scaled to the fit's: the
        inverse of their expected information, with a weak prior. It
        depends on who met whom, not on how the results fell."""
        elo = fitted.elo
        index = {r.key: i for i, r in enumerate(field)}
        information = np.eye(len(field)) * (ELO_PER_UNIT / 2000.0) ** 2
        for (first, second), groups in counts.items():
            a, b = index.get(first), index.get(second)
            if a is None or b is None or groups <= 0:
                continue
            p = 1 / (1 + math.exp(elo[b] - elo[a]))
            weight = groups * comparisons * p * (1 - p)
            information[[a, b], [a, b]] += weight
            information[[a, b], [b, a]] -= weight
        matrix = np.linalg.inv(information)
        centred = matrix - matrix.mean(0) - matrix.mean(1)[:, None] + matrix.mean()
        known = np.isfinite(fitted.spread)
        scale = float(np.median(fitted.spread[known] / np.maximum(np.diag(centred)[known], 1e-300)))
        return cls(fit_weight * fitted.centred + (1 - fit_weight) * scale * centred, elo,
                   comparisons)

    @property
    def spread(self) -> np.ndarray:
        """Each entrant's centred variance."""
        return np.diag(self.centred)

    def _update(self, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For tables (rows of entrant indexes): C D' (N, n, m) and
        (W^-1 + D C D')^-1 D C (N, m, n), m the pairs at a table."""
        first, second = np.triu_indices(tables.shape[1], 1)
        a, b = tables[:, first], tables[:, second]
        columns = (self.centred[:, a] - self.centred[:, b]).transpose(1, 0, 2)
        index = np.arange(tables.shape[0])[:, None]
        inner = columns[index, a, :] - columns[index, b, :]
        p = 1 / (1 + np.exp(-(self.elo[a] - self.elo[b])))
        information = np.maximum(self.comparisons * p * (1 - p), 1e-12)
        inner = inner + np.eye(a.shape[1]) / information[:, :, None]
        return columns, np.linalg.solve(inner, columns.transpose(0, 2, 1))

    def _reduction(self, tables: np.ndarray) -> np.ndarray:
        """How much one group of each table lowers the centred covariance."""
        columns, solved = self._update(tables)
        return np.einsum("nim,nmj->nij", columns, solved)

    def after(self, tables: np.ndarray) -> np.ndarray:
        """Each entrant's centred variance after one group of each table: (N, n)."""
        columns, solved = self._update(tables)
        return self.spread - np.einsum("nim,nmi->ni", columns, solved)

    def gain(self, tables: np.ndarray, focus: float) -> np.ndarray:
        """How much one group of each table lowers the sum over entrants of
        their centred variance to the power ``focus`` / 2 (half-width to
        ``focus``): a large focus weighs the widest intervals most. Past
        ``saturation`` (a variance) each term grows as the logarithm."""
        power = focus / 2
        scale = max(float(self.spread.max()), 1e-300)
        ceiling = scale if self.saturation is None else min(scale, self.saturation)

        def worth(variance: np.ndarray) -> np.ndarray:
            # (v / ceiling)^power up to the ceiling, then logarithmic (the
            # same slope there): past the ceiling, halving a variance is worth
            # the same however wide it was
            relative = np.maximum(variance, 1e-300) / ceiling
            return np.where(relative <= 1, relative ** power, 1 + power * np.log(relative))

        return worth(self.spread).sum() - worth(self.after(tables)).sum(1)


def _most_met(candidate: _Rated, table: list[_Rated], counts: PairCounts) -> int:
    return max((counts.get(pair_key(candidate.key, r.key), 0) for r in table), default=0)


def _rate(entrants: list[Entrant], standings: Mapping[str, Standing | None]) -> list[_Rated]:
    """Every entrant with a rating to reason with: a new one is taken at its
    ``start_elo`` or the rated field's median, as uncertain as the most
    uncertain rated entrant (or 400 Elo when nobody is rated)."""
    known = {e.key: s for e in entrants if (s := standings.get(e.key)) is not None}
    elos = sorted(s.elo for s in known.values())
    median = elos[len(elos) // 2] if elos else 1500.0
    widest = max((s.half_width for s in known.values()), default=400.0)
    rated = []
    for entrant in entrants:
        standing = known.get(entrant.key)
        if standing is not None:
            rated.append(_Rated(entrant, standing.elo, standing.half_width, True))
        else:
            start = median if entrant.start_elo is None else entrant.start_elo
            rated.append(_Rated(entrant, start, widest, False))
    return rated


def _draw(candidates: list[_Rated], weights: list[float], rng: random.Random) -> _Rated:
    """One candidate with probability proportional to its weight (uniform if
    every weight is zero)."""
    total = sum(weights)
    if total <= 0:
        return candidates[int(rng.random() * len(candidates))]
    point = rng.random() * total
    for candidate, weight in zip(candidates, weights):
        point -= weight
        if point < 0:
            return candidate
    return candidates[-1]


def uniform_lineup(entrants: Sequence[Entrant], players: int, rng: random.Random,
                   one_per_owner: bool = True) -> tuple[str, ...]:
    """The baseline: ``players`` entrants drawn uniformly at random (one per
    owner, bosses exempt, as the matchmaker), or ``()`` if none fit."""
    order = sorted(entrants, key=lambda e: e.key)
    rng.shuffle(order)
    table: list[Entrant] = []
    for entrant in order:
        clash = one_per_owner and not entrant.boss and any(
            not seated.boss and seated.owner == entrant.owner for seated in table)
        if not clash:
            table.append(entrant)
        if len(table) == players:
            return tuple(e.key for e in table)
    return ()
