"""grazia's fast path for the search: the whole-turn playout
(bots.search.games.grazia.playout) keeps its own copy of a turn's
transitions and ends turns by the engine's public ``end_turn``. It must
reach the very state that stepping the rollout policy through the engine
reaches, from many positions of many deals at every player count, and it
names the engine rules it copies."""

from __future__ import annotations

import random

import pytest

from bots.search.games import grazia as search_grazia
from games.grazia import Grazia
from tests.fast_paths import SEEDS, fields, positions


def test_the_playout_copies_the_engine_rules_it_says_it_copies():
    assert search_grazia.MIRRORS_RULES_VERSION == Grazia.INFO.rules_version


@pytest.mark.parametrize("players", Grazia.INFO.player_counts())
def test_the_playout_ends_where_stepping_the_policy_ends(players):
    played = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        stops = sorted(rng.sample(range(2, 80), 4))
        for start in positions(Grazia.new(players, seed), search_grazia.policy, stops, rng):
            stepped, fast = start.clone(), start.clone()
            while not stepped.is_terminal():
                legal = stepped.legal_actions()
                stepped.apply_unchecked(legal[search_grazia.policy(
                    stepped, stepped.current_player(), legal, random.Random(0))])
            search_grazia.playout(fast)
            assert fast.is_terminal()
            assert fields(fast) == fields(stepped), (players, seed, start.decisions)
            played += 1
    assert played > len(SEEDS)  # a deal may end before its last positions
