"""Benchmark: what one reply can cost the harness's reply reader, worst cases.

    python -m harness.bench.reader [--repeat 200] [--baseline FILE] [--games]

For each shape a hostile bot could send (each built as large as the caps of
``harness/proc/botproc.py`` allow: many tiny containers, nests to the depth cap,
the longest strings, arrays of ints and floats, and refused ones: one level
too deep, past the decoder's stack, claimed lengths never filled, text), it
times a fresh :class:`ReplyReader` fed the bytes up to its message or its
fault, and plain ``msgpack.unpackb`` of the same bytes in the same run; the
ratio is the reader's cost over the plain decode's. Times are the fastest
of ``--repeat`` runs (the cost itself, without the machine's noise) and the
median. ``--baseline FILE`` times another reader, with its own caps, on its
own worst shapes (a copy of an older botproc.py, e.g. ``git show
<commit>:harness/proc/botproc.py > /tmp/old_botproc.py``). ``--games`` plays
random matches of every game and prints the largest legitimate reply: the
echo of the largest legal action, against which the caps keep a margin.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import msgpack

from harness.proc import botproc

Shape = tuple[str, bytes]


def _array(items: list[bytes]) -> bytes:
    if len(items) < 16:
        return bytes([0x90 | len(items)]) + b"".join(items)
    return b"\xdc" + len(items).to_bytes(2, "big") + b"".join(items)


def _filled(unit: bytes, caps: ModuleType) -> bytes:
    """A reply ``{"type": "action", "index": 0, "x": [[unit, ...], ...]}``
    holding as many ``unit`` as fit in the caps (two levels of arrays, each
    at most MAX_CONTAINER_ITEMS long: ``unit`` sits 3 levels deep)."""
    def build(count: int) -> bytes:
        per = caps.MAX_CONTAINER_ITEMS
        chunks = [_array([unit] * min(per, count - start)) for start in range(0, count, per)]
        return b"\x83\xa4type\xa6action\xa5index\x00\xa1x" + _array(chunks[:per])
    count = min(caps.MAX_REPLY_BYTES // len(unit), caps.MAX_CONTAINER_ITEMS ** 2)
    while len(build(count)) > caps.MAX_REPLY_BYTES:
        count -= 1 + (len(build(count)) - caps.MAX_REPLY_BYTES) // (2 * len(unit))
    return build(count)


def _str(text: str) -> bytes:
    data = text.encode()
    return b"\xda" + len(data).to_bytes(2, "big") + data


def shapes(caps: ModuleType) -> list[Shape]:
    """The hostile shapes for a reader with ``caps`` (a botproc module)."""
    nest = caps.MAX_DEPTH - 3  # levels a unit may add below the two arrays
    longest = caps.MAX_STRING_BYTES
    return [
        ("a typical reply", msgpack.packb({"type": "action", "index": 3, "decision": 57})),
        ("the largest game reply", msgpack.packb(
            {"type": "action", "action": ["take", "straight 2-6"], "decision": 99999})),
        ("empty arrays", _filled(b"\x90", caps)),
        ("empty maps", _filled(b"\x80", caps)),
        ("one-item arrays", _filled(b"\x91\x00", caps)),
        ("one-key maps", _filled(b"\x81\xa0\x80", caps)),
        ("nests to the depth cap", _filled(b"\x91" * nest + b"\x00", caps)),
        ("fixints", _filled(b"\x01", caps)),
        ("float64s", _filled(b"\xcb\x3f\xf0" + b"\x00" * 6, caps)),
        ("uint64s", _filled(b"\xcf" + b"\xff" * 8, caps)),
        ("longest strings", _filled(_str("x" * longest), caps)),
        ("longest non-ASCII strings", _filled(_str("\u00e9" * (longest // 2)), caps)),
        ("refused: one level too deep", _filled(b"\x91" * (nest + 1) + b"\x00", caps)),
        # inside a map, as a reply must start, so that the decoder meets them
        ("refused: past the decoder's stack", b"\x81\xa1x" + b"\x91" * (caps.MAX_REPLY_BYTES - 4)
         + b"\x00"),
        ("refused: claimed lengths, never filled", b"\x81\xa1x" +
         (b"\xdc" + caps.MAX_CONTAINER_ITEMS.to_bytes(2, "big")) * (caps.MAX_REPLY_BYTES // 3 - 1)),
        ("refused: text", b"thinking " * (caps.MAX_REPLY_BYTES // 9)),
    ]


def read_once(module: ModuleType, data: bytes) -> str:
    """What a fresh reader of ``module`` makes of ``data``: 'ok', 'incomplete'
    or the fault's first words (the reader's whole cost for that reply)."""
    reader = module.ReplyReader()
    try:
        reader.feed(data)
        complete, _ = reader.next_message()
    except module.BotBadMessage as fault:
        return "refused: " + str(fault)[:40]
    return "ok" if complete else "incomplete"


def plain_decode(data: bytes) -> None:
    try:
        msgpack.unpackb(data)
    except Exception:  # noqa: BLE001 - the plain decoder's verdict does not matter here
        pass


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Fastest and median of ``repeat`` runs, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3, statistics.median(times) * 1e3


def report(module: ModuleType, label: str, repeat: int) -> float:
    """Prints one line a shape; returns the worst fastest time (ms)."""
    print(f"{label}: replies up to {module.MAX_REPLY_BYTES} bytes, "
          f"{module.MAX_CONTAINER_ITEMS} items, strings {module.MAX_STRING_BYTES} bytes, "
          f"depth {module.MAX_DEPTH}")
    print(f"  {'shape':40} {'bytes':>6} {'reader ms':>10} {'median':>8} "
          f"{'plain ms':>9} {'ratio':>6}  outcome")
    worst = (0.0, "")
    for name, data in shapes(module):
        outcome = read_once(module, data)
        fast, median = timed(partial(read_once, module, data), repeat)
        plain, _ = timed(partial(plain_decode, data), repeat)
        print(f"  {name:40} {len(data):6} {fast:10.3f} {median:8.3f} {plain:9.3f} "
              f"{fast / plain:6.1f}  {outcome}")
        worst = max(worst, (fast, name))
    print(f"  worst: {worst[0]:.3f} ms ({worst[1]})")
    return worst[0]


def load_baseline(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("baseline_botproc", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and enums look their module up
    spec.loader.exec_module(module)
    return module


def largest_game_reply(seeds: int = 5) -> tuple[int, Any, str]:
    """The longest ``{"type": "action", "action": a, "decision": n}`` over the
    legal actions of random matches of every game: (bytes, action, game)."""
    from games import get_game, implemented_games

    best: tuple[int, Any, str] = (0, None, "")
    for slug in implemented_games():
        game_class = get_game(slug)
        for players in game_class.INFO.player_counts():
            for seed in range(seeds):
                game, rng, decision = game_class.new(players, seed), random.Random(seed), 0
                while not game.is_terminal() and decision < 5000:
                    legal = game.legal_actions()
                    for action in legal:
                        size = len(msgpack.packb(
                            {"type": "action", "action": action, "decision": decision}))
                        best = max(best, (size, action, slug), key=lambda found: found[0])
                    game.apply(rng.choice(legal))
                    decision += 1
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--baseline", type=Path, help="another botproc.py to time, with its caps")
    parser.add_argument("--games", action="store_true",
                        help="also measure the largest legitimate reply of every game")
    args = parser.parse_args(argv)
    report(botproc, "this reader", args.repeat)
    if args.baseline:
        report(load_baseline(args.baseline), f"baseline {args.baseline}", max(args.repeat // 10, 3))
    if args.games:
        size, action, slug = largest_game_reply()
        print(f"largest legitimate reply: {size} bytes ({slug}: action {action!r}), "
              f"{botproc.MAX_REPLY_BYTES // size}x under the cap")


if __name__ == "__main__":
    main()
