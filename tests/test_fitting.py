"""bots.search.lab.fitting: the fitted evaluations in the repo can be refitted
from heuristic self-play with one command, and the weights the search plays
with still fit the data that command makes."""

from __future__ import annotations

import numpy as np
import pytest

import bots.search.lab.fitting as fitting


def test_newton_recovers_the_weights_that_made_the_data():
    rng = np.random.default_rng(1)
    truth = np.array([1.0, -0.5, 0.25])
    x = rng.normal(size=(40_000, 3))
    y = (rng.random(40_000) < 1 / (1 + np.exp(-(x @ truth)))).astype(float)
    fitted = fitting.fit_pairwise(x, y, l2=1e-6)
    np.testing.assert_allclose(fitted, truth, atol=0.05)
    assert fitting.log_loss(x, y, fitted) <= fitting.log_loss(x, y, truth)


def test_a_pair_row_per_pair_of_seats_with_ties_as_half():
    match = fitting.Match(0, [2, 1, 2], [(3, [[1.0, 0.0], [0.0, 2.0], [4.0, 1.0]])])
    assert list(fitting.pair_rows(match)) == [
        (3, [1.0, -2.0], 0.0), (3, [-3.0, -1.0], 0.5), (3, [-4.0, 1.0], 1.0)]


@pytest.mark.parametrize(("players", "stages"), [(3, 7), (4, 5)])
def test_tile_hunt_snapshots_every_round_start_but_the_first(players, stages):
    match = fitting.tile_hunt_match(players, seed=12)
    assert [stage for stage, _ in match.snapshots] == list(range(stages, 0, -1))
    assert all(len(seats) == players and all(len(f) == 6 for f in seats)
               for _, seats in match.snapshots)
    assert sorted(match.ranks)[0] == 1


def test_the_command_prints_a_row_per_stage_and_the_repo_weights_loss(capsys):
    assert fitting.main(["tile_hunt", "--matches", "60", "--workers", "1",
                         "--first-seed", "930000"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines[2:]]
    assert [int(row[0]) for row in rows] == [1, 2, 3, 4, 5]
    assert all(0 < float(row[2]) < 1 and 0 < float(row[3]) < 1 for row in rows)


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize("game", ["tile_hunt", "target"])
def test_the_repo_weights_predict_fresh_self_play_as_well_as_a_refit(game):
    """On 2,000 fresh matches the repo's weights do no worse on the held-out
    fifth than weights fitted on the rest; the same weights with their
    columns reversed (features out of step with the weights, what a change
    to the features without a refit would do) do clearly worse."""
    spec = fitting.GAMES[game]
    first = 940_000
    matches = fitting.play_matches(game, 4, range(first, first + 2_000), workers=1)
    repo = fitting.repo_weights(game, 4)
    for fit in fitting.fit_stages(matches, first, repo, spec.l2_on_sum):
        assert fit.repo_loss is not None
        assert fit.repo_loss <= fit.held_out_loss + 0.01, fit
    scrambled = {stage: tuple(reversed(row)) for stage, row in repo.items()}
    fits = fitting.fit_stages(matches, first, scrambled, spec.l2_on_sum)
    assert any(f.repo_loss is not None and f.repo_loss > f.held_out_loss + 0.05 for f in fits)
