"""The tateyoko whole-game playout (bots/search/tateyoko_fast.py) plays the
heuristic's moves: it ends where stepping the fast rollout policy through
the engine ends, with the same random numbers drawn."""

from __future__ import annotations

import random

from bots.search.fast import FAST
from bots.search.tateyoko_fast import tateyoko_playout
from tests.test_search_bot import decision_points

CACHES = ("rng", "events", "_open_table", "_by_card", "_open_grid", "_open_len",
          "_view", "_view_grid", "_view_len")


def _fields(state) -> dict:
    return {k: v for k, v in state.__dict__.items() if k not in CACHES}


def _step_to_game_end(state, rng: random.Random) -> None:
    game = state.game_index
    while (not state.is_terminal() and state.game_index == game
           and state.decisions < state.INFO.max_decisions):
        legal = state.legal_actions()
        index = 0 if len(legal) == 1 else FAST["tateyoko"](state, state.current_player(),
                                                           legal, rng)
        state.apply_unchecked(legal[index])


def test_tateyoko_fast_playout_ends_where_stepping_the_policy_ends():
    played = 0
    for players in (3, 4, 6):
        for game, _seat, _obs, _legal in decision_points("tateyoko", players, seed=players,
                                                         noise=0.5):
            if game.decisions % 3:
                continue
            stepped, fast = game.clone(), game.clone()
            rng_stepped, rng_fast = random.Random(played), random.Random(played)
            _step_to_game_end(stepped, rng_stepped)
            tateyoko_playout(fast, rng_fast)
            assert _fields(fast) == _fields(stepped)
            assert fast.rng.random() == stepped.rng.random()  # the next deal's shuffle
            assert rng_fast.random() == rng_stepped.random()  # the same draws
            assert fast.legal_actions() == stepped.legal_actions()  # the caches
            played += 1
    assert played > 30

