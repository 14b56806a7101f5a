"""twin_shoot's fast path for the search: the rollout policy and the prior
read the heuristic's view from the engine state
(bots.search.games.twin_shoot ``_observation``, a copy of the keys of the
engine's observation that the heuristic reads). It names the engine rules
it copies, and equals the engine's observation at every fifth decision of
many deals, at every player count."""

from __future__ import annotations

import random

import pytest

from bots.search.games import twin_shoot as search_twin_shoot
from games.twin_shoot import TwinShoot
from tests.fast_paths import SEEDS, check_observation_copy


def test_the_copy_names_the_engine_rules_it_copies():
    assert search_twin_shoot.MIRRORS_RULES_VERSION == TwinShoot.INFO.rules_version


@pytest.mark.parametrize("players", TwinShoot.INFO.player_counts())
def test_the_copied_observation_is_the_engines(players):
    checked = sum(check_observation_copy(TwinShoot.new(players, seed),
                                         search_twin_shoot._observation,
                                         search_twin_shoot.policy, random.Random(seed),
                                         every=5, limit=400)
                  for seed in SEEDS)
    assert checked > 20 * len(SEEDS)
