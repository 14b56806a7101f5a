"""How fast matchmaking makes a ladder's intervals converge, simulated.

A field of bots with known strengths (by default 20, Elo evenly spread over
-400..+400 like a real field, 3 of them bosses, owners holding one or two
versions) plays a 3-player game as a live ladder would: duplicate groups,
each one deal played in all its balanced seatings, with seat luck shared
across the deal as ``harness.bench.ratings_calibration`` models it (so it
cancels within the group). The ladder schedules ``refit_every`` groups on
the standings of the last fit (those groups are in flight meanwhile, as on
a busy server), plays them, and refits with the project's fit
(``harness.stats.ratings.rating_fit``): the fit's cost stays bounded and the
scheduler works on stale standings, as it will live.

Two schedulers play the same field from the same seed: the ladder's
``Matchmaker`` (given the fit's covariance and the line-ups scheduled since
that fit, as a server knows them) and ``uniform_lineup`` (uniform random
tables under the same one-per-owner rule). After every refit we record matches played, and the
largest and the median 95% half-width over bots; the figure of merit is the
matches needed until every bot's interval is under +-100 Elo, and its ratio
matchmaker / uniform, per replication. Coverage (the share of intervals
holding the true Elo, centred as the table centres it) is measured at that
point and at the end, for both: a scheduler that reacts to results could
bias the intervals it then reports.

``python -m harness.bench.matchmaking`` prints the curve and the ratio
(docs/matchmaking.md).
"""

from __future__ import annotations

import dataclasses
import random
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.bench.ratings_calibration import ELO_PER_UNIT, Schedule, Setting, play, seat_rows
from harness.league import balanced_orders
from harness.serve.matchmaking import (
    Covariance,
    Entrant,
    Matchmaker,
    Standing,
    pair_key,
    standings_from_fit,
    uniform_lineup,
)
from harness.stats.ratings import rating_fit

TARGET_HALF_WIDTH = 100.0
# the fit's rows are named as the calibration bench names bots
Scheduler = Callable[[list[Entrant], dict[str, Standing | None], int, random.Random,
                      dict[tuple[str, str], int], Covariance | None,
                      list[tuple[str, ...]]], tuple[str, ...]]


@dataclass(frozen=True)
class Field:
    """The simulated ladder: true Elo (relative to the mean), which bots are
    bosses, who owns each, the seats and the share of seat luck per deal."""

    truth: tuple[float, ...]
    bosses: frozenset[int]
    owners: tuple[str, ...]
    players: int = 3
    luck: float = 0.7

    @property
    def keys(self) -> list[str]:
        return [f"b{i:02d}" for i in range(len(self.truth))]


def make_field(bots: int = 20, spread: float = 400.0, bosses: int = 3, players: int = 3) -> Field:
    """Bots evenly spread over -spread..spread; the bosses spread among them
    (weakest, middle, strongest for three); the others owned two by two,
    so the one-per-owner rule bites, as when an owner keeps two versions."""
    truth = tuple(float(x) for x in np.linspace(-spread, spread, bots))
    boss_set = frozenset(int(round(i)) for i in np.linspace(0, bots - 1, bosses)) if bosses else frozenset()
    owners, players_seen = [], 0
    for i in range(bots):
        if i in boss_set:
            owners.append("house")
        else:
            owners.append(f"o{players_seen // 2}")
            players_seen += 1
    return Field(truth, boss_set, tuple(owners), players)


@dataclass
class Curve:
    """One ladder run: at each refit, matches so far and the largest and
    median half-width over bots; matches when every bot was first under
    the target (None if never); coverage then and at the end."""

    matches: list[int] = dataclasses.field(default_factory=list)
    max_half_width: list[float] = dataclasses.field(default_factory=list)
    median_half_width: list[float] = dataclasses.field(default_factory=list)
    matches_to_target: int | None = None
    coverage_at_target: float = float("nan")
    coverage_at_end: float = float("nan")


@dataclass
class Ladder:
    """The state a server would keep: groups played and in flight per bot,
    pair counts, when each last played, and the seat rows so far."""

    field: Field
    rng: np.random.Generator
    groups: Counter[str] = dataclasses.field(default_factory=Counter)
    last_played: dict[str, float] = dataclasses.field(default_factory=dict)
    pairs: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    played: int = 0  # groups

    def entrants(self, in_flight: Counter[str]) -> list[Entrant]:
        f = self.field
        return [Entrant(key, f.owners[i], i in f.bosses, self.groups[key], in_flight[key],
                        self.last_played.get(key, -1.0))
                for i, key in enumerate(f.keys)]

    def schedule(self, scheduler: Scheduler, standings: dict[str, Standing | None], groups: int,
                 rng: random.Random, covariance: Covariance | None = None) -> list[tuple[str, ...]]:
        """``groups`` line-ups chosen on the same standings, each counted in
        flight for the next."""
        in_flight: Counter[str] = Counter()
        lineups: list[tuple[str, ...]] = []
        for n in range(groups):
            lineup = scheduler(self.entrants(in_flight), standings, self.field.players, rng,
                               self.pairs, covariance, lineups)
            lineups.append(lineup)
            in_flight.update(lineup)
            for i, a in enumerate(lineup):
                self.last_played[a] = self.played + n
                for b in lineup[i + 1:]:
                    self.pairs[pair_key(a, b)] = self.pairs.get(pair_key(a, b), 0) + 1
        return lineups

    def play(self, lineups: list[tuple[str, ...]]) -> None:
        """Each line-up plays one deal in all its balanced seatings."""
        orders = balanced_orders(self.field.players)
        index = {key: i for i, key in enumerate(self.field.keys)}
        seats = np.array([[index[lineup[p]] for p in order]
                          for lineup in lineups for order in orders], dtype=np.int64)
        local = np.repeat(np.arange(len(lineups)), len(orders))
        teams = np.arange(self.field.players)
        setting = Setting("ladder", "sim", self.field.players, len(self.field.truth),
                          luck=self.field.luck)
        theta = np.array(self.field.truth) / ELO_PER_UNIT
        ranks = play(Schedule(seats, local, teams), theta, setting, self.rng)
        numbered = Schedule(seats, local + self.played, teams)
        self.rows += seat_rows(numbered, ranks, tag=f"g{self.played}-")
        self.played += len(lineups)
        for lineup in lineups:
            self.groups.update(lineup)


def coverage(fit: Any, f: Field) -> float:
    """Share of bots whose interval, centred as the table centres it, holds
    the true Elo less the mean."""
    by_key = {row.bot: row for row in fit.rows}
    centre = float(np.mean([row.elo for row in fit.rows]))
    truth = np.array(f.truth) - np.mean(f.truth)
    held = [by_key[k].elo_low - centre <= t <= by_key[k].elo_high - centre
            for k, t in zip(f.keys, truth) if k in by_key]
    return float(np.mean(held)) if held else float("nan")


def run(scheduler: Scheduler, f: Field, seed: int, refit_every: int = 5,
        max_groups: int = 600, stop_at_target: bool = False) -> Curve:
    """One ladder from nothing: schedule ``refit_every`` groups on the last
    standings, play them, refit; until ``max_groups`` (or the target)."""
    sim_rng = np.random.default_rng([seed, 1])
    pick_rng = random.Random(seed)
    ladder = Ladder(f, sim_rng)
    standings: dict[str, Standing | None] = {}
    covariance: Covariance | None = None
    curve = Curve()
    matches_per_group = len(balanced_orders(f.players))
    while ladder.played < max_groups:
        ladder.play(ladder.schedule(scheduler, standings, refit_every, pick_rng, covariance))
        fit = rating_fit(ladder.rows)
        standings = dict(standings_from_fit(fit))
        covariance = Covariance.from_fit(fit)
        widths = [s.half_width if (s := standings.get(k)) else float("inf") for k in f.keys]
        matches = ladder.played * matches_per_group
        curve.matches.append(matches)
        curve.max_half_width.append(max(widths))
        curve.median_half_width.append(float(np.median(widths)))
        if curve.matches_to_target is None and max(widths) < TARGET_HALF_WIDTH:
            curve.matches_to_target = matches
            curve.coverage_at_target = coverage(fit, f)
            if stop_at_target:
                break
        curve.coverage_at_end = coverage(fit, f)
    return curve


def matchmaker_scheduler(matchmaker: Matchmaker | None = None,
                         use_covariance: bool = True) -> Scheduler:
    chosen = matchmaker or Matchmaker()

    def schedule(entrants: list[Entrant], standings: dict[str, Standing | None], players: int,
                 rng: random.Random, pairs: dict[tuple[str, str], int],
                 covariance: Covariance | None,
                 in_flight: list[tuple[str, ...]]) -> tuple[str, ...]:
        return chosen.next_lineup(entrants, standings, players, rng, pairs,
                                  covariance if use_covariance else None, in_flight)

    return schedule


def uniform_scheduler(entrants: list[Entrant], standings: dict[str, Standing | None],
                      players: int, rng: random.Random, pairs: dict[tuple[str, str], int],
                      covariance: Covariance | None,
                      in_flight: list[tuple[str, ...]]) -> tuple[str, ...]:
    return uniform_lineup(entrants, players, rng)


@dataclass
class Comparison:
    """Both schedulers over the same replications."""

    matchmaker: list[Curve]
    uniform: list[Curve]

    def ratios(self) -> np.ndarray:
        """Matches to the target, matchmaker / uniform, per replication
        (NaN where either never got there)."""
        return np.array([m.matches_to_target / u.matches_to_target
                         if m.matches_to_target and u.matches_to_target else np.nan
                         for m, u in zip(self.matchmaker, self.uniform)])

    def ratio_of_means(self) -> float:
        mm = [c.matches_to_target for c in self.matchmaker]
        un = [c.matches_to_target for c in self.uniform]
        if None in mm or None in un:
            return float("nan")
        return float(np.mean(mm) / np.mean(un))  # type: ignore[arg-type]


def compare(f: Field, replications: int, refit_every: int = 5, max_groups: int = 600,
            stop_at_target: bool = False, matchmaker: Matchmaker | None = None,
            first_seed: int = 0) -> Comparison:
    seeds = [zlib.crc32(f"ladder{r}".encode()) for r in range(first_seed, first_seed + replications)]
    scheduler = matchmaker_scheduler(matchmaker)
    return Comparison(
        [run(scheduler, f, s, refit_every, max_groups, stop_at_target) for s in seeds],
        [run(uniform_scheduler, f, s, refit_every, max_groups, stop_at_target) for s in seeds])


def curve_table(result: Comparison, every: int = 1) -> str:
    """Mean over replications of the largest and median half-width at each
    refit both schedulers reached in every replication."""
    length = min(len(c.matches) for c in result.matchmaker + result.uniform)
    header = (f"{'matches':>8}  {'matchmaker max ±':>16} {'median ±':>9}  "
              f"{'uniform max ±':>14} {'median ±':>9}")
    lines = [header]
    for i in range(0, length, every):
        mm_max = np.mean([c.max_half_width[i] for c in result.matchmaker])
        mm_med = np.mean([c.median_half_width[i] for c in result.matchmaker])
        un_max = np.mean([c.max_half_width[i] for c in result.uniform])
        un_med = np.mean([c.median_half_width[i] for c in result.uniform])
        lines.append(f"{result.matchmaker[0].matches[i]:>8}  {mm_max:>16.0f} {mm_med:>9.0f}  "
                     f"{un_max:>14.0f} {un_med:>9.0f}")
    return "\n".join(lines)


def ratio_interval(result: Comparison, draws: int = 5000, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of the ratio of means, replications resampled
    (each replication's pair of runs kept together: they share a seed)."""
    mm = np.array([c.matches_to_target or np.nan for c in result.matchmaker], dtype=float)
    un = np.array([c.matches_to_target or np.nan for c in result.uniform], dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(mm), (draws, len(mm)))
    ratios = mm[picks].mean(1) / un[picks].mean(1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def summary(result: Comparison) -> str:
    ratios = result.ratios()
    mm = [c.matches_to_target for c in result.matchmaker]
    un = [c.matches_to_target for c in result.uniform]

    def mean_of(values: Sequence[int | None]) -> str:
        known = [v for v in values if v is not None]
        missing = len(values) - len(known)
        return f"{np.mean(known):.0f}" + (f" ({missing} never)" if missing else "") if known else "never"

    def cover(curves: list[Curve], attr: str) -> str:
        return f"{100 * np.nanmean([getattr(c, attr) for c in curves]):.1f}%"

    return "\n".join([
        f"matches until every interval is under ±{TARGET_HALF_WIDTH:.0f}: matchmaker "
        f"{mean_of(mm)}, uniform {mean_of(un)} (mean over {len(mm)} replications)",
        f"ratio matchmaker / uniform: of the means {result.ratio_of_means():.3f} (95% bootstrap "
        f"interval {ratio_interval(result)[0]:.3f}..{ratio_interval(result)[1]:.3f}); per replication "
        f"median {np.nanmedian(ratios):.3f}, min {np.nanmin(ratios):.3f}, "
        f"max {np.nanmax(ratios):.3f}",
        f"coverage of the 95% intervals when under the target: matchmaker "
        f"{cover(result.matchmaker, 'coverage_at_target')}, uniform "
        f"{cover(result.uniform, 'coverage_at_target')}",
        f"coverage at the end of the run: matchmaker {cover(result.matchmaker, 'coverage_at_end')}, "
        f"uniform {cover(result.uniform, 'coverage_at_end')}",
    ])


def main(argv: list[str] | None = None) -> None:
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Matches a simulated ladder needs until every "
                                                 "bot's 95% interval is under ±100 Elo: "
                                                 "matchmaker against uniform random tables")
    parser.add_argument("--replications", type=int, default=20)
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--spread", type=float, default=400.0)
    parser.add_argument("--bosses", type=int, default=3)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--refit-every", type=int, default=5, help="groups between fits")
    parser.add_argument("--max-groups", type=int, default=240)
    parser.add_argument("--every", type=int, default=4, help="print every n-th refit")
    args = parser.parse_args(argv)
    f = make_field(args.bots, args.spread, args.bosses, args.players)
    start = time.perf_counter()
    result = compare(f, args.replications, args.refit_every, args.max_groups)
    print(f"{args.bots} bots, Elo {-args.spread:.0f}..{args.spread:.0f}, {args.bosses} bosses, "
          f"{args.players} seats, each group one deal in {len(balanced_orders(args.players))} "
          f"seatings, refit every {args.refit_every} groups; mean over {args.replications} "
          f"replications ({time.perf_counter() - start:.0f} s)")
    print(curve_table(result, args.every))
    print(summary(result))


if __name__ == "__main__":
    main()

