"""The benchmark's own parts: the trivial bot speaks the protocol, the
in-process harness measurement plays what it says, and the bare-driver
traffic uses a game's real requests."""

from __future__ import annotations

import msgpack

from harness.bench.ceiling import game_requests, traffic_round_trips
from harness.bench.decisions import load_bench_league, play


def test_trivial_bots_play_whole_matches_without_faults() -> None:
    figures = play("trivial", "none", matches=4, in_flight=2)
    assert figures.decisions > 4 * 50  # limit at 3 players: a few hundred decisions a match
    assert figures.harness_cpu_s > 0 and figures.bot_cpu_s > 0
    assert figures.engine_cpu_s < figures.harness_cpu_s


def test_the_trivial_league_is_the_demo_game_with_benchmark_bots() -> None:
    league = load_bench_league("trivial")
    assert (league.game, league.players) == ("limit", 3)
    assert set(league.bots) == {"trivial_a", "trivial_b"}


def test_game_requests_are_act_messages_in_seat_order() -> None:
    requests = [msgpack.unpackb(r) for r in game_requests("limit", 3, matches=1)]
    assert requests and all(r["type"] == "act" and r["legal"] for r in requests)
    assert [r["decision"] for r in requests] == list(range(len(requests)))
    assert {r["obs"]["seat"] for r in requests} == {0, 1, 2}


def test_bare_driver_traffic_gets_answers() -> None:
    assert traffic_round_trips("limit", 3, drivers=1, seconds=0.2) > 0
