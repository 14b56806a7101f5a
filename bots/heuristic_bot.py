"""The reference heuristic bot: one process, the right policy per game
(``bots/heuristics/<slug>.py``), chosen at the start of each match. Every
game's policy is imported before the bot answers ``hello``: the start-up
limit (15 s by default) covers imports, and an import left to the first
``start`` of a game was charged to its first decision, which timed out on
a busy machine.

``HEURISTIC_NOISE=p`` in the environment makes it play a random legal action
with probability p: a strictly weaker copy, for rating tests."""

from __future__ import annotations

import os
import random
import zlib

from bots.heuristics import Policy, available, load
from bots.sdk import Bot, run


class HeuristicBot(Bot):
    name = "heuristic"

    def __init__(self) -> None:
        self.policy: Policy | None = None
        self.rng = random.Random(0)
        self.noise = float(os.environ.get("HEURISTIC_NOISE", "0"))
        self.policies = {slug: load(slug) for slug in available()}  # before the hello

    def on_start(self, match: dict) -> None:
        self.policy = self.policies.get(match["game"]) or load(match["game"])
        self.rng = random.Random(zlib.crc32(f"{match['match_id']}:{match['seat']}".encode()))

    def choose(self, obs: dict, legal: list, time_left_ms: int) -> int:
        assert self.policy is not None, "act before start"
        if self.noise and self.rng.random() < self.noise:
            return self.rng.randrange(len(legal))
        return self.policy(obs, legal, self.rng)


if __name__ == "__main__":
    run(HeuristicBot())
