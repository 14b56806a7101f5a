"""tateyoko (seed 003 §03): the seed's worked examples and every ruling."""

from __future__ import annotations

import random

import pytest

from games import IllegalActionError
from games.tateyoko import (
    HAND_SIZES,
    PASS,
    STOP,
    Tateyoko,
    cell_options,
    fits,
    penalty,
)
from games.tennos import CLUB, CROSS, DIAMOND, HEART, LEAF, SPADE, card

A, J, Q, K = 1, 11, 12, 13

# Cards that fit nothing in the positions below (no A, J, Q, K, 2, 5, 6 ...),
# so they never offer a move the tests do not expect.
FILLER = [card(CROSS, 8), card(DIAMOND, 9), card(LEAF, 8)]


def position(num_players, grid, hands, to_act=0, deck=(), turn=()):
    """A game with the given grid {(x, y): card}, hands and deck."""
    return Tateyoko.position(num_players, grid=dict(grid), hands=[list(h) for h in hands],
                             deck=list(deck), to_act=to_act, turn=list(turn), passes=0)


def placements_of(game):
    return [a for a in game.legal_actions() if isinstance(a, tuple)]


def end_turn(game):
    """Stop the current turn if it is still going."""
    if game.turn:
        game.apply(STOP)


# ---- the seed's example ------------------------------------------------


def test_seed_example_alice_to_elsa():
    alice = [card(HEART, Q), *FILLER]
    betty = [card(SPADE, K), *FILLER]
    catherine = [card(HEART, K), *FILLER]
    dolly = [card(HEART, A), card(LEAF, A), card(CLUB, A), *FILLER]
    elsa = [card(SPADE, J), card(CLUB, 2), *FILLER]
    game = position(
        5,
        {(0, 0): card(SPADE, Q)},
        [alice, betty, catherine, dolly, elsa],
    )

    # Alice: heart Q above the spade Q (same rank, vertical).
    assert (card(HEART, Q), 0, 1) in game.legal_actions()
    assert (card(HEART, Q), 1, 0) not in game.legal_actions()  # horizontal needs the suit
    game.apply((card(HEART, Q), 0, 1))
    end_turn(game)
    assert game.current_player() == 1

    # Betty: spade K left of the spade Q (same suit, one apart).
    assert (card(SPADE, K), -1, 0) in game.legal_actions()
    assert (card(SPADE, K), 0, -1) not in game.legal_actions()  # vertical needs the rank
    game.apply((card(SPADE, K), -1, 0))
    end_turn(game)

    # Catherine: heart K right of the heart Q.
    assert (card(HEART, K), 1, 1) in game.legal_actions()
    assert (card(HEART, K), 0, 2) not in game.legal_actions()  # above a Q
    game.apply((card(HEART, K), 1, 1))
    end_turn(game)
    assert game.current_player() == 3

    # Dolly: heart A right of the heart K (K and A are one apart), then leaf A
    # and club A downwards in one line.
    assert (card(HEART, A), 2, 1) in game.legal_actions()
    game.apply((card(HEART, A), 2, 1))
    assert game.current_player() == 3 and game.turn == [(2, 1)]
    legal = game.legal_actions()
    assert legal[0] == STOP and PASS not in legal
    assert (card(LEAF, A), 2, 0) in legal
    assert (card(LEAF, A), 2, 2) in legal  # upwards would also do
    assert (card(LEAF, A), 3, 1) not in legal  # horizontal: wrong suit
    game.apply((card(LEAF, A), 2, 0))
    legal = game.legal_actions()
    assert placements_of(game) == [(card(CLUB, A), 2, -1)]  # the line goes on downwards
    game.apply((card(CLUB, A), 2, -1))
    # no A left in hand, but an A not on the grid could go on at (2, -2), so
    # the turn goes on with "stop" as the only action (rules version 2)
    assert game.current_player() == 3 and game.legal_actions() == [STOP]
    game.apply(STOP)
    assert game.current_player() == 4 and game.turn == []

    # Elsa: the spade J fits nowhere; the club 2 goes right of the club A.
    legal = game.legal_actions()
    assert not [a for a in placements_of(game) if a[0] == card(SPADE, J)]
    assert not any(
        fits(game.grid, card(SPADE, J), x, y) for x in range(-4, 5) for y in range(-4, 5)
    )
    assert (card(CLUB, 2), 3, -1) in legal
    game.apply((card(CLUB, 2), 3, -1))
    end_turn(game)

    assert game.grid == {
        (0, 0): card(SPADE, Q),
        (0, 1): card(HEART, Q),
        (-1, 0): card(SPADE, K),
        (1, 1): card(HEART, K),
        (2, 1): card(HEART, A),
        (2, 0): card(LEAF, A),
        (2, -1): card(CLUB, A),
        (3, -1): card(CLUB, 2),
    }


def test_seed_scoring_example():
    hand = [card(SPADE, r) for r in (3, 5, 9, K)] + [
        card(HEART, 6),
        card(HEART, Q),
        card(CROSS, 7),
    ]
    assert penalty(hand) == -12
    assert penalty([]) == 5


# ---- placement rules -----------------------------------------------------


def test_vertical_neighbours_need_the_same_rank():
    grid = {(0, 0): card(SPADE, 5)}
    assert fits(grid, card(HEART, 5), 0, 1)
    assert fits(grid, card(CROSS, 5), 0, -1)
    assert not fits(grid, card(SPADE, 6), 0, 1)  # same suit, next rank: not vertically
    assert not fits(grid, card(HEART, 6), 0, -1)


def test_horizontal_neighbours_need_same_suit_one_apart_with_k_a():
    grid = {(0, 0): card(SPADE, 5)}
    assert fits(grid, card(SPADE, 6), 1, 0)
    assert fits(grid, card(SPADE, 4), 1, 0)  # either direction
    assert fits(grid, card(SPADE, 4), -1, 0)
    assert not fits(grid, card(HEART, 6), 1, 0)  # wrong suit
    assert not fits(grid, card(SPADE, 7), 1, 0)  # two apart
    assert not fits(grid, card(HEART, 5), 1, 0)  # same rank only vertically
    king = {(0, 0): card(LEAF, K)}
    assert fits(king, card(LEAF, A), 1, 0)
    assert fits(king, card(LEAF, A), -1, 0)
    assert fits(king, card(LEAF, Q), 1, 0)
    ace = {(0, 0): card(LEAF, A)}
    assert fits(ace, card(LEAF, K), -1, 0)
    assert fits(ace, card(LEAF, 2), -1, 0)
    assert not fits(ace, card(LEAF, Q), 1, 0)
    assert cell_options(ace, 1, 0) == (card(LEAF, A) + 1, card(LEAF, K))


def test_every_neighbour_must_fit():
    # (1, 0) touches the spade 5 on its left and the heart 7 above it
    grid = {(0, 0): card(SPADE, 5), (1, 1): card(HEART, 7), (1, 2): card(CROSS, 7)}
    assert not fits(grid, card(SPADE, 6), 1, 0)  # left fits, above does not
    assert not fits(grid, card(DIAMOND, 7), 1, 0)  # above fits, left does not
    grid[(1, 1)] = card(HEART, 6)
    assert fits(grid, card(SPADE, 6), 1, 0)  # both fit
    # between two vertical cards of different ranks nothing fits
    column = {(0, 1): card(SPADE, 3), (0, -1): card(HEART, 4)}
    assert cell_options(column, 0, 0) == ()
    # between two horizontal cards: one apart from both
    row = {(-1, 0): card(CLUB, 3), (1, 0): card(CLUB, 5)}
    assert cell_options(row, 0, 0) == (card(CLUB, 4),)


def test_a_card_must_touch_the_grid_and_the_cell_be_empty():
    grid = {(0, 0): card(SPADE, 5)}
    assert not fits(grid, card(HEART, 5), 0, 2)  # not next to a card
    assert not fits(grid, card(HEART, 5), 1, 1)  # diagonal only
    assert not fits(grid, card(HEART, 5), 0, 0)  # occupied
    game = position(3, grid, [[card(HEART, 5), *FILLER], FILLER, FILLER])
    assert placements_of(game) == [(card(HEART, 5), 0, -1), (card(HEART, 5), 0, 1)]


def test_turn_cards_lie_in_a_line_each_next_to_the_previous():
    grid = {(0, 0): card(SPADE, 5)}
    hand = [card(HEART, 5), card(DIAMOND, 5), card(CLUB, 5), card(CROSS, 5), *FILLER]
    game = position(3, grid, [hand, FILLER, FILLER])
    game.apply((card(HEART, 5), 0, 1))
    # second card: any neighbour of the first one (only (0, 2) is open and fitting:
    # (1, 1) and (-1, 1) need a heart 4 or 6)
    assert {(x, y) for _, x, y in placements_of(game)} == {(0, 2)}
    game.apply((card(DIAMOND, 5), 0, 2))
    # third card: only straight on upwards, not back next to the first card
    assert {(x, y) for _, x, y in placements_of(game)} == {(0, 3)}
    assert (card(CLUB, 5), 0, -1) not in game.legal_actions()
    game.apply((card(CLUB, 5), 0, 3))
    assert placements_of(game) == [(card(CROSS, 5), 0, 4)]
    game.apply(STOP)
    assert game.current_player() == 1 and game.turn == []
    assert game.hands[0] == [card(CROSS, 5), *FILLER]


def test_line_direction_is_set_by_the_second_card():
    grid = {(0, 0): card(HEART, 5)}
    hand = [card(HEART, 6), card(HEART, 7), card(SPADE, 6), card(DIAMOND, 6), *FILLER]
    game = position(3, grid, [hand, FILLER, FILLER])
    game.apply((card(HEART, 6), 1, 0))
    legal = placements_of(game)
    assert (card(HEART, 7), 2, 0) in legal  # on to the right
    assert (card(SPADE, 6), 1, 1) in legal  # or upwards
    assert (card(DIAMOND, 6), 1, -1) in legal  # or downwards
    game.apply((card(SPADE, 6), 1, 1))
    # upwards it is now: the heart 7 (right of the first card) is out of line
    assert placements_of(game) == [(card(DIAMOND, 6), 1, 2)]
    assert (card(DIAMOND, 6), 1, -1) not in game.legal_actions()


def test_stop_is_offered_while_a_card_off_the_grid_could_go_on():
    """The hand holds nothing for (0, 2), but other 5s exist off the grid: the
    turn does not end by itself, or the others would learn the hand holds no 5."""
    game = position(3, {(0, 0): card(SPADE, 5)}, [[card(HEART, 5), *FILLER], FILLER, FILLER])
    game.apply((card(HEART, 5), 0, 1))
    assert game.current_player() == 0 and game.legal_actions() == [STOP]
    game.apply(STOP)
    assert game.current_player() == 1 and game.turn == []


def test_turn_ends_by_itself_when_no_card_off_the_grid_fits_the_line():
    # The line runs right: after the spade 7 the next cell (3, 0) needs a spade
    # 6 or 8 and, below the heart 9, a 9: no card fits, whatever the hands hold.
    grid = {(0, 0): card(SPADE, 5), (3, 1): card(HEART, 9)}
    hand = [card(SPADE, 6), card(SPADE, 7), *FILLER]
    game = position(3, grid, [hand, FILLER, FILLER])
    game.apply((card(SPADE, 6), 1, 0))
    assert game.current_player() == 0
    game.apply((card(SPADE, 7), 2, 0))
    assert game.current_player() == 1 and game.turn == []


def test_the_turn_flow_does_not_depend_on_the_hand():
    """Two hands that differ only in the card that could go on: the same
    placement leaves the same seat to act (the leak of rules version 1)."""
    grid = {(0, 0): card(SPADE, 5)}
    states = [
        position(3, grid, [[card(HEART, 5), extra, *FILLER], FILLER, FILLER])
        for extra in (card(DIAMOND, 5), card(CLUB, 3))
    ]
    for game in states:
        game.apply((card(HEART, 5), 0, 1))
    assert [g.current_player() for g in states] == [0, 0]
    assert [g.decisions for g in states] == [1, 1]
    assert states[0].legal_actions() == [STOP, (card(DIAMOND, 5), 0, 2)]
    assert states[1].legal_actions() == [STOP]


def test_pass_only_first_and_stop_only_after_a_card():
    hand = [card(HEART, 5), card(DIAMOND, 5), *FILLER]
    game = position(3, {(0, 0): card(SPADE, 5)}, [hand, FILLER, FILLER])
    legal = game.legal_actions()
    assert legal[0] == PASS and STOP not in legal
    with pytest.raises(IllegalActionError):
        game.apply(STOP)
    game.apply((card(HEART, 5), 0, 1))
    legal = game.legal_actions()
    assert legal[0] == STOP and PASS not in legal
    with pytest.raises(IllegalActionError):
        game.apply(PASS)


def test_pass_draws_a_card_if_the_deck_has_one():
    drawn = card(CROSS, 2)
    game = position(
        3, {(0, 0): card(SPADE, 5)}, [list(FILLER), list(FILLER), list(FILLER)],
        deck=[card(CROSS, 3), drawn],
    )
    game.apply(PASS)
    assert drawn in game.hands[0] and len(game.hands[0]) == 4
    assert game.deck == [card(CROSS, 3)] and game.passes == 1
    game.apply(PASS)
    assert card(CROSS, 3) in game.hands[1] and game.deck == []
    # a player may pass even when they could play
    game.hands[2].append(card(HEART, 5))
    assert (card(HEART, 5), 0, 1) in game.legal_actions()
    game.apply(PASS)
    assert game.game_index == 1  # three passes in a row ended game 1
    # seat 2 drew nothing: 4 cards of 4 suits
    assert game.last_game_points == [-6, -6, -4]


def test_a_placement_resets_the_passes():
    game = position(
        3, {(0, 0): card(SPADE, 5)},
        [list(FILLER), list(FILLER), [card(HEART, 5), *FILLER]],
    )
    game.apply(PASS)
    game.apply(PASS)
    assert game.passes == 2
    game.apply((card(HEART, 5), 0, 1))
    end_turn(game)
    assert game.passes == 0 and game.game_index == 0
    for _ in range(2):
        game.apply(PASS)
    assert game.game_index == 0
    game.apply(PASS)
    assert game.game_index == 1


def test_n_passes_in_a_row_end_the_game_and_score_everyone():
    hands = [
        [card(SPADE, r) for r in (3, 5, 9, K)] + [card(HEART, 6), card(HEART, Q), card(CROSS, 7)],
        [card(CLUB, 2)],
        [card(LEAF, 2), card(CROSS, 9)],
        [card(DIAMOND, 2), card(DIAMOND, 9), card(DIAMOND, 10), card(CROSS, 9)],
    ]
    game = position(4, {(0, 0): card(SPADE, 7)}, hands)
    for _ in range(4):
        game.apply(PASS)
    assert game.last_game_points == [-12, -1, -2, -6]
    assert game.scores() == [-12, -1, -2, -6]
    assert game.game_index == 1 and game.start_player == 1
    assert game.current_player() == 1


def test_empty_hand_ends_the_game_at_once_with_plus_five():
    hands = [
        [card(HEART, 5), card(DIAMOND, 5)],
        [card(CLUB, 2), card(CLUB, 3)],
        [card(LEAF, 2)],
    ]
    game = position(3, {(0, 0): card(SPADE, 5)}, hands)
    game.apply((card(HEART, 5), 0, 1))
    assert game.current_player() == 0  # the diamond 5 may follow at (0, 2)
    game.apply((card(DIAMOND, 5), 0, 2))
    assert game.last_game_points == [5, -2, -1]
    assert game.scores() == [5, -2, -1]
    assert game.game_index == 1  # the next game is dealt


def test_deal_sizes_and_first_card():
    for n, size in HAND_SIZES.items():
        game = Tateyoko.new(n, 5)
        assert [len(h) for h in game.hands] == [size] * n
        assert len(game.grid) == 1 and list(game.grid) == [(0, 0)]
        assert len(game.deck) == 78 - n * size - 1
        every = sorted([c for h in game.hands for c in h] + game.deck + list(game.grid.values()))
        assert every == list(range(78))
    assert (HAND_SIZES[3], HAND_SIZES[4], HAND_SIZES[5], HAND_SIZES[6], HAND_SIZES[7]) == (
        15, 12, 10, 8, 8
    )


@pytest.mark.parametrize("num_players", [3, 5, 7])
def test_a_match_is_n_games_with_the_start_player_moving_left(num_players):
    game = Tateyoko.new(num_players, 7, narrate=True)
    picker = random.Random(1)
    starts = [game.start_player]
    totals = [0] * num_players
    index = game.game_index
    while not game.is_terminal():
        game.apply(picker.choice(game.legal_actions()))
        if game.game_index != index:
            index = game.game_index
            starts.append(game.start_player)
            assert game.current_player() == game.start_player
    assert starts == list(range(num_players))
    assert game.game_index == num_players - 1
    games_scored = [e for e in game.events if " scoring: " in e]
    assert len(games_scored) == num_players
    for event in games_scored:
        points = [int(p) for p in event.split("scoring: [")[1].split("]")[0].split(",")]
        assert sum(1 for p in points if p == 5) <= 1
        assert all(p == 5 or p < 0 for p in points)
        totals = [t + p for t, p in zip(totals, points)]
    assert game.scores() == totals
    assert game.current_player() == -1 and game.legal_actions() == []


def test_redeal_keeps_own_hand_and_sizes():
    game = Tateyoko.new(4, 3)
    picker = random.Random(0)
    for _ in range(30):
        game.apply(picker.choice(game.legal_actions()))
    dealt = game.redeal(2, 11)
    assert sorted(dealt.hands[2]) == sorted(game.hands[2])
    assert [len(h) for h in dealt.hands] == [len(h) for h in game.hands]
    assert len(dealt.deck) == len(game.deck)
    assert dealt.grid == game.grid
    hidden = sorted(c for s, h in enumerate(game.hands) if s != 2 for c in h) + game.deck
    again = sorted(c for s, h in enumerate(dealt.hands) if s != 2 for c in h) + dealt.deck
    assert sorted(hidden) == sorted(again)


def test_describe_action_names_cards_and_cells():
    game = position(3, {(0, 0): card(SPADE, K)}, [[card(SPADE, Q), *FILLER], FILLER, FILLER])
    assert "♠Q at (1,0)" in game.describe_action((card(SPADE, Q), 1, 0))
    assert "passes" in game.describe_action(PASS)


@pytest.mark.parametrize("num_players", [3, 5])
def test_the_log_shows_every_seat_who_placed_what_and_who_passed(num_players):
    """Between two of a seat's decisions others take turns; `log` keeps who
    did what this game (at the table everyone sees it): the grid's cards are
    the first card, the log's and the turn in progress's, a turn's cards come
    in the order laid, and seats follow in turn order."""
    rng = random.Random(num_players)
    game = Tateyoko.new(num_players, seed=40 + num_players)
    expected: list = []
    placed: list = []
    first_cards = {0: game.grid[(0, 0)]}
    checked = 0
    while not game.is_terminal():
        seat, index = game.current_player(), game.game_index
        action = rng.choice(game.legal_actions())
        game.apply(action)
        if game.game_index != index:  # a new game: a fresh log
            expected, placed = [], []
            first_cards[game.game_index] = game.grid[(0, 0)]
        elif action == PASS:
            expected.append([seat, []])
        elif isinstance(action, tuple):
            placed.append(action[0])
            if not game.turn:  # the turn ended by itself
                expected.append([seat, placed])
                placed = []
        else:  # stop
            expected.append([seat, placed])
            placed = []
        if game.is_terminal():
            break
        obs = game.observation(game.current_player())
        assert [[s, list(cards)] for s, cards in obs["log"]] == expected
        where = {c: (x, y) for x, y, c in obs["grid"]}
        laid = [c for _, cards in obs["log"] for c in cards] + [c for _, _, c in obs["turn"]]
        assert sorted([first_cards[game.game_index], *laid]) == sorted(where)
        for _, cards in obs["log"]:  # a turn's cards in order: each next to the one before
            for a, b in zip(cards, cards[1:]):
                (ax, ay), (bx, by) = where[a], where[b]
                assert abs(ax - bx) + abs(ay - by) == 1
        seats = [s for s, _ in obs["log"]]
        first = obs["start_player"]
        assert seats == [(first + i) % num_players for i in range(len(seats))]
        checked += 1
    assert checked > 100
