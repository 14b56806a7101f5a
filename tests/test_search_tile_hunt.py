"""tile_hunt's turn search (bots.search.tile_hunt_turn): the dice are played
by the heuristic's DP over values of the ways a turn can end."""

from __future__ import annotations

import random

import msgpack

import bots.heuristics.tile_hunt as tile_hunt_heuristic
from bots.heuristics import load
from bots.search.config import config_for
from bots.search.core import Budget, Searcher
from bots.search.tile_hunt_turn import _ends
from games import get_game


def _wire(value):
    return msgpack.unpackb(msgpack.packb(value), raw=False, strict_map_key=False)


def _decisions(seeds: range, players: int = 4):
    heuristic = load("tile_hunt")
    for seed in seeds:
        game = get_game("tile_hunt").new(players, seed)
        rng = random.Random(seed)
        while not game.is_terminal():
            seat, legal = game.current_player(), game.legal_actions()
            obs, wire_legal = _wire([game.observation(seat), legal])
            index = heuristic(obs, wire_legal, rng)
            yield game, obs, wire_legal, index
            game.apply(legal[index])


def test_with_the_heuristics_values_the_turn_dp_plays_the_heuristics_move() -> None:
    """Given the heuristic's own values for the ends, the weights the turn
    search gives each action are chances (they sum to 1) and the action of
    the best expectation is worth what the heuristic's move is worth."""
    searcher = Searcher("tile_hunt", 0, 4, 1)
    turns = searcher.turn_search
    checked = 0
    for _game, obs, legal, index in _decisions(range(12)):
        if len(legal) == 1:
            continue
        options = tile_hunt_heuristic.options(obs)
        ends = _ends(obs, options)
        value = {(kind, name): v for kind, name, v in options}
        mean = [value[end] if end in value else tile_hunt_heuristic.chips_value(obs, end[1])
                for end in ends]
        weights = turns._weights(obs, legal, ends, mean)
        assert all(abs(sum(row) - 1.0) < 1e-9 for row in weights)
        worth = [sum(p * v for p, v in zip(row, mean)) for row in weights]
        assert abs(max(worth) - worth[index]) < 1e-6 * max(1.0, abs(worth[index]))
        checked += 1
    assert checked > 300


def test_turn_search_is_legal_and_seeded() -> None:
    def play(seed: int) -> list[int]:
        searcher = Searcher("tile_hunt", 0, 3, seed)
        moves = []
        for _game, obs, legal, _ in _decisions(range(1), players=3):
            searched = config_for("tile_hunt").search_step(obs)
            if obs["current_player"] == 0 and searched and len(legal) > 1:
                outcome = searcher.choose(obs, legal, Budget(iterations=60))
                assert 0 <= outcome.index < len(legal)
                turn = searcher.turn_search.turn  # the turn search played it, early takes included
                assert turn is not None and turn.key == (obs["round"], obs["turn_position"])
                moves.append(outcome.index)
                early_takes.append(obs["phase"] == "early")
        return moves

    early_takes: list[bool] = []
    first = play(5)
    assert len(first) > 5 and any(early_takes)
    assert play(5) == first


def test_every_take_the_engine_offers_is_an_end_the_turn_search_values() -> None:
    """The take step's legal actions (the engine's) are all among the ends
    the turn search valued at the turn's start (from the heuristic's
    options): in every phase, steals and the final round included."""
    searcher = Searcher("tile_hunt", 0, 4, 1)
    turns = searcher.turn_search
    ends_at_start: list = []
    takes = 0
    for _game, obs, legal, _ in _decisions(range(30)):
        if obs["step"] == "roll" and obs["rerolls_left"] == 2:
            ends_at_start = _ends(obs, tile_hunt_heuristic.options(obs))
        elif obs["step"] == "take":
            assert {turns._end_of(obs, action) for action in legal} <= set(ends_at_start)
            takes += 1
    assert takes > 500
