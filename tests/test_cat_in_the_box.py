"""cat_in_the_box (seed 001) as RULINGS.md reads it.

The seed has no numeric worked example; its rule statements (one per test
below, quoted where useful) and every RULINGS.md ruling are checked on exact
positions built with ``CatInTheBox.position``.
"""

from __future__ import annotations

import random
from collections import Counter

import msgpack
import pytest

from games import IllegalActionError, get_game
from games.cat_in_the_box import (
    COLOURS,
    EMPTY,
    CatInTheBox,
    largest_group,
    round_points,
    trick_winner,
)

R, B, Y, G = 0, 1, 2, 3


def empty_board() -> list[list[int]]:
    return [[EMPTY] * 8 for _ in range(4)]


def play_position(
    hands: list[list[int]],
    bids: list[int] | None = None,
    leader: int = 0,
    board: list[list[int]] | None = None,
    round_: int = 0,
    **fields,
) -> CatInTheBox:
    """A state in the play phase with the given hands, at the start of a trick;
    ``fields`` replace more of the state (``history``, ``voids`` ...)."""
    n = len(hands)
    position = {
        "round": round_,
        "start_player": round_ % n,
        "hands": [sorted(h) for h in hands],
        "discards": [1] * n,
        "bids": list(bids or [1] * n),
        "board": board or empty_board(),
        "voids": [[False] * 4 for _ in range(n)],
        "trick": [],
        "history": [],
        "tricks_won": [0] * n,
        "phase": "play",
        "leader": leader,
        "to_act": leader,
    }
    return CatInTheBox.position(n, **(position | fields))


def plays(game: CatInTheBox) -> set[tuple[int, str]]:
    return {(a[1], a[2]) for a in game.legal_actions()}


# ---- set-up ----------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4])
def test_deal_ten_each_from_forty_cards(n):
    game = CatInTheBox.new(n, 5)
    assert all(len(h) == 10 for h in game.hands)
    everything = [c for h in game.hands for c in h] + game.set_aside
    assert Counter(everything) == {r: 5 for r in range(1, 9)}
    # 3 players: the other 10 are set aside unseen.
    assert len(game.set_aside) == (10 if n == 3 else 0)
    obs = game.observation(0)
    assert obs["set_aside"] == len(game.set_aside)
    assert "set_aside_cards" not in obs
    assert sorted(obs["hand"]) == obs["hand"] == game.hands[0]


def test_player_counts():
    assert list(CatInTheBox.INFO.player_counts()) == [3, 4]
    with pytest.raises(ValueError):
        CatInTheBox.new(2, 0)
    with pytest.raises(ValueError):
        CatInTheBox.new(5, 0)


def test_secret_discard_then_public_bids_in_turn_order():
    game = CatInTheBox.new(4, 2)
    game._start_round()  # round 1: the start player is seat 1 mod 4
    assert game.round == 1 and game.start_player == 1
    order = []
    for _ in range(4):
        assert game.phase == "discard"
        seat = game.current_player()
        order.append(seat)
        rank = game.hands[seat][0]
        assert game.legal_actions() == [("discard", r) for r in sorted(set(game.hands[seat]))]
        game.apply(("discard", rank))
        assert len(game.hands[seat]) == 9
        assert game.observation(seat)["my_discard"] == rank
        for other in range(4):
            # a secret discard is in its owner's observation only
            assert game.observation(other)["my_discard"] == game.discards[other]
            assert game.observation(other)["discarded"][seat] is True
    assert order == [1, 2, 3, 0]
    assert game.phase == "bid"
    seen = []
    for bid in (3, 1, 2, 1):
        seat = game.current_player()
        seen.append(seat)
        assert game.legal_actions() == [("bid", 1), ("bid", 2), ("bid", 3)]
        game.apply(("bid", bid))
        # bids are public at once
        assert all(game.observation(p)["bids"][seat] == bid for p in range(4))
    assert seen == [1, 2, 3, 0]
    assert game.phase == "play"
    assert game.current_player() == 1  # the round's start player leads
    with pytest.raises(IllegalActionError):
        game.apply(("bid", 2))


@pytest.mark.parametrize("n", [3, 4])
def test_hidden_cards_never_reach_other_observations(n):
    """Others' discards, others' hands and the set-aside cards are unseen."""
    game = CatInTheBox.new(n, 7)
    for _ in range(n):
        game.apply(game.legal_actions()[-1])
    for player in range(n):
        view = msgpack.packb(game.observation(player))
        twin = game.clone()
        discards = [d if s == player else 9 - d for s, d in enumerate(twin.discards)]
        hands = [h if s == player else [9 - c for c in h] for s, h in enumerate(twin.hands)]
        twin.set_position(discards=discards, hands=hands,
                          set_aside=[9 - c for c in twin.set_aside])
        assert msgpack.packb(twin.observation(player)) == view


# ---- the board and a play ---------------------------------------------------


def test_play_marks_the_space_with_the_chip_and_taken_spaces_are_closed():
    # Seed: 既に出された色と数字の組み合わせは出せない
    board = empty_board()
    board[B][4] = 2  # blue 5 taken
    game = play_position([[5, 6], [5, 1], [2, 3], [4, 4]], board=board)
    assert (5, "blue") not in plays(game)
    game.apply(("play", 5, "yellow"))
    assert game.board[Y][4] == 0
    assert game.observation(3)["board"]["yellow"][4] == 0
    assert game.observation(3)["board"]["blue"][4] == 2
    assert (5, "yellow") not in plays(game)
    assert (5, "blue") not in plays(game)
    with pytest.raises(IllegalActionError):
        game.apply(("play", 5, "yellow"))


def test_board_rows_are_red_blue_yellow_green():
    assert COLOURS == ("red", "blue", "yellow", "green")
    obs = CatInTheBox.new(3, 0).observation(0)
    assert list(obs["board"]) == ["red", "blue", "yellow", "green"]
    assert all(len(row) == 8 for row in obs["board"].values())


# ---- leader's red restriction ---------------------------------------------


def test_leader_may_not_declare_red_while_no_red_is_on_the_board():
    game = play_position([[3, 7], [1, 2], [4, 5]])
    legal = plays(game)
    assert legal == {(r, c) for r in (3, 7) for c in ("blue", "yellow", "green")}


def test_leader_may_declare_red_once_a_red_space_is_taken():
    board = empty_board()
    board[R][0] = 1  # someone's chip on red 1
    game = play_position([[3, 7], [1, 2], [4, 5]], board=board)
    assert (3, "red") in plays(game) and (7, "red") in plays(game)


def test_leader_red_exception_when_no_legal_non_red_declaration():
    board = empty_board()
    for c in (B, Y, G):
        board[c][2] = 1  # blue/yellow/green 3 taken
        board[c][6] = 2  # blue/yellow/green 7 taken
    game = play_position([[3, 7], [1, 2], [4, 5]], board=board)
    assert plays(game) == {(3, "red"), (7, "red")}
    # a single non-red option elsewhere removes the exception
    board[G][6] = EMPTY
    game = play_position([[3, 7], [1, 2], [4, 5]], board=board)
    assert plays(game) == {(7, "green")}


def test_leader_red_exception_counts_voids():
    # seat 0 is void in every non-red colour
    voids = [[False, True, True, True], [False] * 4, [False] * 4]
    game = play_position([[3, 7], [1, 2], [4, 5]], voids=voids)
    assert plays(game) == {(3, "red"), (7, "red")}


def test_followers_may_declare_red_before_red_is_broken():
    game = play_position([[3, 7], [1, 2], [4, 5]])
    game.apply(("play", 3, "blue"))
    assert (1, "red") in plays(game)
    game.apply(("play", 1, "red"))
    assert game.voids[1] == [False, True, False, False]  # red is not blue: blue void


# ---- voids -----------------------------------------------------------------


def test_declaring_another_colour_marks_the_led_colour_void():
    game = play_position([[3, 7], [1, 2], [4, 5]])
    game.apply(("play", 3, "blue"))
    game.apply(("play", 1, "yellow"))
    assert game.voids[1] == [False, True, False, False]
    game.apply(("play", 4, "blue"))  # following the led colour marks nothing
    assert game.voids[2] == [False] * 4
    for p in range(3):
        assert game.observation(p)["voids"] == [[], ["blue"], []]


def test_a_void_colour_can_never_be_declared_again_even_when_leading():
    game = play_position([[3, 7, 8], [1, 2, 6], [4, 5]])
    game.apply(("play", 3, "blue"))
    game.apply(("play", 1, "yellow"))  # seat 1 void in blue
    game.apply(("play", 5, "green"))  # seat 2 void in blue
    assert game.tricks_won == [1, 0, 0]
    game.apply(("play", 7, "yellow"))
    assert all(c != "blue" for _, c in plays(game))
    game.apply(("play", 2, "green"))  # seat 1 now also void in yellow
    assert game.voids[1] == [False, True, True, False]
    # seat 1 when leading later: only red (exception) or green remain
    game.apply(("play", 4, "yellow"))
    assert game.tricks_won == [2, 0, 0]
    # were seat 1 to lead now: blue and yellow are void, red is not broken,
    # so its 6 may only be declared green
    assert game._plays_for(1, leading=True) == [(6, G)]
    board = [list(row) for row in game.board]
    board[G][5] = 2  # green 6 taken too: the red exception applies
    game.set_position(board=board)
    assert game._plays_for(1, leading=True) == [(6, R)]


def test_void_is_recorded_once_and_persists_for_the_round_only():
    game = play_position([[3, 7], [1, 2], [4, 5]])
    game.apply(("play", 3, "blue"))
    game.apply(("play", 1, "green"))
    assert game.voids[1][B]
    voids = [[False] * 4 for _ in range(3)]
    voids[1][B] = True
    fresh = CatInTheBox.position(3, voids=voids, round=-1)
    fresh._start_round()
    assert fresh.voids == [[False] * 4 for _ in range(3)]


# ---- winner ----------------------------------------------------------------


def test_winner_highest_red_if_any_red():
    assert trick_winner([(0, 8, B), (1, 1, R), (2, 2, R), (3, 7, B)]) == 2


def test_winner_highest_of_led_colour_otherwise():
    # an off-colour 8 does not win
    assert trick_winner([(0, 4, B), (1, 8, G), (2, 6, B), (3, 5, B)]) == 2
    assert trick_winner([(0, 4, B), (1, 8, G), (2, 3, Y)]) == 0


def test_winner_takes_the_trick_and_leads_next():
    game = play_position([[3, 7], [1, 2], [4, 5]])
    game.apply(("play", 3, "blue"))
    game.apply(("play", 2, "blue"))
    game.apply(("play", 4, "blue"))
    assert game.tricks_won == [0, 0, 1]
    assert game.current_player() == 2 and game.leader == 2
    obs = game.observation(0)
    assert obs["tricks"] == [
        {"leader": 0, "plays": [[0, 3, "blue"], [1, 2, "blue"], [2, 4, "blue"]], "winner": 2}
    ]
    assert obs["trick"] == [] and obs["led_colour"] is None


def test_red_led_trick():
    board = empty_board()
    board[R][0] = 2
    game = play_position([[3, 7], [1, 2], [4, 5]], board=board)
    game.apply(("play", 3, "red"))
    game.apply(("play", 2, "red"))
    game.apply(("play", 5, "blue"))  # void in red, loses
    assert game.tricks_won == [1, 0, 0]
    assert game.voids[2] == [True, False, False, False]


# ---- scoring -----------------------------------------------------------------


def test_largest_group_is_orthogonal():
    board = empty_board()
    # seat 0: red 1, red 2, blue 2, yellow 2 (an L of 4); green 5 alone;
    # diagonal yellow 3 / green 4 are not connected to it
    for c, r in ((R, 1), (R, 2), (B, 2), (Y, 2), (G, 5), (G, 4)):
        board[c][r - 1] = 0
    board[Y][3 - 1] = 1
    assert largest_group(board, 0) == 4
    board[Y][3 - 1] = 0  # yellow 3 joins yellow 2, and green... no: green 3 empty
    assert largest_group(board, 0) == 5
    board[G][3 - 1] = 0  # green 3 links yellow 3 and green 4-5
    assert largest_group(board, 0) == 8
    assert largest_group(board, 1) == 0


def test_red_and_green_rows_are_not_adjacent():
    board = empty_board()
    board[R][0] = 0
    board[G][0] = 0
    assert largest_group(board, 0) == 1


def test_score_tricks_plus_group_only_when_bid_is_met():
    board = empty_board()
    for r in range(5):
        board[B][r] = 0  # seat 0 group of 5
    for r in range(3):
        board[Y][r] = 1  # seat 1 group of 3
    assert round_points(board, [2, 3, 1], [2, 2, 4]) == [2 + 5, 2, 4]
    assert round_points(board, [1, 2, 1], [0, 2, 0]) == [0, 2 + 3, 0]


def test_normal_round_end_after_eight_tricks():
    # Trick 8 of a 3-player round: seat 0 leads its 7, everyone keeps 1 card.
    board = empty_board()
    for r in range(8):
        board[R][r] = 1  # red all taken by seat 1: seat 1 group 8
    board[B][0] = board[B][1] = 0  # seat 0 group 2 (blue 1-2)
    game = play_position([[7, 1], [6, 1], [5, 1]], bids=[3, 2, 1], leader=0, board=board,
                         history=[(0, [], 0)] * 7, tricks_won=[2, 2, 3])
    game.apply(("play", 7, "blue"))
    game.apply(("play", 6, "blue"))
    game.apply(("play", 5, "yellow"))
    # seat 0 won the trick: 3 tricks == bid 3: 3 + group 2 (blue 1-2; blue 7 is apart)
    # seat 1: 2 == bid 2: 2 + 8 (the red row; blue 6 adjoins red 6: 9)
    # seat 2: 3 != bid 1: 3
    assert game.last_round == [3 + 2, 2 + 9, 3]
    assert game.total == [5, 11, 3]
    assert game.last_dobon is None
    assert game.round == 1 and game.phase == "discard"


# ---- dobon -----------------------------------------------------------------


def dobon_position(taken=(), seat_2_void=(), **fields) -> CatInTheBox:
    """Seat 2 is to follow and will have no legal play after seat 1 plays.
    ``taken``: more (colour, rank) spaces holding seat 1's chips;
    ``seat_2_void``: the colours seat 2 is void in."""
    board = empty_board()
    # all spaces for rank 8 are taken (by seat 1) except blue 8
    board[R][7] = board[Y][7] = board[G][7] = 1
    # seat 0's earlier chips: blue 1, blue 2 and yellow 2 (group 3)
    board[B][0] = board[B][1] = board[Y][1] = 0
    for colour, rank in taken:
        board[colour][rank - 1] = 1
    voids = [[False] * 4 for _ in range(3)]
    for colour in seat_2_void:
        voids[2][colour] = True
    position = {"bids": [2, 1, 1], "board": board, "voids": voids,
                "tricks_won": [2, 1, 1], "history": [(0, [], 0)] * 4}
    return play_position([[3, 5], [8, 6], [8, 4]], leader=0, **(position | fields))


def test_no_dobon_while_one_card_still_has_a_play():
    game = dobon_position()
    game.apply(("play", 3, "blue"))
    game.apply(("play", 8, "blue"))  # seat 2's 8 is dead, but its 4 can be played
    assert game.phase == "play" and game.current_player() == 2
    assert {r for r, _ in plays(game)} == {4}


def test_dobon_scoring():
    # seat 2 void in yellow, green; red 4, blue 4 taken
    game = dobon_position(taken=[(R, 4), (B, 4)], seat_2_void=[Y, G])
    game.apply(("play", 3, "blue"))  # seat 0 leads blue 3, joining blue 2: group 4
    game.apply(("play", 8, "blue"))  # seat 1: blue 8 gone; seat 2 holds 8, 4
    # seat 2 has no legal play: dobon at once
    assert game.round == 1 and game.phase == "discard"
    assert game.last_dobon == 2
    # The trick counts for nobody (nobody's trick count moves) and its chips
    # leave the board. Seat 0: 2 tricks == bid 2 -> 2 + group 3 (blue 1-2,
    # yellow 2; blue 3 is gone). Seat 1: 1 trick == bid 1 -> 1 + group 2
    # (yellow 8 - green 8, or red 4 - blue 4; without its blue 8 the column
    # red 8 .. green 8 would have been 4). Seat 2: minus its 1 trick.
    assert game.last_round == [2 + 3, 1 + 2, -1]
    assert game.total == [5, 3, -1]


def test_dobon_trick_chips_leave_the_board():
    game = dobon_position(taken=[(R, 4), (B, 4)], seat_2_void=[Y, G])
    game.apply(("play", 3, "blue"))
    board = game.board  # the round's board object (a new round makes a new one)
    assert board[B][2] == 0
    game.apply(("play", 8, "blue"))
    assert game.last_dobon == 2
    assert board[B][2] == EMPTY and board[B][7] == EMPTY
    assert board[B][0] == 0 and board[R][7] == 1  # earlier tricks stay


def test_dobon_player_scores_minus_tricks_even_with_bid_met():
    # seat 2 bids 1 and meets it (1 trick), but dobon overrides
    game = dobon_position(taken=[(R, 4), (B, 4)], seat_2_void=[Y, G], bids=[2, 1, 1])
    game.apply(("play", 3, "blue"))
    game.apply(("play", 8, "blue"))
    assert game.last_round[2] == -1


def test_dobon_of_a_leader_with_no_play():
    board = empty_board()
    for c in range(4):
        board[c][4] = 1  # all four 5s taken
    game = play_position([[5, 2], [1, 3], [4, 6]], bids=[1, 1, 1], leader=0, board=board,
                         history=[(0, [], 0)] * 2, tricks_won=[1, 0, 1])
    # seat 0 leads and wins its 2 (no red yet, blue 2 highest of blue)
    game.apply(("play", 2, "blue"))
    game.apply(("play", 1, "blue"))
    game.apply(("play", 4, "yellow"))
    # seat 0 won and must lead with only a 5 left: dobon, nothing on the table
    assert game.last_dobon == 0
    # seat 0: minus 2 tricks; seat 1: 0 != bid 1; seat 2: 1 == bid 1, plus
    # its only chip (yellow 4) as a group of 1
    assert game.last_round == [-2, 0, 1 + 1]


def test_random_play_never_leaves_a_player_stuck():
    for n in (3, 4):
        for seed in range(30):
            game = CatInTheBox.new(n, seed)
            picker = random.Random(seed)
            while not game.is_terminal():
                legal = game.legal_actions()
                assert legal
                game.apply(picker.choice(legal))


# ---- rounds and the end ----------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4])
def test_rounds_equal_players_and_leaders_rotate(n):
    game = CatInTheBox.new(n, 11)
    picker = random.Random(1)
    starts = []
    last_round = -1
    while not game.is_terminal():
        if game.round != last_round:
            last_round = game.round
            starts.append(game.start_player)
            assert game.current_player() == game.start_player
            assert game.phase == "discard"
        game.apply(picker.choice(game.legal_actions()))
    assert starts == [r % n for r in range(n)]
    assert game.phase == "over" and game.current_player() == -1
    assert game.legal_actions() == []
    assert game.round == n - 1
    with pytest.raises(IllegalActionError):
        game.apply(("bid", 1))


def test_scores_are_cumulative_and_standings_share_ties():
    game = CatInTheBox.position(3, total=[4, 7, 4])
    assert game.scores() == [4, 7, 4]
    assert game.standings() == [2, 1, 2]


def test_round_ends_after_eight_tricks_with_one_card_kept():
    # Find a seeded random round that reached 8 tricks.
    for seed in range(200):
        game = CatInTheBox.new(3, seed)
        picker = random.Random(seed)
        while game.round == 0:
            if game.phase == "play" and len(game.history) == 7 and len(game.trick) == 2:
                hands = [len(h) for h in game.hands]
                game.apply(picker.choice(game.legal_actions()))
                if game.round == 1 and game.last_dobon is None:
                    assert sorted(hands) == [1, 1, 2]
                    assert sum(game.last_round) >= 8
                    return
                break
            game.apply(picker.choice(game.legal_actions()))
    pytest.fail("no seeded round reached 8 tricks")


# ---- observations and redeal ------------------------------------------------------


def test_observation_keys():
    obs = CatInTheBox.new(4, 0).observation(1)
    for key in ("seat", "current_player", "scores", "hand", "my_discard", "bids",
                "board", "voids", "trick", "tricks_won", "hand_sizes"):
        assert key in obs


@pytest.mark.parametrize("n", [3, 4])
def test_redeal_keeps_card_counts_and_own_cards(n):
    game = CatInTheBox.new(n, 3)
    picker = random.Random(0)
    for _ in range(3 * n + 4):
        game.apply(picker.choice(game.legal_actions()))
    played = Counter(
        r + 1 for c in range(4) for r in range(8) if game.board[c][r] != EMPTY
    )
    for player in range(n):
        dealt = game.redeal(player, 5)
        assert dealt.hands[player] == game.hands[player]
        assert dealt.discards[player] == game.discards[player]
        assert [len(h) for h in dealt.hands] == [len(h) for h in game.hands]
        unseen = [c for h in dealt.hands for c in h] + dealt.set_aside
        unseen += [d for d in dealt.discards if d is not None]
        assert Counter(unseen) + played == Counter({r: 5 for r in range(1, 9)})
        assert dealt.observation(player) == game.observation(player)


@pytest.mark.parametrize("tries", [200, 1])
def test_redeal_gives_the_player_to_act_a_legal_play(monkeypatch, tries):
    """The round is not over, so the player to act holds a playable card."""
    monkeypatch.setattr(CatInTheBox, "REDEAL_TRIES", tries)  # 1: the fallback
    game = dobon_position(
        taken=[(R, 1), (R, 6), (B, 6)],  # 1s and 6s dead
        seat_2_void=[Y, G],
        set_aside=[],  # a built position: keep the hidden pool small
    )
    game.apply(("play", 3, "blue"))
    game.apply(("play", 8, "blue"))  # seat 2 to act with 8 (dead) and 4 (alive)
    assert game.current_player() == 2
    # hidden from seat 0: 6 (seat 1), 8 and 4 (seat 2), both 1s discarded
    view = game.observation(0)
    hands = set()
    for seed in range(40):
        dealt = game.redeal(0, seed)
        assert dealt.observation(0) == view
        assert 4 in dealt.hands[2] and dealt.legal_actions()
        hands.add(tuple(dealt.hands[2]))
    assert len(hands) > 1


def test_registry_and_describe_action():
    assert get_game("cat_in_the_box") is CatInTheBox
    game = play_position([[5, 6], [1, 2], [3, 4]])
    assert game.describe_action(("play", 5, "blue")) == "seat 0 plays 5 as blue (leads)"
    game.apply(("play", 5, "blue"))
    assert game.describe_action(("play", 1, "red")) == "seat 1 plays 1 as red (now void in blue)"
    fresh = CatInTheBox.new(3, 0)
    assert "face down" in fresh.describe_action(fresh.legal_actions()[0])
    assert str(fresh.hands[0][0]) not in fresh.describe_action(("discard", fresh.hands[0][0]))


@pytest.mark.parametrize("num_players", [3, 4])
def test_the_previous_rounds_tricks_are_kept_whole(num_players):
    """A seat's last card of a round can come before the round's end:
    `last_tricks` at the next round's start holds every trick seen during
    the round and the ones after (8 without dobon; with dobon, the voided
    trick last, holding its plays so far and no winner), the same for all."""
    rng = random.Random(num_players)
    rounds = dobons = 0
    for seed in range(12):
        game = get_game("cat_in_the_box").new(num_players, seed)
        seen = game.observation(0)
        assert seen["last_tricks"] == []
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_actions()))
            views = [game.observation(s) for s in range(num_players)]
            now = views[0]
            if now["round"] != seen["round"] and now["phase"] != "over":
                rounds += 1
                last = now["last_tricks"]
                assert all(view["last_tricks"] == last for view in views)
                assert last[:len(seen["tricks"])] == seen["tricks"]
                if now["last_dobon"] is None:
                    assert len(last) == 8 and all(t["winner"] is not None for t in last)
                elif last and last[-1]["winner"] is None:
                    dobons += 1
                    assert last[-1]["plays"][:len(seen["trick"])] == seen["trick"]
            seen = now
    assert rounds > 20 and dobons > 0
