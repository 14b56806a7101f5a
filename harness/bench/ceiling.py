"""The machine's ceiling for bot traffic: MessagePack request/reply over
pipes between a driver and a trivial bot, several independent pairs at once.
No harness and no Ray: the rate any harness on this machine can approach,
measured in the same run as what it is compared with.

    python -m harness.bench.ceiling [--pairs 1,2,4] [--seconds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

import msgpack

TRIVIAL_BOT = r'''
import sys, msgpack
inp, out = sys.stdin.buffer, sys.stdout.buffer
unpacker = msgpack.Unpacker(raw=False)
while True:
    data = inp.read1(65536)
    if not data:
        break
    unpacker.feed(data)
    for message in unpacker:
        out.write(msgpack.packb({"type": "action", "index": 0}))
        out.flush()
'''
# about the size of a typical "act": a hand, a small board, twenty legal actions
REQUEST = msgpack.packb({"type": "act", "decision": 0,
                         "obs": {"hand": list(range(10)), "board": [[0] * 8 for _ in range(4)]},
                         "legal": list(range(20)), "time_left_ms": 1000})


def _await_reply(unpacker: msgpack.Unpacker, fd: int) -> None:
    """Read until one whole reply is decoded (blocking: no deadlines here)."""
    while True:
        try:
            next(unpacker)
            return
        except StopIteration:
            unpacker.feed(os.read(fd, 65536))


def _pingpong(seconds: float, results: mp.Queue[int]) -> None:
    bot = subprocess.Popen([sys.executable, "-c", TRIVIAL_BOT], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, bufsize=0)
    assert bot.stdin is not None and bot.stdout is not None
    unpacker = msgpack.Unpacker(raw=False)
    fd = bot.stdout.fileno()
    count, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        bot.stdin.write(REQUEST)
        _await_reply(unpacker, fd)
        count += 1
    bot.stdin.close()
    bot.wait()
    results.put(count)


def game_requests(game_slug: str, players: int, matches: int = 5) -> list[bytes]:
    """The "act" requests of a few random-play matches of a game, packed as
    the harness sends them: real sizes and shapes, in the seats' order."""
    import random

    from games import get_game

    requests = []
    for seed in range(matches):
        game = get_game(game_slug).new(players, seed, narrate=False)
        rng = random.Random(seed)
        while not game.is_terminal():
            legal = game.legal_actions()
            requests.append(msgpack.packb({
                "type": "act", "decision": game.decisions,
                "obs": game.observation(game.current_player()), "legal": legal,
                "time_left_ms": 1000}))
            game.apply(rng.choice(legal))
    return requests


def _rotate(requests: list[bytes], bots: int, seconds: float, results: mp.Queue[int]) -> None:
    """One driver and ``bots`` trivial bots, asked in turn as a match's seats are."""
    command = [sys.executable, "-m", "harness.bench.bots.trivial_bot"]
    root = str(Path(__file__).resolve().parents[2])  # the repository
    procs = [subprocess.Popen(command, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              bufsize=0) for _ in range(bots)]
    pipes = [(p.stdin.fileno(), p.stdout.fileno(), msgpack.Unpacker(raw=False))  # type: ignore[union-attr]
             for p in procs]
    count, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        for request in requests:
            write_fd, read_fd, unpacker = pipes[count % bots]
            os.write(write_fd, request)
            _await_reply(unpacker, read_fd)
            count += 1
    for proc in procs:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait()
    results.put(count)


def traffic_round_trips(game_slug: str, players: int, drivers: int, seconds: float) -> float:
    """Round trips/s of ``drivers`` drivers at once, each with ``players``
    trivial bots (harness/bench/bots/trivial_bot.py) asked in turn with a
    game's real requests: the harness's traffic with trivial bots, without
    the harness. The pair ceiling asks one bot a small request; this is the
    bound for a match's rotation of bots and its message sizes."""
    requests = game_requests(game_slug, players)
    context = mp.get_context("fork")
    results: mp.Queue[int] = context.Queue()
    workers = [context.Process(target=_rotate, args=(requests, players, seconds, results))
               for _ in range(drivers)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(results.get() for _ in workers) / seconds


def round_trips_per_second(pairs: int, seconds: float) -> float:
    """Round trips/s of ``pairs`` driver+bot pairs running at once."""
    context = mp.get_context("fork")
    results: mp.Queue[int] = context.Queue()
    workers = [context.Process(target=_pingpong, args=(seconds, results)) for _ in range(pairs)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(results.get() for _ in workers) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default="1,2")
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    for pairs in (int(p) for p in args.pairs.split(",")):
        print(f"{pairs} pair(s): {round_trips_per_second(pairs, args.seconds):,.0f} round trips/s")


if __name__ == "__main__":
    main()
