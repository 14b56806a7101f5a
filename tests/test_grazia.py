"""grazia (seed 003 §09): worked examples, RULINGS.md rulings, invented rulings."""

from __future__ import annotations

import random

import pytest

from bots.heuristics.grazia import choose
from games import IllegalActionError, get_game
from games.grazia import PASS, STOP, Grazia, deal_sizes
from games.tennos import CLUB, CROSS, DIAMOND, HEART, LEAF, SPADE, card

S, H, D, C, L, X = SPADE, HEART, DIAMOND, CLUB, LEAF, CROSS


def blank(
    num_players: int = 4,
    *,
    hands: dict[int, list[int]] | None = None,
    piles: dict[int, list[int]] | None = None,
    field: dict[int, list[int]] | None = None,
    **fields,
) -> Grazia:
    """A game with empty hands, piles and field, nothing out of play, seat 0
    to act: ``Grazia.position`` with the named seats' hands and piles and the
    named suits' field piles filled in, other fields as given."""

    def filled(size: int, given: dict[int, list[int]] | None) -> list[list[int]]:
        return [list((given or {}).get(i, [])) for i in range(size)]

    fields.setdefault("out_of_play", [])
    return Grazia.position(
        num_players,
        hands=filled(num_players, hands),
        piles=filled(num_players, piles),
        field=filled(6, field),
        **fields,
    )


def play(game: Grazia, *cards: int) -> None:
    """Play these cards as one run, then stop if the play is still open."""
    seat = game.current_player()
    for c in cards:
        game.apply(c)
    if game.current_player() == seat and game.legal_actions()[0] == STOP:
        game.apply(STOP)


def example_position() -> Grazia:
    """The seed's example: your hand and the field ♠A, ♥5, leaf 3."""
    hands = {seat: [card(L, 1 + seat)] for seat in (1, 2, 3)}
    hands[0] = sorted([
        card(S, 4), card(S, 5), card(S, 6), card(S, 11),
        card(H, 6), card(H, 9), card(H, 13),
        card(D, 1),
        card(C, 11), card(C, 13),
    ])
    piles = {seat: [card(C, 1 + seat)] for seat in (1, 2, 3)}
    piles[0] = [card(L, 9), card(L, 10)]  # draws leaf 10 first
    field = {S: [card(S, 1)], H: [card(H, 5)], L: [card(L, 3)]}
    return blank(4, hands=hands, piles=piles, field=field)


# ---- setup ------------------------------------------------------------------
def test_four_player_deal_matches_the_seed_example():
    assert deal_sizes(4) == (19, 9, 2)
    game = Grazia.new(4, 7)
    assert [len(h) for h in game.hands] == [10] * 4
    assert [len(p) for p in game.piles] == [9] * 4
    assert len(game.out_of_play) == 2
    obs = game.observation(2)
    assert obs["out_of_play"] == game.out_of_play  # face up for everyone
    assert obs["pile_size"] == 9 and "pile" not in obs


@pytest.mark.parametrize("n", range(3, 8))
def test_every_card_is_dealt_once(n):
    game = Grazia.new(n, n)
    per, in_pile, extra = deal_sizes(n)
    assert per == 78 // n and in_pile == per // 2 and extra == 78 % n
    everything = [c for h in game.hands for c in h] + [c for p in game.piles for c in p]
    everything += game.out_of_play
    assert sorted(everything) == list(range(78))
    assert all(len(h) == per - in_pile for h in game.hands)
    assert game.current_player() == 0
    assert all(pile == [] for pile in game.field)


def test_player_counts():
    assert list(get_game("grazia").INFO.player_counts()) == [3, 4, 5, 6, 7]


# ---- the seed's hand example -----------------------------------------------------
def test_example_offers_every_card_and_pass():
    game = example_position()
    assert game.legal_actions() == [PASS, *game.hands[0]]


def test_example_heart_6_is_free_and_then_a_card_is_drawn():
    game = example_position()
    game.apply(card(H, 6))
    assert game.legal_actions() == [STOP]  # ♥7 not held: "stop" is the only step
    game.apply(STOP)
    assert game.penalties[0] == 0
    assert game.field[H][-1] == card(H, 6)
    assert card(L, 10) in game.hands[0] and game.piles[0] == [card(L, 9)]
    assert game.current_player() == 1


def test_example_diamond_ace_starts_an_empty_pile_free():
    game = example_position()
    game.apply(card(D, 1))
    assert game.penalties[0] == 0 and game.field[D] == [card(D, 1)]


def test_example_club_jack_starts_an_empty_pile_free():
    game = example_position()
    game.apply(card(C, 11))
    game.apply(STOP)  # ♣Q not held: "stop" is the only choice
    assert game.penalties[0] == 0 and game.field[C] == [card(C, 11)]
    assert game.current_player() == 1


def test_example_spade_4_5_6_together_costs_one_penalty():
    game = example_position()
    game.apply(card(S, 4))
    assert game.current_player() == 0
    assert game.legal_actions() == [STOP, card(S, 5)]
    game.apply(card(S, 5))
    assert game.legal_actions() == [STOP, card(S, 6)]
    game.apply(card(S, 6))
    assert game.legal_actions() == [STOP]  # ♠7 not held
    game.apply(STOP)
    assert game.field[S] == [card(S, 1), card(S, 4), card(S, 5), card(S, 6)]
    assert game.penalties[0] == 1
    # 7 cards left + 1 drawn in hand, 1 in the pile, one penalty
    assert game.scores()[0] == -(7 + 1 + 1) - 2
    assert game.current_player() == 1


def test_example_spade_4_5_only_then_stop():
    game = example_position()
    game.apply(card(S, 4))
    game.apply(card(S, 5))
    game.apply(STOP)
    assert game.field[S][-1] == card(S, 5)
    assert card(S, 6) in game.hands[0]
    assert game.penalties[0] == 1
    assert game.current_player() == 1


def test_example_pass_while_holding_cards_draws_and_does_not_end():
    game = example_position()
    game.apply(PASS)
    assert len(game.hands[0]) == 11 and not game.end_triggered
    assert game.current_player() == 1


# ---- penalties --------------------------------------------------------------------
def test_top_plus_one_is_free_and_a_gap_costs_two():
    game = blank(
        3, field={S: [card(S, 5)]}, hands={0: [card(S, 6)], 1: [card(S, 9)], 2: [card(S, 10)]}
    )
    play(game, card(S, 6))
    play(game, card(S, 9))
    play(game, card(S, 10))
    assert game.penalties == [0, 1, 0]
    assert game.scores() == [0, -2, 0]


def test_a_card_below_the_top_costs_two():
    game = blank(3, field={H: [card(H, 8)]}, hands={0: [card(H, 2)]})
    play(game, card(H, 2))
    assert game.penalties[0] == 1 and game.field[H][-1] == card(H, 2)


def test_penalty_is_charged_once_per_play_and_the_highest_card_becomes_top():
    game = blank(
        3, field={D: [card(D, 2)]}, hands={0: [card(D, 7), card(D, 8), card(D, 9), card(D, 10)]}
    )
    play(game, *(card(D, rank) for rank in (7, 8, 9, 10)))
    assert game.penalties[0] == 1
    assert game.observation(1)["tops"][D] == card(D, 10)


def test_run_starting_at_top_plus_one_is_free():
    game = blank(3, field={C: [card(C, 3)]}, hands={0: [card(C, 4), card(C, 5)]})
    game.apply(card(C, 4))
    game.apply(card(C, 5))
    assert game.penalties[0] == 0


def test_runs_do_not_wrap_from_king_to_ace():
    game = blank(3, hands={0: [card(S, 1), card(S, 12), card(S, 13)]})
    game.apply(card(S, 12))
    assert game.legal_actions() == [STOP, card(S, 13)]
    game.apply(card(S, 13))  # ♠A is not the next card: the play ends
    assert game.current_player() == 1
    assert game.hands[0] == [card(S, 1)]


def test_anything_on_a_king_costs_a_penalty():
    game = blank(3, field={L: [card(L, 13)]}, hands={0: [card(L, 1)]})
    play(game, card(L, 1))
    assert game.penalties[0] == 1


def test_runs_are_one_suit_only():
    game = blank(3, hands={0: [card(S, 5), card(H, 6)]})
    game.apply(card(S, 5))
    assert game.legal_actions() == [STOP]  # ♥6 does not continue a spade run
    with pytest.raises(IllegalActionError):
        game.apply(card(H, 6))
    game.apply(STOP)
    assert game.current_player() == 1


def test_extension_step_refuses_other_cards():
    game = blank(3, hands={0: [card(S, 5), card(S, 6), card(H, 2)]})
    game.apply(card(S, 5))
    with pytest.raises(IllegalActionError):
        game.apply(card(H, 2))
    with pytest.raises(IllegalActionError):
        game.apply(PASS)


def test_empty_hand_can_only_pass():
    game = blank(3, piles={0: [card(S, 1)]})
    assert game.legal_actions() == [PASS]
    game.apply(PASS)
    assert game.hands[0] == [card(S, 1)] and not game.end_triggered


# ---- the extension step reveals nothing ---------------------------------------------
def _open_spade_4(holds_next: bool) -> Grazia:
    game = blank(
        3,
        hands={
            0: [card(S, 4), card(S, 5) if holds_next else card(H, 9), card(C, 2)],
            1: [card(D, 3), card(D, 7)],
            2: [card(L, 3), card(L, 7)],
        },
        piles={0: [card(X, 1)], 1: [card(X, 2)], 2: [card(X, 3)]},
    )
    game.apply(card(S, 4))
    return game


def test_the_extension_step_does_not_tell_others_whether_the_next_card_is_held():
    holding, lacking = _open_spade_4(True), _open_spade_4(False)
    assert holding.legal_actions() == [STOP, card(S, 5)]
    assert lacking.legal_actions() == [STOP]
    for seat in (1, 2):
        assert holding.observation(seat) == lacking.observation(seat)
    for game in (holding, lacking):
        game.apply(STOP)
        assert game.current_player() == 1
    for seat in (1, 2):
        assert holding.observation(seat) == lacking.observation(seat)


def test_redeal_for_another_seat_during_an_open_play_stays_playable():
    game = _open_spade_4(True)
    for seed in range(30):
        dealt = game.redeal(1, seed)
        assert dealt.observation(1) == game.observation(1)
        assert dealt.current_player() == 0
        for action in dealt.legal_actions():
            twin = dealt.clone()
            twin.apply(action)  # every offered action is really playable
        picker = random.Random(seed)
        while not dealt.is_terminal():
            dealt.apply(picker.choice(dealt.legal_actions()))


def test_the_play_ends_by_itself_when_the_next_card_is_face_up():
    game = blank(
        3,
        field={S: [card(S, 6), card(S, 2)]},  # ♠6 lies on the field
        out_of_play=[card(H, 9)],
        hands={0: [card(S, 4), card(S, 5)], 1: [card(H, 8)]},
    )
    game.apply(card(S, 4))
    game.apply(card(S, 5))
    assert game.current_player() == 1  # ♠6 cannot be in any hand
    game.apply(card(H, 8))
    assert game.current_player() == 2  # ♥9 is out of play


# ---- end trigger --------------------------------------------------------------------
def test_pass_with_empty_pile_gives_everyone_else_one_more_turn():
    game = blank(
        4,
        to_act=1,
        hands={seat: [card(seat, 5), card(seat, 9)] for seat in range(4)},
        piles={2: [card(LEAF, 1)]},
    )
    game.apply(PASS)  # seat 1, empty pile: trigger
    assert game.end_triggered and game.trigger_seat == 1
    assert game.final_turns_left == 3
    assert game.current_player() == 2
    play(game, card(2, 5))  # seat 2 plays and still draws from its pile
    assert card(LEAF, 1) in game.hands[2]
    assert game.current_player() == 3
    game.apply(PASS)  # seat 3 passes with an empty pile too: nothing new
    assert game.trigger_seat == 1 and game.current_player() == 0
    play(game, card(0, 9))
    assert game.is_terminal() and game.current_player() == -1
    assert game.legal_actions() == []
    # seat 1 (the trigger) got no further turn
    assert game.hands[1] == [card(1, 5), card(1, 9)]
    assert game.scores() == [-1, -2, -2, -2]


def test_pass_with_cards_in_pile_does_not_trigger():
    game = blank(3, hands={0: [card(S, 3)]}, piles={0: [card(S, 4)]})
    game.apply(PASS)
    assert not game.end_triggered and game.piles[0] == []


def test_playing_with_an_empty_pile_does_not_trigger():
    game = blank(3, hands={0: [card(S, 3)]})
    play(game, card(S, 3))
    assert not game.end_triggered
    assert game.current_player() == 1


def test_trigger_by_the_last_seat_wraps_around():
    game = blank(3, to_act=2, hands={0: [card(S, 1)], 1: [card(S, 2)], 2: [card(S, 3)]})
    game.apply(PASS)
    assert game.current_player() == 0
    game.apply(PASS)
    assert game.current_player() == 1
    game.apply(PASS)
    assert game.is_terminal()


# ---- scoring and tie-break --------------------------------------------------------------
def test_score_counts_hand_and_pile_cards_and_penalties():
    game = blank(
        3,
        hands={0: [card(S, 1), card(S, 2)], 2: [card(H, 1)]},
        piles={0: [card(S, 3)]},
        penalties=[2, 0, 1],
    )
    assert game.scores() == [-3 - 4, 0, -1 - 2]
    assert game.observation(1)["scores"] == game.scores()


def test_tie_goes_to_the_player_whose_first_turn_came_latest():
    ones = [[card(S, 1)], [card(S, 2)], [card(S, 3)]]
    game = blank(4, hands=dict(enumerate(ones + [[card(S, 4), card(S, 6)]])))
    # scores -1, -1, -1, -2: seat 2 had its first turn last among the tied
    assert game.standings() == [3, 2, 1, 4]
    game.set_position(hands=ones + [[card(S, 4)]])
    assert game.standings() == [4, 3, 2, 1]


# ---- observation and redeal ----------------------------------------------------------------
def test_observation_hides_piles_and_other_hands():
    game = Grazia.new(5, 3)
    obs = game.observation(1)
    assert obs["hand"] == game.hands[1]
    assert obs["hand_sizes"] == [len(h) for h in game.hands]
    assert obs["pile_sizes"] == [len(p) for p in game.piles]
    flat = repr(obs)
    for seat in range(5):
        if seat != 1:
            assert repr(game.hands[seat]) not in flat
    assert repr(game.piles[1]) not in flat


def test_redeal_reshuffles_own_pile_and_keeps_own_hand():
    game = Grazia.new(4, 5)
    changed_pile = changed_hand = False
    for seed in range(10):
        dealt = game.redeal(0, seed)
        assert dealt.hands[0] == game.hands[0]
        assert [len(p) for p in dealt.piles] == [len(p) for p in game.piles]
        assert [len(h) for h in dealt.hands] == [len(h) for h in game.hands]
        assert dealt.out_of_play == game.out_of_play
        changed_pile |= dealt.piles[0] != game.piles[0]
        changed_hand |= dealt.hands[1] != game.hands[1]
        pool = sorted(c for s in (1, 2, 3) for c in dealt.hands[s])
        pool += [c for p in dealt.piles for c in p]
        orig = sorted(c for s in (1, 2, 3) for c in game.hands[s])
        orig += [c for p in game.piles for c in p]
        assert sorted(pool) == sorted(orig)
    assert changed_pile and changed_hand


def test_describe_action_uses_card_names():
    game = example_position()
    assert game.describe_action(card(S, 4)) == "seat 0 plays ♠4 onto ♠A (penalty 2)"
    assert game.describe_action(card(H, 6)) == "seat 0 plays ♥6 onto ♥5"
    assert game.describe_action(card(C, 11)) == "seat 0 plays ♣J on the empty pile"
    game.apply(card(S, 4))
    assert game.describe_action(card(S, 5)) == "seat 0 adds ♠5 to the run"
    assert game.describe_action(STOP) == "seat 0 stops the run at ♠4"


# ---- heuristic ------------------------------------------------------------------------------
def test_heuristic_prefers_the_free_run_and_extends_it():
    game = example_position()
    obs = game.observation(0)
    legal = game.legal_actions()
    choice = legal[choose(obs, legal, random.Random(0))]
    assert choice in (card(H, 6), card(D, 1), card(C, 11))
    game.apply(card(S, 4))
    legal = game.legal_actions()
    assert legal[choose(game.observation(0), legal, random.Random(0))] == card(S, 5)


def test_heuristic_beats_random_players():
    from bots.evaluate import compare

    result = compare("grazia", 4, choose, matches=40, seed=123)
    assert result.win_rate > 0.6


@pytest.mark.parametrize("num_players", [3, 6])
def test_the_log_shows_who_played_which_cards_and_who_passed(num_players):
    """The field's piles do not say who played which card; at the table
    everyone sees it, so `log` keeps every finished turn: the field is the
    log's cards plus the play in progress, and turns go round in seat order."""
    rng = random.Random(num_players)
    game = Grazia.new(num_players, seed=60 + num_players)
    expected: list = []
    run: list = []
    checked = 0
    while not game.is_terminal():
        seat = game.current_player()
        action = rng.choice(game.legal_actions())
        game.apply(action)
        if action == PASS:
            expected.append([seat, []])
        elif action == STOP:
            expected.append([seat, run])
            run = []
        else:
            run.append(action)
            if not game.run:  # the play ended by itself
                expected.append([seat, run])
                run = []
        if game.is_terminal():
            break
        obs = game.observation(game.current_player())
        assert [[s, list(cards)] for s, cards in obs["log"]] == expected
        on_field = sorted(c for _, cards in obs["log"] for c in cards) + obs["run"]
        assert sorted(on_field) == sorted(c for pile in obs["field"] for c in pile)
        assert [s for s, _ in obs["log"]] == [i % num_players for i in range(len(obs["log"]))]
        checked += 1
    assert checked > 50
