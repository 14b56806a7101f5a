"""all_aboard (seed 003 §07): the seed's example, the RULINGS.md rulings and
the rulings made in games/all_aboard.py."""

from __future__ import annotations

import msgpack
import pytest

from games import IllegalActionError
from games.all_aboard import AllAboard, legal_plays, round_points
from games.tennos import CLUB, CROSS, DIAMOND, HEART, LEAF, SPADE, card
from games.testing import sample_states

SUIT_LETTERS = {"s": SPADE, "h": HEART, "d": DIAMOND, "c": CLUB, "l": LEAF, "x": CROSS}
RANK_LETTERS = {"A": 1, "J": 11, "Q": 12, "K": 13}


def C(text: str) -> int:
    """'h5' = heart 5, 'sQ' = spade Q, 'x10' = cross 10, 'j0'..'j3' = jokers."""
    if text[0] == "j":
        return 78 + int(text[1:] or 0)
    rank = text[1:]
    return card(SUIT_LETTERS[text[0]], RANK_LETTERS.get(rank) or int(rank))


def Cs(text: str) -> list[int]:
    return [C(t) for t in text.split()]


FILLER = Cs("s2 s3 s4 c2 c3 c4 l2 l3 l4 s5 c5 l5 s6 c6 l6 s7 c7 l7 s8 c8 l8")


def position(
    hands: list[str],
    field: str,
    deck: list[int] | None = None,
    to_act: int = 0,
    refill: bool = False,
) -> AllAboard:
    """A mid-round position; ``deck`` lists cards bottom first (top = last).
    ``refill`` starts ``to_act``'s turn as the engine does (draw up to eight,
    pass on if nothing fits): a step of play, not state derived from fields,
    so the engine's own turn start runs it."""
    game = AllAboard.position(
        len(hands),
        hands=[sorted(Cs(h)) for h in hands],
        field=C(field),
        played=[C(field)],
        deck=list(FILLER if deck is None else deck),
        certs=[[] for _ in hands],
        passes=0,
        turn_plays=0,
        to_act=to_act,
    )
    if refill:
        game._begin_turn(to_act)
    return game


# ---- the seed's example ------------------------------------------------------


def test_seed_example_a_hand_of_three_draws_five_at_the_start_of_the_turn():
    game = position(["h2 d3 x4", "sK cK lK hK dK xK sQ cQ"], "sA", refill=True)
    assert game.current_player() == 0
    assert len(game.hands[0]) == 8
    assert len(game.deck) == len(FILLER) - 5
    assert set(Cs("h2 d3 x4")) <= set(game.hands[0])


def test_deal_eight_each_and_the_deck_top_starts_the_field():
    for n in range(2, 7):
        game = AllAboard.new(n, 7)
        assert game.round == 0
        assert all(len(h) == 8 for h in game.hands)
        assert len(game.deck) == 82 - 8 * n - 1
        cards = sum(game.hands, []) + game.deck + game.played + sum(game.certs, [])
        assert sorted(cards) == list(range(82))
        assert game.rounds == n


# ---- red field ---------------------------------------------------------------


def test_red_field_offers_any_red_suit_a_black_card_of_its_rank_or_a_joker():
    hand = Cs("h2 d9 x3 s5 c5 l7 s9 j1 j2")
    legal = legal_plays(sorted(hand), C("h5"))
    # every red card (which one goes last), black 5s, one joker; not s9 / l7
    assert sorted(legal) == sorted(Cs("h2 d9 x3 s5 c5 j1"))


def test_red_field_option_one_plays_every_card_of_the_suit_and_ends_the_turn():
    game = position(["h2 h9 hK d4 s7 c7 l7 sA", "sK cK lK hK dK xK sQ cQ"], "d7")
    deck_before = len(game.deck)
    game.apply(C("h9"))  # all hearts, h9 last
    assert game.field == C("h9")
    assert game.played[-3:] == Cs("h2 hK h9")
    assert not any(c in game.hands[0] for c in Cs("h2 h9 hK"))
    assert game.certs[0] == []  # no certificates
    assert game.current_player() == 1  # the turn ended at once
    assert len(game.deck) == deck_before  # seat 1 already held 8


def test_red_field_option_two_clears_with_black_of_the_rank_and_goes_on():
    game = position(["s7 c9 cK h2 h3 x2 d2 dA", "sK cK lK hK dK xK sQ cQ"], "d7")
    deck = list(game.deck)
    game.apply(C("s7"))  # clears the signal: no certificate
    assert game.certs[0] == []
    assert game.field == C("s7")
    # black field spade 7: no spade, no 7 left -> the turn ends by itself
    assert game.current_player() == 1
    assert game.turn_plays == 0  # seat 1's turn has begun
    assert game.deck == deck


def test_clearing_then_chaining_earns_a_certificate_per_black_card():
    game = position(["s7 sK cK h2 h3 x2 d2 dA", "lA lQ cQ hK dK xK sQ h4"], "d7")
    top = game.deck[-1]
    game.apply(C("s7"))
    assert game.current_player() == 0
    assert game.legal_actions() == [C("sK")]
    game.apply(C("sK"))
    assert game.certs[0] == [top]  # the deck's top card, face down
    assert game.legal_actions() == [C("cK")]
    second = game.deck[-1]
    game.apply(C("cK"))
    assert game.certs[0] == [top, second]
    assert game.current_player() == 1  # nothing else to play


# ---- jokers ------------------------------------------------------------------


def test_a_joker_clears_a_red_signal_without_a_certificate():
    game = position(["j0 s3 h2 h3 x2 d2 dA xA", "lA lQ cQ hK dK xK sQ h4"], "d7")
    assert C("j0") in game.legal_actions()
    game.apply(C("j0"))
    assert game.certs[0] == []
    assert game.field == C("j0") and not msgpack.unpackb(
        msgpack.packb(game.observation(0)))["field_red"]
    # anything goes on a joker, red included; nothing is forced
    assert sorted(game.legal_actions()) == sorted(Cs("s3 h2 h3 x2 d2 dA xA"))


def test_a_joker_on_a_black_field_earns_a_certificate_and_takes_anything():
    game = position(["j0 dA s9 c2 h3 x2 d2 d3", "lA lQ cQ hK dK xK sQ h4"], "l4")
    game.apply(C("j0"))
    assert len(game.certs[0]) == 1
    game.apply(C("dA"))  # a red card on the joker: red signal, turn over
    assert len(game.certs[0]) == 1
    assert game.field == C("dA") and game.current_player() == 1


def test_only_one_joker_is_offered():
    assert legal_plays(sorted(Cs("j0 j2 j3 h5")), C("s9")) == [C("j0")]


def test_a_joker_in_hand_is_black_at_scoring():
    assert round_points(Cs("h2 j1"), 0) == -2  # no -2 for the joker, no bonus
    assert round_points(Cs("j1"), 3) == 3


# ---- forced red plays ------------------------------------------------------------


def test_a_red_card_of_the_black_fields_rank_must_be_played():
    hand = sorted(Cs("d5 x5 s7 c5 j0"))
    assert legal_plays(hand, C("s5")) == sorted(Cs("d5 x5"))
    game = position(["d5 s7 c5 s2 s3 s4 l9 j0", "lA lQ cQ hK dK xK sQ h4"], "s5")
    game.apply(C("d5"))
    assert game.certs[0] == []  # it earns nothing
    assert game.field == C("d5")  # the field turns red
    assert game.current_player() == 1  # and the turn ends


def test_the_forced_play_comes_back_in_the_middle_of_a_chain():
    game = position(["s5 s9 h9 c2 c3 l4 lK dA", "lA lQ cQ hK dK xK sQ h4"], "sJ")
    assert game.legal_actions() == Cs("s5 s9")
    game.apply(C("s9"))
    assert game.legal_actions() == [C("h9")]  # forced now, the black 5 must wait
    game.apply(C("h9"))
    assert len(game.certs[0]) == 1 and game.current_player() == 1


def test_clearing_a_signal_can_force_a_red_card_of_that_rank():
    game = position(["s5 d5 c9 c3 l4 lK dA h2", "lA lQ cQ hK dK xK sQ h4"], "h5")
    game.apply(C("s5"))
    assert game.legal_actions() == [C("d5")]


def test_the_player_must_keep_playing_while_they_can():
    game = position(["s2 s3 s4 c4 hK dK xK xQ", "lA lQ cQ hK dK xK sQ h4"], "sA")
    steps = 0
    while game.current_player() == 0:
        assert game.legal_actions()  # never a "stop" while a card fits
        game.apply(game.legal_actions()[0])
        steps += 1
    assert steps == 4 and len(game.certs[0]) == 4


# ---- passes and the end of a round -------------------------------------------


def test_a_player_without_a_legal_card_passes_automatically():
    game = position(
        ["s2 h2 hA h3 h4 h5 h6 h8", "c9 c3 c4 c6 l9 lK lQ sK", "s9 cA dA hK xA lA l2 s4"],
        "s7",
    )
    game.apply(C("s2"))
    assert game.legal_actions() == [C("h2")]  # forced
    game.apply(C("h2"))
    # seat 1 holds no red card, no black 2 and no joker: it passes by itself
    assert game.current_player() == 2
    assert game.passes == 1
    assert len(game.hands[1]) == 8


def test_every_player_passing_in_a_row_ends_the_round():
    game = position(
        ["sK hQ hJ h10 h9 h8 h7 h6", "dA d2 d3 d4 d5 d6 d7 d8"],
        "sA",
        deck=FILLER + Cs("x2 c5"),
    )
    game.apply(C("sK"))  # certificate c5 (1 point); nothing else fits on the spade K
    # seat 1 passes; seat 0 draws x2 and passes too: two passes in a row
    assert game.round == 1
    assert game.last_round_points == [1 - 16 + 20, -16 + 20]
    assert game.total == [5, 4]
    assert game.start_player == 1


def test_passes_in_a_row_reset_after_a_play():
    game = position(["s2 h3 h4 h5 h6 h7 h8 h9", "c2 d2 d3 d4 d5 d6 d7 d8"], "sK")
    game.set_position(passes=1)
    game.apply(C("s2"))
    assert game.current_player() == 1
    assert game.passes == 0


def test_the_round_ends_when_a_certificate_empties_the_deck():
    game = position(["s2 s3 s4 s5 hK hQ hJ h10", "dA d2 d3 d4 d5 d6 d7 d8"], "sA",
                    deck=Cs("x9 xK"))
    game.apply(C("s2"))
    assert game.round == 0 and game.certs[0] == [C("xK")]
    game.apply(C("s3"))  # takes x9, the last card: the round ends at once
    assert game.round == 1
    # seat 0: 2 certificates, s4 s5 left (black: no bonus), 4 hearts -8
    assert game.last_round_points[0] == 2 - 8
    assert game.last_round_points[1] == 20 - 16


def test_the_round_ends_when_a_refill_empties_the_deck():
    game = position(["hA", "sK cK lK hK dK xK sQ cQ"], "d5", deck=Cs("x9 s2 s3"), to_act=1)
    game.apply(C("xK"))  # seat 1 plays its only cross, ending the turn
    # seat 0 draws s3, s2, x9: the deck is empty before playing
    assert game.round == 1
    assert game.last_round_points[0] == -4  # hA, x9 red; s2 s3 black: no bonus
    assert game.last_round_points[1] == -4  # hK dK red; black cards: no bonus


def test_round_scoring_bonus_for_an_empty_or_all_red_hand():
    assert round_points([], 5) == 25
    assert round_points(Cs("h2 dK"), 1) == 1 - 4 + 20
    assert round_points(Cs("h2 sK"), 1) == 1 - 2
    assert round_points(Cs("sK"), 0) == 0


def test_a_match_is_n_rounds_with_rotating_start_players():
    game = AllAboard.new(4, 3, narrate=True)
    starts = [game.start_player]
    rounds_seen = {0}
    while not game.is_terminal():
        game.apply(game.legal_actions()[0])
        if game.round not in rounds_seen and not game.is_terminal():
            rounds_seen.add(game.round)
            starts.append(game.start_player)
    assert starts == [0, 1, 2, 3]
    assert game.scores() == game.total
    assert any("round 4 ends" in e for e in game.events)
    with pytest.raises(IllegalActionError):
        game.apply(0)


# ---- information -----------------------------------------------------------------


def test_observation_hides_other_hands_and_certificate_values():
    game = position(["s2 s3 h2 h3 h4 h5 h6 h7", "dA d2 d3 d4 d5 d6 d7 d8"], "sA")
    game.apply(C("s2"))
    obs = game.observation(1)
    assert obs["hand"] == sorted(Cs("dA d2 d3 d4 d5 d6 d7 d8"))
    assert obs["hand_sizes"] == [7, 8]
    assert obs["certificates"] == [1, 0]
    packed = msgpack.packb(obs)
    cert = game.certs[0][0]
    assert cert not in obs["hand"] and cert not in obs["played"]
    assert packed == msgpack.packb(game.redeal(1, 5).observation(1))


def test_redeal_keeps_the_actor_able_to_play():
    # seat 0 is on turn mid-chain with a single card; seat 1 redeals it away
    game = position(["s3", "dA d2 d3 d4 d5 d6 d7 d8"], "s2")
    for seed in range(30):
        dealt = game.redeal(1, seed)
        assert dealt.legal_actions()
        assert dealt.hands[1] == game.hands[1]
        assert len(dealt.hands[0]) == 1


def test_describe_action_uses_card_names():
    game = position(["h2 h9 s7 c7 l7 sA x2 d3", "sK cK lK hK dK xK sQ cQ"], "d7")
    assert "♥2 ♥9" in game.describe_action(C("h9"))
    assert "clears the red signal with ♠7" in game.describe_action(C("s7"))
    game.apply(C("l7"))
    assert game.current_player() == 0
    assert game.describe_action(C("s7")) == "P0 plays ♠7 and takes a certificate"


def test_apply_refuses_cards_that_do_not_fit():
    game = position(["h2 h9 s7 c7 l8 sA x2 d3", "sK cK lK hK dK xK sQ cQ"], "d7")
    with pytest.raises(IllegalActionError):
        game.apply(C("l8"))


@pytest.mark.parametrize("num_players", [3, 5])
def test_the_log_shows_who_laid_which_cards_and_who_was_skipped(num_players):
    """`played` has no owners, and a seat with no legal card is skipped
    without being asked; `log` keeps this round's turns: its cards are
    `played` after the starting card (the turn in progress last), seats go
    round in order, skipped seats included, and the passes in a row are the
    log's trailing passes."""
    checked = passes = 0
    for game in sample_states("all_aboard", num_players, seed=80 + num_players, every=1):
        if game.is_terminal():
            break
        obs = game.observation(game.current_player())
        log = obs["log"]
        laid = [c for _, cards in log for c in cards]
        in_progress = obs["played"][len(obs["played"]) - obs["turn_plays"]:]
        assert [obs["played"][0], *laid, *in_progress] == obs["played"]
        seats = [s for s, _ in log] + [obs["current_player"]]
        first = obs["start_player"]
        assert seats == [(first + i) % num_players for i in range(len(seats))]
        trailing = 0
        while trailing < len(log) and not log[len(log) - 1 - trailing][1]:
            trailing += 1
        assert obs["passes"] == (0 if obs["turn_plays"] else trailing)
        passes += sum(1 for _, cards in log if not cards)
        checked += 1
    assert checked > 50 and passes > 0
