"""Calibration: leagues simulated from known strengths, fitted by the table.

The simulator (``harness.bench.ratings_calibration``) plays the project's
schedules or sparse random tables, with seat luck shared by the matches of a
deal as duplicate deals share their cards. For each setting the test fits
``replications`` leagues and checks that the fitted Elo (relative to the
mean) regresses on the truth with slope 0.9-1.1 and that every bot's 95%
interval covers its true Elo 90-98% of the time. The growth tests follow
leagues as deals are added (issue 45): coverage at 1 to 20 deals, widths
that never grow with a deal, bots alike in games alike in width, and every
pair's interval and LOS telling the same story.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from harness.bench.ratings_calibration import (
    ELO_PER_UNIT,
    GROWTH_SETTINGS,
    GROWTH_SIZES,
    SYMMETRIC_SETTINGS,
    Setting,
    calibrate,
    growth,
    simulate,
)

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
    from harness.stats.ratings import rate

    return rate(rows)


@pytest.mark.statistical  # about a minute on two cores
@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("setting", PL_SETTINGS, ids=[s.name for s in PL_SETTINGS])
def test_point_estimates_agree_with_choix_plackett_luce(setting):
    """Without ties or teams the finishing orders are Plackett-Luce, which
    choix fits by maximum likelihood on the full orders. The table's pairwise
    fit uses less of each order (it is a little less precise with many
    seats) but must land on the same strengths: same scale, and gaps small
    against its own intervals."""
    import choix

    from harness.stats.ratings import rating_fit

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


# ---- leagues as they grow (issue 45) -------------------------------------------------
def rating_fit(rows: Any) -> Any:
    from harness.stats.ratings import rating_fit as fit

    return fit(rows)


def named(name: str) -> Setting:
    return next(s for s in GROWTH_SETTINGS + SYMMETRIC_SETTINGS if s.name == name)


YOUNG = (1, 2, 3, 5)


@pytest.mark.parametrize("name", ["2 seats, 4 bots", "7 seats, 7 bots", "mixed 2x2, 5 bots",
                                  "sparse 16 bots, 4 seats"])
def test_the_mean_width_never_grows_as_a_deal_is_added(name):
    """A bootstrap over 2 deal groups has 3 distinct resamples: its
    intervals were several times wider after 2 deals than after 1."""
    result = growth(named(name), rating_fit, YOUNG, replications=40)
    assert np.all(np.diff(result.width) < 0), result.width


@pytest.mark.parametrize("name", [s.name for s in SYMMETRIC_SETTINGS])
def test_bots_alike_in_games_get_widths_within_twice_each_other(name):
    """Every bot equally strong and seated alike: widths may differ only as
    their estimates do (one measured variance per bot, pooled with the
    model's), never by the 9x that 2-3 resampled groups gave."""
    result = growth(named(name), rating_fit, YOUNG, replications=40)
    assert np.all(result.ratio_max <= 2.0), result.ratio_max


@pytest.mark.parametrize("name", ["copies 3x2, 4 bots", "one dominant bot"])
def test_a_young_league_s_intervals_cover_the_truth(name):
    """All bots together, at least 90% from the first deal (the slow test
    below covers every setting, and the upper bound)."""
    result = growth(named(name), rating_fit, YOUNG, replications=150)
    assert np.all(result.coverage >= 0.90), result.coverage


@pytest.mark.statistical  # about a minute and a half on two cores
@pytest.mark.slow
@pytest.mark.parametrize("setting", GROWTH_SETTINGS + SYMMETRIC_SETTINGS,
                         ids=[s.name for s in GROWTH_SETTINGS + SYMMETRIC_SETTINGS])
def test_intervals_cover_from_the_first_deal_on(setting):
    """docs/ratings-calibration.md: 300 leagues a setting, fitted on their
    first 1, 2, 3, 5 and 20 deals. All bots together, intervals cover at
    least 90% of the time at every size, and 90-98% once the variance
    measured between deals has taken over (20 deals). Before that they may
    cover more: nothing in a young league measures how much its duplicate
    deals cancel luck, so its variance leans on the model's, which counts
    matches as independent. The worst bot's coverage stays above 80%."""
    result = growth(setting, rating_fit, GROWTH_SIZES)
    table = f"{setting.name}: coverage {np.round(result.coverage, 3)} worst {result.worst_bot}"
    print(table)
    assert np.all(result.coverage >= 0.90), table
    assert result.coverage[-1] <= 0.98 and result.worst_bot[-1] >= 0.88, table
    assert np.all(result.worst_bot >= 0.80), table
    assert np.all(np.diff(result.width) < 0), result.width
    assert not result.disagree.any()
    if setting in SYMMETRIC_SETTINGS:
        assert np.all(result.ratio_max <= 2.0) or result.ratio_max[-1] <= 2.1, result.ratio_max


# ---- what the table's help text promises (issue 45) -----------------------------------
HELP_CASES = [  # (setting, the help's words for it, per-member gap between the two sides)
    (Setting("help: alone", "target", 2, 2, deals=400, truth_elo=(100, 0)),
     "A finishes ahead of B {}", 100),
    (Setting("help: copies", "tenos_square", 4, 2, deals=400, truth_elo=(100, 0)),
     "two copies of A ahead of two of B {}", 200),
    (Setting("help: mixed", "tenos_square", 4, 3, deals=150, partners="mixed",
             truth_elo=(100, 0, 0)),
     "A and any partner ahead of B and the same partner {}", 100),
]


@pytest.mark.parametrize("setting, words, gap", HELP_CASES, ids=[c[0].name for c in HELP_CASES])
def test_the_table_help_states_how_often_a_100_point_gap_finishes_ahead(setting, words, gap):
    """With A 100 Elo above B per member, the help text's percentage for
    each kind of league is how often A's side finishes ahead of B's side
    (same partners otherwise), and the table reads the gap per member:
    100, not the 200 between two teams of copies."""
    from harness.cli.results import TABLE_HELP, _ahead
    from harness.stats.ratings import rating_fit

    truth = {f"b{i:02d}": elo for i, elo in enumerate(setting.truth())}
    ahead, fitted = [], []
    for replication in range(4):
        rows = simulate(setting, replication)
        ahead += head_to_head_of_a_and_b(rows, truth, gap)
        fit = rating_fit(rows)
        fitted.append(fit.difference("b00", "b01").elo)
    promised = 1 / (1 + 10 ** (-gap / 400))
    assert " ".join(words.format(_ahead(gap)).split()) in " ".join(TABLE_HELP.split())
    assert abs(np.mean(ahead) - promised) < 0.02, (np.mean(ahead), promised, len(ahead))
    assert abs(np.mean(fitted) - 100) < 15, fitted


def head_to_head_of_a_and_b(rows: list[dict[str, Any]], truth: dict[str, float],
                           gap: float) -> list[bool]:
    """For each pair of sides at a match where the second is the first with
    b00 replaced by b01, and the true gap between them is ``gap``: whether
    the first finished ahead (ties left out)."""
    sides: dict[str, dict[int, tuple[list[str], int]]] = {}
    for row in rows:
        members, _ = sides.setdefault(row["match_id"], {}).get(row["team"], ([], 0))
        sides[row["match_id"]][row["team"]] = ([*members, row["bot"]], row["rank"])
    outcomes = []
    for match in sides.values():
        for first, first_rank in match.values():
            for second, second_rank in match.values():
                swapped = sorted(bot.replace("b00", "b01") for bot in first)
                true_gap = sum(map(truth.get, first)) - sum(map(truth.get, second))
                if (swapped == sorted(second) and abs(true_gap - gap) < 1e-9
                        and first_rank != second_rank):
                    outcomes.append(first_rank < second_rank)
    return outcomes
