"""target's fast path for the search: the round playout
(bots.search.games.target.rollout.playout) keeps its own copy of the
choose, play and discard steps and calls the engine's public
``judge_round`` and ``end_discards`` for the rest. It must reach the very
state, with the very rng draws, that playing the heuristic on the wire
(and at one seat the search's tuned default move, ``hero``) through the
engine reaches, from many positions of many deals at every player count,
and it names the engine rules it copies."""

from __future__ import annotations

import random

import pytest

from bots.heuristics import load
from bots.search.games.target import default_move
from bots.search.games.target import rollout as target_rollout
from games.playthrough import wire
from games.target import Target
from tests.fast_paths import SEEDS, fields, positions


def test_the_playout_copies_the_engine_rules_it_says_it_copies():
    assert target_rollout.MIRRORS_RULES_VERSION == Target.INFO.rules_version


@pytest.mark.parametrize("players", Target.INFO.player_counts())
def test_the_playout_ends_where_stepping_the_heuristic_ends(players):
    heuristic = load("target")  # on the wire, as a bot: independent of the playout's copy
    played = hero_discards = 0
    for seed in SEEDS:
        hero = seed % (players + 1) - 1  # -1: the heuristic at every seat
        rng = random.Random(seed)
        stops = sorted(rng.sample(range(1, 60), 3))
        for start in positions(Target.new(players, seed), target_rollout.policy, stops, rng):
            stop = start.round + 1 + start.decisions % 3  # 1-3 round boundaries on, or the end
            stepped, fast = start.clone(), start.clone()
            while not stepped.is_terminal() and stepped.round < stop:
                legal = stepped.legal_actions()
                seat = stepped.current_player()
                obs, wire_legal = wire([stepped.observation(seat), legal])
                mover = default_move if seat == hero else heuristic
                index = mover(obs, wire_legal, random.Random(0))
                hero_discards += seat == hero and obs["phase"] == "discard" and index > 0
                stepped.apply_unchecked(legal[index])
            target_rollout.playout(fast, stop, hero=hero)
            assert fields(fast) == fields(stepped), (players, seed, start.decisions)
            assert fast.rng.getstate() == stepped.rng.getstate()  # the same refills
            played += 1
    assert played > len(SEEDS)  # a deal may end before its last positions
    assert hero_discards > 10
