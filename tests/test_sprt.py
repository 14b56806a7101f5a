"""SPRT for "is B better than A" on paired duplicate deals: the LLR is the
generalised one, error rates hold on simulated pairs, clear cases stop
early, and pairs come out of stored seat rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.sprt import (
    PENTANOMIAL,
    TRINOMIAL,
    PairResult,
    Sprt,
    closest_with_mean,
    llr,
    pair_outcome,
    paired_results,
    pentanomial_outcomes,
    score_of_elo,
)


def test_closest_distribution_has_the_mean_and_beats_any_other():
    from scipy.optimize import minimize

    rng = np.random.default_rng(1)
    for values in (TRINOMIAL, PENTANOMIAL):
        for _ in range(5):
            freq = rng.dirichlet(np.ones(len(values)))
            mean = rng.uniform(0.3, 0.7)
            ours = closest_with_mean(freq, values, mean)
            assert ours.sum() == pytest.approx(1) and ours @ values == pytest.approx(mean)
            best = minimize(lambda p, f=freq: -f @ np.log(p), np.full(len(values), 1 / len(values)),
                            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1},
                                         {"type": "eq", "fun": lambda p, v=values, m=mean: p @ v - m}],
                            bounds=[(1e-9, 1)] * len(values), method="SLSQP",
                            options={"ftol": 1e-14, "maxiter": 500})
            assert freq @ np.log(ours) >= -best.fun - 1e-9


def test_llr_is_zero_without_pairs_and_signs_follow_the_score():
    assert llr(np.zeros(3), TRINOMIAL, 0, 10) == 0
    assert llr(np.array([10, 80, 30]), TRINOMIAL, 0, 10) > 0
    assert llr(np.array([30, 80, 10]), TRINOMIAL, 0, 10) < 0


def test_llr_matches_the_normal_approximation_for_many_pairs():
    counts = np.array([2400.0, 5100.0, 2500.0])
    n = counts.sum()
    s0, s1 = score_of_elo(0), score_of_elo(5)
    mean = counts @ TRINOMIAL / n
    variance = counts @ (TRINOMIAL - mean) ** 2 / n
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance)
    assert llr(counts, TRINOMIAL, 0, 5) == pytest.approx(approx, rel=0.02)


def simulate(probabilities: np.ndarray, test: Sprt, runs: int, max_pairs: int,
             seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Run ``runs`` tests on pairs drawn from ``probabilities``: each run's
    verdict (+1 H1, -1 H0, 0 none by max_pairs) and its number of pairs.
    The LLR is checked after every pair, as a scheduler would."""
    rng = np.random.default_rng(seed)
    low, high = test.bounds()
    verdict, length = np.zeros(runs, dtype=int), np.full(runs, max_pairs)
    counts = np.zeros((runs, len(probabilities)))
    active = np.arange(runs)
    block = 250
    for start in range(0, max_pairs, block):
        draws = rng.multinomial(1, probabilities, size=(len(active), block))
        running = counts[active][:, None, :] + np.cumsum(draws, axis=1)
        value = llr(running, test.values, test.elo0, test.elo1)
        crossed = (value >= high) | (value <= low)
        first = np.where(crossed.any(1), crossed.argmax(1), -1)
        stop = first >= 0
        at = first[stop]
        verdict[active[stop]] = np.where(value[stop, at] >= high, 1, -1)
        length[active[stop]] = start + at + 1
        counts[active] = running[:, -1]
        active = active[~stop]
        if not len(active):
            break
    return verdict, length


def trinomial(elo: float, draws: float) -> np.ndarray:
    score = float(score_of_elo(elo))
    return np.array([1 - score - draws / 2, draws, score - draws / 2])


def pentanomial(elo: float, draws: float, correlation: float) -> np.ndarray:
    """Two pairs of one deal: with probability ``correlation`` the second
    repeats the first, else it is drawn afresh (a pair's score stays the
    trinomial's)."""
    p = trinomial(elo, draws)
    independent = np.convolve(p, p)
    same = np.zeros(5)
    same[[0, 2, 4]] = p
    return correlation * same + (1 - correlation) * independent


@pytest.mark.parametrize("kind", ["trinomial", "pentanomial"])
def test_error_rates_hold_when_h0_or_h1_is_true(kind):
    alpha = beta = 0.05
    runs = 2000 if kind == "trinomial" else 1000
    rates = {}
    for truth, elo in (("H0", 0.0), ("H1", 20.0)):
        test = Sprt(elo0=0, elo1=20, alpha=alpha, beta=beta, pentanomial=kind == "pentanomial")
        probabilities = trinomial(elo, 0.4) if kind == "trinomial" else pentanomial(elo, 0.4, 0.3)
        verdict, length = simulate(probabilities, test, runs, 20000, seed=3 if truth == "H0" else 4)
        assert np.all(verdict != 0), "every run ends"
        wrong = np.mean(verdict == (1 if truth == "H0" else -1))
        rates[truth] = (wrong, int(np.median(length)))
    print(kind, {k: (f"{w:.1%} wrong", f"median {m} pairs") for k, (w, m) in rates.items()})
    # the nominal rates, with three standard errors of the runs to spare
    assert rates["H0"][0] <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    assert rates["H1"][0] <= beta + 3 * math.sqrt(beta * (1 - beta) / runs)


def test_a_clear_difference_stops_early():
    test = Sprt(elo0=0, elo1=10)
    verdict, length = simulate(trinomial(150, 0.3), test, 200, 5000, seed=5)
    assert np.all(verdict == 1)
    # a 10-Elo question takes thousands of pairs; a 150-Elo answer about 200
    assert np.median(length) < 250 and length.max() < 400, (np.median(length), length.max())
    verdict, length = simulate(trinomial(-150, 0.3), test, 200, 5000, seed=6)
    assert np.all(verdict == -1) and np.median(length) < 250


def test_running_test_updates_verdict_and_estimate():
    test = Sprt(elo0=0, elo1=10)
    assert test.verdict() is None and test.estimate().pairs == 0
    rng = np.random.default_rng(7)
    outcomes = rng.choice(TRINOMIAL, size=5000, p=trinomial(60, 0.3))
    for outcome in outcomes:
        test.update(outcome)
        if test.verdict():
            break
    n = int(test.counts.sum())
    assert test.verdict() == "H1" and n < 5000
    estimate = test.estimate()
    assert estimate.elo_low < estimate.elo < estimate.elo_high and estimate.los > 0.99
    assert test.summary()["verdict"] == "H1" and test.summary()["pairs"] == n
    with pytest.raises(ValueError):
        test.update(0.25)
    with pytest.raises(ValueError):
        Sprt(elo0=5, elo1=0)


def seat(match, seat_no, bot, rank, deal, team=None):
    return {"match_id": match, "seat": seat_no, "bot": bot, "team": seat_no if team is None else team,
            "score": 0.0, "rank": rank, "fault_kind": None, "deal": deal, "league": "s"}


def test_pairs_come_from_the_same_deal_and_seat_against_the_same_field():
    rows = []
    for deal, (rank_a, rank_b) in enumerate([(2, 1), (1, 1), (1, 3)]):
        for who, rank in (("A", rank_a), ("B", rank_b)):
            others = [r for r in (1, 2, 3) if r != rank][:2]
            rows += [seat(f"{who}{deal}", 0, who, rank, deal), seat(f"{who}{deal}", 1, "x", others[0], deal),
                     seat(f"{who}{deal}", 2, "y", others[1], deal)]
    rows += [seat("lonely", 0, "A", 1, 9), seat("lonely", 1, "x", 2, 9), seat("lonely", 2, "y", 3, 9)]
    rows += [seat("both", 0, "A", 1, 0), seat("both", 1, "B", 2, 0), seat("both", 2, "y", 3, 0)]
    pairs = paired_results(rows, "A", "B")
    assert [p.outcome for p in pairs] == [1.0, 0.5, 0.0]
    for r in rows:
        r["bot"] = {"A": "A@v1", "B": "B@v2"}.get(r["bot"], r["bot"])
    assert paired_results(rows, "A", "B@v2") == pairs, "by name or by name@version"
    assert pairs[0].seating == ("*", "x", "y")
    assert pair_outcome(3, 1) == 1.0 and pair_outcome(2, 2) == 0.5


def test_two_seatings_of_a_deal_make_a_pentanomial_outcome():
    pairs = [PairResult("s", 0, ("*", "x"), 2, 1), PairResult("s", 0, ("x", "*"), 1, 1),
             PairResult("s", 1, ("*", "x"), 1, 2), PairResult("s", 1, ("x", "*"), 1, 2),
             PairResult("s", 2, ("*", "x"), 1, 2)]
    assert pentanomial_outcomes(pairs) == [0.75, 0.0]
    test = Sprt(pentanomial=True)
    test.update(pentanomial_outcomes(pairs))
    assert test.counts.tolist() == [1, 0, 0, 1, 0]
