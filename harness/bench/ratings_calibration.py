"""Calibration of the rating table: leagues simulated from known strengths.

The simulator plays the project's schedules (deals x tables x seat rotations,
from ``harness.league``) or sparse random tables, and draws each match's
finishing order from known strengths. Teams play as the sum of their
members' strengths, which is what the table fits. Each match is an exact
draw from the model, but seat luck is shared across the matches of a deal
(common random numbers), as duplicate deals share their cards, so the
matches of a deal group are not independent of each other.

* No ties: an exponential race (Plackett-Luce orders): unit u finishes at
  E_u / exp(strength_u), E_u ~ Exp(1).
* Ties: a geometric race. Unit u finishes in round G_u ~ Geometric(p_u)
  with odds p_u / (1 - p_u) = c * exp(strength_u); units finishing in the
  same round share the rank. For any two units, whatever the table,
  P(a ahead of b) / P(b ahead of a) = exp(strength_a - strength_b) exactly,
  which is what the table's Elo means with ties (see harness.stats.ratings).

``calibrate`` fits many simulated leagues of one setting and measures how
often each bot's 95% interval covers its true Elo; ``growth`` follows
leagues as deals are added (the first n deals of one simulated league, so
each size extends the one before, as a league grows) and measures coverage,
width, how alike the widths of bots with the same games are, and whether
each pair's interval and LOS agree. ``python -m harness.bench.ratings
--calibration`` prints its table (docs/ratings-calibration.md).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np

from harness.league import League
from harness.limits import Limits

ELO_PER_UNIT = 400 / np.log(10)


@dataclass(frozen=True)
class Setting:
    """One simulated league design; truth evenly spaced in [-spread, spread]
    Elo (or ``truth_elo``, made relative to its mean)."""

    name: str
    game: str
    players: int
    bots: int
    deals: int = 1
    partners: str = "copies"
    spread: float = 200.0
    ties: float = 0.0          # geometric-race odds scale c; 0: no ties
    luck: float = 0.7          # share of seat luck drawn once per deal
    sparse_matches: int = 0    # >0: random tables, one seating, each match its own deal
    replications: int = 300
    truth_elo: tuple[float, ...] = ()
    rounds: bool = False       # sparse: each deal is a round of tables seating every bot once

    def truth(self) -> np.ndarray:
        """True Elo relative to the mean, one per bot."""
        if self.truth_elo:
            truth = np.array(self.truth_elo, dtype=float)
            return truth - truth.mean()
        return np.linspace(-self.spread, self.spread, self.bots)


@dataclass
class Schedule:
    """Matches as arrays: the bot in each seat, each match's deal group, and
    the team (unit of the finishing order) of each seat."""

    seats: np.ndarray            # (matches, players) bot index
    deal: np.ndarray             # (matches,) deal group
    team_of_seat: np.ndarray     # (players,) team index
    teams: int = field(init=False)

    def __post_init__(self) -> None:
        self.teams = int(self.team_of_seat.max()) + 1


def league(setting: Setting) -> League:
    names = [f"b{i:02d}" for i in range(setting.bots)]
    return League(name=setting.name, game=setting.game, bots=names, players=setting.players,
                  deals=setting.deals, rotation="cyclic", partners=setting.partners, seed=1,
                  limits=Limits())


@cache
def full_schedule(setting: Setting) -> Schedule:
    """The project's schedule: every table in every seat rotation, every deal."""
    spec = league(setting)
    index = {name: i for i, name in enumerate(spec.bots)}
    seatings = [[index[name] for name in seating]
                for table in spec.tables() for seating in spec.seatings(table)]
    per_deal = np.array(seatings, dtype=np.int64)
    seats = np.tile(per_deal, (setting.deals, 1))
    deal = np.repeat(np.arange(setting.deals), len(per_deal))
    return Schedule(seats, deal, team_of_seat(spec))


def team_of_seat(spec: League) -> np.ndarray:
    teams = spec.teams()
    if not teams:
        return np.arange(spec.players)
    of = np.zeros(spec.players, dtype=np.int64)
    for t, members in enumerate(teams):
        of[list(members)] = t
    return of


def sparse_schedule(setting: Setting, rng: np.random.Generator) -> Schedule:
    """Random tables of distinct bots, one seating each, each its own deal
    group; with ``rounds``, ``deals`` rounds of tables that seat every bot
    once (a round's matches are ``deal`` // matches a round)."""
    spec = league(setting)
    if setting.rounds:
        per_round = setting.bots // setting.players
        keys = rng.random((setting.deals, setting.bots))
        order = np.argsort(keys, axis=1)[:, :per_round * setting.players]
        seats = order.reshape(setting.deals * per_round, setting.players)
    else:
        keys = rng.random((setting.sparse_matches, setting.bots))
        seats = np.argsort(keys, axis=1)[:, :setting.players]
    return Schedule(seats, np.arange(len(seats)), team_of_seat(spec))


def competition_ranks(keys: np.ndarray) -> np.ndarray:
    """1 + how many units finished strictly earlier (shared ranks on ties)."""
    return 1 + (keys[..., None, :] < keys[..., :, None]).sum(-1)


def play(schedule: Schedule, theta: np.ndarray, setting: Setting,
         rng: np.random.Generator) -> np.ndarray:
    """Ranks (matches, players) for one replication of the schedule."""
    matches = len(schedule.seats)
    strength = np.zeros((matches, schedule.teams))
    np.add.at(strength, (np.arange(matches)[:, None], schedule.team_of_seat[None, :]),
              theta[schedule.seats])
    deals = int(schedule.deal.max()) + 1
    shared = rng.random((deals, schedule.teams))[schedule.deal]
    fresh = rng.random((matches, schedule.teams))
    uniform = np.where(rng.random((matches, schedule.teams)) < setting.luck, shared, fresh)
    if setting.ties:
        p = 1 / (1 + np.exp(-(np.log(setting.ties) + strength)))
        finish = np.ceil(np.log(uniform) / np.log1p(-p))
    else:
        finish = -np.log(uniform) / np.exp(strength)
    team_rank = competition_ranks(finish)
    return team_rank[:, schedule.team_of_seat]


def seat_rows(schedule: Schedule, ranks: np.ndarray, tag: str = "") -> list[dict[str, Any]]:
    """Seat rows as ``Store.seat_rows`` gives them (plus deal and league)."""
    players = schedule.seats.shape[1]
    names = [f"b{bot:02d}" for bot in range(int(schedule.seats.max()) + 1)]
    teams, deals = schedule.team_of_seat.tolist(), schedule.deal.tolist()
    # plain Python ints from tolist(): this runs a million times a calibration
    return [{"match_id": f"{tag}m{m:06d}", "seat": seat, "bot": names[bot], "team": teams[seat],
             "score": float(players - rank), "rank": rank, "fault_kind": None, "deal": deals[m],
             "league": "sim"}
            for m, (table, finish) in enumerate(zip(schedule.seats.tolist(), ranks.tolist()))
            for seat, (bot, rank) in enumerate(zip(table, finish))]


def simulate(setting: Setting, replication: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng([zlib.crc32(setting.name.encode()), replication])
    theta = setting.truth() / ELO_PER_UNIT
    sparse = setting.sparse_matches or setting.rounds
    schedule = sparse_schedule(setting, rng) if sparse else full_schedule(setting)
    return seat_rows(schedule, play(schedule, theta, setting, rng))


@dataclass
class Calibration:
    setting: str
    slope: float
    coverage: np.ndarray     # per bot
    width: float             # mean interval width, Elo

    def line(self) -> str:
        cov = " ".join(f"{c:.0%}" for c in self.coverage)
        return (f"{self.setting:24} slope {self.slope:5.2f}  coverage min {self.coverage.min():.0%} "
                f"max {self.coverage.max():.0%}  width {self.width:6.1f}  [{cov}]")


def calibrate(setting: Setting, rate: Callable[[list[dict[str, Any]]], list[Any]],
              replications: int | None = None) -> Calibration:
    """Fit ``replications`` simulated leagues; slope and per-bot coverage."""
    reps = replications or setting.replications
    truth = setting.truth()
    names = [f"b{i:02d}" for i in range(setting.bots)]
    fitted = np.full((reps, setting.bots), np.nan)
    covered = np.zeros((reps, setting.bots), dtype=bool)
    width = np.zeros((reps, setting.bots))
    for r in range(reps):
        table = {row.bot: row for row in rate(simulate(setting, r))}
        elo = np.array([table[n].elo if n in table else np.nan for n in names])
        low = np.array([table[n].elo_low if n in table else np.nan for n in names])
        high = np.array([table[n].elo_high if n in table else np.nan for n in names])
        centre = np.nanmean(elo)
        fitted[r] = elo - centre
        covered[r] = (low - centre <= truth) & (truth <= high - centre)
        width[r] = high - low
    slope = float(np.nansum(fitted * truth) / np.sum(truth**2 * np.isfinite(fitted)))
    return Calibration(setting.name, slope, covered.mean(0), float(np.nanmean(width)))


# ---- a league as it grows ---------------------------------------------------------
@dataclass
class Growth:
    """One setting's leagues at each size (deals): per size, the share of
    intervals covering the truth (all bots, and the worst bot), the mean
    width, the largest width ratio between two bots with the same number of
    games (median and largest over leagues) and the share of pairs whose
    interval and LOS disagree."""

    setting: str
    sizes: list[int]
    coverage: np.ndarray        # (sizes,)
    worst_bot: np.ndarray       # (sizes,) lowest coverage of one bot
    best_bot: np.ndarray        # (sizes,) highest coverage of one bot
    width: np.ndarray           # (sizes,) mean width, Elo
    ratio_median: np.ndarray    # (sizes,)
    ratio_max: np.ndarray       # (sizes,)
    disagree: np.ndarray        # (sizes,) share of pairs


def disagrees(difference: Any) -> bool:
    """The interval excludes 0 but LOS says less than 97.5% either way, or
    the reverse."""
    excludes = difference.elo_low > 0 or difference.elo_high < 0
    sure = difference.los > 0.975 or difference.los < 0.025
    return bool(excludes != sure)


def growth(setting: Setting, fit: Callable[[list[dict[str, Any]]], Any], sizes: Sequence[int],
           replications: int | None = None) -> Growth:
    """Fit the first n deals (rounds, for a sparse setting) of
    ``replications`` simulated leagues of ``max(sizes)`` deals, for each n
    in ``sizes``. ``fit``: seat rows to a ``RatingFit``."""
    reps = replications or setting.replications
    truth = setting.truth()
    names = [f"b{i:02d}" for i in range(setting.bots)]
    big = replace(setting, deals=max(sizes))
    per_round = setting.bots // setting.players
    shape = (len(sizes), reps, setting.bots)
    covered, width = np.full(shape, np.nan), np.full(shape, np.nan)
    ratio = np.full((len(sizes), reps), np.nan)
    disagree = np.zeros((len(sizes), 2))
    for r in range(reps):
        rows = simulate(big, r)
        for k, n in enumerate(sizes):
            limit = n * per_round if setting.rounds else n
            fitted = fit([row for row in rows if row["deal"] < limit])
            table = {row.bot: row for row in fitted.rows}
            present = [i for i, name in enumerate(names) if name in table]
            elo = np.array([table[names[i]].elo for i in present])
            low = np.array([table[names[i]].elo_low for i in present])
            high = np.array([table[names[i]].elo_high for i in present])
            centre = elo.mean()
            covered[k, r, present] = (low - centre <= truth[present]) & (
                truth[present] <= high - centre)
            width[k, r, present] = high - low
            games = np.array([table[names[i]].games for i in present])
            ratios = [w.max() / w.min() for g in np.unique(games)
                      if len(w := width[k, r, present][games == g]) > 1]
            ratio[k, r] = max(ratios, default=np.nan)
            pairs = fitted.differences()
            disagree[k] += [sum(map(disagrees, pairs)), len(pairs)]
    with np.errstate(invalid="ignore"):
        per_bot = np.nanmean(covered, 1)
    return Growth(setting.name, list(sizes), np.nanmean(covered, (1, 2)), np.nanmin(per_bot, 1),
                  np.nanmax(per_bot, 1), np.nanmean(width, (1, 2)),
                  _nan_stat(np.nanmedian, ratio), _nan_stat(np.nanmax, ratio),
                  disagree[:, 0] / np.maximum(disagree[:, 1], 1))


def _nan_stat(stat: Callable[..., Any], values: np.ndarray) -> np.ndarray:
    known = np.isfinite(values).any(1)
    out = np.full(len(values), np.nan)
    if known.any():
        out[known] = stat(values[known], 1)
    return out


# The shapes the interval method is calibrated on (issue 45): individual
# games from 2 to 7 seats, a ten-bot league, teams of copies, mixed
# partners, ties, a sparse league and one dominant bot.
GROWTH_SETTINGS = [
    Setting("2 seats, 4 bots", "target", 2, 4),
    Setting("3 seats, 4 bots", "tateyoko", 3, 4),
    Setting("5 seats, 5 bots", "tateyoko", 5, 5),
    Setting("7 seats, 7 bots", "tateyoko", 7, 7),
    Setting("2 seats, 10 bots", "target", 2, 10, spread=300),
    Setting("copies 2x2, 4 bots", "tenos_square", 4, 4, spread=150),
    Setting("copies 3x2, 4 bots", "twin_shoot", 6, 4, spread=150),
    Setting("mixed 2x2, 5 bots", "tenos_square", 4, 5, partners="mixed"),
    Setting("ties, 2 seats", "target", 2, 4, ties=1.0),
    Setting("ties, 4 seats", "tateyoko", 4, 5, ties=1.0),
    Setting("sparse 16 bots, 4 seats", "tateyoko", 4, 16, spread=300, rounds=True),
    Setting("one dominant bot", "tateyoko", 4, 5, truth_elo=(-150, -75, 0, 75, 600)),
]
GROWTH_SIZES = (1, 2, 3, 5, 20)
# symmetric leagues: every bot alike, so widths should be alike too
SYMMETRIC_SETTINGS = [
    Setting("equal: 2 seats, 4 bots", "target", 2, 4, spread=0),
    Setting("equal: 5 seats, 5 bots", "tateyoko", 5, 5, spread=0),
    Setting("equal: copies 2x2", "tenos_square", 4, 4, spread=0),
    Setting("equal: mixed 2x2", "tenos_square", 4, 5, partners="mixed", spread=0),
    Setting("equal: ties, 4 seats", "tateyoko", 4, 5, ties=1.0, spread=0),
]


def growth_table(results: list[Growth]) -> str:
    """The calibration table: coverage % (worst bot) and mean width per
    size; the width ratios of bots with the same games (symmetric settings
    only: elsewhere bots of other strengths are rightly measured apart);
    pairs whose interval and LOS disagree."""
    sizes = results[0].sizes
    names = [f"{n} deal" + ("s" if n > 1 else "") for n in sizes]
    lines = [f"{'coverage % (worst bot), width':30}" + "".join(f"{n:>19}" for n in names)]
    for g in results:
        lines.append(f"{g.setting:30}" + "".join(
            f"{100 * c:>8.1f} ({100 * w:>3.0f}){m:>6.0f}"
            for c, w, m in zip(g.coverage, g.worst_bot, g.width)))
    lines += ["", f"{'same games: width ratio, median / max':30}"
              + "".join(f"{n:>19}" for n in names)[7:]]
    lines += [f"{g.setting:30}" + "".join(f"{a:>12.2f} /{b:>5.2f}"
                                          for a, b in zip(g.ratio_median, g.ratio_max))
              for g in results if g.setting.startswith("equal")]
    lines += ["", f"{'interval and LOS disagree':30}" + "".join(f"{n:>19}" for n in names)]
    lines += [f"{g.setting:30}" + "".join(f"{100 * d:>18.1f}%" for d in g.disagree)
              for g in results]
    return "\n".join(lines)


def load_ratings(baseline: str | None) -> Any:
    """The ratings module of this tree, or another ratings.py (a copy of an
    older one, e.g. ``git show <commit>:harness/stats/ratings.py > old.py``)."""
    if not baseline:
        import harness.stats.ratings

        return harness.stats.ratings
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("ratings_baseline", baseline)
    assert spec is not None and spec.loader is not None, baseline
    module = importlib.util.module_from_spec(spec)
    sys.modules["ratings_baseline"] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> None:
    """Print the calibration table (``python -m harness.bench.ratings_calibration``,
    or ``python -m harness.bench.ratings --calibration``)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Coverage and width of the rating table's "
                                                 "intervals on simulated leagues as deals are added")
    parser.add_argument("--replications", type=int, default=300)
    parser.add_argument("--sizes", default=",".join(map(str, GROWTH_SIZES)),
                        help="numbers of deals (rounds for the sparse setting)")
    parser.add_argument("--only", help="settings whose name contains this")
    parser.add_argument("--baseline", help="another ratings.py to calibrate instead")
    args = parser.parse_args(argv)
    fit = load_ratings(args.baseline).rating_fit
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    start = time.perf_counter()
    for setting in GROWTH_SETTINGS + SYMMETRIC_SETTINGS:
        if args.only and args.only not in setting.name:
            continue
        results.append(growth(setting, fit, sizes, args.replications))
    print(f"ratings of {args.baseline or 'harness/stats/ratings.py'}: {args.replications} simulated "
          f"leagues a setting, each fitted on its first n deals (rounds: sparse); coverage of "
          f"each bot's 95% interval of its Elo less the mean, all bots (worst bot), and mean "
          f"width in Elo ({time.perf_counter() - start:.0f} s)")
    print(growth_table(results))


if __name__ == "__main__":
    main()
