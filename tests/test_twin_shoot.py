"""twin_shoot (seed 003 §05): rules as RULINGS.md reads them, and the rulings
made in games/twin_shoot.py."""

from __future__ import annotations

import random

import pytest

from games import get_game
from games.base import PlayerCountError
from games.tennos import CLUB, CROSS, DIAMOND, HEART, LEAF, SPADE, card
from games.twin_shoot import (
    CLOSED,
    OPEN,
    TwinShoot,
    bid_value,
    deck_for,
    hand_points,
    legal_cards,
    opening_leader,
    trick_order,
    trick_winner,
    twin_shoot_teams,
)

A, J, Q, K = 1, 11, 12, 13


def c(s, r):
    return card(s, r)


def play_position(n, leader, hands, bids, totals=None):
    """A game in the play phase of a hand: ``hands`` per seat (10 cards or
    fewer, all hands the same size when a trick starts), ``bids`` per seat as
    pairs of bid cards."""
    fields = {} if totals is None else {"team_total": list(totals)}
    return TwinShoot.position(
        n, hands=[sorted(h) for h in hands], bid_cards=[sorted(b) for b in bids],
        leader=leader, bid_turn=n, phase="play", to_act=leader, **fields)


# ---- set-up ------------------------------------------------------------


def test_teams_and_player_counts():
    info = get_game("twin_shoot").INFO
    assert info.teams is twin_shoot_teams
    assert twin_shoot_teams(4) == ((0, 1), (2, 3))
    assert twin_shoot_teams(6) == ((0, 1), (2, 3), (4, 5))
    assert tuple(info.player_counts()) == (4, 6)
    for bad in (3, 5, 7):
        with pytest.raises(PlayerCountError):
            TwinShoot.new(bad, 0)


def test_decks_and_deal():
    d4, d6 = deck_for(4), deck_for(6)
    assert len(d4) == 48 and len(d6) == 72
    assert {x % 13 + 1 for x in d4} == {1, 7, 8, 9, 10, 11, 12, 13}
    assert {x % 13 + 1 for x in d6} == {1, *range(3, 14)}
    assert {x // 13 for x in d4} == set(range(6))
    for n, d in ((4, d4), (6, d6)):
        game = TwinShoot.new(n, 5)
        assert all(len(h) == 12 for h in game.hands)
        assert sorted(x for h in game.hands for x in h) == sorted(d)


def test_bid_values_and_the_seed_example():
    # Seed: a cross and a heart predict 4 + 2 = 6 tricks.
    assert bid_value([c(CROSS, 5), c(HEART, 9)]) == 6
    values = {LEAF: 5, CROSS: 4, CLUB: 3, HEART: 2, SPADE: 1, DIAMOND: 0}
    for s, v in values.items():
        assert bid_value([c(s, 7), c(DIAMOND, 8)]) == v
    assert bid_value([c(LEAF, 7), c(LEAF, 8)]) == 10
    assert bid_value([c(DIAMOND, 7), c(DIAMOND, 8)]) == 0


# ---- bidding ------------------------------------------------------------


def test_bidding_is_secret_two_steps_in_seat_order_from_the_opening_leader():
    game = TwinShoot.new(4, 2)
    assert game.leader == 0 and game.phase == "bid"
    seen = []
    for _ in range(8):
        seat = game.current_player()
        seen.append(seat)
        assert game.legal_actions() == game.hands[seat]
        game.apply(game.legal_actions()[0])
        if len(seen) == 1:
            obs = game.observation(0)
            assert len(obs["bid_cards"]) == 1 and obs["bids"][0] is None
            assert len(obs["hand"]) == 11
            assert game.observation(1)["bid_card_counts"] == [1, 0, 0, 0]
        if len(seen) == 2:  # seat 0 done: own bid known, nobody else's
            assert game.observation(0)["bids"] == [game.bid_vals[0], None, None, None]
            assert game.observation(1)["bids"] == [None] * 4
            assert game.observation(1)["partner_bid_cards"] is None
    assert seen == [0, 0, 1, 1, 2, 2, 3, 3]
    # all scores tied: no open-bid question, straight to play
    assert game.phase == "play"
    for seat in range(4):
        obs = game.observation(seat)
        assert obs["partner_bid_cards"] == game.bid_cards[seat ^ 1]
        expected = [None] * 4
        expected[seat] = game.bid_vals[seat]
        expected[seat ^ 1] = game.bid_vals[seat ^ 1]
        assert obs["bids"] == expected
        assert len(obs["hand"]) == 10


def test_bidding_starts_at_the_opening_leader_of_later_hands():
    game = TwinShoot.new(6, 1)
    game.set_position(hand_number=4)
    game._start_hand()  # hand 5 of 6 players: seat 3 leads
    assert game.leader == 3
    order = []
    while game.phase == "bid":
        order.append(game.current_player())
        game.apply(game.legal_actions()[-1])
    assert order == [3, 3, 4, 4, 5, 5, 0, 0, 1, 1, 2, 2]


# ---- open bids ------------------------------------------------------------


def bid_all(game):
    while game.phase == "bid":
        game.apply(game.legal_actions()[0])


def test_open_question_only_when_one_team_is_alone_in_last_place():
    game = TwinShoot.position(6, seed=3, team_total=[20, 10, 10])  # two teams share last place
    bid_all(game)
    assert game.phase == "play" and game.open_question_team is None

    game = TwinShoot.position(6, seed=3, team_total=[20, 30, 10])
    bid_all(game)
    assert game.phase == "open" and game.open_question_team == 2
    assert game.legal_actions() == [OPEN, CLOSED]
    assert game.current_player() == 4  # first in seat order from the leader (seat 0)


def test_open_question_order_follows_the_opening_leader():
    game = TwinShoot.new(4, 3)
    game.set_position(hand_number=3)
    game._start_hand()  # hand 4, 4 players: seat 3 leads
    assert game.leader == 3
    game.set_position(team_total=[5, 20])
    bid_all(game)
    assert game.open_askees == [0, 1]  # from seat 3: 0 comes before 1
    game = TwinShoot.new(4, 3)
    game.set_position(hand_number=3)
    game._start_hand()
    game.set_position(team_total=[20, 5])
    bid_all(game)
    assert game.open_askees == [3, 2]


def test_open_bid_needs_both_yes_and_partner_sees_the_first_answer():
    game = TwinShoot.position(4, seed=3, team_total=[0, 12])
    bid_all(game)
    assert game.current_player() == 0
    game.apply(OPEN)
    assert game.current_player() == 1
    assert game.observation(1)["open_answers"] == [True, None, None, None]
    assert game.observation(2)["open_answers"] == [None] * 4  # other team sees nothing
    assert game.observation(2)["open_team"] is None
    game.apply(OPEN)
    assert game.phase == "play" and game.open_team == 0
    for seat in range(4):
        obs = game.observation(seat)
        assert obs["open_bid_cards"][:2] == [game.bid_cards[0], game.bid_cards[1]]
        assert obs["bids"][0] == game.bid_vals[0] and obs["bids"][1] == game.bid_vals[1]
    assert game.observation(2)["bids"][3] == game.bid_vals[3]
    assert game.observation(3)["bids"][2] == game.bid_vals[2]


def test_open_bid_refused_by_either_member():
    game = TwinShoot.position(4, seed=3, team_total=[0, 12])
    bid_all(game)
    game.apply(CLOSED)  # the first says no: the second is still asked
    assert game.phase == "open" and game.current_player() == 1
    assert game.legal_actions() == [OPEN, CLOSED]
    game.apply(OPEN)  # a yes cannot open it any more
    assert game.phase == "play" and game.open_team is None
    assert game.current_player() == game.leader
    assert game.observation(1)["open_answers"][:2] == [False, True]

    game = TwinShoot.position(4, seed=3, team_total=[0, 12])
    bid_all(game)
    game.apply(OPEN)
    game.apply(CLOSED)
    assert game.phase == "play" and game.open_team is None
    assert game.observation(0)["open_answers"][:2] == [True, False]
    assert game.observation(2)["open_bid_cards"] == [None] * 4
    assert game.observation(2)["bids"][:2] == [None, None]


def test_other_teams_cannot_tell_the_first_answer_from_the_flow():
    """Rules version 2: after "yes" or "no" the same seat is asked next and the
    decision counter is the same, so only the partner learns the answer."""
    after = []
    for first in (OPEN, CLOSED):
        game = TwinShoot.position(4, seed=3, team_total=[0, 12])
        bid_all(game)
        game.apply(first)
        after.append((game.current_player(), game.decisions, game.observation(2), game.observation(3)))
    assert after[0] == after[1]


def test_redeal_resamples_the_first_answer_for_other_teams_only():
    game = TwinShoot.position(4, seed=3, team_total=[0, 12])
    bid_all(game)
    game.apply(OPEN)
    answers = {game.redeal(2, seed).open_answers[0] for seed in range(12)}
    assert answers == {True, False}
    assert {game.redeal(1, seed).open_answers[0] for seed in range(12)} == {True}
    for seed in range(4):
        assert game.redeal(2, seed).observation(2) == game.observation(2)


# ---- play order and follow --------------------------------------------------


def test_play_order_partner_second_then_same_direction():
    assert trick_order(0, 4) == [0, 1, 2, 3]  # right member leads: partner on the left
    assert trick_order(1, 4) == [1, 0, 3, 2]  # left member leads: counter-clockwise
    assert trick_order(2, 4) == [2, 3, 0, 1]
    assert trick_order(3, 4) == [3, 2, 1, 0]
    assert trick_order(3, 6) == [3, 2, 1, 0, 5, 4]
    assert trick_order(4, 6) == [4, 5, 0, 1, 2, 3]
    assert trick_order(5, 6) == [5, 4, 3, 2, 1, 0]


def test_engine_follows_the_play_order():
    hands = [[c(LEAF, 7)], [c(LEAF, 8)], [c(LEAF, 9)], [c(LEAF, 10)]]
    game = play_position(4, 3, hands, [[c(SPADE, 7), c(SPADE, 8)]] * 4)
    seen = []
    for _ in range(4):
        seen.append(game.current_player())
        assert game.observation(0)["trick_order"] == [3, 2, 1, 0]
        game.apply(game.legal_actions()[0])
    assert seen == [3, 2, 1, 0]


def test_before_a_follow_led_suit_or_led_rank_is_required():
    led = c(HEART, 9)
    hand = [c(HEART, 7), c(SPADE, 9), c(LEAF, A), c(CLUB, 8)]
    assert legal_cards(hand, led, "none") == sorted([c(HEART, 7), c(SPADE, 9)])
    assert legal_cards([c(LEAF, A), c(CLUB, 8)], led, "none") == sorted([c(LEAF, A), c(CLUB, 8)])
    # suit follow: the led suit only; rank duty is gone
    assert legal_cards(hand, led, "suit") == [c(HEART, 7)]
    assert legal_cards([c(SPADE, 9), c(CLUB, 8)], led, "suit") == sorted([c(SPADE, 9), c(CLUB, 8)])
    # rank follow: the led rank only
    assert legal_cards(hand, led, "rank") == [c(SPADE, 9)]
    assert legal_cards([c(HEART, 7), c(CLUB, 8)], led, "rank") == sorted([c(HEART, 7), c(CLUB, 8)])
    assert legal_cards(hand, None, "none") == sorted(hand)


def test_suit_follow_fixes_the_mode_and_a_later_rank_card_does_not_switch():
    led = c(HEART, 9)
    hands = [
        [led, c(DIAMOND, 7)],
        [c(HEART, 7), c(SPADE, 8)],  # partner: suit follow
        [c(LEAF, 9), c(CLUB, 8)],  # no heart: anything, even the led rank
        [c(HEART, K), c(CROSS, 9)],  # must play the heart
    ]
    game = play_position(4, 0, hands, [[c(SPADE, 10), c(SPADE, J)]] * 4)
    game.apply(led)
    assert game.legal_actions() == [c(HEART, 7)]
    game.apply(c(HEART, 7))
    assert game.mode == "suit"
    assert game.legal_actions() == sorted([c(LEAF, 9), c(CLUB, 8)])
    game.apply(c(LEAF, 9))
    assert game.mode == "suit"
    assert game.legal_actions() == [c(HEART, K)]
    game.apply(c(HEART, K))
    assert game.tricks_won == [0, 0, 0, 1]  # highest heart, not the leaf 9
    assert game.current_player() == 3
    assert game.observation(0)["tricks_played"] == ((0, (led, c(HEART, 7), c(LEAF, 9), c(HEART, K)), 3),)


def test_rank_follow_fixes_the_mode_and_strongest_suit_wins():
    led = c(HEART, 9)
    hands = [
        [led, c(DIAMOND, 7)],
        [c(SPADE, 9), c(HEART, 8)],  # partner chooses rank follow
        [c(HEART, A), c(CLUB, 8)],  # no 9: anything (a heart does not switch)
        [c(LEAF, 9), c(HEART, 10)],  # must play the 9
    ]
    game = play_position(4, 0, hands, [[c(SPADE, 10), c(SPADE, J)]] * 4)
    game.apply(led)
    assert game.legal_actions() == sorted([c(SPADE, 9), c(HEART, 8)])
    game.apply(c(SPADE, 9))
    assert game.mode == "rank"
    assert game.legal_actions() == sorted([c(HEART, A), c(CLUB, 8)])
    game.apply(c(HEART, A))
    assert game.mode == "rank"
    assert game.legal_actions() == [c(LEAF, 9)]
    game.apply(c(LEAF, 9))
    assert game.tricks_won == [0, 0, 0, 1]  # leaf beats heart and spade


def test_no_follow_passes_the_choice_on_and_the_leader_wins_if_nobody_follows():
    led = c(DIAMOND, 7)
    hands = [
        [led, c(SPADE, 10)],
        [c(LEAF, 9), c(HEART, 8)],  # partner cannot follow: anything
        [c(CLUB, 7), c(DIAMOND, A)],  # must follow, picks the rank
        [c(DIAMOND, 8), c(CROSS, 7)],
    ]
    game = play_position(4, 0, hands, [[c(SPADE, 11), c(SPADE, J)]] * 4)
    game.apply(led)
    game.apply(c(LEAF, 9))
    assert game.mode == "none"
    assert game.legal_actions() == sorted([c(CLUB, 7), c(DIAMOND, A)])
    game.apply(c(CLUB, 7))
    assert game.mode == "rank"
    assert game.legal_actions() == [c(CROSS, 7)]
    game.apply(c(CROSS, 7))
    assert game.tricks_won == [0, 0, 0, 1]  # cross 7 beats club 7 and diamond 7


def test_trick_winner_rules():
    led = c(HEART, 9)
    # suit follow: highest rank of the led suit, A above K
    assert trick_winner([(0, led), (1, c(HEART, K)), (2, c(HEART, A)), (3, c(LEAF, A))], "suit") == 2
    # the leader can win under suit follow too
    assert trick_winner([(2, c(HEART, Q)), (3, c(HEART, 7)), (0, c(HEART, 8)), (1, c(LEAF, Q))], "suit") == 2
    # rank follow: suit order leaf > cross > club > heart > spade > diamond
    order = [DIAMOND, SPADE, HEART, CLUB, CROSS, LEAF]
    for lo, hi in zip(order, order[1:]):
        assert trick_winner([(0, c(lo, 9)), (1, c(hi, 9))], "rank") == 1
        assert trick_winner([(0, c(hi, 9)), (1, c(lo, 9))], "rank") == 0
    # no follow: the leader, even with a weak card
    assert trick_winner([(1, c(DIAMOND, 3)), (0, c(LEAF, A)), (3, c(CROSS, K)), (2, c(CLUB, A))], "none") == 1


# ---- scoring ----------------------------------------------------------------


def test_team_scoring():
    # tricks count regardless; +10 per exact member; +10 more if both
    assert hand_points([3, 2, 4, 1], [3, 2, 5, 0], 4, None) == [3 + 2 + 10 + 10 + 10, 5]
    assert hand_points([3, 2, 4, 1], [3, 9, 4, 1], 4, None) == [5 + 10, 5 + 30]
    assert hand_points([0, 0, 5, 5], [0, 0, 0, 0], 4, None) == [30, 10]
    assert hand_points([1, 2, 3, 1, 2, 1], [1, 2, 0, 0, 2, 0], 6, None) == [33, 4, 13]


def test_open_bid_bonus_both_ways():
    # open team makes both bids: +30 to it
    assert hand_points([3, 2, 4, 1], [3, 2, 0, 0], 4, 0) == [5 + 30 + 30, 5]
    # open team misses one bid: +30 to every other team
    assert hand_points([3, 2, 4, 1], [3, 1, 0, 0], 4, 0) == [5 + 10, 5 + 30]
    assert hand_points([1, 2, 3, 1, 2, 1], [0, 0, 3, 1, 0, 0], 6, 1) == [3, 4 + 30 + 30, 3]
    assert hand_points([1, 2, 3, 1, 2, 1], [1, 2, 0, 0, 0, 0], 6, 1) == [33 + 30, 4, 3 + 30]


def scripted_hand(game, pick):
    """Play the current hand to its scoring with ``pick(legal)``."""
    hand = game.hand_number
    while game.hand_number == hand and not game.is_terminal():
        game.apply(pick(game.legal_actions()))


def test_a_whole_hand_scores_the_team_totals():
    game = TwinShoot.position(4, seed=7, team_total=[10, 0])  # team 1 alone last: asked
    scripted_hand(game, lambda legal: OPEN if OPEN in legal else legal[0])
    last = game.last_hand
    assert last["open_team"] == 1
    bids = [bid_value(b) for b in last["bid_cards"]]
    assert list(last["bids"]) == bids
    assert sum(last["tricks"]) == 10
    expected = hand_points(list(last["tricks"]), bids, 4, 1)
    assert list(last["points"]) == expected
    assert game.team_total == [10 + expected[0], expected[1]]
    assert game.scores() == [game.team_total[0]] * 2 + [game.team_total[1]] * 2
    obs = game.observation(2)
    assert obs["last_hand"]["bid_cards"] == last["bid_cards"]  # all revealed at scoring
    assert game.hand_number == 1 and game.leader == 2


# ---- rotation and the end ------------------------------------------------------


def test_opening_leader_rotation():
    assert [opening_leader(h, 4) for h in range(8)] == [0, 2, 1, 3, 0, 2, 1, 3]
    assert [opening_leader(h, 6) for h in range(12)] == [0, 2, 4, 1, 3, 5, 0, 2, 4, 1, 3, 5]
    game = TwinShoot.new(6, 9)
    leaders = []
    for _ in range(5):
        leaders.append(game.leader)
        assert game.current_player() == game.leader  # the leader bids first
        game.set_position(team_total=[0, 0, 0])  # no open question, no end
        scripted_hand(game, lambda legal: legal[0])
    assert leaders == [0, 2, 4, 1, 3]


def test_game_ends_after_the_hand_in_which_a_team_reaches_100():
    game = TwinShoot.position(4, seed=11, team_total=[99, 99])
    scripted_hand(game, lambda legal: CLOSED if CLOSED in legal else legal[0])
    assert game.is_terminal() and game.current_player() == -1 and game.legal_actions() == []
    assert max(game.team_total) >= 100  # 10 tricks were shared out
    assert game.observation(0)["phase"] == "over"

    game = TwinShoot.position(4, seed=11, team_total=[50, 50])  # at most 10 + 30 more: nobody reaches 100
    scripted_hand(game, lambda legal: legal[0])
    assert max(game.team_total) < 100
    assert not game.is_terminal() and game.hand_number == 1


def test_end_is_checked_after_the_last_trick_is_scored():
    hands = [[c(LEAF, A)], [c(DIAMOND, 7)], [c(LEAF, 7)], [c(DIAMOND, 8)]]
    game = play_position(4, 0, hands, [[c(SPADE, 7), c(SPADE, 8)]] * 4, totals=[95, 89])
    game.set_position(
        played_view=((0, (), 0),) * 9,  # nine tricks already played
        tricks_won=[9, 0, 0, 0],
        bid_vals=[9, 1, 1, 1],
    )
    assert not game.is_terminal()
    for _ in range(4):
        game.apply(game.legal_actions()[0])
    # seat 0 took all 10 tricks (bid 9: missed), nobody else made a bid
    assert game.last_hand["tricks"] == (10, 0, 0, 0)
    assert game.last_hand["points"] == (10, 0)
    assert game.team_total == [105, 89]
    assert game.is_terminal()
    assert game.standings() == [1, 1, 2, 2]  # teams are ranked 1st, 2nd


def test_forty_hand_cap():
    game = TwinShoot.new(4, 12)
    game.set_position(hand_number=39)
    game._start_hand()
    game.set_position(team_total=[0, 0])
    scripted_hand(game, lambda legal: legal[0])
    assert game.hand_number == 40
    assert max(game.team_total) < 100
    assert game.is_terminal()


def test_tied_teams_share_the_rank():
    game = TwinShoot.position(6, seed=0, team_total=[40, 70, 70])
    assert game.scores() == [40, 40, 70, 70, 70, 70]
    assert game.standings() == [3, 3, 1, 1, 1, 1]


# ---- hidden information ---------------------------------------------------------


def test_redeal_keeps_partner_and_open_bid_cards():
    game = TwinShoot.position(6, seed=3, team_total=[20, 30, 10])
    bid_all(game)
    game.apply(OPEN)
    game.apply(OPEN)
    game.apply(game.legal_actions()[0])
    for seed in range(5):
        dealt = game.redeal(0, seed)
        assert dealt.observation(0) == game.observation(0)
        assert dealt.bid_cards[1] == game.bid_cards[1]  # partner's, seen
        assert dealt.bid_cards[4:] == game.bid_cards[4:]  # open team, public
        assert [bid_value(b) for b in dealt.bid_cards] == dealt.bid_vals
        assert sorted(x for h in dealt.hands + dealt.bid_cards for x in h) == sorted(
            x for h in game.hands + game.bid_cards for x in h
        )
        assert [len(h) for h in dealt.hands] == [len(h) for h in game.hands]
    changed = {tuple(map(tuple, game.redeal(0, s).bid_cards[2:4])) for s in range(6)}
    assert len(changed) > 1


def test_describe_action_names_cards():
    game = TwinShoot.new(4, 0)
    first = game.legal_actions()[0]
    from games.tennos import card_name

    assert card_name(first) in game.describe_action(first)
    game.set_position(team_total=[0, 5])
    bid_all(game)
    assert "open" in game.describe_action(OPEN)
    assert "closed" in game.describe_action(CLOSED)


def test_random_games_are_short():
    for n in (4, 6):
        for seed in range(5):
            game = TwinShoot.new(n, seed)
            picker = random.Random(seed)
            while not game.is_terminal():
                game.apply_unchecked(picker.choice(game.legal_actions()))
            assert max(game.team_total) >= 100 or game.hand_number == 40
            assert game.decisions < TwinShoot.INFO.max_decisions


@pytest.mark.parametrize("num_players", [4, 6])
def test_the_previous_hands_tricks_are_kept_whole(num_players):
    """A seat's last card of a hand can come before the hand's end:
    `last_hand` keeps all ten tricks, beginning with those seen before."""
    rng = random.Random(num_players)
    hands = 0
    for seed in range(4):
        game = get_game("twin_shoot").new(num_players, seed)
        seen = game.observation(0)
        while not game.is_terminal() and hands < 40:
            game.apply(rng.choice(game.legal_actions()))
            views = [game.observation(s) for s in range(num_players)]
            now = views[0]
            if now["hand_number"] != seen["hand_number"]:
                hands += 1
                kept = now["last_hand"]["tricks_played"]
                assert all(view["last_hand"]["tricks_played"] == kept for view in views)
                assert len(kept) == 10 and kept[:len(seen["tricks_played"])] == seen["tricks_played"]
                winners = [winner for _, _, winner in kept]
                assert [winners.count(s) for s in range(num_players)] == list(now["last_hand"]["tricks"])
            seen = now
    assert hands >= 8
