"""`league check`: a compliance run for one bot, step by step, as a bot author
would want it before entering a league: the handshake, one match per game
and player count against random bots, its decision times against the limit,
and a clean quit."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from games import get_game
from harness.limits import Limits
from harness.match import BotPool, MatchResult, run_match
from harness.proc.botproc import (
    MAX_REPLY_BYTES,
    BotClient,
    BotError,
    describe_bytes,
    looks_like_text,
)
from harness.proc.catalog import BotSpec, resolve
from harness.proc.sandbox import Sandbox
from harness.replay import replay_game


@dataclass(frozen=True)
class Verdict:
    step: str
    ok: bool
    detail: str
    stderr_tail: str = ""


def run_checks(spec: BotSpec, games: Sequence[str], limits: Limits | int,
               sandbox: Sandbox, players: Mapping[str, Sequence[int]] | None = None
               ) -> Iterator[Verdict]:
    """The verdicts, step by step; ``limits``: the bot's (an int: decision_ms alone);
    ``players``: the player counts to check per game (default: every count)."""
    if isinstance(limits, int):
        limits = Limits(decision_ms=limits)
    opponent = resolve("random")
    pool = BotPool({spec.name: spec, opponent.name: opponent}, limits, sandbox)
    try:
        handshake = _check_handshake(pool, spec)
        yield handshake
        if not handshake.ok:
            return
        for slug in games:
            counts = (players or {}).get(slug) or get_game(slug).INFO.player_counts()
            for count in counts:
                yield _check_match(pool, spec, opponent.name, slug, count, limits)
        yield _check_quit(pool, spec)
    finally:
        pool.close()


def _check_handshake(pool: BotPool, spec: BotSpec) -> Verdict:
    clock = time.perf_counter()
    try:
        client = pool.acquire(spec.name)
    except BotError as error:
        return Verdict("start and handshake", False, f"{error.kind}: {error.detail}",
                       error.stderr_tail)
    took = (time.perf_counter() - clock) * 1000
    pool.release(client)
    return Verdict("start and handshake", True,
                   f"protocol 1, name {client.name!r}, ready in {took:.0f} ms "
                   f"(limit {pool.limits.startup_ms} ms)")


def _check_match(pool: BotPool, spec: BotSpec, opponent: str, slug: str, players: int,
                 limits: Limits) -> Verdict:
    seats = [spec.name] + [opponent] * (players - 1)
    step = f"{slug}, {players} players"
    result = run_match(slug, 1, seats, pool, f"check-{slug}-{players}")
    fault = result.faults[0]
    if fault is not None:
        return Verdict(step, False, f"{fault.kind} at decision {fault.decision}: {fault.detail}",
                       fault.stderr_tail)
    times = _own_times(result)
    if not times:
        return Verdict(step, True, "finished; the bot was never asked to decide")
    p50, worst = statistics.median(times), max(times)
    ceiling, limit = _longest_decision(limits)
    slow = worst > ceiling * 0.8
    detail = (f"{len(times)} legal decisions, time p50 {_ms(p50)}, max {_ms(worst)} "
              f"(limit {limit})")
    if limits.clock_ms:
        detail += f", {_ms(sum(times))} of its clock in all"
    if slow:
        return Verdict(step, False, detail + ": within 20% of the limit, too close for a league")
    return Verdict(step, True, detail)


def _longest_decision(limits: Limits) -> tuple[int, str]:
    """The most one decision may take (decision_ms with the whole bank, no
    more than the clock), and how to say it."""
    ceiling, limit = limits.decision_ms, f"{limits.decision_ms} ms"
    if limits.bank_ms:
        ceiling += limits.bank_ms
        limit += f" + bank {limits.bank_ms} ms"
    if limits.clock_ms and limits.clock_ms < ceiling:
        ceiling = limits.clock_ms
    if limits.clock_ms:
        increment = f" +{limits.increment_ms}/decision" if limits.increment_ms else ""
        limit += f", clock {limits.clock_ms} ms{increment}"
    return ceiling, limit


def _ms(value: float) -> str:
    return "under 1 ms" if value < 1 else f"{value:.0f} ms"


def _own_times(result: MatchResult) -> list[int]:
    """The decision times of seat 0, from the replay (which seat acted when)."""
    times = result.replay.get("times_ms") or []
    own = []
    for index, (game, action) in enumerate(replay_game(result.replay)):
        if action is None or index >= len(times):
            break
        if game.current_player() == 0 and times[index] is not None:
            own.append(times[index])
    return own


def _check_quit(pool: BotPool, spec: BotSpec) -> Verdict:
    try:
        client: BotClient = pool.acquire(spec.name)
    except BotError as error:
        return Verdict("quit", False, f"could not start it again to ask it to quit: {error.detail}",
                       error.stderr_tail)
    client.close()
    exited = getattr(client.transport, "exited_by_itself", True)
    late = getattr(client.transport, "late_output", b"")
    if late:
        return Verdict("quit", False, _late_output_detail(late))
    if exited:
        return Verdict("quit", True, "exited by itself on 'quit'")
    return Verdict("quit", False, "still running 0.5 s after 'quit' and end of input: it was killed")


def _late_output_detail(late: bytes) -> str:
    """Bytes a bot wrote to stdout after its last reply: text held in its
    stdout buffer until it exited (Python's print without flush, C's printf
    without fflush), or a message after the end. In a league, text like that
    breaks a reply whenever the buffer fills."""
    size = f"{len(late):,} bytes" if len(late) < MAX_REPLY_BYTES else \
        f"{MAX_REPLY_BYTES:,} bytes or more"
    if looks_like_text(late):
        return (f"output after the last reply: {size} of text on stdout, held in its stdout "
                "buffer until it exited (print() without flush?); in a league such text breaks "
                f"a reply when the buffer fills. Use stderr for debug output: "
                f"{describe_bytes(late)}")
    return f"output after the last reply: {size} on stdout: {describe_bytes(late)}"
