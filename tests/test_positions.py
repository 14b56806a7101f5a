"""``Game.position`` / ``set_position``: the documented way to build a test
position (games/base.py), and ``reshuffle``, the shared redeal sampler."""

from __future__ import annotations

import random

import pytest

from games import GameError
from games.base import reshuffle
from games.kings_order import KingsOrder
from games.limit import Limit


def test_position_is_a_new_game_with_the_named_fields_replaced():
    game = KingsOrder.position(3, seed=4, to_act=2)
    fresh = KingsOrder.new(3, 4)
    assert game.to_act == 2 and game.current_player() == 2
    assert game.hands == fresh.hands


def test_set_position_refuses_fields_the_engine_does_not_have():
    game = KingsOrder.new(3, 0)
    with pytest.raises(GameError, match=r"no field\(s\) \['hand'\].*'hands'"):
        game.set_position(hand=[1, 2])
    for private in ("rng", "events", "_cache", "legal_actions"):
        with pytest.raises(GameError, match="no field"):
            game.set_position(**{private: None})


def test_set_position_calls_the_engines_recompute_hook():
    seen: list[set[str]] = []

    class Watching(Limit):
        def _position_changed(self, changed: set[str]) -> None:
            seen.append(changed)

    Watching.position(3, round=2)
    assert seen == [{"round"}]


def test_reshuffle_keeps_group_sizes_and_cards_and_ignores_where_cards_lay():
    groups = [[5, 1, 9], [], [4, 2], [7]]
    dealt = reshuffle(random.Random(3), groups)
    assert [len(g) for g in dealt] == [3, 0, 2, 1]
    assert sorted(sum(dealt, [])) == [1, 2, 4, 5, 7, 9]
    moved = [[9, 4, 7], [], [2, 1], [5]]  # the same cards, elsewhere
    assert reshuffle(random.Random(3), moved) == dealt
    assert any(reshuffle(random.Random(s), groups) != dealt for s in range(4, 10))
