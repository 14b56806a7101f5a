"""Every game's heuristic bot clearly beats random play (in-process, with
observations passed through msgpack as a bot process receives them). The
full 200-match figures come from `python -m bots.evaluate GAME`."""

from __future__ import annotations

import pytest

from bots.evaluate import compare
from bots.heuristics import available, load
from games import get_game, implemented_games

MATCHES = 40


def test_every_game_has_a_heuristic():
    assert set(available()) == set(implemented_games())


@pytest.mark.slow
@pytest.mark.parametrize("slug", implemented_games())
def test_heuristic_beats_random(slug):
    counts = get_game(slug).INFO.player_counts()
    num_players = counts[len(counts) // 2]
    result = compare(slug, num_players, load(slug), MATCHES, seed=500)
    baseline = result.expected_random / MATCHES
    assert result.win_rate >= min(0.95, 1.6 * baseline), (
        f"{slug} {num_players}p: heuristic wins {result.win_rate:.0%}, random {baseline:.0%}")
