"""tateyoko's fast path for the search: the whole-game playout
(bots.search.games.tateyoko.whole_game.playout) keeps its own copy of a
turn's transitions on the engine's public open-cell table (``open_table``)
and ends the game by the engine's public ``end_game``. It must reach the
very state, with the very random numbers drawn, that stepping the rollout
policy through the engine reaches, from positions of many deals at every
player count, and it names the engine rules it copies."""

from __future__ import annotations

import random

import pytest

from bots.search.games import tateyoko as search_tateyoko
from bots.search.games.tateyoko import whole_game
from games.tateyoko import Tateyoko
from tests.fast_paths import SEEDS, fields, positions

CACHES = ("rng", "events", "_open_table", "_by_card", "_open_grid", "_open_len",
          "_view", "_view_grid", "_view_len")


def _step_to_game_end(state, rng: random.Random) -> None:
    game = state.game_index
    while (not state.is_terminal() and state.game_index == game
           and state.decisions < state.INFO.max_decisions):
        legal = state.legal_actions()
        index = 0 if len(legal) == 1 else search_tateyoko.policy(state, state.current_player(),
                                                                 legal, rng)
        state.apply_unchecked(legal[index])


def test_the_playout_copies_the_engine_rules_it_says_it_copies():
    assert whole_game.MIRRORS_RULES_VERSION == Tateyoko.INFO.rules_version


@pytest.mark.parametrize("players", Tateyoko.INFO.player_counts())
def test_the_playout_ends_where_stepping_the_policy_ends(players):
    played = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        stops = [rng.randrange(1, 60), rng.randrange(60, 250)]  # the second often a later game
        for start in positions(Tateyoko.new(players, seed), search_tateyoko.policy, stops, rng):
            stepped, fast = start.clone(), start.clone()
            rng_stepped, rng_fast = random.Random(seed), random.Random(seed)
            _step_to_game_end(stepped, rng_stepped)
            whole_game.playout(fast, rng_fast)
            assert fields(fast, CACHES) == fields(stepped, CACHES), (players, seed, start.decisions)
            assert fast.rng.random() == stepped.rng.random()  # the next deal's shuffle
            assert rng_fast.random() == rng_stepped.random()  # the same draws
            assert fast.legal_actions() == stepped.legal_actions()  # the caches
            played += 1
    assert played > len(SEEDS)
