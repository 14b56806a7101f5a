"""The shared conformance suite, run against every registered game and every
player count it allows (OpenSpiel's random-sim and resample tests, pgx's
api_test). Select one game with ``pytest tests/test_conformance.py -k SLUG``.
"""

from __future__ import annotations

import json
import random

import msgpack
import pytest

from games import IllegalActionError, get_game, implemented_games
from games.base import ranks_by_unit
from games.playthrough import (
    golden_cases,
    golden_path,
    observation_bytes,
    random_playthrough,
    replay,
    wire,
)

GAME_COUNTS = [
    pytest.param(slug, n, id=f"{slug}-{n}p")
    for slug in implemented_games()
    for n in get_game(slug).INFO.player_counts()
]
SEEDS_PER_COUNT = 12


def sample_states(slug: str, num_players: int, seed: int, every: int):
    """Yield states along a random playthrough (every ``every`` decisions)."""
    game = get_game(slug).new(num_players, seed)
    picker = random.Random(seed * 7 + 1)
    while not game.is_terminal():
        if game.decisions % every == 0:
            yield game
        game.apply(picker.choice(game.legal_actions()))
    yield game


def rollout_bytes(game, policy_seed: int, limit: int = 400) -> bytes:
    """Every player's observations along a rollout picking actions by index."""
    picker = random.Random(policy_seed)
    chunks = [observation_bytes(game)]
    steps = 0
    while not game.is_terminal() and steps < limit:
        legal = game.legal_actions()
        game.apply_unchecked(legal[picker.randrange(len(legal))])
        chunks.append(observation_bytes(game))
        steps += 1
    return b"".join(chunks)


def test_registry_rejects_unknown_games_clearly():
    with pytest.raises(KeyError, match="unknown game 'chess'"):
        get_game("chess")


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_random_play_ends_with_valid_results(slug, num_players):
    info = get_game(slug).INFO
    for seed in range(SEEDS_PER_COUNT):
        game = get_game(slug).new(num_players, seed)
        picker = random.Random(seed)
        while not game.is_terminal():
            assert game.decisions < info.max_decisions, "random play hit the hard cap"
            player = game.current_player()
            assert 0 <= player < num_players
            legal = game.legal_actions()
            assert legal, "a non-terminal state must offer actions"
            assert len(legal) <= 400, "compound moves must be split into steps"
            assert len(set(map(repr, legal))) == len(legal), "duplicate legal actions"
            game.apply(picker.choice(legal))
        assert game.current_player() == -1
        assert game.legal_actions() == []
        scores = game.scores()
        assert len(scores) == num_players
        standings = game.standings()
        assert sorted(standings)[0] == 1
        assert standings == ranks_by_unit(game.rank_keys(), game.teams())
        teams = game.teams()
        if teams:
            for team in teams:
                assert len({standings[s] for s in team}) == 1, "team members share a rank"
                assert len({scores[s] for s in team}) == 1, "team members share a score"


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_illegal_actions_are_refused(slug, num_players):
    game = get_game(slug).new(num_players, 3)
    before = observation_bytes(game)
    for bogus in (object(), "no-such-action", -12345, (99, 99, 99)):
        if bogus in game.legal_actions():
            continue
        with pytest.raises(IllegalActionError):
            game.apply(bogus)
    assert observation_bytes(game) == before, "a refused action must change nothing"
    final, _ = random_playthrough(slug, num_players, 5)
    with pytest.raises(IllegalActionError):
        final.apply(0)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_same_seed_same_actions_same_match(slug, num_players):
    for seed in range(3):
        first, actions = random_playthrough(slug, num_players, seed)
        again = get_game(slug).new(num_players, seed)
        trace_a, trace_b = [], []
        replayed = get_game(slug).new(num_players, seed)
        for action in actions:
            trace_b.append(observation_bytes(again))
            again.apply(action)
        for action in actions:
            trace_a.append(observation_bytes(replayed))
            replayed.apply(action)
        assert trace_a == trace_b
        assert observation_bytes(first) == observation_bytes(again)
        assert first.scores() == again.scores()
    different_deals = {
        observation_bytes(get_game(slug).new(num_players, seed)) for seed in range(8)
    }
    assert len(different_deals) > 1, "the seed must change the deal"


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_clone_is_independent(slug, num_players):
    for state in sample_states(slug, num_players, seed=11, every=13):
        if state.is_terminal():
            continue
        snapshot = observation_bytes(state)
        twin = state.clone()
        assert observation_bytes(twin) == snapshot
        twin_future = rollout_bytes(twin, policy_seed=3)
        assert observation_bytes(state) == snapshot, "playing the clone changed the original"
        assert rollout_bytes(state.clone(), policy_seed=3) == twin_future, (
            "a clone must carry the same future, chance included"
        )


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_observations_are_msgpack_native(slug, num_players):
    for state in sample_states(slug, num_players, seed=21, every=5):
        for player in range(num_players):
            obs = state.observation(player)
            assert isinstance(obs, dict)
            assert obs["seat"] == player
            assert all(isinstance(key, str) for key in obs)
            packed = msgpack.packb(obs)
            assert msgpack.packb(wire(obs)) == packed
            json.dumps(wire(obs))
        for action in state.legal_actions():
            assert msgpack.packb(wire(action)) == msgpack.packb(action)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_redeal_keeps_the_players_view_and_resamples_the_rest(slug, num_players):
    """Also the leak test: hidden parts change, the player's view does not."""
    future_changed = 0
    for seed in range(3):
        for state in sample_states(slug, num_players, seed=seed, every=9):
            for player in range(num_players):
                view = msgpack.packb(state.observation(player))
                original_future = rollout_bytes(state.clone(), policy_seed=1, limit=60)
                for redeal_seed in range(2):
                    dealt = state.redeal(player, redeal_seed)
                    assert msgpack.packb(dealt.observation(player)) == view
                    assert dealt.current_player() == state.current_player()
                    if state.current_player() == player:
                        assert dealt.legal_actions() == state.legal_actions()
                    if rollout_bytes(dealt.clone(), policy_seed=1, limit=60) != original_future:
                        future_changed += 1
                    assert msgpack.packb(state.observation(player)) == view, (
                        "redeal must not touch the original"
                    )
    assert future_changed > 0, "redeal never changed any hidden information"


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_redealt_states_play_to_the_end(slug, num_players):
    for state in sample_states(slug, num_players, seed=4, every=17):
        dealt = state.redeal(state.current_player() if not state.is_terminal() else 0, 99)
        rollout_bytes(dealt, policy_seed=2, limit=dealt.INFO.max_decisions)
        assert dealt.is_terminal()


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_states_redealt_for_any_seat_accept_every_legal_action(slug, num_players):
    """A search bot redeals for its own seat while another seat is mid-move:
    every action the redealt state offers must apply."""
    for state in sample_states(slug, num_players, seed=8, every=7):
        if state.is_terminal():
            continue
        for player in range(num_players):
            dealt = state.redeal(player, 17 + player)
            for action in dealt.legal_actions()[:40]:
                dealt.clone().apply(action)


GOLDEN = [
    pytest.param(slug, n, seed, id=f"{slug}-{n}p-seed{seed}")
    for slug in implemented_games()
    for n, seed in golden_cases(slug)
]


@pytest.mark.parametrize("slug,num_players,seed", GOLDEN)
def test_golden_playthrough(slug, num_players, seed):
    path = golden_path(slug, num_players, seed)
    assert path.exists(), f"missing {path.name}: python -m games.playthrough --write {slug}"
    golden = json.loads(path.read_text())
    assert golden["rules_version"] == get_game(slug).INFO.rules_version, (
        "rules version changed: regenerate the golden files"
    )
    assert replay(golden) == golden
