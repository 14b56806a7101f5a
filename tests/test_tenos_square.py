"""tenos_square: the seed's worked examples, RULINGS.md and the rulings made
in games/tenos_square.py."""

from __future__ import annotations

import random

import pytest

from games import IllegalActionError
from games.playthrough import wire
from games.tennos import CLUB, CROSS, HEART, LEAF, SPADE, card
from games.tenos_square import (
    DECK,
    EXCHANGE,
    NO_EXCHANGE,
    TenosSquare,
    next_player,
    row_score,
    tenos_square_teams,
)
from games.testing import sample_states

X = None  # a face-down place


def cards(*ranks):
    """Cards of the given ranks (suits cycled so they are distinct)."""
    used = set()
    out = []
    for i, r in enumerate(ranks):
        if r is None:
            out.append(None)
            continue
        suit = i % 6
        while card(suit, r) in used:
            suit = (suit + 1) % 6
        used.add(card(suit, r))
        out.append(card(suit, r))
    return out


def to_turn(game):
    """Play the secret centre choices (first legal card) to reach the first turn."""
    while game.phase == "centre":
        game.apply(game.legal_actions()[0])
    return game


def set_row(game, seat, row):
    """Set a row: ints are face-up cards, None face-down (a fresh unused card is
    placed there). Cards are taken out of everywhere else to keep them unique."""
    fields = _card_fields(game)
    for c in row:
        if c is not None:
            _remove_everywhere(fields, c)
    rows, up = fields["rows"], fields["up"]
    for place, c in enumerate(row):
        if c is None:
            up[seat][place] = False
        else:
            rows[seat][place] = c
            up[seat][place] = True
    game.set_position(**fields)


def _card_fields(game):
    """Copies of the fields that hold cards, to build a position from."""
    return {
        "hands": [list(h) for h in game.hands],
        "rows": [list(r) for r in game.rows],
        "up": [list(u) for u in game.up],
        "centre": list(game.centre),
        "deck": list(game.deck),
    }


def _remove_everywhere(fields, c):
    hands, rows, up, centre, deck = (
        fields[name] for name in ("hands", "rows", "up", "centre", "deck"))
    for s in range(len(hands)):
        if c in hands[s]:
            hands[s].remove(c)
            hands[s].append(deck.pop(0))
            hands[s].sort()
        for place in range(len(rows[s])):
            if rows[s][place] == c:
                assert not up[s][place], "a test position reuses a face-up card"
                rows[s][place] = deck.pop(0)
    if c in centre:
        centre.remove(c)
        centre.append(deck.pop(0))
        centre.sort()
    if c in deck:
        deck.remove(c)


def card_values(obs):
    """Every card id an observation shows (the fields that hold cards)."""
    shown = set(obs["hand"]) | set(obs["centre"]) | set(obs["exchange_put"])
    for row in obs["rows"]:
        shown |= {c for c in row if c is not None}
    for single in (obs["my_centre_card"], obs["playing"]):
        if single is not None:
            shown.add(single)
    return shown


def set_hand(game, seat, hand):
    fields = _card_fields(game)
    for c in hand:
        _remove_everywhere(fields, c)
    fields["deck"].extend(fields["hands"][seat])
    fields["hands"][seat] = sorted(hand)
    game.set_position(**fields)


# ---- row scoring: the seed's three examples --------------------------------

def test_seed_example_all_ascending_scores_81():
    assert row_score(cards(1, 1, 3, 5, 6, 7, 8, 9, 10)) == 81


def test_seed_example_face_down_places_are_ignored_36():
    assert row_score(cards(X, 2, 2, 3, X, 5, 6, 7, X)) == 36


def test_seed_example_three_runs_41():
    assert row_score(cards(1, 2, 5, 6, 6, 7, 6, 10, 3)) == 36 + 4 + 1 == 41


def test_row_score_edge_cases():
    assert row_score([X] * 9) == 0
    assert row_score(cards(10, 9, 8)) == 3
    assert row_score(cards(5, X, X, 5)) == 4  # equal ranks continue a run
    assert row_score(cards(1, 2, 3, 4, 5, 6, 7, 8)) == 64  # 3-player row


# ---- next player ----------------------------------------------------------

def test_next_player_four_players():
    seat = 1
    for place in (0, 1, 2):
        assert next_player(4, seat, place) == 2  # left neighbour
    for place in (6, 7, 8):
        assert next_player(4, seat, place) == 0  # right neighbour
    for place in (3, 5):
        assert next_player(4, seat, place) == 3  # partner opposite
    assert next_player(4, seat, 4) == seat  # the same player again
    assert next_player(4, 0, 8) == 3 and next_player(4, 3, 0) == 0  # wrap around


def test_next_player_three_players_laid_3_2_3():
    seat = 0
    for place in (0, 1, 2):
        assert next_player(3, seat, place) == 1
    for place in (3, 4):
        assert next_player(3, seat, place) == 0
    for place in (5, 6, 7):
        assert next_player(3, seat, place) == 2


@pytest.mark.parametrize(
    "num_players,place,expected",
    [(4, 0, 2), (4, 8, 0), (4, 3, 3), (4, 5, 3), (4, 4, 1),
     (3, 1, 2), (3, 7, 0), (3, 3, 1), (3, 4, 1)],
)
def test_engine_hands_the_turn_by_place(num_players, place, expected):
    game = to_turn(TenosSquare.new(num_players, 5))
    assert game.current_player() == 1
    game.apply(NO_EXCHANGE)
    game.apply(game.legal_actions()[0])  # play a card
    game.apply(("place", place))
    assert game.current_player() == expected
    assert game.phase == "exchange"  # a 2-card hand may exchange


# ---- deal and setup ---------------------------------------------------------

@pytest.mark.parametrize("num_players,row_len,deck_left", [(4, 9, 12), (3, 8, 27)])
def test_deal_rows_hands_and_deck(num_players, row_len, deck_left):
    game = TenosSquare.new(num_players, 2)
    assert game.row_len == row_len
    assert all(len(r) == row_len and not any(u) for r, u in zip(game.rows, game.up))
    assert all(len(h) == 3 for h in game.hands)
    assert len(game.deck) == deck_left
    everything = game.deck + [c for h in game.hands for c in h] + [c for r in game.rows for c in r]
    assert sorted(everything) == sorted(card(s, r) for s in range(6) for r in range(1, 11))
    obs = game.observation(0)
    assert obs["rows"][0] == [None] * row_len  # the owner does not know their row
    assert obs["deck_size"] == deck_left


def test_secret_centre_choice_in_seat_order_from_start_player():
    game = TenosSquare.new(4, 7)
    assert game.dealer == 0 and game.start_player == 1  # dealer's left neighbour
    order = []
    chosen = {}
    while game.phase == "centre":
        seat = game.current_player()
        order.append(seat)
        action = game.legal_actions()[1]
        chosen[seat] = action[1]
        game.apply(action)
        for other in range(4):
            obs = game.observation(other)
            assert obs["my_centre_card"] == chosen.get(other)
            if game.phase == "centre":
                assert obs["centre"] == []
                others = {c for s, c in chosen.items() if s != other}
                assert not others & card_values(obs)
    assert order == [1, 2, 3, 0]
    assert game.centre == sorted(chosen.values())  # revealed together, sorted
    assert game.current_player() == 1 and game.phase == "exchange"
    assert all(len(h) == 2 for h in game.hands)
    assert game.observation(3)["centre_put"] == [True] * 4


def test_observation_hides_hands_and_face_down_cards():
    game = to_turn(TenosSquare.new(4, 3))
    obs = game.observation(0)
    assert obs["hand"] == game.hands[0]
    assert obs["partner"] == 2
    assert obs["hand_sizes"] == [2, 2, 2, 2]
    hidden = set(game.deck) | {c for r in game.rows for c in r}
    for s in (1, 2, 3):
        hidden |= set(game.hands[s])
    assert not hidden & card_values(obs)
    assert obs["rows"] == [[None] * 9] * 4
    assert TenosSquare.new(3, 3).observation(0)["partner"] is None


# ---- exchange --------------------------------------------------------------

def test_exchange_puts_both_cards_and_takes_the_deck_top_blind():
    game = to_turn(TenosSquare.new(4, 11))
    seat = game.current_player()
    hand = list(game.hands[seat])
    top = game.deck[-1]
    deck_size = len(game.deck)
    assert game.legal_actions() == [NO_EXCHANGE, EXCHANGE]
    game.apply(EXCHANGE)
    # a 2-card hand: both cards are forced into the centre, face up
    assert game.phase == "take"
    assert game.hands[seat] == []
    assert set(hand) <= set(game.centre)
    assert game.observation((seat + 1) % 4)["centre"] == game.centre
    legal = game.legal_actions()
    assert legal[-1] == DECK
    assert [("take", c) for c in game.centre] == legal[:-1]
    assert top not in card_values(game.observation(seat))  # blind
    game.apply(DECK)
    assert game.hands[seat] == []  # the one card goes straight to play
    assert game.playing == top
    assert len(game.deck) == deck_size - 1
    assert top not in card_values(game.observation((seat + 1) % 4)) - {top}
    assert game.phase == "place"
    under = game.rows[seat][4]
    game.apply(("place", 4))  # same player again
    assert game.current_player() == seat
    # one card in hand: no exchange, and the play is forced
    assert game.phase == "place" and game.playing == under
    assert game.hands[seat] == []


def test_exchange_taking_a_face_up_centre_card_plays_it_at_once():
    game = to_turn(TenosSquare.new(4, 12))
    seat = game.current_player()
    hand = list(game.hands[seat])
    revealed = [c for c in game.centre if c not in hand]
    deck_size = len(game.deck)
    game.apply(EXCHANGE)
    game.apply(("take", revealed[0]))
    assert revealed[0] not in game.centre
    assert sorted(game.centre) == sorted(revealed[1:] + hand)
    assert len(game.deck) == deck_size
    # the taken card is the only card in hand, so it is the one played
    assert game.playing == revealed[0] and game.hands[seat] == []
    for viewer in range(4):
        assert game.observation(viewer)["playing"] == revealed[0]


def test_exchange_may_take_back_a_card_just_put():
    game = to_turn(TenosSquare.new(3, 4))
    seat = game.current_player()
    hand = list(game.hands[seat])
    game.apply(EXCHANGE)
    assert ("take", hand[1]) in game.legal_actions()
    game.apply(("take", hand[1]))
    assert hand[0] in game.centre and hand[1] not in game.centre
    assert game.playing == hand[1]


def test_exchange_cards_are_chosen_one_at_a_time_when_not_forced():
    game = to_turn(TenosSquare.new(4, 13))
    seat = game.current_player()
    three = cards(2, 5, 9)
    set_hand(game, seat, three)
    game.apply(EXCHANGE)
    assert game.phase == "put"
    assert game.legal_actions() == [("put", c) for c in sorted(three)]
    game.apply(("put", three[1]))
    assert game.phase == "put"
    assert game.legal_actions() == [("put", c) for c in sorted([three[0], three[2]])]
    game.apply(("put", three[0]))
    assert game.phase == "take"
    assert game.exchange_put == [three[1], three[0]]
    game.apply(("take", three[1]))
    assert game.phase == "play"
    assert game.legal_actions() == [("play", c) for c in sorted([three[1], three[2]])]


def test_play_and_take_the_place_card():
    game = to_turn(TenosSquare.new(4, 14))
    seat = game.current_player()
    game.apply(NO_EXCHANGE)
    assert game.phase == "play"
    played = game.hands[seat][0]
    kept = game.hands[seat][1]
    game.apply(("play", played))
    assert game.observation((seat + 2) % 4)["playing"] == played
    assert game.legal_actions() == [("place", i) for i in range(9)]
    under = game.rows[seat][6]
    game.apply(("place", 6))
    assert game.rows[seat][6] == played and game.up[seat][6]
    assert game.hands[seat] == sorted([kept, under])
    assert game.observation(0)["rows"][seat][6] == played
    assert game.current_player() == (seat - 1) % 4


# ---- deal end, scoring, start player ------------------------------------------

def finish_deal(game, seat, row, last_card, place):
    """Make ``seat`` the player to act, with ``row`` (one None) and a 1-card
    hand ``last_card``, and lay it on ``place``: the deal ends. A one-card
    hand is played at once, so the position is that card being laid."""
    set_row(game, seat, row)
    set_hand(game, seat, [last_card])
    hands = [list(h) for h in game.hands]
    hands[seat] = []
    game.set_position(to_act=seat, hands=hands, playing=last_card, phase="place")
    assert ("place", place) in game.legal_actions()
    game.apply(("place", place))


@pytest.mark.parametrize("num_players", [3, 4])
def test_deal_ends_when_a_row_is_all_face_up_and_owner_scores_5n(num_players):
    game = to_turn(TenosSquare.new(num_players, 21))
    row_len = game.row_len
    full = cards(*range(1, row_len + 1))
    other = [None] * (row_len - 3) + [card(CROSS, 4), card(CROSS, 2), card(CROSS, 3)]
    set_row(game, 2, other)
    row = list(full)
    last = row[4]
    row[4] = None
    finish_deal(game, 0, row, last, 4)
    points = game.deal_points
    assert points[0] == row_len * row_len + 5 * num_players
    assert points[2] == 1 + 4  # [4] and [2, 3]
    assert game.totals == points
    assert game.went_out == [0]
    assert game.deal == 1 and game.phase == "centre"
    assert game.scores() == (
        [points[s] + points[(s + 2) % 4] for s in range(4)] if num_players == 4 else points
    )


def test_start_player_later_deals_is_lowest_total_ties_from_dealers_left():
    game = to_turn(TenosSquare.new(4, 22))
    game.set_position(totals=[0, 0, 0, 0])
    set_row(game, 3, cards(10, X, X, X, X, X, X, X, 1))  # seat 3: 2 points
    set_row(game, 2, cards(X, X, X, X, X, X, X, X, 5))  # seat 2: 1 point
    set_row(game, 0, [X] * 8 + [card(CLUB, 5)])  # seat 0: 1 point
    finish_deal(game, 1, cards(1, 2, 3, 4, 5, 6, 7, 8, X), card(LEAF, 10), 8)
    assert game.totals[0] == game.totals[2] == 1
    # deal 2: dealer seat 1; from the dealer's left: 2, 3, 0, 1 -> seat 2 first
    assert game.dealer == 1
    assert game.start_player == 2
    assert game.current_player() == 2  # the secret choice starts there too
    to_turn(game)
    assert game.current_player() == 2


def test_start_player_unique_lowest_and_first_deal():
    game = TenosSquare.new(3, 23)
    assert game.dealer == 0 and game.start_player == 1
    to_turn(game)
    game.set_position(totals=[5, 30, 1], went_out=[], deal_points=None)
    game._end_deal(1)  # no card is face up yet: only the 15 for going out
    assert game.totals == [5, 45, 1]
    assert game.dealer == 1
    assert game.start_player == 2


# ---- teams and end -----------------------------------------------------------

def test_team_layout():
    assert tenos_square_teams(4) == ((0, 2), (1, 3))
    assert tenos_square_teams(3) is None
    assert TenosSquare.INFO.teams(4) == ((0, 2), (1, 3))


def test_team_scores_and_tie_break_by_last_deal_out():
    game = TenosSquare.position(4, seed=31, totals=[50, 30, 10, 30], went_out=[0, 1])
    assert game.scores() == [60, 60, 60, 60]
    assert game.standings() == [2, 1, 2, 1]  # seat 1 went out last
    game.set_position(went_out=[1, 2])
    assert game.standings() == [1, 2, 1, 2]
    game.set_position(totals=[50, 31, 10, 30])
    assert game.scores() == [60, 61, 60, 61]
    assert game.standings() == [2, 1, 2, 1]  # more points beat the tie-break
    game.set_position(went_out=[], totals=[1, 1, 1, 1])
    assert game.standings() == [1, 1, 1, 1]  # nothing to break the tie yet


def test_three_players_are_individual_and_ties_share():
    game = TenosSquare.position(3, seed=32, totals=[40, 40, 10], went_out=[0, 1, 2])
    assert game.scores() == [40, 40, 10]
    assert game.standings() == [1, 1, 3]


@pytest.mark.parametrize("num_players", [3, 4])
def test_game_ends_after_n_deals(num_players):
    game = TenosSquare.new(num_players, 41)
    picker = random.Random(41)
    deals_seen = set()
    while not game.is_terminal():
        deals_seen.add(game.deal)
        game.apply(picker.choice(game.legal_actions()))
    assert deals_seen == set(range(num_players))
    assert len(game.went_out) == num_players
    assert game.current_player() == -1 and game.legal_actions() == []
    assert game.observation(0)["phase"] == "over"
    with pytest.raises(IllegalActionError):
        game.apply(NO_EXCHANGE)


def test_last_deal_ends_the_game():
    game = to_turn(TenosSquare.new(4, 42))
    game.set_position(deal=3, dealer=3)
    finish_deal(game, 2, cards(1, 2, 3, 4, 5, 6, 7, 8, X), card(CROSS, 10), 8)
    assert game.is_terminal()
    assert game.went_out == [2]
    assert game.totals[2] == 81 + 20


# ---- redeal -------------------------------------------------------------------

def test_redeal_keeps_the_view_and_every_card_once():
    game = to_turn(TenosSquare.new(4, 51))
    seat = game.current_player()
    game.apply(NO_EXCHANGE)
    game.apply(game.legal_actions()[0])
    game.apply(("place", 0))
    game.apply(EXCHANGE)
    game.apply(DECK)
    viewer = (seat + 2) % 4
    hands_changed = False
    for redeal_seed in range(5):
        dealt = game.redeal(viewer, redeal_seed)
        assert dealt.observation(viewer) == game.observation(viewer)
        assert dealt.hands[viewer] == game.hands[viewer]
        hands_changed |= dealt.hands[seat] != game.hands[seat]
        assert dealt.playing == game.playing
        everything = (dealt.deck + [c for h in dealt.hands for c in h] + [dealt.playing]
                      + [c for r in dealt.rows for c in r] + dealt.centre)
        assert len(everything) == len(set(everything)) == 60
    assert hands_changed


def test_redeal_reshuffles_the_owners_own_face_down_row():
    game = to_turn(TenosSquare.new(4, 52))
    before = list(game.rows[0])
    changed = any(game.redeal(0, s).rows[0] != before for s in range(5))
    assert changed


def test_describe_action_uses_card_names():
    game = TenosSquare.new(4, 61)
    action = game.legal_actions()[0]
    assert "face down in the centre" in game.describe_action(action)
    to_turn(game)
    assert game.describe_action(EXCHANGE).endswith("exchanges")
    game.apply(NO_EXCHANGE)
    c = card(HEART, 12)
    assert game.describe_action(("play", card(SPADE, 1))) == f"seat {game.to_act} plays ♠A"
    assert "♥Q" in game.describe_action(("take", c))
    assert "blind" in game.describe_action(DECK)
    game.apply(game.legal_actions()[0])
    assert "partner" in game.describe_action(("place", 3))
    assert "again" in game.describe_action(("place", 4))


def test_redeal_reassigns_who_put_which_centre_card_after_the_reveal():
    """Regression: after the reveal nobody knows who put which centre card, so
    a redeal must not keep the true owners of the other players' cards."""
    game = to_turn(TenosSquare.new(4, 53))
    viewer = 0
    others = [s for s in range(4) if s != viewer]
    true = [game.secret[s] for s in others]
    assignments = set()
    for redeal_seed in range(12):
        dealt = game.redeal(viewer, redeal_seed)
        assert dealt.observation(viewer) == game.observation(viewer)
        assert dealt.secret[viewer] == game.secret[viewer]
        assert sorted(dealt.secret[s] for s in others) == sorted(true)
        assignments.add(tuple(dealt.secret[s] for s in others))
    assert len(assignments) > 1


@pytest.mark.parametrize("num_players", [3, 4])
def test_the_log_shows_who_exchanged_and_laid_which_cards(num_players):
    """The rows and the centre do not say in what order cards came or who
    put which; `log` keeps the deal's public steps: every face-up row card
    is a "place" entry of its owner, an exchange precedes its seat's lay,
    and each lay hands the turn on by the place rule."""
    checked = 0
    for game in sample_states("tenos_square", num_players, seed=30 + num_players, every=1):
        if game.is_terminal():
            break
        obs = wire(game.observation(game.current_player()))  # as a bot receives it
        log = obs["log"]
        laid = {(s, place): card for s, kind, card, place in log if kind == "place"}
        shown = {(s, place): card for s, row in enumerate(obs["rows"])
                 for place, card in enumerate(row) if card is not None}
        assert laid == shown
        for i, (s, kind, what, taken) in enumerate(log):
            following = log[i + 1] if i + 1 < len(log) else None
            if kind == "exchange":
                assert len(what) == 2
                if following is not None:
                    assert following[:2] == [s, "place"]
                    if taken != "deck":
                        assert following[2] == taken  # the card taken is the card laid
            elif following is not None:
                assert following[0] == next_player(num_players, s, taken)
        checked += 1
    assert checked > 50
