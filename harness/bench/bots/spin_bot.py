"""A benchmark bot that uses CPU: it spins for SPIN_MS milliseconds of its
own CPU time on every decision, then plays a uniformly random legal action.
With it, a league's speed is set by the bots' thinking, as in real leagues,
so workers can be compared against the cores they use."""

from __future__ import annotations

import os
import random
import time
import zlib

from bots.sdk import Bot, run


class SpinBot(Bot):
    name = "spin"

    def __init__(self) -> None:
        self.rng = random.Random(0)
        self.spin_s = float(os.environ.get("SPIN_MS", "2")) / 1000

    def on_start(self, match: dict) -> None:
        self.rng = random.Random(zlib.crc32(f"{match['match_id']}:{match['seat']}".encode()))

    def choose(self, obs: dict, legal: list, time_left_ms: int) -> int:
        until = time.process_time() + self.spin_s
        while time.process_time() < until:
            pass
        return self.rng.randrange(len(legal))


if __name__ == "__main__":
    run(SpinBot())
