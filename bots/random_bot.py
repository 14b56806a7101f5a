"""The reference random bot: a uniformly random legal action, seeded per
match so its play is reproducible."""

from __future__ import annotations

import random
import zlib

from bots.sdk import Bot, run


class RandomBot(Bot):
    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def on_start(self, match: dict) -> None:
        self.rng = random.Random(zlib.crc32(f"{match['match_id']}:{match['seat']}".encode()))

    def choose(self, obs: dict, legal: list, time_left_ms: int) -> int:
        return self.rng.randrange(len(legal))


if __name__ == "__main__":
    run(RandomBot())
