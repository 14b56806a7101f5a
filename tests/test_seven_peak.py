"""seven_peak (seed 004, draft 8): worked examples, RULINGS.md and own rulings."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from games import IllegalActionError
from games.playthrough import wire
from games.seven_peak import (
    DECK,
    JOKER,
    SevenPeak,
    card_code,
    feasible_values,
    player_score,
    set_score,
    usable_as,
)
from games.testing import sample_states

S, D, C, H, J = 0, 1, 2, 3, JOKER


def k(suit: int, rank: int) -> int:
    return card_code(suit, rank)


def empty_area() -> list[list[int]]:
    return [[] for _ in range(6)]


def fresh(num_players: int = 3, seed: int = 0) -> SevenPeak:
    return SevenPeak.new(num_players, seed)


def position(
    num_players: int = 3,
    seed: int = 0,
    *,
    piles: dict[int, list[int]] | None = None,
    hands: dict[int, list[int]] | None = None,
    **fields,
) -> SevenPeak:
    """``SevenPeak.position`` from the deal of ``seed``: ``piles`` is the whole
    area by rank (unnamed piles empty; None keeps the dealt area), ``hands``
    replaces the named seats' hands, other fields as given."""
    if piles is not None:
        area = empty_area()
        for rank, cards in piles.items():
            area[rank - 1] = cards
        fields["area"] = area
    if hands:
        dealt = [list(h) for h in SevenPeak.new(num_players, seed).hands]
        for seat, cards in hands.items():
            dealt[seat] = cards
        fields["hands"] = dealt
    return SevenPeak.position(num_players, seed, **fields)


def play_set(game: SevenPeak, n: int, cards: list[int]) -> None:
    game.apply("play")
    game.apply(("value", n))
    for c in cards:
        game.apply(("card", c))


# ---- components and setup ----------------------------------------------------


def test_deck_has_78_cards_of_the_stated_composition():
    assert len(DECK) == 78
    counts = Counter(DECK)
    for suit in (S, D, C, H):
        for rank in range(1, 7):
            assert counts[k(suit, rank)] == 3
    for rank in range(1, 7):
        assert counts[k(J, rank)] == 1


@pytest.mark.parametrize("n", [3, 4, 5])
def test_setup_deals_12_each_5_to_the_area_and_sets_the_rest_aside(n):
    for seed in range(30):
        game = fresh(n, seed)
        assert all(len(h) == 12 for h in game.hands)
        assert sum(game.counts()) == 5
        assert len(game.set_aside) == 78 - 5 - 12 * n
        everything = sorted(
            [c for h in game.hands for c in h]
            + [c for p in game.area for c in p]
            + game.set_aside
        )
        assert everything == sorted(DECK)
        # no pile starts at or above the peak
        assert all(x + c <= 7 for x, c in enumerate(game.counts(), 1))
        assert game.current_player() == 0


def test_setup_card_that_would_pass_7_counts_as_a_1():
    game = position(piles={})
    assert game._setup_place(k(S, 6)) == 6  # 6..7: fine
    assert game._setup_place(k(D, 6)) == 1  # 6..8 would pass 7: counts as a 1
    assert game.area[5] == [k(S, 6)]
    assert game.area[0] == [k(D, 6)]
    assert game._setup_place(k(S, 5)) == 5
    assert game._setup_place(k(H, 5)) == 5  # 5..7
    assert game._setup_place(k(C, 5)) == 1  # 5..8 would pass 7
    assert game.counts() == [2, 0, 0, 0, 2, 1]


def test_a_counts_as_1_card_keeps_its_printed_rank_when_taken():
    game = position(
        piles={1: [k(D, 6)]},  # a 6 counting as a 1
        hands={0: [k(S, 1), k(S, 2), k(S, 3)]},
    )
    game.apply("pass")
    game.apply(("put", k(S, 1)))
    game.apply(("put", k(S, 2)))
    assert ("take", 1, k(D, 6)) in game.legal_actions()
    game.apply(("take", 1, k(D, 6)))
    assert game.hands[0] == [k(S, 3), k(D, 6)]
    assert game.known[0] == [k(D, 6)]
    assert game.counts() == [1, 1, 0, 0, 0, 0]


# ---- the area: the seed's three examples -----------------------------------------


def test_example_1_two_5s_in_the_area_make_5_usable_as_5_6_7():
    counts = [0, 0, 0, 0, 2, 0]
    hand = [k(S, 5)] * 7
    assert [v for v in range(1, 9) if usable_as(k(S, 5), v, counts)] == [5, 6, 7]
    assert feasible_values(hand, counts, 0) == [5, 6, 7]


def test_taking_back_before_the_end_of_the_action_avoids_the_peak():
    game = position(piles={5: [k(H, 5)]}, hands={0: [k(S, 5), k(D, 5), k(C, 1)]})
    game.apply("pass")
    game.apply(("put", k(S, 5)))
    game.apply(("put", k(D, 5)))
    assert game.vp[0] == 0  # scoring waits for the end of the action
    game.apply(("take", 5, k(S, 5)))
    # taking one back before the end of the action leaves 5..7: no peak
    assert game.vp[0] == 0 and game.counts()[4] == 2


def test_example_2_one_5_plus_two_put_5s_reaches_8_and_scores_3():
    game = position(
        piles={5: [k(H, 5)], 2: [k(C, 2)]}, hands={0: [k(S, 5), k(D, 5), k(C, 1)]}
    )
    game.apply("pass")
    game.apply(("put", k(S, 5)))
    game.apply(("put", k(D, 5)))
    game.apply(("take", 2, k(C, 2)))
    assert game.vp[0] == 3
    assert game.counts()[4] == 0  # reset: the next 5 goes back to 5..6
    assert game.area[4] == []
    assert game.scores()[0] == 3
    assert game.current_player() == 1


def test_example_3_take_a_4_back_and_4s_stay_at_4_to_6():
    game = position(piles={4: [k(S, 4), k(D, 4)]}, hands={0: [k(C, 4), k(H, 5), k(S, 1)]})
    game.apply("pass")
    game.apply(("put", k(C, 4)))
    game.apply(("put", k(H, 5)))
    game.apply(("take", 4, k(S, 4)))
    assert game.counts() == [0, 0, 0, 2, 1, 0]
    assert game.vp == [0, 0, 0]
    assert game.hands[0] == sorted([k(S, 1), k(S, 4)])


def test_seed_play_example_3s_with_two_in_area_play_as_5():
    counts = [0, 0, 2, 0, 0, 0]
    hand = [k(S, 3), k(D, 3), k(S, 5), k(D, 5), k(C, 5)]
    assert 5 in feasible_values(hand, counts, 0)
    game = position(piles={3: [k(H, 3), k(H, 3)]}, hands={0: sorted(hand + [k(H, 1)])})
    game.apply("play")
    assert ("value", 5) in game.legal_actions()
    game.apply(("value", 5))
    assert game.legal_actions() == [("card", c) for c in sorted(set(hand))]
    for c in hand:
        game.apply(("card", c))
    assert game.sets[0] == [(5, tuple(sorted(hand)))]
    assert game.hands[0] == [k(H, 1)]
    assert game.last_set[0] == 5


def test_a_single_put_can_also_peak_and_several_piles_score_together():
    game = position(
        piles={6: [k(S, 6)], 5: [k(S, 5), k(D, 5)]},  # 6..7 and 5..7
        hands={0: [k(H, 6), k(H, 5), k(H, 1)]},
    )
    game.apply("pass")
    game.apply(("put", k(H, 6)))
    game.apply(("put", k(H, 5)))
    game.apply(("take", 6, k(H, 6)))
    # 6s back to 6..7 (taken), 5s reach 8: scored
    assert game.vp[0] == 3
    game2 = position(piles={6: [k(S, 6)]}, hands={0: [k(H, 6), k(H, 1)]})
    game2.apply("pass")
    game2.apply(("put", k(H, 6)))
    game2.apply("stop")
    assert game2.vp[0] == 2 and game2.area[5] == []


def test_put_two_is_offered_only_with_a_second_card():
    game = position(hands={0: [k(S, 1)]})
    game.apply("pass")
    game.apply(("put", k(S, 1)))
    assert game.legal_actions() == ["stop"]


# ---- play -----------------------------------------------------------------------


def test_set_sizes_never_decrease_per_player():
    game = position(piles={}, hands={0: [k(S, 4)] * 3 + [k(D, 4)] + [k(S, 3)] * 3 + [k(S, 5)] * 5})
    play_set(game, 4, [k(S, 4)] * 3 + [k(D, 4)])
    assert game.last_set[0] == 4
    game.set_position(to_act=0)  # back to seat 0
    game.apply("play")
    values = [a[1] for a in game.legal_actions()]
    assert 3 not in values and values == [5]
    # a player who cannot reach their previous size may only pass
    game2 = position(piles={}, hands={0: [k(S, 3)] * 3 + [k(S, 1)]}, last_set=[4, 0, 0])
    assert game2.legal_actions() == ["pass"]
    game2.set_position(last_set=[3, 0, 0])
    assert game2.legal_actions() == ["pass", "play"]
    game2.apply("play")
    assert game2.legal_actions() == [("value", 3)]


def test_equal_set_size_is_allowed():
    game = position(piles={}, hands={0: [k(S, 2)] * 2 + [k(D, 2)] * 2})
    play_set(game, 2, [k(S, 2)] * 2)
    game.set_position(to_act=0)
    game.apply("play")
    assert game.legal_actions() == [("value", 2)]


def test_card_choices_never_dead_end():
    game = position(
        piles={3: [k(H, 3)]},  # 3s usable as 3..4
        hands={0: [k(S, 3), k(S, 4), k(D, 4), k(C, 4), k(S, 1), k(S, 2)]},
    )
    game.apply("play")
    game.apply(("value", 4))
    assert game.legal_actions() == [("card", c) for c in sorted({k(S, 3), k(S, 4), k(D, 4), k(C, 4)})]
    game.apply(("card", k(S, 4)))
    assert ("card", k(S, 4)) not in game.legal_actions()
    with pytest.raises(IllegalActionError):
        game.apply(("card", k(S, 1)))


# ---- scoring ---------------------------------------------------------------------


def test_set_score_most_of_one_suit_times_n():
    assert set_score([k(S, 3), k(S, 3), k(D, 3)]) == 3 * 2
    assert set_score([k(S, 4)] * 4) == 16


def test_all_different_suits_score_n_times_n():
    assert set_score([k(S, 4), k(D, 4), k(C, 4), k(H, 4)]) == 16
    assert set_score([k(S, 5), k(D, 5), k(C, 5), k(H, 5), k(J, 5)]) == 25
    assert set_score([k(S, 3), k(D, 3), k(J, 3)]) == 9
    assert set_score([k(S, 1)]) == 1


def test_jokers_join_the_largest_suit():
    assert set_score([k(S, 4), k(S, 4), k(D, 4), k(J, 4)]) == 4 * 3
    # two jokers share the joker suit: not "all different"
    assert set_score([k(S, 3), k(J, 2), k(J, 3)]) == 3 * 3
    assert set_score([k(S, 4), k(D, 4), k(J, 3), k(J, 4)]) == 4 * 3


def test_no_joker_bonus_is_twice_the_largest_set():
    a = (3, (k(S, 3), k(S, 3), k(D, 3)))  # 6
    b = (5, (k(S, 5),) * 5)  # 25
    assert player_score([a, b], 0) == 6 + 25 + 10
    with_joker = (5, (k(S, 5),) * 4 + (k(J, 5),))  # 25
    assert player_score([a, with_joker], 0) == 6 + 25  # a joker anywhere: no bonus
    assert player_score([], 4) == 4  # no set, no bonus; area VP counts
    assert player_score([a], 2) == 6 + 6 + 2


# ---- end and ties ----------------------------------------------------------------


def test_end_finishes_the_round_up_to_the_seat_before_the_start_player():
    game = position(4, piles={}, hands={1: [k(S, 1)]}, to_act=1)
    play_set(game, 1, [k(S, 1)])
    assert game.ending and not game.is_terminal()
    assert game.current_player() == 2
    game.apply("pass")
    game.apply(("put", game.hands[2][0]))
    game.apply("stop")
    assert game.current_player() == 3
    game.apply("pass")
    game.apply(("put", game.hands[3][0]))
    game.apply("stop")
    assert game.is_terminal() and game.current_player() == -1
    assert game.legal_actions() == []


def test_emptying_at_the_last_seat_ends_at_once():
    game = position(3, piles={}, hands={2: [k(S, 2), k(D, 2)]}, to_act=2)
    play_set(game, 2, [k(S, 2), k(D, 2)])
    assert game.is_terminal()


def test_put_two_take_one_with_two_cards_does_not_empty_the_hand():
    game = position(3, piles={}, hands={0: [k(S, 1), k(D, 1)]})
    game.apply("pass")
    game.apply(("put", k(S, 1)))
    game.apply(("put", k(D, 1)))
    game.apply(("take", 1, k(S, 1)))
    assert not game.ending and len(game.hands[0]) == 1


def test_ties_go_to_the_earlier_seat():
    game = position(3, vp=[5, 5, 5], sets=[[], [], []])
    assert game.standings() == [1, 2, 3]
    game.set_position(vp=[4, 5, 5])
    assert game.standings() == [3, 1, 2]


@pytest.mark.parametrize("n", [3, 4, 5])
def test_random_games_end_within_12_rounds(n):
    for seed in range(20):
        game = fresh(n, seed)
        rng = random.Random(seed)
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_actions()))
        assert game.round < 12
        assert any(not h for h in game.hands)
        assert game.decisions < 300


# ---- information -----------------------------------------------------------------


def test_in_progress_play_is_private_and_redeal_keeps_known_cards():
    dealt = fresh(3, 5).hands[0]
    game = position(3, 5, piles={}, hands={0: sorted([k(S, 2), k(D, 2), k(H, 6)] + dealt[:3])})
    game.apply("play")
    game.apply(("value", 2))
    game.apply(("card", k(S, 2)))
    other = game.observation(1)
    assert other["step"] == "turn" and other["selecting"] is None
    own = game.observation(0)
    assert own["step"] == "cards" and own["selecting"] == {"value": 2, "cards": [k(S, 2)]}
    dealt = game.redeal(1, 7)
    assert dealt.observation(1) == other
    assert dealt.legal_actions()[0] == "pass"
    # a taken card stays known to everyone, and in the hand after redeal
    game = position(3, 5, piles={6: [k(J, 6)]})
    first, second = game.hands[0][0], game.hands[0][1]
    game.apply("pass")
    game.apply(("put", first))
    game.apply(("put", second))
    game.apply(("take", 6, k(J, 6)))
    assert game.observation(2)["known"][0] == [k(J, 6)]
    for seed in range(5):
        assert k(J, 6) in game.redeal(2, seed).hands[0]
    assert game.observation(1)["hand_sizes"] == [11, 12, 12]


def test_describe_action_speaks_the_games_terms():
    game = position(
        piles={2: [k(H, 2)]},  # 2s usable as 2..3
        hands={0: sorted([k(S, 3), k(D, 2), k(J, 3)])},
    )
    game.apply("play")
    assert game.describe_action(("value", 3)) == "seat 0 will play a set of 3 as 3s"
    game.apply(("value", 3))
    game.apply(("card", k(S, 3)))
    assert game.describe_action(("card", k(D, 2))) == "seat 0 adds ♦2 to a set of 3 (2/3)"
    game.apply(("card", k(D, 2)))
    assert game.describe_action(("card", k(J, 3))) == (
        "seat 0 plays a set of 3 as 3s: ♠3 ♦2 joker3"
    )


@pytest.mark.parametrize("n", [3, 5])
def test_no_pile_is_ever_left_at_the_peak_and_cards_are_conserved(n):
    for seed in range(10):
        game = fresh(n, seed)
        rng = random.Random(seed + 100)
        while not game.is_terminal():
            if game.step == "turn":
                assert all(x + c <= 7 for x, c in enumerate(game.counts(), 1))
                in_sets = sum(len(cards) for s in game.sets for _, cards in s)
                in_hands = sum(len(h) for h in game.hands)
                assert in_sets + in_hands + sum(game.counts()) + sum(game.vp) + len(
                    game.set_aside
                ) == 78
            game.apply(rng.choice(game.legal_actions()))


def test_observation_layout():
    obs = fresh(4, 2).observation(1)
    assert obs["seat"] == 1 and obs["current_player"] == 0
    assert obs["step"] == "turn" and obs["selecting"] is None
    assert len(obs["hand"]) == 12 and obs["hand"] == sorted(obs["hand"])
    assert obs["hand_sizes"] == [12, 12, 12, 12]
    assert len(obs["area"]) == 6 and sum(obs["counts"]) == 5
    assert obs["reach"] == [x + c for x, c in enumerate(obs["counts"], 1)]
    assert obs["set_aside"] == 78 - 5 - 48
    assert obs["scores"] == [0, 0, 0, 0] and obs["last_set"] == [0, 0, 0, 0]


def test_scored_cards_stay_public():
    """Cards won at a peak were face up in the area: everyone saw them go, so
    every observation lists them (per seat), like discards."""
    game = position(
        piles={5: [k(H, 5)], 2: [k(C, 2)]}, hands={0: [k(S, 5), k(D, 5), k(C, 1)]}
    )
    assert game.observation(1)["scored"] == [[], [], []]
    game.apply("pass")
    game.apply(("put", k(S, 5)))
    game.apply(("put", k(D, 5)))
    game.apply(("take", 2, k(C, 2)))
    for seat in range(3):
        assert game.observation(seat)["scored"] == [sorted([k(S, 5), k(D, 5), k(H, 5)]), [], []]
    assert game.clone().observation(2)["scored"][0] == sorted([k(S, 5), k(D, 5), k(H, 5)])


@pytest.mark.parametrize("n", [3, 5])
def test_every_seen_card_is_in_the_observation(n):
    """Own hand, area, sets, known cards and scored cards account for every
    card a player has seen; the rest are exactly the hidden ones."""
    for seed in range(6):
        game = fresh(n, seed)
        rng = random.Random(seed + 7)
        while not game.is_terminal():
            game.apply(rng.choice(game.legal_actions()))
            for player in range(n):
                obs = game.observation(player)
                seen = Counter(obs["hand"])
                if obs["selecting"]:
                    seen.update(obs["selecting"]["cards"])
                for pile in obs["area"]:
                    seen.update(pile)
                for seat in range(n):
                    for _, cards in obs["sets"][seat]:
                        seen.update(cards)
                    seen.update(obs["scored"][seat])
                    if seat != player:
                        seen.update(obs["known"][seat])
                assert not seen - Counter(DECK)
                hidden = sum(
                    obs["hand_sizes"][s] - len(obs["known"][s]) for s in range(n) if s != player
                ) + obs["set_aside"]
                assert sum(seen.values()) + hidden == 78
                assert [len(s) for s in obs["scored"]] == obs["vp"]


@pytest.mark.parametrize("num_players", [3, 5])
def test_the_log_shows_who_put_took_and_played_which_cards(num_players):
    """The area's piles do not say who put what; `log` keeps every public
    step, so each hand's size follows from it (12, less cards put and
    played, plus cards taken), each seat's sets are its "set" entries, and
    the seats' steps come in turn order."""
    checked = 0
    for game in sample_states("seven_peak", num_players, seed=90 + num_players, every=1):
        if game.is_terminal():
            break
        for seat in range(num_players):
            obs = wire(game.observation(seat))  # as a bot receives it
            log = obs["log"]
            for s in range(num_players):
                mine = [entry for entry in log if entry[0] == s]
                size = 12 - sum(1 for e in mine if e[1] == "put") + sum(1 for e in mine if e[1] == "take")
                size -= sum(len(e[2]) for e in mine if e[1] == "set")
                assert obs["hand_sizes"][s] == size
                assert [cards for _, cards in obs["sets"][s]] == [e[2] for e in mine if e[1] == "set"]
            movers = [entry[0] for entry in log]
            turns = [s for i, s in enumerate(movers) if i == 0 or s != movers[i - 1]]
            assert turns == [i % num_players for i in range(len(turns))]
        checked += 1
    assert checked > 30
