"""tile_hunt (seed 002): the seed's examples, RULINGS.md's rulings, our own
rulings and the end conditions, on positions built with ``TileHunt.position``."""

from __future__ import annotations

import random

import pytest

from games import IllegalActionError, get_game
from games.testing import sample_states
from games.tile_hunt import (
    CHIPS,
    NORMAL_TILES,
    REVERSAL,
    START_TILES,
    STOP,
    TileHunt,
    reroll_options,
    satisfies,
)


def position(
    n: int = 3,
    *,
    round_: int,
    order: list[int],
    pos: int,
    owners: dict[str, int | None] | None = None,
    chips: list[int] | None = None,
    dice: list[int],
    step: str = "take",
    rerolls_left: int = 0,
    supply: int = 20,
    previous_order: list[int] | None = None,
) -> TileHunt:
    """A game at a chosen moment: every normal tile face up (late phase) unless
    ``owners`` says otherwise; tiles missing from ``owners`` are unowned."""
    late = round_ >= rounds_per_phase(n)
    face_up = list(START_TILES) + (list(NORMAL_TILES) if late else [])
    for name in owners or {}:
        if name not in face_up:
            face_up.append(name)
    owner: dict[str, int | None] = {name: None for name in face_up}
    owner.update(owners or {})
    return TileHunt.position(
        n,
        round=round_,
        face_up=face_up,
        face_down=[t for t in NORMAL_TILES if t not in face_up],
        owner=owner,
        chips=list(chips or [0] * n),
        supply=supply,
        order=list(order),
        previous_order=list(previous_order or order),
        pos=pos,
        dice=sorted(dice),
        step=step,
        rerolls_left=rerolls_left,
        reversal="face_up" if round_ == final_round(n) else "aside",
        winner=None,
    )


def rounds_per_phase(n: int) -> int:
    return 3 if n == 4 else 4


def final_round(n: int) -> int:
    return 2 * rounds_per_phase(n) - 1


def steals(game: TileHunt) -> set[str]:
    return {a[1] for a in game.legal_actions() if isinstance(a, tuple) and a[0] == "steal"}


def takes(game: TileHunt) -> set[str]:
    return {a[1] for a in game.legal_actions() if isinstance(a, tuple) and a[0] == "take"}


# ---- patterns --------------------------------------------------------------


def test_patterns_are_at_least():
    assert satisfies("4-trio", [4, 4, 4, 1, 2])
    assert satisfies("trio", [4, 4, 4, 1, 2])
    assert satisfies("4-trio", [4, 4, 4, 4, 2])
    assert not satisfies("4-quartet", [4, 4, 4, 1, 2])
    assert satisfies("2-duo", [2, 2, 2, 5, 6])
    assert satisfies("6-quartet", [6, 6, 6, 6, 6])
    assert satisfies("6-quintet", [6, 6, 6, 6, 6])
    assert satisfies("quartet", [6, 6, 6, 6, 6])
    assert satisfies("trio", [1, 1, 1, 1, 1])
    assert satisfies("quintet", [3, 3, 3, 3, 3])
    assert not satisfies("quintet", [3, 3, 3, 3, 1])
    assert not satisfies("5-trio", [5, 5, 4, 4, 4])


def test_full_house_is_exact():
    assert satisfies("full house", [2, 2, 5, 5, 5])
    assert satisfies("full house", [1, 1, 1, 6, 6])
    assert not satisfies("full house", [5, 5, 5, 5, 5])
    assert not satisfies("full house", [5, 5, 5, 5, 2])
    assert not satisfies("full house", [5, 5, 5, 2, 3])
    assert not satisfies("full house", [5, 5, 2, 2, 3])


def test_straights_are_exact():
    assert satisfies("straight 1-5", [5, 3, 1, 4, 2])
    assert satisfies("straight 2-6", [6, 2, 5, 3, 4])
    assert not satisfies("straight 1-5", [2, 3, 4, 5, 6])
    assert not satisfies("straight 2-6", [1, 2, 3, 4, 5])
    assert not satisfies("straight 1-5", [1, 2, 3, 4, 4])


def test_three_fours_offer_both_4_trio_and_trio():
    game = position(3, round_=1, order=[0, 1, 2], pos=0, dice=[4, 4, 4, 1, 2],
                    owners={"4-trio": None, "4-quartet": None})
    assert takes(game) == {"trio", "4-trio"}
    assert game.legal_actions()[-1] == CHIPS
    game.apply(("take", "4-trio"))
    assert game.owner["4-trio"] == 0
    assert game.scores()[0] == 300


def test_owned_tiles_cannot_be_taken_as_unowned():
    game = position(3, round_=1, order=[0, 1, 2], pos=2, dice=[4, 4, 4, 1, 2],
                    owners={"4-trio": 0})
    assert takes(game) == {"trio"}
    assert steals(game) == set()  # early phase: no stealing


# ---- the seed's stealing examples ------------------------------------------


def test_seed_example_1_second_place_400_behind():
    """You are 2nd, 400 behind the top player, who holds 200, 300 and 800
    tiles: the 200 tile cannot be stolen (you would only tie)."""
    owners = {"trio": 0, "quartet": 0, "6-quintet": 0, "full house": 1, "6-quartet": 1,
              "2-duo": 2}
    chips = [0, 2, 0]  # top 1300, you 900, third 150
    args = dict(round_=final_round(3), order=[0, 1, 2], pos=1, owners=owners, chips=chips)
    assert position(3, dice=[3, 3, 3, 1, 2], **args).scores() == [1300, 900, 150]
    assert "trio" not in steals(position(3, dice=[3, 3, 3, 1, 2], **args))
    assert steals(position(3, dice=[5, 5, 5, 5, 2], **args)) == {"quartet"}
    assert "6-quintet" in steals(position(3, dice=[6, 6, 6, 6, 6], **args))
    # the same steal of the 200 tile is fine in an earlier late round
    earlier = dict(args, round_=final_round(3) - 1)
    assert "trio" in steals(position(3, dice=[3, 3, 3, 1, 2], **earlier))


def test_seed_example_2_third_place():
    """You are 3rd, 300 behind 2nd and 400 behind the top: only tiles of 350+
    from the top player and 450+ from the 2nd player may be stolen."""
    owners = {"4-trio": 0, "5-trio": 0, "3-quartet": 0,  # top: 300 + 350 + 400
              "straight 2-6": 1, "5-quartet": 1,  # 2nd: 400 + 450 + 2 chips
              "2-duo": 2, "quintet": 2}  # you: 150 + 500
    args = dict(round_=final_round(3), order=[0, 1, 2], pos=2, owners=owners, chips=[0, 2, 0])
    assert position(3, dice=[1, 2, 3, 4, 5], **args).scores() == [1050, 950, 650]
    assert steals(position(3, dice=[4, 4, 4, 1, 2], **args)) == set()  # 300 from top
    assert steals(position(3, dice=[5, 5, 5, 1, 2], **args)) == {"5-trio"}  # 350 from top
    assert steals(position(3, dice=[3, 3, 3, 3, 1], **args)) == {"3-quartet"}  # 400 top
    assert steals(position(3, dice=[2, 3, 4, 5, 6], **args)) == set()  # 400 from 2nd
    assert steals(position(3, dice=[5, 5, 5, 5, 1], **args)) == {"5-trio", "5-quartet"}
    game = position(3, dice=[5, 5, 5, 5, 1], **args)
    game.apply(("steal", "5-quartet"))
    assert game.is_terminal()  # the last turn of the game
    assert game.scores() == [1050, 500, 1100]
    assert game.standings() == [2, 3, 1]


def test_steal_only_from_players_earlier_in_this_rounds_order():
    owners = {"4-trio": 2, "trio": 0}
    game = position(3, round_=4, order=[2, 1, 0], pos=1, owners=owners, dice=[4, 4, 4, 1, 2])
    assert steals(game) == {"4-trio"}  # seat 2 went first; seat 0 comes later
    game.apply(("steal", "4-trio"))
    assert game.owner["4-trio"] == 1
    assert game.scores() == [200, 300, 0]


def test_no_stealing_in_the_early_phase():
    game = position(3, round_=3, order=[0, 1, 2], pos=2, owners={"4-trio": 0},
                    dice=[4, 4, 4, 1, 2])
    assert steals(game) == set()


def test_no_steal_of_own_tiles():
    game = position(3, round_=5, order=[0, 1, 2], pos=1, owners={"4-trio": 1},
                    dice=[4, 4, 4, 1, 2])
    assert steals(game) == set()


# ---- reversal tile ---------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4])
def test_reversal_only_in_final_round(n):
    order = list(range(n))
    for round_ in range(final_round(n)):
        game = position(n, round_=round_, order=order, pos=0, dice=[1, 1, 1, 1, 1])
        assert REVERSAL not in game.legal_actions()
        assert game.observation(0)["reversal"] == "aside"
    game = position(n, round_=final_round(n), order=order, pos=0, dice=[1, 1, 1, 1, 1])
    assert game.legal_actions()[-1] == REVERSAL
    game = position(n, round_=final_round(n), order=order, pos=0, dice=[1, 1, 1, 1, 2])
    assert REVERSAL not in game.legal_actions()


def test_reversal_tile_is_laid_out_when_the_final_round_starts():
    game = position(3, round_=final_round(3) - 1, order=[0, 1, 2], pos=2, dice=[2, 3, 3, 4, 6])
    game.set_position(reversal="aside")
    game.apply(CHIPS)
    assert game.round == final_round(3)
    assert game.reversal == "face_up"
    assert game.observation(1)["final_round"] is True


def test_reversal_wins_at_once_and_ranks_first():
    owners = {"quintet": 0, "6-quintet": 1}
    game = position(3, round_=final_round(3), order=[1, 0, 2], pos=1, owners=owners,
                    dice=[1, 1, 1, 1, 1])
    game.apply(REVERSAL)
    assert game.is_terminal()
    assert game.current_player() == -1
    assert game.winner == 0
    assert game.reversal == "taken"
    assert game.scores() == [500, 800, 0]
    assert game.standings() == [1, 2, 3]
    with pytest.raises(IllegalActionError):
        game.apply(CHIPS)


# ---- chips -------------------------------------------------------------------


def test_chips_one_per_one_from_the_supply():
    game = position(3, round_=0, order=[0, 1, 2], pos=0, dice=[1, 1, 1, 4, 6])
    game.apply(CHIPS)
    assert game.chips == [3, 0, 0] and game.supply == 17
    assert game.scores()[0] == 150


def test_chips_supply_runs_short():
    game = position(3, round_=0, order=[0, 1, 2], pos=0, dice=[1, 1, 1, 4, 6], supply=2)
    game.apply(CHIPS)
    assert game.chips == [2, 0, 0] and game.supply == 0
    # an empty supply: still allowed, for nothing
    game.set_position(dice=[1, 1, 5, 5, 6], step="take")
    assert game.legal_actions() == [CHIPS]
    game.apply(CHIPS)
    assert game.chips == [2, 0, 0] and game.supply == 0


def test_chips_are_always_allowed_even_for_none():
    game = position(3, round_=0, order=[0, 1, 2], pos=0, dice=[2, 3, 4, 5, 5])
    assert CHIPS in game.legal_actions()
    game.apply(CHIPS)
    assert game.chips == [0, 0, 0]


# ---- rolling -----------------------------------------------------------------


def test_reroll_options_and_the_seed_rolling_example():
    assert reroll_options([1, 1, 1, 1, 1]) == [(1,), (1, 1), (1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1, 1)]
    assert len(reroll_options([1, 2, 3, 4, 5])) == 31
    game = position(3, round_=0, order=[0, 1, 2], pos=0, dice=[2, 3, 5, 5, 6],
                    step="roll", rerolls_left=2)
    legal = game.legal_actions()
    assert legal[0] == STOP and (2, 5, 5, 6) in legal and () not in legal
    assert game.describe_action((2, 5, 5, 6)) == "seat 0 rerolls 2,5,5,6 keeping 3"
    game.apply((2, 5, 5, 6))
    assert 3 in game.dice and game.rerolls_left == 1 and game.step == "roll"
    game.set_position(dice=[1, 3, 4, 4, 4])
    game.apply((1, 3))
    assert game.dice.count(4) >= 3
    assert game.step == "take"  # the third roll was the last
    assert STOP not in game.legal_actions()


def test_stop_early_goes_to_the_take_step():
    game = position(3, round_=0, order=[0, 1, 2], pos=0, dice=[4, 4, 4, 1, 2],
                    step="roll", rerolls_left=2)
    assert game.describe_action(STOP) == "seat 0 stops with 1,2,4,4,4"
    game.apply(STOP)
    assert game.step == "take" and game.dice == [1, 2, 4, 4, 4]
    assert game.describe_action(("take", "trio")) == "seat 0 takes trio (200)"


def test_describe_actions():
    owners = {"4-trio": 2}
    game = position(3, round_=4, order=[2, 1, 0], pos=1, owners=owners, dice=[1, 4, 4, 4, 1])
    assert game.describe_action(("steal", "4-trio")) == "seat 1 steals 4-trio (300) from seat 2"
    assert game.describe_action(CHIPS) == "seat 1 takes 2 bonus chips (100)"
    # actions straight off the wire (lists) read the same
    assert game.describe_action(["steal", "4-trio"]) == "seat 1 steals 4-trio (300) from seat 2"
    game.set_position(step="roll", rerolls_left=2)
    assert game.describe_action([1, 1]) == "seat 1 rerolls 1,1 keeping 4,4,4"


# ---- order, rounds, standings ------------------------------------------------


def test_late_order_by_score_ties_later_player_first():
    game = TileHunt.new(4, 0)
    assert game.late_order([0, 1, 2, 3], [300, 500, 300, 300]) == [1, 3, 2, 0]
    assert game.late_order([3, 0, 2, 1], [0, 0, 0, 0]) == [1, 2, 0, 3]


def test_first_late_round_order_is_computed_from_scores():
    owners = {"trio": 0, "4-trio": 2, "2-duo": 1}
    game = position(3, round_=3, order=[0, 1, 2], pos=2, owners=owners, dice=[2, 3, 3, 5, 6],
                    chips=[2, 0, 0])
    game.set_position(face_down=[])
    game.apply(CHIPS)  # last early turn: scores 300, 150, 300
    assert game.round == 4 and game.is_late()
    assert game.order == [2, 0, 1]  # tie 0/2: seat 2 was later, goes first
    assert game.previous_order == [0, 1, 2]
    assert game.observation(0)["phase"] == "late"


def test_late_order_tie_uses_the_previous_late_round():
    owners = {"trio": 0, "4-trio": 2}  # 200 vs 300
    game = position(3, round_=5, order=[2, 1, 0], pos=2, owners=owners, dice=[2, 3, 3, 5, 6],
                    chips=[2, 6, 0])  # 300, 300, 300 after scoring
    game.apply(CHIPS)
    assert game.scores() == [300, 300, 300]
    assert game.order == [0, 1, 2]  # the reverse of the previous round's order


def test_final_standings_tie_break_earlier_in_final_order():
    owners = {"trio": 2, "full house": 0, "quartet": 1}  # 200, 300, 300
    game = position(3, round_=final_round(3), order=[1, 0, 2], pos=2, owners=owners,
                    dice=[2, 3, 3, 5, 6])
    game.apply(CHIPS)
    assert game.is_terminal()
    assert game.scores() == [300, 300, 200]
    assert game.standings() == [2, 1, 3]  # seat 1 went before seat 0


@pytest.mark.parametrize("n,early_rounds", [(3, 4), (4, 3)])
def test_phase_and_round_counts(n, early_rounds):
    game = TileHunt.new(n, 7)
    assert game.rounds_per_phase == early_rounds and game.total_rounds == 2 * early_rounds
    picker = random.Random(3)
    turns: dict[int, list[int]] = {}
    seen_turn = None
    while not game.is_terminal():
        key = (game.round, game.pos)
        if key != seen_turn:
            seen_turn = key
            turns.setdefault(game.round, []).append(game.current_player())
            expected_down = 12 - (game.round * n + game.pos + 1) if game.round < early_rounds else 0
            assert len(game.face_down) == expected_down
            assert len(game.face_up) == 4 + 12 - expected_down
        legal = [a for a in game.legal_actions() if a != REVERSAL]
        game.apply(picker.choice(legal))
    assert sorted(turns) == list(range(2 * early_rounds))
    for round_, seats in turns.items():
        assert sorted(seats) == list(range(n))
        if round_ < early_rounds:
            assert seats == list(range(n))
    assert game.round == 2 * early_rounds
    assert game.observation(0)["phase"] == "over"


def test_game_ends_after_the_final_rounds_last_turn():
    game = position(4, round_=final_round(4), order=[3, 2, 1, 0], pos=2, dice=[2, 3, 3, 5, 6])
    game.apply(CHIPS)
    assert not game.is_terminal() and game.current_player() == 0
    game.set_position(dice=[2, 3, 3, 5, 6], step="take")
    game.apply(CHIPS)
    assert game.is_terminal() and game.legal_actions() == []


def test_tile_turned_each_early_turn_and_observation_hides_order():
    game = TileHunt.new(3, 5)
    assert len(game.face_up) == 5 and len(game.face_down) == 11
    obs = game.observation(1)
    assert obs["face_down"] == 11
    assert [t["name"] for t in obs["tiles"][:4]] == list(START_TILES)
    assert all(t["owner"] is None for t in obs["tiles"])
    assert obs["step"] == "roll" and obs["rerolls_left"] == 2 and len(obs["dice"]) == 5
    text = repr(obs)
    for hidden in game.face_down:
        assert hidden not in text


def test_redeal_reshuffles_only_face_down_tiles():
    game = TileHunt.new(4, 9)
    orders = {tuple(game.redeal(0, s).face_down) for s in range(10)}
    assert len(orders) > 1
    for s in range(5):
        dealt = game.redeal(2, s)
        assert sorted(dealt.face_down) == sorted(game.face_down)
        assert dealt.face_up == game.face_up and dealt.dice == game.dice
        assert dealt.observation(2) == game.observation(2)


def test_registry():
    assert get_game("tile_hunt") is TileHunt


@pytest.mark.parametrize("num_players", [3, 4])
def test_the_log_replays_every_take_steal_and_chip(num_players):
    """Between two of a seat's turns a tile can be taken and stolen again;
    `log` keeps every finished turn, so replaying it gives the tiles' owners
    and the chips the observation shows."""
    from games.tile_hunt import CHIP_SUPPLY

    checked = steals = 0
    for seed in range(10):
        for game in sample_states("tile_hunt", num_players, seed=seed, every=1):
            obs = game.observation(0)
            owner: dict[str, int] = {}
            chips, supply = [0] * num_players, CHIP_SUPPLY
            for seat, dice, taken, rolls in obs["log"]:
                assert rolls[-1] == dice and 1 <= len(rolls) <= 3
                if taken == "chips":
                    gained = min(dice.count(1), supply)
                    chips[seat] += gained
                    supply -= gained
                elif taken != "reversal":
                    verb, tile = taken
                    steals += verb == "steal"
                    owner[tile] = seat
            assert owner == {t["name"]: t["owner"] for t in obs["tiles"] if t["owner"] is not None}
            assert chips == obs["chips"] and supply == obs["chip_supply"]
            checked += 1
    assert checked > 100 and steals > 0


@pytest.mark.parametrize("num_players", [3, 4])
def test_every_roll_of_a_turn_is_public_and_logged(num_players):
    """Every roll is seen by all: `turn_rolls` grows by the new dice with
    each reroll, and the finished turn's log entry keeps them all."""
    rng = random.Random(num_players)
    rerolls = 0
    for seed in range(6):
        game = get_game("tile_hunt").new(num_players, seed)
        while not game.is_terminal():
            before = game.observation(0)
            assert before["turn_rolls"][-1] == before["dice"]
            assert len(before["turn_rolls"]) == 3 - before["rerolls_left"] or before["step"] == "take"
            action = rng.choice(game.legal_actions())
            game.apply(action)
            after = game.observation(0)
            if before["step"] == "roll" and action != "stop":
                rerolls += 1
                assert after["turn_rolls"] == before["turn_rolls"] + [after["dice"]]
            elif before["step"] == "take":
                seat, dice, taken, rolls = after["log"][-1]
                assert [list(r) for r in rolls] == before["turn_rolls"]
                assert seat == before["current_player"] and list(dice) == before["dice"]
    assert rerolls > 100
