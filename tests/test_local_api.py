"""The in-process API (harness.local): functions and SDK bots play through
the match runner, seeing what a bot process is sent, faulting as one would."""

from __future__ import annotations

import random
import zlib

import msgpack
import pytest

from bots.heuristics import load
from bots.random_bot import RandomBot
from bots.sdk import Bot
from games import get_game, implemented_games
from harness.league import play_match_id
from harness.limits import Limits
from harness.local import Match, league, play
from harness.match import BotPool, run_match
from harness.proc.catalog import discover


def seeded_choice(obs: dict, legal: list, info: dict) -> int:
    """A random-ish function bot whose moves depend only on what it is sent."""
    rng = random.Random(f"{info['match_id']}:{info['seat']}:{info['decision']}")
    return rng.randrange(len(legal))


@pytest.mark.parametrize("game", implemented_games())
def test_a_function_plays_every_game_to_its_end(game):
    players = get_game(game).INFO.player_counts()[0]
    calls = []

    def mine(obs, legal, info):
        calls.append(info["seat"])
        return seeded_choice(obs, legal, info)

    match = play(game, [mine] + ["random"] * (players - 1), seed=3)
    assert not match.capped and match.decisions == len(match.replay["actions"])
    assert match.faults == [None] * players
    assert set(calls) == {0}, "the function played its own seat only"
    assert len(match.scores) == len(match.ranks) == players


def heuristic_function():
    """The heuristic bot's play as a function named like it: the same moves
    as the heuristic process, for the same match ID and seat."""
    rngs: dict[tuple[str, int], random.Random] = {}
    seen: list[tuple[dict, list, dict]] = []

    def heuristic(obs, legal, info):
        seen.append((obs, legal, info))
        key = (info["match_id"], info["seat"])
        if key not in rngs:
            rngs[key] = random.Random(zlib.crc32(f"{key[0]}:{key[1]}".encode()))
        return load(info["game"])(obs, legal, rngs[key])

    return heuristic, seen


def test_a_function_is_sent_exactly_what_a_bot_process_is_sent():
    game, seed, names = "limit", 11, ["random", "heuristic", "random"]
    sent = []  # every message the harness wrote to the heuristic process
    specs = discover()
    pool = BotPool({n: specs[n] for n in ("random", "heuristic")}, Limits())
    pool.trace = lambda way, bot, message: sent.append(message) if (
        way == "to" and bot == "heuristic") else None
    try:
        by_process = run_match(game, seed, names, pool, play_match_id(game, seed, names))
    finally:
        pool.close()

    heuristic, seen = heuristic_function()
    in_process = play(game, ["random", heuristic, "random"], seed=seed)

    def packed(value):
        return msgpack.packb(value)

    def decoded(value):  # as the SDK decodes it: lists, never tuples
        return msgpack.unpackb(packed(value), raw=False, strict_map_key=False)

    acts = [m for m in sent if m["type"] == "act"]
    assert len(acts) == len(seen) > 10
    assert [packed(m["obs"]) for m in acts] == [packed(obs) for obs, _, _ in seen]
    assert [packed(m["legal"]) for m in acts] == [packed(legal) for _, legal, _ in seen]
    assert [(decoded(m["obs"]), decoded(m["legal"])) for m in acts] == [
        (obs, legal) for obs, legal, _ in seen]
    assert [m["decision"] for m in acts] == [info["decision"] for _, _, info in seen]
    start = next(m for m in sent if m["type"] == "start")
    assert all(packed(seen[0][2][key]) == packed(value)
               for key, value in start.items() if key != "type")
    assert in_process.match_id == by_process.match_id
    assert in_process.replay["actions"] == by_process.replay["actions"]
    assert in_process.scores == by_process.scores and in_process.ranks == by_process.ranks


def test_the_same_seed_plays_the_same_match():
    first = play("cat_in_the_box", [seeded_choice, "heuristic", "random"], seed=5)
    again = play("cat_in_the_box", [seeded_choice, "heuristic", "random"], seed=5)
    other = play("cat_in_the_box", [seeded_choice, "heuristic", "random"], seed=6)
    def moves(match):  # the replay less its think times, which the clock makes
        return msgpack.packb({k: v for k, v in match.replay.items() if k != "times_ms"})

    assert moves(first) == moves(again)
    assert (first.scores, first.ranks) == (again.scores, again.ranks)
    assert first.replay["actions"] != other.replay["actions"]


def test_an_exception_is_the_seats_fault_or_raised_when_asked():
    def brittle(obs, legal, info):
        if info["decision"] >= 6:
            raise ValueError("no plan for this")
        return 0

    match = play("target", [brittle, "random", "random"], seed=2)
    fault = match.faults[0]
    assert fault is not None and fault.kind == "crash" and fault.decision >= 6
    assert fault.detail == "ValueError: no plan for this"
    assert "in brittle" in fault.stderr_tail and "harness/local.py" not in fault.stderr_tail
    assert match.ranks[0] == 3 and not match.capped, "ranked last; the others played on"
    assert match.decisions > fault.decision
    assert "FAULT crash" in repr(match)
    with pytest.raises(ValueError, match="no plan"):
        play("target", [brittle, "random", "random"], seed=2, raise_errors=True)


@pytest.mark.parametrize("answer, kind", [(99, "illegal_action"), (None, "bad_message"),
                                          ("first", "bad_message"), (1.5, "bad_message")])
def test_a_bad_answer_is_the_fault_a_process_would_get(answer, kind):
    match = play("target", [lambda obs, legal, info: answer, "random"], seed=1)
    assert match.faults[0] is not None and match.faults[0].kind == kind
    assert match.bots == ["fn", "random"]


def test_sdk_bots_play_as_instances_and_as_classes():
    class Recorder(Bot):
        name = "recorder"

        def __init__(self) -> None:
            self.ends: list[dict] = []
            self.seats: list[int] = []

        def on_start(self, match: dict) -> None:
            self.seats.append(match["seat"])

        def choose(self, obs: dict, legal: list, time_left_ms: int) -> int:
            return len(legal) - 1

        def on_end(self, result: dict) -> None:
            self.ends.append(result)

    mine = Recorder()
    match = play("limit", [RandomBot, mine, RandomBot], seed=4)
    assert match.bots == ["random", "recorder", "random"] and not any(match.faults)
    assert mine.seats == [1] and mine.ends[0]["scores"] == match.scores
    assert mine.ends[0]["obs"]["seat"] == 1, "its own final view"
    self_play = play("limit", [Recorder] * 3, seed=4)
    assert self_play.bots == ["recorder"] * 3 and not any(self_play.faults)


def test_a_league_returns_a_table_with_every_player(tmp_path):
    seen: list[Match] = []
    table = league("target", {"mine": seeded_choice, "heuristic": "heuristic",
                              "random": "random"}, seats=2, deals=2, seed=9,
                   on_match=seen.append)
    assert {row.bot for row in table.rows} == {"mine", "heuristic", "random"}
    assert len(table.matches) == len(seen) == table.league.size() == 12  # 3 tables x 2 x 2
    assert all(row.games == 8 for row in table.rows)
    text = repr(table)
    assert all(name in text for name in ("mine", "heuristic", "random", "95% interval"))
    again = league("target", {"mine": seeded_choice, "heuristic": "heuristic",
                              "random": "random"}, seats=2, deals=2, seed=9)
    assert [(r.bot, r.elo) for r in again.rows] == [(r.bot, r.elo) for r in table.rows]
    assert table.difference("heuristic", "random").first == "heuristic"
    page = table.matches[0].write_html(tmp_path / "match.html")
    assert table.matches[0].match_id in page.read_text()
    assert table.matches[0].log().startswith("seats: 0 = ")


def test_a_league_refuses_what_a_league_file_may_not_hold():
    with pytest.raises(ValueError, match="copies"):
        league("limit", {"a": seeded_choice, "b": "random"}, seats=3, copies={"a": 3})
    with pytest.raises(ValueError, match="unknown bot 'champion'"):
        league("limit", {"a": seeded_choice, "b": "champion"})
    with pytest.raises(ValueError, match="at least 2 players"):
        league("limit", [seeded_choice])
