"""Calibration: leagues simulated from known strengths, fitted by the table.

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
  which is what the table's Elo means with ties (see harness.ratings).

For each setting the test fits ``replications`` leagues and checks that the
fitted Elo (relative to the mean) regresses on the truth with slope 0.9-1.1
and that every bot's 95% interval covers its true Elo 90-98% of the time.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pytest

from harness.league import League
from harness.match import Limits

ELO_PER_UNIT = 400 / np.log(10)

pytestmark = pytest.mark.slow  # about a minute on two cores: make test, not test-fast


@dataclass(frozen=True)
class Setting:
    """One simulated league design; truth evenly spaced in [-spread, spread] Elo."""

    name: str
    game: str
    players: int
    bots: int
    deals: int = 1
    partners: str = "copies"
    spread: float = 200.0
    ties: float = 0.0          # geometric-race odds scale c; 0: no ties
    luck: float = 0.7          # share of seat luck drawn once per deal
    sparse_matches: int = 0    # >0: this many random tables, one seating, one deal each
    replications: int = 300

    def truth(self) -> np.ndarray:
        """True Elo relative to the mean, one per bot."""
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
    result = League(name=setting.name, game=setting.game, bots=names, players=setting.players,
                    deals=setting.deals, rotation="cyclic", partners=setting.partners, seed=1,
                    limits=Limits())
    return result


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
    """Random tables of distinct bots, one seating each, each its own deal."""
    keys = rng.random((setting.sparse_matches, setting.bots))
    seats = np.argsort(keys, axis=1)[:, :setting.players]
    spec = league(setting)
    return Schedule(seats, np.arange(setting.sparse_matches), team_of_seat(spec))


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
    schedule = sparse_schedule(setting, rng) if setting.sparse_matches else full_schedule(setting)
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


SETTINGS = [
    Setting("2 seats", "target", 2, 4, deals=60),
    Setting("3 seats", "tateyoko", 3, 4, deals=40),
    Setting("5 seats", "tateyoko", 5, 5, deals=60),
    Setting("7 seats", "tateyoko", 7, 7, deals=50),
    Setting("teams of copies 2x2", "tenos_square", 4, 4, deals=30, spread=150),
    Setting("teams of copies 3x2", "twin_shoot", 6, 4, deals=30, spread=150),
    Setting("mixed partners 2x2", "tenos_square", 4, 5, deals=25, partners="mixed"),
    Setting("mixed, two bots", "tenos_square", 4, 2, deals=30, partners="mixed", spread=50,
            replications=1000),
    Setting("ties, 2 seats", "target", 2, 4, deals=30, ties=1.0),
    Setting("ties, 4 seats", "tateyoko", 4, 5, deals=25, ties=1.0),
    Setting("sparse 16 bots, 30 m.", "tateyoko", 4, 16, sparse_matches=30, spread=300),
    Setting("dense 3 seats, 1800 m.", "tateyoko", 3, 4, deals=150, replications=200),
]


def rate_table(rows: list[dict[str, Any]]) -> list[Any]:
    from harness.ratings import rate

    return rate(rows)


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.name for s in SETTINGS])
def test_fitted_elo_has_slope_one_and_intervals_cover_95_percent(setting):
    result = calibrate(setting, rate_table)
    print(result.line())
    assert 0.9 <= result.slope <= 1.1, result.line()
    assert np.all((result.coverage >= 0.90) & (result.coverage <= 0.98)), result.line()


# Plackett-Luce full orders (no ties, no teams) with enough data for the
# maximum-likelihood fit to exist (sparse leagues have unbeaten bots).
PL_SETTINGS = [s for s in SETTINGS if not s.ties and not s.sparse_matches
               and s.game not in ("tenos_square", "twin_shoot")]


@pytest.mark.parametrize("setting", PL_SETTINGS, ids=[s.name for s in PL_SETTINGS])
def test_point_estimates_agree_with_choix_plackett_luce(setting):
    """Without ties or teams the finishing orders are Plackett-Luce, which
    choix fits by maximum likelihood on the full orders. The table's pairwise
    fit uses less of each order (it is a little less precise with many
    seats) but must land on the same strengths: same scale, and gaps small
    against its own intervals."""
    import choix

    from harness.ratings import rating_fit

    names = [f"b{i:02d}" for i in range(setting.bots)]
    ours, theirs, half = [], [], []
    for r in range(10):
        rows = simulate(setting, r)
        fit = rating_fit(rows)
        table = {row.bot: row for row in fit.rows}
        elo = np.array([table[n].elo for n in names])
        ours.append(elo - elo.mean())
        half.append([(table[n].elo_high - table[n].elo_low) / 2 for n in names])
        strengths = choix.ilsr_rankings(setting.bots, finishing_orders(rows), alpha=1e-6, tol=1e-10)
        theirs.append(ELO_PER_UNIT * (strengths - strengths.mean()))
    ours, theirs, half = np.array(ours), np.array(theirs), np.array(half)
    gaps = np.abs(ours - theirs) / half
    scale = float(np.sum(ours * theirs) / np.sum(theirs**2))
    print(f"{setting.name}: ours / choix {scale:.3f}, gap / half-width mean {gaps.mean():.3f} "
          f"max {gaps.max():.3f}")
    assert 0.97 <= scale <= 1.03
    assert gaps.mean() < 0.2 and gaps.max() < 0.8, gaps.round(2)


def finishing_orders(rows: list[dict[str, Any]]) -> list[list[int]]:
    """Each match's bots, best first (no ties, one seat per bot)."""
    by_match: dict[str, list[tuple[int, int]]] = {}
    for row in rows:
        by_match.setdefault(row["match_id"], []).append((row["rank"], int(row["bot"][1:])))
    return [[bot for _, bot in sorted(seats)] for seats in by_match.values()]
