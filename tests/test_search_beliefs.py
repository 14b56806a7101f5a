"""The search's opponent model for kings_order
(bots.search.games.kings_order.beliefs): what
it infers holds for heuristic players, its fast check agrees with the
heuristic's own code, and the worlds it deals again still fit the seat's
view."""

from __future__ import annotations

import random

import pytest

from bots.heuristics import load
from bots.heuristics.kings_order import _Model, _play_value
from bots.search.core import beliefs as fit_record
from bots.search.games.kings_order.beliefs import EPSILON, KingsOrderRefiner, _turns, played_like
from games import get_game
from games.determinize import from_observation
from games.kings_order import kings_order_bounds, sort_hand
from games.playthrough import wire
from games.tennos import rank_of


def _self_play(players: int, seed: int, at_name_step) -> None:
    """Heuristic self-play; ``at_name_step(game, obs)`` with the acting
    seat's observation at every naming step."""
    heuristic = load("kings_order")
    game = get_game("kings_order").new(players, seed)
    rngs = [random.Random(seed * 10 + s) for s in range(players)]
    while not game.is_terminal():
        seat = game.current_player()
        legal = game.legal_actions()
        obs = wire(game.observation(seat))
        if obs["phase"] == "name":
            at_name_step(game, obs)
        game.apply(legal[heuristic(obs, wire(legal), rngs[seat])])


def _reference(obs: dict, seat: int, hand: list[int]) -> bool:
    """``played_like`` written with the heuristic's own model and values."""
    log = obs["log"]
    for t, entry in enumerate(log):
        if entry[0] != seat:
            continue
        _, card, left, _right, side, discarded, _named, _handed, _end = entry
        lost = [card, *discarded]
        for later in log[t + 1:]:
            if later[0] == seat:
                lost.extend((later[1], *later[5]))
            if later[6] == seat:
                lost.extend(later[7])
        held = sort_hand(list(hand) + lost)
        if left >= len(held) or held[left] != card:
            return False
        n = obs["num_players"]
        sizes, pile, scored = [13] * n, [], [[] for _ in range(n)]
        for e in log[:t]:
            pile += [e[1], *e[5]]
            sizes[e[0]] -= 1 + len(e[5])
            sizes[e[6]] -= len(e[7])
            scored[e[0]] = sort_hand(scored[e[0]] + list(e[7]))
        model = _Model({"seat": seat, "num_players": n, "log": log[:t], "discard_pile": pile,
                        "score_cards": scored, "hand_sizes": sizes, "hand": held})
        values = [_play_value(model, held, i) for i in range(len(held))]
        if values[left] < max(values) - EPSILON:
            return False
        if side is not None:
            rest = held[:left] + held[left + 1:]
            gone, kept = (rest[:left], rest[left:]) if side == "left" else (rest[left:], rest[:left])
            if sum(map(model.keep_value, gone)) > sum(map(model.keep_value, kept)) + EPSILON:
                return False
    return True


def test_inference_holds_for_heuristic_players() -> None:
    checked = 0

    def check(game, obs) -> None:
        nonlocal checked
        for seat, turns in _turns(obs).items():
            assert played_like(turns, game.hands[seat]), (seat, obs["log"])
            checked += len(turns)

    for players in (3, 4, 5):
        for seed in range(3):
            _self_play(players, seed, check)
    assert checked > 1000


def test_the_fast_check_agrees_with_the_heuristic() -> None:
    compared = rejected = 0

    def check(game, obs) -> None:
        nonlocal compared, rejected
        if len(obs["log"]) % 3:
            return
        turns = _turns(obs)
        for k in range(3):
            world = from_observation("kings_order", obs, 7919 * k + len(obs["log"]))
            for seat, seat_turns in turns.items():
                hand = world.hands[seat]
                fast = played_like(seat_turns, hand)
                assert fast == _reference(obs, seat, hand)
                compared += 1
                rejected += not fast

    for seed in range(4):
        _self_play(4, seed, check)
    assert compared > 200 and 0.2 * compared < rejected < 0.8 * compared


def test_refined_worlds_keep_the_view_and_fit_the_play() -> None:
    refined = 0

    def check(game, obs) -> None:
        nonlocal refined
        seat = obs["seat"]
        world = from_observation("kings_order", obs, 100 + len(obs["log"]))
        before = sorted(c for s in range(game.num_players) if s != seat for c in world.hands[s])
        before += world.set_aside
        KingsOrderRefiner()(world, obs, random.Random(len(obs["log"])))
        assert wire(world.observation(seat)) == obs
        after = sorted(c for s in range(game.num_players) if s != seat for c in world.hands[s])
        assert sorted(after + world.set_aside) == sorted(before)
        lo, hi = kings_order_bounds(obs)
        for other, turns in _turns(obs).items():
            hand = world.hands[other]
            assert hand == sort_hand(hand)
            assert all(lo[other] <= rank_of(c) <= hi[other] for c in hand)
            refined += played_like(turns, hand)

    for seed in range(3):
        _self_play(4, seed, check)
    assert refined > 100


def test_a_seat_no_hand_explains_is_left_alone(monkeypatch) -> None:
    """A player unlike the heuristic: after GIVE_UP_AFTER tries in a decision
    its worlds are no longer dealt again (the search keeps its playouts)."""
    import bots.search.games.kings_order.beliefs as beliefs

    calls = []
    seen: list[dict] = []

    def record(game, obs) -> None:
        if not seen and len(_turns(obs)) == 3:
            seen.append(obs)

    _self_play(4, 1, record)
    obs = seen[0]
    monkeypatch.setattr(beliefs, "played_like", lambda turns, hand: calls.append(1) or False)
    refiner = KingsOrderRefiner()
    for k in range(20):
        world = from_observation("kings_order", obs, k)
        hands = [list(h) for h in world.hands]
        refiner(world, obs, random.Random(k))
        assert world.hands == hands  # nothing fitted: the worlds stay as dealt
    per_seat = -(-fit_record.GIVE_UP_AFTER // beliefs.TRIES) * beliefs.TRIES
    assert len(calls) == 3 * per_seat


def test_the_search_with_the_model_repeats_its_moves_with_fixed_playouts() -> None:
    from bots.search.core import Budget, Searcher

    points: list[tuple[dict, list]] = []

    def collect(game, obs) -> None:
        if obs["seat"] == 0 and len(obs["log"]) >= 6 and len(points) < 6:
            points.append((obs, wire(game.legal_actions())))

    _self_play(4, 5, collect)
    runs = []
    for _ in range(2):
        searcher = Searcher("kings_order", 0, 4, seed=11)
        assert searcher.refine is not None
        runs.append([(o.index, o.iterations, o.worlds)
                     for o in (searcher.choose(obs, legal, Budget(iterations=40), len(obs["log"]))
                               for obs, legal in points)])
    assert len(points) == 6 and runs[0] == runs[1]
    assert sum(worlds for _, _, worlds in runs[0]) >= 20  # the searches ran


@pytest.mark.parametrize("game", ["kings_order", "target"])
def test_the_opponent_model_can_be_turned_off(monkeypatch, game: str) -> None:
    from bots.search.games.target.beliefs import TargetRefiner
    from bots.search_bot import SearchBot

    start = {"match_id": "model", "game": game, "seat": 0, "players": 4,
             "teams": None, "limits": {"decision_ms": 1000, "cpu_s": None}}
    bot = SearchBot(iterations=8)
    bot.on_start(start)
    model = {"kings_order": KingsOrderRefiner, "target": TargetRefiner}[game]
    assert bot.searcher is not None and isinstance(bot.searcher.refine, model)
    monkeypatch.setenv("SEARCH_OPPONENT_MODEL", "0")
    bot = SearchBot(iterations=8)
    bot.on_start(start)
    assert bot.searcher is not None and bot.searcher.refine is None
