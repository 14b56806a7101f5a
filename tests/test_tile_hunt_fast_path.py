"""tile_hunt's fast path for the search: the rollout policy reads the
heuristic's view from the engine state (bots.search.games.tile_hunt.dice
``observation``, a copy of the keys of the engine's observation that the
heuristic reads), and the final-round probe (bots.search.lab.tile_hunt_exact)
ranks a finished match by its own copy of the standings. Both name the
engine rules they copy; the copied observation equals the engine's at
every third decision of many deals, at every player count."""

from __future__ import annotations

import random

import pytest

from bots.search.games.tile_hunt import dice
from bots.search.lab import tile_hunt_exact
from games.tile_hunt import TileHunt
from tests.fast_paths import SEEDS, check_observation_copy


def test_the_copies_name_the_engine_rules_they_copy():
    assert dice.MIRRORS_RULES_VERSION == TileHunt.INFO.rules_version
    assert tile_hunt_exact.MIRRORS_RULES_VERSION == TileHunt.INFO.rules_version


@pytest.mark.parametrize("players", TileHunt.INFO.player_counts())
def test_the_copied_observation_is_the_engines(players):
    checked = sum(check_observation_copy(TileHunt.new(players, seed), dice.observation,
                                         dice.policy, random.Random(seed), every=3,
                                         limit=TileHunt.INFO.max_decisions)
                  for seed in SEEDS)
    assert checked > 20 * len(SEEDS)
