"""Cost per decision in the harness: real bot processes, matches played in
this process (no Ray), so the figures are the harness's own.

Plays ``--matches`` matches of a league's game (default: the demo league,
``limit`` at 3 players, random against heuristic; ``--league trivial``: the
same game between trivial bots, harness/bench/bots/trivial_bot.py, the pipe
ceiling's bot speaking the protocol) after a warm-up that starts the bot
processes, then prints, per decision:

- harness CPU (this process: match loop, engine, msgpack, pipe I/O), and
  the engine's share of it (the same matches replayed without bots);
- bot CPU (all bot processes, from their control groups or /proc);
- decisions/s, and the ratio to the pipe round-trip ceiling
  (harness/bench/ceiling.py) measured in the same run; with trivial bots also the
  ratio to the same bots asked the same requests in the same seat order by a
  bare driver (the traffic without the harness).

``--workers 2`` plays in that many forked processes at once (as the league
runner does with 2 Ray workers); ``--in-flight 2`` plays that many matches
at a time per worker, interleaved on one thread as a league worker plays
them (``--matches-per-worker``).

``--sandbox none`` runs bots as this user, with every right it has. The
harness's own bots (manifests in bots/ and harness/bench/bots/) may run so:
they are the harness's code. A league with any other bot is measured in the
bubblewrap sandbox only, unless ``--unsandboxed-i-trust-these-bots`` is
given as well, which prints a warning: a bot run unsandboxed could rewrite
the bot cache, other bots' copies and their seals included.

    python -m harness.bench.decisions [--league demo|trivial|FILE] [--sandbox none|bwrap]
                                      [--unsandboxed-i-trust-these-bots]
                                      [--matches 40] [--workers 1,2] [--in-flight 1,2]
                                      [--profile FILE] [--rounds 3]
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import multiprocessing as mp
import os
import pstats
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from games import get_game
from harness.bench.ceiling import round_trips_per_second, traffic_round_trips
from harness.league import League, load_league
from harness.match import BotPool, MatchResult, MatchSteps, match_steps, play_interleaved, run_match
from harness.proc.botproc import same_on_the_wire
from harness.proc.catalog import BUILTIN_BOT_DIR
from harness.proc.sandbox import Sandbox

BENCH_BOTS = Path(__file__).resolve().parent / "bots"
OWN_BOT_DIRS = (BUILTIN_BOT_DIR, BENCH_BOTS)  # the harness's own bots: trusted unsandboxed
TRUST_FLAG = "--unsandboxed-i-trust-these-bots"
# The "trivial bots": the pipe ceiling's bot speaking the protocol, so
# harness + trivial bot is compared with driver + the same bot, no harness.
TRIVIAL_LEAGUE = """name = "trivial"
description = "benchmark: the least a bot can do, on both sides of the demo's game"
game = "limit"
bots = ["trivial_a", "trivial_b"]
players = 3
deals = 20
"""


def league_from_text(text: str) -> League:
    """A league file's text, with the benchmark bots on the search path."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.toml"
        path.write_text(text)
        return load_league(str(path), bot_dirs=[BENCH_BOTS])


def load_bench_league(name: str) -> League:
    """A league by name or path, with the benchmark bots (harness/bench/bots)
    on the search path; ``trivial`` is built in."""
    if name == "trivial":
        return league_from_text(TRIVIAL_LEAGUE)
    return load_league(name, bot_dirs=[BENCH_BOTS])


def foreign_bots(league: League) -> list[str]:
    """The league's bots that are not the harness's own (OWN_BOT_DIRS)."""
    return sorted(name for name, spec in league.specs.items()
                  if spec.manifest.parent not in OWN_BOT_DIRS)


class UntrustedBots(RuntimeError):
    """Bots that are not the harness's own, asked to run unsandboxed without TRUST_FLAG."""


def refuse_unsandboxed(league: League, sandbox: str, trust_bots: bool) -> None:
    foreign = foreign_bots(league)
    if sandbox == "none" and foreign and not trust_bots:
        raise UntrustedBots(f"--sandbox none would run {', '.join(foreign)} unsandboxed, with "
                            f"your rights; they are not the harness's own bots. Leave --sandbox "
                            f"out (bwrap), or pass {TRUST_FLAG} if you trust them")


@dataclass
class DecisionFigures:
    decisions: int
    wall_s: float
    harness_cpu_s: float
    engine_cpu_s: float
    bot_cpu_s: float
    harness_sys_s: float = 0.0  # of harness_cpu_s: in the kernel (pipes, polls, switches)

    @property
    def decisions_s(self) -> float:
        return self.decisions / self.wall_s

    def per_decision_us(self, seconds: float) -> float:
        return seconds / self.decisions * 1e6

    def add(self, other: DecisionFigures) -> None:
        self.decisions += other.decisions
        self.wall_s = max(self.wall_s, other.wall_s)
        self.harness_cpu_s += other.harness_cpu_s
        self.engine_cpu_s += other.engine_cpu_s
        self.bot_cpu_s += other.bot_cpu_s
        self.harness_sys_s += other.harness_sys_s


def _lineups(bots: list[str], players: int, count: int, offset: int) -> list[list[str]]:
    """Every seat sees every bot: a simple cyclic mix."""
    return [[bots[(i + s + offset) % len(bots)] for s in range(players)] for i in range(count)]


def _bot_cpu(pool: BotPool) -> float:
    clients = [c for idle in pool.idle.values() for c in idle]
    return sum(c.transport.cpu_seconds() for c in clients)


def _engine_cpu(game_slug: str, replays: list[dict[str, Any]]) -> float:
    """What the engine costs in the match loop: a new game, legal actions,
    the observation and the move, for every decision of the played matches."""
    game_class = get_game(game_slug)
    clock = time.process_time()
    for replay in replays:
        game = game_class.new(replay["players"], replay["seed"], narrate=False)
        for action in replay["actions"]:
            legal = game.legal_actions()
            game.observation(game.current_player())
            game.apply_unchecked(next(a for a in legal if same_on_the_wire(a, action)))
    return time.process_time() - clock


def play(league_name: str = "demo", sandbox: str = "none", matches: int = 40,
         offset: int = 0, profile: str | None = None, pin: bool = False,
         in_flight: int = 1, barrier: Any = None, *,
         trust_bots: bool = False) -> DecisionFigures:
    """Matches in this process, with a warm pool: the figures of the loop alone.
    ``in_flight`` matches at a time on this thread (play_interleaved), as a
    league worker plays them (``--matches-per-worker``). ``pin``: this
    process and its bots (which inherit it) keep to one CPU. Only the
    harness's own bots run with ``sandbox="none"``, unless ``trust_bots``."""
    if pin:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[offset % len(cpus)]})
    league = load_bench_league(league_name)
    refuse_unsandboxed(league, sandbox, trust_bots)
    pool = BotPool(league.specs, league.limits, Sandbox(sandbox), league.bundles)
    players, game = league.players, league.game

    def play_all(first_seed: int, count: int, label: str) -> list[MatchResult]:
        lineups = _lineups(league.bots, players, count, offset)
        if in_flight == 1:
            return [run_match(game, first_seed + i, lineup, pool, f"{label}-{offset}-{i}")
                    for i, lineup in enumerate(lineups)]

        def starter(i: int, lineup: list[str]) -> Callable[[], MatchSteps]:
            return lambda: match_steps(game, first_seed + i, lineup, pool, f"{label}-{offset}-{i}")
        played = play_interleaved(itertools.starmap(starter, enumerate(lineups)), in_flight)
        results: list[MatchResult] = []
        for _, result in sorted(played, key=lambda pair: pair[0]):
            if isinstance(result, Exception):
                raise result
            results.append(result)
        return results

    try:
        # warm-up: every bot process the measured stretch can use is started
        clients = [pool.acquire(bot) for bot in league.bots for _ in range(players * in_flight)]
        for client in clients:
            pool.release(client)
        play_all(10_000 * (offset + 1), len(league.bots) * in_flight, "warm")
        if barrier is not None:  # workers measure the same stretch of time
            barrier.wait()
        bot_before = _bot_cpu(pool)
        starts_before = pool.total_starts()
        profiler = cProfile.Profile(time.thread_time) if profile else None
        wall, cpu = time.perf_counter(), time.process_time()
        sys_s = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        if profiler:
            profiler.enable()
        results = play_all(1000 * offset, matches, "bench")
        if profiler:
            profiler.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        sys_s = resource.getrusage(resource.RUSAGE_SELF).ru_stime - sys_s
        faulted = [r.faults for r in results if any(r.faults)]
        if faulted:
            raise RuntimeError(f"a bot faulted in the benchmark: {faulted[0]}")
        if pool.total_starts() != starts_before:
            raise RuntimeError("bot processes were started during the measured stretch")
        bot_cpu = _bot_cpu(pool) - bot_before
    finally:
        pool.close()
    if profiler and profile:
        profiler.dump_stats(profile)
    decisions = sum(r.decisions for r in results)
    engine_cpu = _engine_cpu(game, [r.replay for r in results])
    return DecisionFigures(decisions, wall, cpu, engine_cpu, bot_cpu, sys_s)


def _play_in_child(args: tuple[str, str, int, int, None, bool, int, Any],
                   results: mp.Queue[DecisionFigures | str], trust_bots: bool) -> None:
    try:
        results.put(play(*args, trust_bots=trust_bots))
    except BaseException as exc:  # noqa: BLE001 - the parent reports it
        args[-1].abort()  # no worker waits for this one
        results.put(f"{type(exc).__name__}: {exc}")


def play_parallel(league_name: str, sandbox: str, matches: int, workers: int,
                  pin: bool = False, in_flight: int = 1,
                  trust_bots: bool = False) -> DecisionFigures:
    """``workers`` forked processes at once, each with its own bots."""
    context = mp.get_context("fork")
    results: mp.Queue[DecisionFigures | str] = context.Queue()
    barrier = context.Barrier(workers)
    procs = [context.Process(target=_play_in_child,
                             args=((league_name, sandbox, matches, w, None, pin, in_flight, barrier),
                                   results, trust_bots))
             for w in range(workers)]
    for proc in procs:
        proc.start()
    replies = [results.get() for _ in procs]
    for proc in procs:
        proc.join()
    figures = [r for r in replies if isinstance(r, DecisionFigures)]
    if len(figures) < len(replies):
        raise RuntimeError(f"a benchmark worker failed: {[r for r in replies if isinstance(r, str)]}")
    total = figures[0]
    for each in figures[1:]:
        total.add(each)
    # decisions/s: everyone's decisions over the longest wall time (they ran at once)
    return total


def report(figures: DecisionFigures, ceiling: float, label: str,
           traffic: float | None = None) -> str:
    """``ceiling``: the pipe ceiling (pairs); ``traffic``: the same bots and
    requests without the harness (harness/bench/ceiling.py traffic_round_trips)."""
    f = figures
    versus = f", {f.decisions_s / traffic:.1%} of this traffic without the harness" \
        if traffic else ""
    return (f"{label}: {f.decisions} decisions, {f.decisions_s:,.0f} decisions/s "
            f"(= {f.decisions_s / ceiling:.1%} of the ceiling{versus}); per decision: harness CPU "
            f"{f.per_decision_us(f.harness_cpu_s):.1f} us (kernel "
            f"{f.per_decision_us(f.harness_sys_s):.1f} us; engine "
            f"{f.per_decision_us(f.engine_cpu_s):.1f} us, the rest "
            f"{f.per_decision_us(f.harness_cpu_s - f.engine_cpu_s):.1f} us), bot CPU "
            f"{f.per_decision_us(f.bot_cpu_s):.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--league", default="demo")
    parser.add_argument("--sandbox", default=None,
                        help="none, bwrap, or both (none,bwrap: the default for the harness's "
                             "own bots; bwrap for any other)")
    parser.add_argument(TRUST_FLAG, dest="trust_bots", action="store_true",
                        help="let --sandbox none run bots that are not the harness's own, as "
                             "you, with every right you have")
    parser.add_argument("--matches", type=int, default=40, help="per worker and round")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--in-flight", default="1,2",
                        help="matches at a time per worker (a league's --matches-per-worker)")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many")
    parser.add_argument("--seconds", type=float, default=2.0, help="ceiling measurement")
    parser.add_argument("--pin", action="store_true",
                        help="experiment: each worker and its bots keep to one CPU")
    parser.add_argument("--profile", metavar="FILE",
                        help="cProfile one single-worker round into FILE and print its top")
    args = parser.parse_args()
    modes = _sandbox_modes(parser, args)
    workers_list = [int(w) for w in args.workers.split(",")]
    pairs = sorted(set(workers_list) | {1, 2})
    ceilings = {k: round_trips_per_second(k, args.seconds) for k in pairs}
    ceiling = max(ceilings.values())
    print("pipe ceiling: " + ", ".join(f"{k} pair(s) {v:,.0f} round trips/s"
                                       for k, v in ceilings.items()))
    traffic: dict[int, float] = {}
    if args.league == "trivial":  # the same bots and requests, no harness
        league = load_bench_league("trivial")
        traffic = {w: traffic_round_trips(league.game, league.players, w, args.seconds)
                   for w in workers_list}
        print(f"{league.game} traffic to trivial bots without the harness: " + ", ".join(
            f"{w} driver(s) {v:,.0f} round trips/s" for w, v in traffic.items()))
    if args.profile:
        figures = play(args.league, modes[0], args.matches, profile=args.profile,
                       trust_bots=args.trust_bots)
        print(report(figures, ceiling, "profiled (slower)"))
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)
        return
    for mode in modes:
        for workers in workers_list:
            for in_flight in (int(k) for k in args.in_flight.split(",")):
                best = max((play_parallel(args.league, mode, args.matches, workers, args.pin,
                                          in_flight, args.trust_bots)
                            for _ in range(args.rounds)),
                           key=lambda f: f.decisions_s)
                pinned = ", pinned" if args.pin else ""
                print(report(best, ceiling, f"sandbox {mode}, {workers} worker(s) x {in_flight} "
                                            f"in flight{pinned}, best of {args.rounds}",
                             traffic.get(workers)))


def _sandbox_modes(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The sandboxes to measure in: unsandboxed only for the harness's own
    bots, or with TRUST_FLAG and a warning."""
    foreign = foreign_bots(load_bench_league(args.league))
    modes = args.sandbox.split(",") if args.sandbox else ["bwrap"] if foreign else ["none", "bwrap"]
    if "none" in modes and foreign:
        if not args.trust_bots:
            parser.error(f"--sandbox none would run {', '.join(foreign)} unsandboxed, with your "
                         f"rights; they are not the harness's own bots. Pass {TRUST_FLAG} if "
                         "you trust them")
        print(f"warning: {TRUST_FLAG}: {', '.join(foreign)} run unisolated, as you, with every "
              "right you have", file=sys.stderr)
    return modes


if __name__ == "__main__":
    main()
