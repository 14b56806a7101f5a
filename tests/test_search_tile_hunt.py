"""tile_hunt's turn search (bots.search.games.tile_hunt.turn): the dice are played
by the heuristic's DP over values of the ways a turn can end."""

from __future__ import annotations

import math
import random

import pytest

import bots.heuristics.tile_hunt as tile_hunt_heuristic
from bots.heuristics import load
from bots.search.core import Budget, Searcher, config_for
from bots.search.games.tile_hunt import evaluate as tile_hunt_evaluate
from bots.search.games.tile_hunt.dice import policy as tile_hunt_policy
from bots.search.games.tile_hunt.dice import shared
from bots.search.games.tile_hunt.turn import possible_ends
from bots.search.lab.tile_hunt_exact import FinalRound
from games import get_game
from games.playthrough import wire


def _decisions(seeds: range, players: int = 4):
    heuristic = load("tile_hunt")
    for seed in seeds:
        game = get_game("tile_hunt").new(players, seed)
        rng = random.Random(seed)
        while not game.is_terminal():
            seat, legal = game.current_player(), game.legal_actions()
            obs, wire_legal = wire([game.observation(seat), legal])
            index = heuristic(obs, wire_legal, rng)
            yield game, obs, wire_legal, index
            game.apply(legal[index])


@pytest.mark.slow
def test_with_the_heuristics_values_the_turn_dp_plays_the_heuristics_move() -> None:
    """Given the heuristic's own values for the ends, the weights the turn
    search gives each action are chances (they sum to 1) and the action of
    the best expectation is worth what the heuristic's move is worth."""
    searcher = Searcher("tile_hunt", 0, 4, 1)
    turns = searcher.turn_search
    checked = 0
    for _game, obs, legal, index in _decisions(range(12)):
        if len(legal) == 1:
            continue
        options = tile_hunt_heuristic.options(obs)
        ends = possible_ends(obs, options)
        value = {(kind, name): v for kind, name, v in options}
        mean = [value[end] if end in value else tile_hunt_heuristic.chips_value(obs, end[1])
                for end in ends]
        weights = turns.end_weights(obs, legal, ends, mean)
        assert all(abs(sum(row) - 1.0) < 1e-9 for row in weights)
        worth = [sum(p * v for p, v in zip(row, mean)) for row in weights]
        assert abs(max(worth) - worth[index]) < 1e-6 * max(1.0, abs(worth[index]))
        checked += 1
    assert checked > 300


@pytest.mark.slow
def test_turn_search_is_legal_and_seeded() -> None:
    def play(seed: int) -> list[int]:
        moves = []
        for match in range(4):  # a searcher per match, as a bot process has
            searcher = Searcher("tile_hunt", 0, 3, seed + match)
            moves.extend(searched_moves(searcher, match))
        return moves

    def searched_moves(searcher: Searcher, match: int) -> list[int]:
        moves = []
        for _game, obs, legal, _ in _decisions(range(match, match + 1), players=3):
            searched = config_for("tile_hunt").search_step(obs)
            if obs["current_player"] == 0 and len(legal) > 1:
                outcome = searcher.choose(obs, legal, Budget(iterations=60))
                assert 0 <= outcome.index < len(legal)
                assert outcome.searched == searched == obs["final_round"]
                if searched:  # the turn search played it
                    turn = searcher.turn_search.turn
                    assert turn is not None and turn.key == (obs["round"], obs["turn_position"])
                    moves.append(outcome.index)
        return moves

    first = play(5)
    assert len(first) > 5
    assert play(5) == first


@pytest.mark.slow
def test_every_take_the_engine_offers_is_an_end_the_turn_search_values() -> None:
    """The take step's legal actions (the engine's) are all among the ends
    the turn search valued at the turn's start (from the heuristic's
    options): in every phase, steals and the final round included."""
    searcher = Searcher("tile_hunt", 0, 4, 1)
    turns = searcher.turn_search
    ends_at_start: list = []
    takes = 0
    for _game, obs, legal, _ in _decisions(range(30)):
        if obs["step"] == "roll" and obs["rerolls_left"] == 2:
            ends_at_start = possible_ends(obs, tile_hunt_heuristic.options(obs))
        elif obs["step"] == "take":
            assert {turns.end_of(obs, action) for action in legal} <= set(ends_at_start)
            takes += 1
    assert takes > 500


def test_steal_odds_are_the_dice_dp_for_one_tile() -> None:
    """A tile's exposure weight is the chance that a turn spent on that tile
    alone gets it: the heuristic's exact dice DP over three rolls, with the
    tile worth 1 and everything else 0."""
    STEAL_ODDS = tile_hunt_evaluate.STEAL_ODDS
    dice = shared()
    first_roll = dice.kept_matrix[dice.kept_index[()]]  # all five dice rolled
    for name, odds in STEAL_ODDS.items():
        v0, _, expect1 = dice._tables([("take", name, 1.0)], (0.0,) * 6)
        two_rerolls = [max(v0[s], expect1[block].max()) for s, block in enumerate(dice.blocks)]
        assert abs(float(first_roll @ two_rerolls) - odds) < 5e-4, name
    assert STEAL_ODDS["trio"] > STEAL_ODDS["quartet"] > STEAL_ODDS["quintet"] > STEAL_ODDS["6-quintet"]


def _round_starts(players: int, seeds: range):
    """Heuristic self-play (the playout policy at every seat): each round
    start but the first, with the final standings."""
    for seed in seeds:
        game = get_game("tile_hunt").new(players, seed)
        rng = random.Random(seed)
        starts, last = [], game.round
        while not game.is_terminal():
            if game.round != last:
                last = game.round
                starts.append(game.clone())
            legal = game.legal_actions()
            index = 0 if len(legal) == 1 else tile_hunt_policy(game, game.current_player(), legal, rng)
            game.apply_unchecked(legal[index])
        yield starts, game.standings()


@pytest.mark.parametrize("players", [3, 4])
def test_the_fitted_chance_of_finishing_ahead_beats_the_score_alone(players: int) -> None:
    """On self-play the fit never saw (seeds far from its 800,000-819,999),
    the fitted chance that one seat finishes ahead of another has a lower
    log-loss than a coin and than the score difference over 300 points
    times the square root of the rounds left; and at every stage a seat's
    strength rises with its score."""
    WEIGHTS, strengths = tile_hunt_evaluate.WEIGHTS, tile_hunt_evaluate.strengths

    assert all(row[0] > 0 for row in WEIGHTS[players])  # the score's weight

    def loss(p: float, outcome: float) -> float:
        p = min(max(p, 1e-9), 1 - 1e-9)
        return -(outcome * math.log(p) + (1 - outcome) * math.log(1 - p))

    fitted = by_score = 0.0
    count = 0
    for starts, standings in _round_starts(players, range(900_000, 900_300)):
        for state in starts:
            rounds_left = state.total_rounds - state.round
            scores = state.scores_int()
            s = strengths(rounds_left, state.owner, state.chips, scores, state.order)
            for a in range(players):
                for b in range(players):
                    if a == b:
                        continue
                    outcome = 1.0 if standings[a] < standings[b] else 0.5 if standings[a] == standings[b] else 0.0
                    fitted += loss(1 / (1 + math.exp(s[b] - s[a])), outcome)
                    z = 1.7 * (scores[a] - scores[b]) / (300 * math.sqrt(rounds_left))
                    by_score += loss(1 / (1 + math.exp(-z)), outcome)
                    count += 1
    assert count > 10_000
    assert fitted / count < by_score / count - 0.02
    assert fitted / count < math.log(2) - 0.04


def test_the_tuned_move_takes_safe_chips_over_a_tile_easy_to_steal_back() -> None:
    """Early in the match, 150 points of 2-duo (a turn spent on it gets it
    70% of the time) against two chips (100 points nobody can take): the
    heuristic counts points and takes the tile, the tuned move (values from
    the fitted chance of finishing ahead) takes the chips. 350 points of
    5-trio, harder to steal, both take."""
    heuristic = load("tile_hunt")
    game = get_game("tile_hunt").new(4, 3)
    for dice, tile in [([1, 1, 2, 2, 5], "2-duo"), ([1, 1, 5, 5, 5], "5-trio")]:
        state = game.clone()
        if tile not in state.face_up:
            state.face_down.remove(tile)
            state.face_up.append(tile)
            state.owner[tile] = None
        state.dice, state.step = dice, "take"
        legal = state.legal_actions()
        obs, wire_legal = wire([state.observation(state.current_player()), legal])
        assert obs["phase"] == "early" and ["take", tile] in wire_legal and "chips" in wire_legal
        assert wire_legal[heuristic(obs, wire_legal, random.Random(1))] == ["take", tile]
        tuned = wire_legal[config_for("tile_hunt").base(obs, wire_legal, random.Random(1))]
        assert tuned == ("chips" if tile == "2-duo" else ["take", tile]), (tile, tuned)


# ---- the final round valued exactly (bots.search.lab.tile_hunt_exact, a probe) ----
def _final_round_turns(position: int, seeds: range):
    """Final-round states at the start of the turn of ``position`` in the
    order (heuristic self-play)."""
    for game, obs, _legal, _ in _decisions(seeds):
        if (obs["final_round"] and obs["turn_position"] == position and obs["step"] == "roll"
                and obs["rerolls_left"] == 2):
            yield game.clone()


def _redraw_first_roll(state, rng: random.Random):
    """``state`` with the turn's first roll (drawn as the turn started) drawn again."""
    twin = state.clone()
    twin.rng = random.Random(rng.getrandbits(64))
    twin.dice = sorted(rng.randint(1, 6) for _ in range(5))
    return twin


@pytest.mark.slow
def test_the_exact_odds_of_a_turn_are_how_the_heuristic_plays_it() -> None:
    """The chance of each way a turn ends, computed from the heuristic's
    dice DP, matches the heuristic playing that turn from fresh rolls."""
    from collections import Counter

    exact = FinalRound(shared(), lambda state: 0.0, 0, [1, 2, 3])
    rng = random.Random(7)
    states = [s for position in (1, 2) for s in _final_round_turns(position, range(2))]
    assert len(states) >= 3
    for state in states:
        chances = dict(exact.turn_ends(state))
        assert abs(sum(chances.values()) - 1.0) < 1e-9
        counts: Counter = Counter()
        n = 4000
        for _ in range(n):
            game = _redraw_first_roll(state, rng)
            while True:
                legal = game.legal_actions()
                action = legal[tile_hunt_policy(game, game.current_player(), legal, rng)]
                if game.step == "take":
                    break
                game.apply_unchecked(action)
            if action == "chips":
                counts[("chips", min(game.dice.count(1), game.supply))] += 1
            else:
                counts[("reversal", "reversal") if action == "reversal" else tuple(action)] += 1
        for end in set(chances) | set(counts):
            p, seen = chances.get(end, 0.0), counts[end] / n
            assert abs(seen - p) <= 4.5 * math.sqrt(max(p * (1 - p), 1e-4) / n), (end, p, seen)


@pytest.mark.slow
def test_the_exact_value_of_the_final_round_is_what_playouts_average() -> None:
    """With one turn after the current one, the exact value (the last turn
    scored without playing it) agrees with playing both turns out with the
    heuristic at every seat, from fresh rolls; and the last turn's shortcut
    agrees with playing each of its ends."""

    rng = random.Random(11)
    checked = 0
    for state in _final_round_turns(2, range(4)):
        me = state.order[0]
        searcher = Searcher("tile_hunt", me, 4, 1)
        exact = FinalRound(searcher.turn_search.dice, searcher.value, me, searcher.opponents)
        for end, _ in exact.turn_ends(state):
            last = exact.after(state, end)
            if last.is_terminal():
                continue
            by_ends = sum(chance * searcher.value(exact.after(last, e))
                          for e, chance in exact.turn_ends(last))
            assert abs(exact.last_turn(last) - by_ends) < 1e-9
        n = 2000
        played = [searcher.playout(_redraw_first_roll(state, rng), rng, 8) for _ in range(n)]
        mean = sum(played) / n
        spread = math.sqrt(sum((x - mean) ** 2 for x in played) / (n - 1))
        assert abs(mean - exact.worth(state)) <= 4.5 * spread / math.sqrt(n) + 1e-9
        checked += 1
    assert checked >= 2


def _heuristic_turn(game, heuristic, rng: random.Random) -> tuple:
    """The current player's turn from a fresh roll, its dice played by the
    heuristic: (the game at the turn's last choice, the heuristic's choice)."""
    state = game.clone()
    seat = state.current_player()
    state.rng = random.Random(rng.getrandbits(32))
    state.dice = sorted(state.rng.randint(1, 6) for _ in range(5))
    while state.step == "roll":
        legal = state.legal_actions()
        view, wire_legal = wire([state.observation(seat), legal])
        state.apply(legal[heuristic(view, wire_legal, rng)])
    legal = state.legal_actions()
    view, wire_legal = wire([state.observation(seat), legal])
    return state, legal[heuristic(view, wire_legal, rng)]


@pytest.mark.statistical
@pytest.mark.slow  # 4,500 simulated turns
def test_the_end_distribution_is_what_the_heuristic_turn_gives() -> None:
    """The chances of a turn's ends from a fresh roll played by the DP
    (``TileHuntDice.end_distribution``, which values the ends after the
    followers' turns) sum to 1 and match turns played out by the engine with
    the heuristic, late-phase steals included, within sampling error."""
    from collections import Counter

    heuristic = load("tile_hunt")
    dice = shared()
    checked = 0
    for game, obs, _legal, _index in _decisions(range(40, 60)):
        if not (obs["phase"] == "late" and not obs["final_round"] and obs["step"] == "roll"
                and obs["rerolls_left"] == 2 and any(t["owner"] not in (None, obs["seat"])
                                                     for t in obs["tiles"])):
            continue
        options = tile_hunt_heuristic.options(obs)
        chip_values = tuple(tile_hunt_heuristic.chips_value(obs, k) for k in range(6))
        exact = dict(dice.end_distribution(options, chip_values, obs["chip_supply"]))
        assert abs(sum(exact.values()) - 1.0) < 1e-9
        turns, seen = 1500, Counter()
        rng = random.Random(checked)
        for _ in range(turns):
            state, action = _heuristic_turn(game, heuristic, rng)
            seen[("chips", min(state.dice.count(1), state.supply)) if action == "chips"
                 else tuple(action)] += 1
        for end in set(exact) | set(seen):
            p = exact.get(end, 0.0)
            assert abs(seen[end] / turns - p) < 4 * math.sqrt(p * (1 - p) / turns) + 2e-3, end
        checked += 1
        if checked == 3:
            break
    assert checked == 3


@pytest.mark.statistical
@pytest.mark.slow  # 2,400 simulated turns
def test_the_late_phase_values_the_ends_after_the_followers_turns() -> None:
    """``after_followers`` (the tuned move's late-phase values): for the
    player second to last in the round's order, the value of the table as
    it stands is the fit's chance of finishing ahead averaged over the last
    player's heuristic turn from a fresh roll, as the engine plays it; for
    the last player, it is the fit just after the take."""
    heuristic = load("tile_hunt")
    checked = 0
    for game, obs, _legal, _index in _decisions(range(60, 80)):
        n = obs["num_players"]
        if not (obs["phase"] == "late" and not obs["final_round"] and obs["step"] == "roll"
                and obs["rerolls_left"] == 2 and obs["turn_position"] == n - 1):
            continue
        owner = {tile["name"]: tile["owner"] for tile in obs["tiles"]}
        chips, supply = list(obs["chips"]), obs["chip_supply"]
        assert tile_hunt_evaluate.after_followers(obs, owner, chips, supply) == \
            tile_hunt_evaluate.chance_ahead(obs, owner, chips)
        before = {**obs, "seat": obs["order"][n - 2], "turn_position": n - 2}
        valued = tile_hunt_evaluate.after_followers(before, owner, chips, supply)
        seat, turns, rng = obs["seat"], 800, random.Random(checked)
        played = []
        for _ in range(turns):
            state, action = _heuristic_turn(game, heuristic, rng)
            state.apply(action)
            after = wire(state.observation(seat))
            played.append(tile_hunt_evaluate.chance_ahead(
                before, {tile["name"]: tile["owner"] for tile in after["tiles"]},
                list(after["chips"])))
        mean = sum(played) / turns
        spread = math.sqrt(sum((x - mean) ** 2 for x in played) / (turns - 1))
        assert spread > 0  # the last turn matters here, so the check has teeth
        assert abs(valued - mean) <= 4.5 * spread / math.sqrt(turns) + 1e-9, (valued, mean)
        checked += 1
        if checked == 3:
            break
    assert checked == 3
