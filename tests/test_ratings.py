"""Ratings: the fit agrees with choix, ignores finishing order, credits teams."""

from __future__ import annotations

import random

import choix
import numpy as np

from harness.ratings import comparisons, fit_bradley_terry, head_to_head, rate


def synthetic_matches(strengths: dict[str, float], matches: int, players: int, seed: int,
                      teams: bool = False):
    """Seat rows of matches whose finishing orders follow Plackett-Luce."""
    rng = random.Random(seed)
    names = sorted(strengths)
    rows = []
    for m in range(matches):
        if teams:
            a, b = rng.sample(names, 2)
            units = [(0, a, (0, 2)), (1, b, (1, 3))]
        else:
            table = rng.sample(names, players)
            units = [(seat, bot, (seat,)) for seat, bot in enumerate(table)]
        remaining = list(units)
        order = []
        while remaining:
            weights = [np.exp(strengths[u[1]]) for u in remaining]
            pick = rng.choices(range(len(remaining)), weights)[0]
            order.append(remaining.pop(pick))
        for rank, (team, bot, seats) in enumerate(order, 1):
            for seat in seats:
                rows.append({"match_id": f"m{m:05d}", "seat": seat, "bot": bot, "team": team,
                             "score": float(10 - rank), "rank": rank, "fault_kind": None})
    return rows


def test_fit_matches_choix_on_the_same_data():
    rows = synthetic_matches({"a": 1.0, "b": 0.3, "c": 0.0, "d": -0.8}, 300, 3, seed=1)
    data = comparisons(rows)
    assert np.all(data.weight == 1.0), "no ties in this data"
    pairs = list(zip(data.winner.tolist(), data.loser.tolist()))
    alpha = 0.01
    ours = fit_bradley_terry(data.wins_matrix(), alpha=alpha)
    theirs = choix.opt_pairwise(len(data.bots), pairs, alpha=alpha, tol=1e-10)
    np.testing.assert_allclose(ours - ours.mean(), theirs - theirs.mean(), atol=1e-4)


def test_same_results_in_any_order_give_identical_tables():
    rows = synthetic_matches({"a": 0.5, "b": 0.0, "c": -0.5}, 120, 3, seed=2)
    shuffled = list(rows)
    random.Random(9).shuffle(shuffled)
    assert rate(rows) == rate(shuffled)
    bots_1, rates_1, _ = head_to_head(rows)
    bots_2, rates_2, _ = head_to_head(shuffled)
    assert bots_1 == bots_2 and np.array_equal(rates_1, rates_2, equal_nan=True)


def test_stronger_bot_ranks_first_with_separate_intervals():
    rows = synthetic_matches({"strong": 1.0, "weak": -1.0, "mid": 0.0}, 300, 3, seed=3)
    table = rate(rows)
    assert [r.bot for r in table] == ["strong", "mid", "weak"]
    assert table[0].elo_low > table[1].elo_high > table[2].elo_high
    assert table[1].elo_low > table[2].elo_high
    for row in table:
        assert row.elo_low <= row.elo <= row.elo_high
    assert abs(np.mean([r.elo for r in table]) - 1500) < 1e-6


def test_ties_count_half_and_copies_teach_nothing():
    rows = [
        {"match_id": "x", "seat": 0, "bot": "a", "team": 0, "score": 1, "rank": 1, "fault_kind": None},
        {"match_id": "x", "seat": 1, "bot": "a", "team": 1, "score": 0, "rank": 3, "fault_kind": None},
        {"match_id": "x", "seat": 2, "bot": "b", "team": 2, "score": 1, "rank": 1, "fault_kind": None},
    ]
    wins = comparisons(rows).wins_matrix()
    # a(seat 0) ties b: half each way; a(seat 1) loses to b; a vs a skipped
    assert wins.tolist() == [[0.0, 0.5], [1.5, 0.0]]


def test_team_results_credit_each_member_once():
    rows = synthetic_matches({"strong": 1.5, "weak": -1.5}, 60, 4, seed=4, teams=True)
    data = comparisons(rows)
    assert len(data.winner) == 60, "one comparison per match between the two teams"
    table = rate(rows)
    assert table[0].bot == "strong" and table[0].elo_low > table[1].elo_high
    assert sum(row.games for row in table) == 2 * 60, "a team of copies plays one game a match"


def test_mixed_partners_are_compared_across_teams_only():
    rows = []
    for seat, (bot, team, rank) in enumerate([("a", 0, 1), ("b", 1, 2), ("c", 0, 1), ("d", 1, 2)]):
        rows.append({"match_id": "m", "seat": seat, "bot": bot, "team": team, "score": 0,
                     "rank": rank, "fault_kind": None})
    data = comparisons(rows)
    pairs = sorted(zip(data.winner.tolist(), data.loser.tolist()))
    a, b, c, d = range(4)
    assert pairs == sorted([(a, b), (a, d), (c, b), (c, d)])


def test_a_bot_that_never_loses_gets_a_finite_rating_and_a_real_interval():
    rows = synthetic_matches({"strong": 50.0, "weak": -50.0}, 100, 2, seed=5)
    table = rate(rows)
    strong, weak = table
    assert strong.bot == "strong" and np.isfinite(strong.elo)
    assert strong.elo_high - strong.elo_low > 50, "unanimous results still leave uncertainty"
    assert strong.elo_low > weak.elo_high


def test_empty_results_give_an_empty_table():
    assert rate([]) == []
