"""Several matches in flight on one thread (play_interleaved): the same
matches as one at a time, faults included, with the waits overlapped."""

from __future__ import annotations

import random
from concurrent.futures import Future
from pathlib import Path

import pytest

from harness.match import BotPool, Limits, match_steps, play_interleaved, run_match
from harness.proc.botproc import BotClient, BotState, BotTimeout, FakeTransport
from harness.proc.catalog import discover
from tests.helpers import wait_until

BOTS_DIR = Path(__file__).parent / "bots"
LIMITS = Limits(decision_ms=500, startup_ms=5000)


def _pool() -> BotPool:
    return BotPool(discover([BOTS_DIR]), LIMITS)


def _interleaved(lineups, pool, in_flight, game="limit"):
    starters = [(lambda i=i, bots=bots: match_steps(game, 100 + i, bots, pool, f"m{i}"))
                for i, bots in enumerate(lineups)]
    outcomes = dict(play_interleaved(starters, in_flight))
    assert sorted(outcomes) == list(range(len(lineups))), "every match ends exactly once"
    return [outcomes[i] for i in range(len(lineups))]


def _fingerprint(result):
    faults = [(f.kind, f.decision) if f else None for f in result.faults]
    return result.replay["actions"], result.scores, result.ranks, faults


def test_interleaved_matches_are_the_matches_played_one_at_a_time():
    lineups = [["random", "heuristic", "random"],
               ["faulty_exit", "random", "heuristic"],
               ["heuristic", "faulty_garbage", "random"],
               ["random", "random", "faulty_out_of_range"],
               ["heuristic", "heuristic", "random"]]
    pool = _pool()
    try:
        alone = [run_match("limit", 100 + i, bots, pool, f"m{i}") for i, bots in enumerate(lineups)]
    finally:
        pool.close()
    pool = _pool()
    try:
        together = _interleaved(lineups, pool, in_flight=3)
    finally:
        pool.close()
    assert [_fingerprint(r) for r in together] == [_fingerprint(r) for r in alone]
    kinds = [next((f.kind for f in r.faults if f), None) for r in together]
    assert kinds == [None, "crash", "bad_message", "illegal_action", None]


@pytest.mark.slow
def test_interleaved_timeouts_overlap_and_the_other_matches_play_on(monkeypatch):
    """Each sleeper is asked before any sleeper's deadline passes: the four
    waits overlap. Checked by the order of the asks and the timeouts, not by
    the clock (one at a time, each timeout would come before the next ask).
    A deadline of 2 s leaves a loaded machine time to reach all four asks."""
    events: list[tuple[str, BotClient]] = []
    ask, answer = BotClient.ask, BotClient.answer

    def logged_ask(self, *args, **kwargs):
        events.append(("ask", self))
        return ask(self, *args, **kwargs)

    def logged_answer(self, ready):
        try:
            return answer(self, ready)
        except BotTimeout:
            events.append(("timeout", self))
            raise

    monkeypatch.setattr(BotClient, "ask", logged_ask)
    monkeypatch.setattr(BotClient, "answer", logged_answer)
    lineups = [["faulty_sleep", "random", "random"] for _ in range(4)] + [["random"] * 3]
    pool = BotPool(discover([BOTS_DIR]), Limits(decision_ms=2000, startup_ms=30000))
    try:
        warm = [pool.acquire(bot) for bots in lineups for bot in bots]  # started before play
        for client in warm:
            pool.release(client)
        results = _interleaved(lineups, pool, in_flight=5)
    finally:
        pool.close()
    assert [r.faults[0].kind for r in results[:4]] == ["timeout"] * 4
    assert not any(results[4].faults) and results[4].decisions > 50
    timed_out = [(i, client) for i, (kind, client) in enumerate(events) if kind == "timeout"]
    assert len({id(client) for _, client in timed_out}) == 4, timed_out
    first_timeout = timed_out[0][0]
    for _, sleeper in timed_out:
        last_ask = max(i for i, (kind, client) in enumerate(events)
                       if kind == "ask" and client is sleeper)
        assert last_ask < first_timeout, "a sleeper was asked only after another timed out"


def test_a_match_that_raises_is_reported_and_the_others_finish():
    pool = _pool()
    try:
        outcomes = _interleaved([["random"] * 3, ["random"] * 3], pool, in_flight=2,
                                game="no_such_game")
        assert all(isinstance(o, Exception) for o in outcomes)
        starters = [lambda: match_steps("no_such_game", 1, ["random"] * 3, pool, "bad"),
                    lambda: match_steps("limit", 1, ["random"] * 3, pool, "good")]
        outcomes = dict(play_interleaved(starters, 2))
    finally:
        pool.close()
    assert isinstance(outcomes[0], Exception) and "no_such_game" in str(outcomes[0])
    assert outcomes[1].decisions > 50 and not any(outcomes[1].faults)


class _ScriptedPool:
    """Fake bots that answer at once with a seeded random index."""

    limits = LIMITS

    def __init__(self) -> None:
        self.rng = random.Random(5)

    def acquire(self, name: str) -> BotClient:
        def reply(message):
            return {"type": "action", "index": self.rng.randrange(len(message["legal"]))}
        client = BotClient(FakeTransport([reply] * 10_000), name)
        client.state = BotState.READY
        return client

    def begin(self, name: str, deal: object = None) -> Future[BotClient]:
        future: Future[BotClient] = Future()
        future.set_result(self.acquire(name))
        return future

    def release(self, client: BotClient) -> None:
        pass


@pytest.mark.parametrize("in_flight", [1, 4])
def test_interleaved_play_drives_fake_transports(in_flight):
    pool = _ScriptedPool()
    results = _interleaved([["a", "b", "c"]] * 6, pool, in_flight)  # type: ignore[arg-type]
    assert all(r.decisions > 50 and not any(r.faults) and not r.capped for r in results)
    assert sorted(r.match_id for r in results) == [f"m{i}" for i in range(6)]


def test_stopping_early_ends_the_matches_still_in_play():
    """A caller that stops (Ctrl-C in a worker) leaves no bot mid-match: the
    finished match's bots go back to the pool, the others are ended."""
    import psutil

    pool = _pool()
    try:
        played = play_interleaved(
            [(lambda i=i: match_steps("limit", i, ["random"] * 3, pool, f"s{i}")) for i in range(5)],
            in_flight=3)
        position, first = next(played)
        played.close()
        idle = {c.transport.process.pid for cs in pool.idle.values() for c in cs}
        # the bots of every match that ended (another may have ended in the
        # same wake-up as the first, unreported) are back in the pool
        assert len(idle) in (3, 6, 9) and not any(first.faults)

        def others():
            return {p.pid for p in psutil.Process().children() if p.is_running()
                    and p.status() != psutil.STATUS_ZOMBIE} - idle

        wait_until(lambda: not others(), "the bots of the unfinished matches to end",
                   describe=others)
    finally:
        pool.close()
