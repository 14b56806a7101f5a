"""kings_order (seed 003 §04): the seed's discard example, the RULINGS.md
rulings and the rulings made in games/kings_order.py."""

from __future__ import annotations

import msgpack
import pytest

from games import IllegalActionError
from games.kings_order import (
    DISCARD_LEFT,
    DISCARD_RIGHT,
    KingsOrder,
    handover,
    score_round,
    sort_hand,
)
from games.tennos import CLUB, CROSS, DIAMOND, HEART, LEAF, SPADE, card, rank_of

SUIT_LETTERS = {"s": SPADE, "h": HEART, "d": DIAMOND, "c": CLUB, "l": LEAF, "x": CROSS}
RANK_LETTERS = {"A": 1, "J": 11, "Q": 12, "K": 13}


def C(text: str) -> int:
    """'h5' = heart 5, 'sQ' = spade Q, 'x10' = cross 10."""
    rank = text[1:]
    return card(SUIT_LETTERS[text[0]], RANK_LETTERS.get(rank) or int(rank))


def Cs(text: str) -> list[int]:
    return [C(t) for t in text.split()]


def position(hands: list[str], to_act: int = 0) -> KingsOrder:
    sorted_hands = [sort_hand(Cs(h)) for h in hands]
    dealt = set(sum(sorted_hands, []))
    return KingsOrder.position(len(hands), hands=sorted_hands,
                               set_aside=[c for c in range(78) if c not in dealt], to_act=to_act)


# ---- the seed's example ------------------------------------------------------------

SEED_HAND = "sA s2 s3 s4 h4 d4 s6 s7 s9 sJ hJ sK"  # A,2,3,4,4,4,6,7,9,J,J,K


def test_seed_example_playing_the_3_keeps_a_2_or_4_to_k():
    for choice, kept in ((DISCARD_RIGHT, "sA s2"), (DISCARD_LEFT, "s4 h4 d4 s6 s7 s9 sJ hJ sK")):
        game = position([SEED_HAND, "c5 c8", "d5 d8"])
        game.apply(C("s3"))
        assert game.phase == "discard"
        assert game.legal_actions() == [DISCARD_LEFT, DISCARD_RIGHT]
        game.apply(choice)
        assert game.hands[0] == sort_hand(Cs(kept))
        discarded = set(Cs(SEED_HAND)) - set(Cs(kept)) - {C("s3")}
        assert game.discard_pile == [C("s3")] + sort_hand(list(discarded))
        assert game.phase == "name"


# ---- the turn --------------------------------------------------------------------------


def test_hands_are_dealt_13_each_sorted_and_the_rest_set_aside():
    for n, aside in ((3, 39), (4, 26), (5, 13), (6, 0)):
        game = KingsOrder.new(n, 5)
        assert all(len(h) == 13 for h in game.hands)
        assert len(game.set_aside) == aside
        for hand in game.hands:
            assert [rank_of(c) for c in hand] == sorted(rank_of(c) for c in hand)
        assert sorted(sum(game.hands, []) + game.set_aside) == list(range(78))


def test_an_end_card_needs_no_discard():
    game = position(["s2 s5 s9", "c5 c8", "d5 d8"])
    game.apply(C("s9"))
    assert game.phase == "name" and game.hands[0] == Cs("s2 s5")
    game.apply(("name", 1))
    game.apply(C("c5"))
    assert game.phase == "name"


def test_equal_ranks_the_player_chooses_the_copy():
    # hand 4 4 4 6: the first 4 is an end card, the second one is not
    game = position(["s4 h4 d4 s6", "c5 c8", "d5 d8"])
    assert game.legal_actions() == Cs("s4 h4 d4 s6")
    first = game.clone()
    first.apply(C("s4"))
    assert first.phase == "name" and first.hands[0] == Cs("h4 d4 s6")
    middle = game.clone()
    middle.apply(C("h4"))
    assert middle.phase == "discard"
    middle.apply(DISCARD_RIGHT)
    assert middle.hands[0] == Cs("s4")


def test_naming_only_other_players_with_cards():
    game = position(["s2 s5 s9", "", "d5 d8", "c2"])
    game.apply(C("s9"))
    assert game.legal_actions() == [("name", 2), ("name", 3)]
    with pytest.raises(IllegalActionError):
        game.apply(("name", 1))
    with pytest.raises(IllegalActionError):
        game.apply(("name", 0))


def test_handover_from_either_end_gives_every_card_of_that_rank_there():
    assert handover(Cs("s3 h3 d7 s9"), 3) == (Cs("d7 s9"), Cs("s3 h3"), "left")
    assert handover(Cs("s3 d7 s9 h9 c9"), 9) == (Cs("s3 d7"), Cs("s9 h9 c9"), "right")
    assert handover(Cs("s3 d7 s9"), 7) == (Cs("s3 d7 s9"), [], None)  # not at an end
    assert handover(Cs("s9 h9"), 9) == ([], Cs("s9 h9"), "left")  # both ends: all of it
    assert handover(Cs("sQ"), 12) == ([], Cs("sQ"), "left")


def test_handed_cards_become_face_up_score_cards():
    game = position(["sK s2 s5", "c5 hK dK", "d5 d8"])
    game.apply(C("sK"))
    game.apply(("name", 1))
    assert game.hands[1] == Cs("c5")
    assert game.score_cards[0] == Cs("hK dK")
    assert game.discard_pile == [C("sK")]
    for seat in range(3):
        obs = game.observation(seat)
        assert obs["score_cards"][0] == Cs("hK dK")  # public
        assert obs["round_points"][0] == 13
    assert game.log[-1] == (0, C("sK"), 2, 0, None, (), 1, tuple(Cs("hK dK")), "right")
    assert game.current_player() == 1


def test_a_wrong_guess_hands_over_nothing():
    game = position(["s2 s5 s9", "c3 h9 dK", "d5 d8"])
    game.apply(C("s9"))
    game.apply(("name", 1))  # a 9, but not at an end
    assert game.hands[1] == Cs("c3 h9 dK")
    assert game.score_cards == [[], [], []]
    assert game.log[-1][6:] == (1, (), None)
    assert game.discard_pile == [C("s9")]


def test_played_and_discarded_cards_are_public():
    game = position(["s2 s5 s9 sK", "c5 hK dK", "d5 d8"])
    game.apply(C("s5"))
    obs1 = game.observation(1)
    assert obs1["pending"] == {"seat": 0, "card": C("s5"), "left": 1, "right": 2, "discard": None}
    game.apply(DISCARD_RIGHT)
    obs2 = game.observation(2)
    assert obs2["discard_pile"] == Cs("s5 s9 sK")
    assert obs2["pending"]["discard"] == "right"
    assert obs2["hand_sizes"] == [1, 3, 2]
    assert "hand" in obs2 and obs2["hand"] == Cs("d5 d8")


# ---- the end of a round ----------------------------------------------------------


def test_the_turn_is_completed_when_the_players_hand_empties():
    game = position(["sJ", "hJ c3", "d5 d8"])
    game.apply(C("sJ"))  # seat 0's hand is empty now
    assert game.phase == "name"
    game.apply(("name", 1))
    assert game.score_cards[0] == [C("hJ")]
    assert game.current_player() == 1  # seats 1 and 2 still hold cards
    assert game.round == 0


def test_the_round_ends_when_at_most_one_player_holds_cards():
    game = position(["sJ", "hJ", "d5 d8 dK"])
    game.apply(C("sJ"))
    game.apply(("name", 1))  # seat 1 hands over its last card
    # only seat 2 holds cards: the round is over, its hand is not scored
    assert game.round == 1
    assert game.last_round_points == [11, 0, 0]
    assert game.start_player == 1 and game.current_player() == 1


def test_players_without_cards_are_skipped():
    game = position(["s2 s3", "", "d5 d8", "c4 c9"])
    game.apply(C("s3"))
    game.apply(("name", 2))
    assert game.current_player() == 2
    game.apply(C("d8"))
    game.apply(("name", 3))
    assert game.current_player() == 3
    game.apply(C("c9"))
    game.apply(("name", 0))
    assert game.current_player() == 0


def test_a_match_is_three_rounds_with_the_start_player_moving_left():
    game = KingsOrder.new(4, 9, narrate=True)
    starts = [game.start_player]
    seen = {0}
    while not game.is_terminal():
        game.apply(game.legal_actions()[-1])
        if game.round not in seen and not game.is_terminal():
            seen.add(game.round)
            starts.append(game.start_player)
    assert starts == [0, 1, 2]
    assert game.round == 2
    assert game.current_player() == -1 and game.legal_actions() == []
    assert any("round 3 ends" in e for e in game.events)
    assert game.scores() == game.total


# ---- scoring ---------------------------------------------------------------------------


def test_number_cards_score_face_value():
    assert score_round([Cs("sA h2 d10"), Cs("c9"), []]) == [13, 9, 0]


def test_j_q_k_majorities_score_to_every_leader():
    cards = [
        Cs("sJ hJ sQ"),  # J: 2 (most), Q: 1 (tied), K: 0
        Cs("dJ hQ"),     # Q: 1 (tied)
        Cs("sK s5"),     # K: 1 (the only one)
    ]
    assert score_round(cards) == [11 + 12, 12, 13 + 5]


def test_nobody_scores_a_face_rank_that_nobody_holds():
    assert score_round([Cs("s2"), Cs("s3"), Cs("s4")]) == [2, 3, 4]


def test_ties_in_total_share_the_rank():
    game = position(["sJ", "hJ", "d5 d8 dK"])
    game.set_position(total=[5, 5, 1])
    assert game.standings() == [1, 1, 3]


# ---- information -------------------------------------------------------------------


def test_redeal_keeps_the_view_and_the_hand_sizes():
    game = KingsOrder.new(4, 3)
    for _ in range(10):
        game.apply(game.legal_actions()[0])
    view = msgpack.packb(game.observation(2))
    dealt = game.redeal(2, 8)
    assert msgpack.packb(dealt.observation(2)) == view
    assert [len(h) for h in dealt.hands] == [len(h) for h in game.hands]
    assert dealt.hands[2] == game.hands[2]
    for hand in dealt.hands:
        assert hand == sort_hand(hand)
    others = sorted(sum((h for s, h in enumerate(game.hands) if s != 2), []) + game.set_aside)
    again = sorted(sum((h for s, h in enumerate(dealt.hands) if s != 2), []) + dealt.set_aside)
    assert others == again


def test_observation_hides_other_hands():
    game = KingsOrder.new(3, 1)
    obs = game.observation(1)
    assert obs["hand"] == game.hands[1]
    assert "hands" not in obs and obs["set_aside"] == 39
    assert obs["hand_sizes"] == [13, 13, 13]
    # two seats' views differ only in the seat and the own hand
    other = game.observation(0)
    assert {k for k in obs if obs[k] != other[k]} == {"seat", "hand"}
    other_cards = set(game.hands[0]) | set(game.hands[2])
    assert not other_cards & set(obs["hand"])


def test_describe_action_uses_card_names():
    game = position([SEED_HAND, "c5 c8", "d5 d8"])
    assert game.describe_action(C("s3")) == "P0 plays ♠3 from the middle (2 left, 9 right)"
    assert game.describe_action(C("sK")) == "P0 plays ♠K from the right end"
    game.apply(C("s3"))
    assert game.describe_action(DISCARD_LEFT) == "P0 discards the left side: ♠A ♠2"
    game.apply(DISCARD_LEFT)
    assert game.describe_action(("name", 2)) == "P0 names P2: any 3 at an end?"
