"""target (seed 003 §08): RULINGS.md rulings and the rulings made in the engine."""

from __future__ import annotations

import random

import pytest

from bots.heuristics.target import choose
from games import IllegalActionError, get_game
from games.target import FACE_UP, STOP, Target, round_winner
from games.tennos import CLUB, CROSS, DIAMOND, HEART, LEAF, SPADE, card

S, H, D, C, L, X = SPADE, HEART, DIAMOND, CLUB, LEAF, CROSS


def position(num_players: int = 3) -> Target:
    """A fresh game whose SP (seat 0) is choosing among ♥7, ♠2, ♣K, with
    known hands and a known deck (drawn from the end)."""
    hands = [
        [card(H, 1), card(H, 12), card(S, 6), card(D, 7), card(C, 2)],
        [card(H, 13), card(S, 8), card(D, 8), card(L, 5), card(X, 4)],
        [card(S, 12), card(D, 1), card(D, 13), card(L, 7), card(X, 9)],
        [card(L, 1), card(L, 2), card(L, 3), card(L, 4), card(L, 6)],
        [card(X, 1), card(X, 2), card(X, 3), card(X, 5), card(X, 6)],
        [card(C, 3), card(C, 4), card(C, 5), card(C, 6), card(C, 7)],
    ][:num_players]
    hands = [sorted(hand) for hand in hands]
    revealed = sorted([card(H, 7), card(S, 2), card(C, 13)])
    used = {c for h in hands for c in h} | set(revealed)
    return Target.position(num_players, hands=hands, revealed=revealed,
                           deck=[c for c in range(78) if c not in used], discard=[])


# ---- setup ------------------------------------------------------------------
@pytest.mark.parametrize("n", range(2, 7))
def test_deal_five_each_and_sp_reveals_three(n):
    game = Target.new(n, 9)
    assert [len(h) for h in game.hands] == [5] * n
    assert len(game.revealed) == 3
    assert len(game.deck) == 78 - 5 * n - 3
    assert game.current_player() == 0 and game.phase == "choose"
    assert game.legal_actions() == sorted(game.revealed)
    every = [c for h in game.hands for c in h] + game.deck + game.revealed
    assert sorted(every) == list(range(78))


def test_player_counts():
    assert list(get_game("target").INFO.player_counts()) == [2, 3, 4, 5, 6]


def test_choosing_sends_the_other_two_face_up_to_the_discard_pile():
    game = position()
    game.apply(card(H, 7))
    assert game.target == card(H, 7) and game.phase == "play"
    assert game.current_player() == 0
    for seat in range(3):
        obs = game.observation(seat)
        assert obs["discard_face_up"] == sorted([card(S, 2), card(C, 13)])
        assert obs["target"] == card(H, 7) and obs["revealed"] == []


def test_revealed_cards_are_public():
    game = position()
    assert game.observation(2)["revealed"] == game.revealed
    with pytest.raises(IllegalActionError):
        game.apply(card(H, 1))  # not among the revealed cards


# ---- judging ------------------------------------------------------------------
def test_same_suit_farthest_wins():
    target = card(H, 7)
    plays = [(0, card(H, 9)), (1, card(H, 2)), (2, card(S, 7))]
    assert round_winner(target, plays) == 1  # distance 5 beats 2; the spade is ignored


def test_same_suit_tie_goes_to_the_earlier_play():
    target = card(H, 7)
    assert round_winner(target, [(1, card(H, 1)), (2, card(H, 13)), (0, card(S, 1))]) == 1
    assert round_winner(target, [(2, card(H, 13)), (0, card(H, 1))]) == 2


def test_same_suit_beats_a_closer_card_of_another_suit():
    target = card(D, 7)
    assert round_winner(target, [(0, card(S, 7)), (1, card(D, 8))]) == 1


def test_no_same_suit_closest_wins():
    target = card(C, 10)
    assert round_winner(target, [(0, card(S, 2)), (1, card(H, 9)), (2, card(D, 13))]) == 1


def test_no_same_suit_tie_goes_to_the_later_play():
    target = card(C, 7)
    assert round_winner(target, [(0, card(S, 6)), (1, card(H, 8)), (2, card(D, 1))]) == 1
    assert round_winner(target, [(2, card(S, 8)), (0, card(H, 6))]) == 0
    assert round_winner(target, [(1, card(S, 7)), (2, card(H, 7)), (0, card(D, 7))]) == 0


def test_a_full_round_farthest_then_winner_becomes_sp():
    game = position(3)
    game.apply(card(H, 7))
    game.apply(card(H, 12))  # seat 0: distance 5
    assert game.current_player() == 1
    game.apply(card(H, 13))  # seat 1: distance 6
    game.apply(card(D, 13))  # seat 2: not the suit
    assert game.targets == [[], [card(H, 7)], []]
    assert game.scores() == [0, 1, 0]
    assert game.phase == "discard"
    assert game.current_player() == 0  # discards start from this round's SP
    for seat in range(3):
        obs = game.observation(seat)
        assert card(H, 12) in obs["discard_face_up"] and card(D, 13) in obs["discard_face_up"]
        assert obs["last_round"] == {
            "target": card(H, 7),
            "plays": [[0, card(H, 12)], [1, card(H, 13)], [2, card(D, 13)]],
            "winner": 1,
            "discarded": None,  # the round's discards are being made
        }
    for _ in range(3):
        game.apply(STOP)
    assert game.sp == 1 and game.observation(2)["start_player"] == 1
    assert game.observation(2)["last_round"]["discarded"] == [0, 0, 0]  # nobody discarded
    assert game.phase == "choose" and game.current_player() == 1
    assert [len(h) for h in game.hands] == [5, 5, 5]


def test_a_full_round_closest_later_wins_the_tie():
    game = position(3)
    game.apply(card(C, 13))  # target ♣K; nobody plays a club
    game.apply(card(H, 12))  # seat 0: distance 1
    game.apply(card(L, 5))  # seat 1
    game.apply(card(D, 13))  # seat 2: distance 0
    assert game.targets[2] == [card(C, 13)]
    game2 = position(3)
    game2.apply(card(C, 13))
    game2.apply(card(H, 12))  # distance 1
    game2.apply(card(S, 8))
    game2.apply(card(S, 12))  # distance 1, later: wins the tie
    assert game2.targets[2] == [card(C, 13)]


# ---- discards and refill ------------------------------------------------------
def _to_discard_phase(game: Target) -> None:
    game.apply(card(H, 7))
    game.apply(card(H, 12))
    game.apply(card(H, 13))
    game.apply(card(D, 13))


def test_discard_up_to_two_face_down_then_draw_to_five():
    game = position(3)
    _to_discard_phase(game)
    assert game.legal_actions() == [STOP, *game.hands[0]]
    first, second = game.hands[0][0], game.hands[0][1]
    game.apply(first)
    assert game.current_player() == 0
    game.apply(second)  # the second discard ends the step and draws
    assert game.current_player() == 1
    assert len(game.hands[0]) == 5
    assert first not in game.hands[0]
    me, other = game.observation(0), game.observation(1)
    assert me["my_face_down"] == sorted([first, second])
    assert other["my_face_down"] == []
    assert first not in other["discard_face_up"] and second not in other["discard_face_up"]
    assert other["discarded"] == [2, 0, 0] and me["discarded"] == [2, 0, 0]
    assert other["discard_size"] == me["discard_size"] == 2 + 3 + 2


def test_discarding_zero_keeps_the_hand_and_draws_one():
    game = position(3)
    _to_discard_phase(game)
    hand = list(game.hands[0])
    game.apply(STOP)
    assert set(hand) <= set(game.hands[0]) and len(game.hands[0]) == 5


def test_empty_deck_is_refilled_from_the_discard_pile():
    game = position(3)
    _to_discard_phase(game)
    game.set_position(deck=[card(L, 12)])  # one card left; the rest are elsewhere now
    before = sorted(c for c, _ in game.discard)
    discarded = game.hands[0][0]
    game.apply(discarded)
    game.apply(STOP)  # needs 2 cards: the last deck card, then a refill
    assert game.refills == 1
    assert card(L, 12) in game.hands[0]
    assert game.discard == []
    pool = sorted(before + [discarded])
    drawn = [c for c in game.hands[0] if c in pool]
    assert len(drawn) == 1
    assert sorted(game.deck + drawn) == pool
    obs = game.observation(1)
    assert obs["discard_face_up"] == [] and obs["refills"] == 1
    assert obs["deck_size"] == len(pool) - 1


def test_reveal_refills_too():
    game = position(2)
    game.apply(card(H, 7))
    game.apply(card(H, 1))  # seat 0, distance 6
    game.apply(card(H, 13))  # seat 1, distance 6: earlier (seat 0) wins
    assert game.targets[0] == [card(H, 7)]
    game.set_position(deck=[card(L, 12), card(L, 13), card(X, 13)])
    game.apply(STOP)  # seat 0 draws 1 (cross K)
    game.apply(STOP)  # seat 1 draws 1 (leaf K), then seat 0 reveals leaf Q + 2 from a refill
    assert game.refills == 1
    assert game.phase == "choose" and game.current_player() == 0
    assert card(L, 12) in game.revealed and len(game.revealed) == 3


# ---- end -----------------------------------------------------------------------
def test_fifth_target_ends_the_game_at_once():
    game = position(3)
    game.set_position(targets=[[], [card(X, 10), card(X, 11), card(X, 12), card(X, 13)],
                               [card(S, 1)]])
    _to_discard_phase(game)  # seat 1 wins ♥7: its fifth target
    assert game.is_terminal() and game.current_player() == -1
    assert game.legal_actions() == [] and game.phase == "over"
    assert game.scores() == [0, 5, 1]
    assert game.standings() == [3, 1, 2]


def test_others_with_equal_targets_share_a_rank():
    game = position(4)
    game.set_position(targets=[[card(X, 1)], [card(X, 2)] * 5, [], [card(X, 3)]])
    assert game.standings() == [2, 1, 4, 2]


def test_random_games_always_end_with_one_player_on_five():
    for n in range(2, 7):
        for seed in range(20):
            game = Target.new(n, seed)
            picker = random.Random(seed)
            while not game.is_terminal():
                game.apply(picker.choice(game.legal_actions()))
            assert sorted(game.scores())[-1] == 5
            assert sorted(game.scores())[-2] < 5
            assert game.decisions < Target.INFO.max_decisions


# ---- observation and redeal -------------------------------------------------------
def test_redeal_keeps_own_face_down_discards_and_resamples_others():
    game = position(3)
    _to_discard_phase(game)
    mine = game.hands[0][0]
    game.apply(mine)
    game.apply(STOP)
    theirs = game.hands[1][0]
    game.apply(theirs)
    game.apply(STOP)
    changed = False
    for seed in range(12):
        dealt = game.redeal(0, seed)
        assert dealt.observation(0) == game.observation(0)
        assert (mine, 0) in dealt.discard
        assert dealt.hands[0] == game.hands[0]
        face_up = sorted(c for c, o in dealt.discard if o == FACE_UP)
        assert face_up == sorted(c for c, o in game.discard if o == FACE_UP)
        changed |= dealt.hands[1] != game.hands[1] or (theirs, 1) not in dealt.discard
        every = [c for h in dealt.hands for c in h] + dealt.deck + [c for c, _ in dealt.discard]
        every += [c for t in dealt.targets for c in t] + dealt.revealed
        assert sorted(every) == list(range(78))
    assert changed
    assert (theirs, 1) in game.redeal(1, 0).discard


def test_describe_action_uses_card_names():
    game = position(3)
    assert game.describe_action(card(H, 7)) == "seat 0 chooses ♥7 as the target"
    game.apply(card(H, 7))
    assert game.describe_action(card(H, 12)) == "seat 0 plays ♥Q (target ♥7)"
    game.apply(card(H, 12))
    game.apply(card(H, 13))
    game.apply(card(L, 7))
    assert game.describe_action(STOP) == "seat 0 stops discarding and draws back to 5"
    assert game.describe_action(card(S, 6)) == "seat 0 discards ♠6 face down"


# ---- heuristic ----------------------------------------------------------------------
def test_heuristic_picks_a_target_it_can_answer_from_far_away():
    game = position(3)
    legal = game.legal_actions()
    pick = legal[choose(game.observation(0), legal, random.Random(0))]
    assert pick == card(C, 13)  # ♣2 is 11 away (♥A only 6 from ♥7, ♠6 4 from ♠2)
    game.apply(pick)
    legal = game.legal_actions()
    assert legal[choose(game.observation(0), legal, random.Random(0))] == card(C, 2)


def test_heuristic_throws_its_least_useful_card_when_it_cannot_win():
    game = position(3)
    game.apply(card(H, 7))
    game.apply(card(H, 1))  # seat 0: distance 6, the best possible
    legal = game.legal_actions()  # seat 1 holds ♥K (also 6: loses the tie)
    # ♠8 and ♦8 can be at most 7 from any target: the least useful cards
    assert legal[choose(game.observation(1), legal, random.Random(0))] == card(S, 8)


def test_heuristic_beats_random_players():
    from bots.evaluate import compare

    result = compare("target", 4, choose, matches=40, seed=123)
    assert result.win_rate > 0.6


@pytest.mark.parametrize("num_players", [3, 5])
def test_last_round_keeps_how_many_cards_each_seat_discarded(num_players):
    """Face-down discards are public as counts, but `discarded` resets when
    the next round starts, before the seats that discarded early are asked
    again: `last_round["discarded"]` keeps the counts (None while they are
    being made)."""
    rng = random.Random(num_players)
    game = Target.new(num_players, seed=70 + num_players)
    counts = [0] * num_players
    finished: list[int] | None = None
    checked = 0
    while not game.is_terminal():
        seat, phase, round_before = game.current_player(), game.phase, game.round
        action = rng.choice(game.legal_actions())
        game.apply(action)
        if phase == "discard" and action != STOP:
            counts[seat] += 1
        if game.round != round_before:
            finished, counts = counts, [0] * num_players
        if game.is_terminal():
            break
        last = game.observation(game.current_player())["last_round"]
        if game.phase == "discard":
            assert last["discarded"] is None
        elif last is not None:
            assert last["discarded"] == finished
            checked += 1
    assert checked > 20 and finished is not None and any(finished)
