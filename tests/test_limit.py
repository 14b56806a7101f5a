"""limit (seed 000): the worked example and the rulings."""

from __future__ import annotations

import random

import pytest

from games import IllegalActionError
from games.limit import LIMIT_CARDS, PASS, Limit, score_basket
from games.playthrough import wire

RED, BLUE, GREEN, YELLOW = range(4)
EXAMPLE = [(RED, 9), (BLUE, 3), (BLUE, 2), (YELLOW, 6), (BLUE, 1), (GREEN, 7), (RED, 4)]


def test_seed_example_yellow_busts_with_8():
    points = score_basket(EXAMPLE + [(YELLOW, 8)], (36, 15, 9), 4)
    assert points == [15, 12, 9, 0]  # red 1st, blue 3 cards x 4, green 2nd, yellow out


def test_seed_example_yellow_hits_36_exactly_with_4():
    assert score_basket(EXAMPLE + [(YELLOW, 4)], (36, 15, 9), 4) == [0, 0, 0, 24]


def test_cards_after_the_bust_card_are_not_counted():
    basket = [(0, 9), (1, 8), (2, 9), (0, 9), (1, 9)]  # 35 > 30 at seat 0's second 9
    # seat 1's last 9 would make it first if it counted
    assert score_basket(basket, (30, 13, 8), 3) == [0, 8, 13]


def test_tied_first_splits_both_prizes_and_no_second():
    basket = [(0, 5), (1, 5), (2, 2)]
    assert score_basket(basket, (30, 13, 8), 3) == [10, 10, 4]


def test_tied_second_splits_second_prize():
    basket = [(0, 9), (1, 5), (2, 5), (3, 1), (3, 1)]
    assert score_basket(basket, (36, 15, 9), 4) == [15, 4, 4, 8]


def test_five_players_pay_five_per_card_and_lone_player_gets_first_only():
    basket = [(0, 9), (1, 5), (2, 1), (3, 1), (4, 1), (4, 1)]
    assert score_basket(basket, (51, 20, 12), 5) == [20, 12, 5, 5, 10]
    assert score_basket([(2, 3)], (21, 10, 6), 3) == [0, 0, 10]


def test_cards_of_last_round_are_unavailable_then_return():
    game = Limit.new(3, 1)
    first = game.current_player()
    game.apply(9)
    while game.round == 0:
        game.apply(PASS)
    assert game.blocked[first] == {9}
    while game.current_player() != first:
        game.apply(PASS)
    assert 9 not in game.legal_actions(), "the card put in last round is not playable"
    with pytest.raises(IllegalActionError):
        game.apply(9)
    while game.round == 1:
        game.apply(PASS)
    assert game.blocked[first] == set() and 9 in game.hands[first]


def test_round_counts_start_players_and_deck():
    for n, rounds in ((3, 12), (4, 12), (5, 10)):
        game = Limit.new(n, 2)
        starts = []
        while not game.is_terminal():
            if not game.basket and game.passes == 0:
                starts.append((game.round, game.start_player))
            game.apply(PASS)
        assert game.round == rounds - 1
        assert all(start == r % n for r, start in starts)
        assert len(game.limit_deck) == 15 - rounds
    assert sorted(LIMIT_CARDS) == list(LIMIT_CARDS) and len(LIMIT_CARDS) == 15


def test_phase_ends_after_n_passes_in_a_row_and_pass_is_not_final():
    game = Limit.new(3, 5)
    game.apply(PASS)
    game.apply(PASS)
    game.apply(1)  # third player plays: passes reset
    game.apply(1)  # first player plays again after passing
    assert game.round == 0 and len(game.basket) == 2
    for _ in range(3):
        game.apply(PASS)
    assert game.round == 1


def test_observation_hands_list_only_available_cards_and_blocked_apart():
    """The layout the docstring describes: last round's cards are in
    ``blocked`` and not in ``hands``; they return when the round ends."""
    game = Limit.new(3, 4)
    first = game.current_player()
    game.apply(7)
    while game.round == 0:
        game.apply(PASS)
    obs = game.observation((first + 1) % 3)
    assert obs["blocked"][first] == [7]
    assert 7 not in obs["hands"][first] and len(obs["hands"][first]) == 8
    while game.round == 1:
        game.apply(PASS)
    obs = game.observation(first)
    assert obs["blocked"][first] == [] and obs["hands"][first] == list(range(1, 10))


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_the_rounds_a_round_end_closed_are_kept_whole(num_players):
    """A seat's last decision of a round can come before the round's end,
    and one step can end two rounds (the next one at once, when nobody holds
    an available card). At every step all seats see the same `last_rounds`;
    when rounds end, it holds them all: the first begins with the basket
    seen before and holds the rest in play order, with its limit card and
    points, any other is empty; their points add up to the scores, and the
    last one's cards per seat are `blocked`."""
    rng = random.Random(num_players)
    ended = two_at_once = longer = 0
    for seed in range(6):
        game = Limit.new(num_players, seed)
        seen = wire(game.observation(0))
        assert seen["last_rounds"] == []
        totals = [0] * num_players
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_actions()))
            views = [wire(game.observation(s)) for s in range(num_players)]
            now = views[0]
            assert all(v["last_rounds"] == now["last_rounds"] for v in views)
            if now["round"] == seen["round"] and not game.is_terminal():
                assert now["last_rounds"] == seen["last_rounds"] and now["scores"] == totals
                seen = now
                continue
            (card, basket, points), *later = rounds = now["last_rounds"]
            ended += len(rounds)
            two_at_once += len(later) == 1
            assert len(rounds) <= 2 and now["round"] - seen["round"] == len(later) + (not game.is_terminal())
            assert card == seen["limit"] and basket[:len(seen["basket"])] == seen["basket"]
            longer += len(basket) > len(seen["basket"])
            assert all(b == [] and p == [0] * num_players for _, b, p in later)
            for card, basket, points in rounds:
                assert points == score_basket([tuple(e) for e in basket], tuple(card), num_players)
                totals = [t + p for t, p in zip(totals, points)]
            assert now["scores"] == totals and now["last_round"] == rounds[-1][2]
            if not game.is_terminal():
                for seat in range(num_players):
                    assert sorted(v for s, v in rounds[-1][1] if s == seat) == now["blocked"][seat]
            seen = now
    assert ended == 6 * (12 if num_players < 5 else 10) and longer > 0
    assert two_at_once > 0  # the random players put all nine into a round at times
