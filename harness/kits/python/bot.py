"""{{name}}: a card-league bot in Python (written by `league new`).

It plays every game legally with the simplest rule that is not always the
same move: a random legal action, from a random generator seeded per match
(the same match, the same moves: a fault replays exactly). Make it play
well in ``choose``: ``obs`` is what this seat may know now, ``legal`` the
actions it may take; the game pages in games/ say what each holds.

The SDK (``league_sdk``) speaks the protocol: it comes with the harness,
so there is nothing to copy. Whatever you print to stderr is your debug log.
"""

from __future__ import annotations

import random
import sys
import zlib
from typing import Any

from league_sdk import Bot, run


class MyBot(Bot):
    name = "{{name}}"

    def __init__(self) -> None:
        self.rng = random.Random(0)
        self.game = ""

    def on_start(self, match: dict[str, Any]) -> None:
        """A match begins: game, seat, players, teams, limits."""
        self.game = match["game"]
        self.rng = random.Random(zlib.crc32(f"{match['match_id']}:{match['seat']}".encode()))

    def choose(self, obs: dict[str, Any], legal: list[Any], time_left_ms: int) -> int:
        """The index of the chosen action in ``legal`` (never empty)."""
        if len(legal) == 1:
            return 0  # a forced move: nothing to think about
        return self.rng.randrange(len(legal))

    def on_end(self, result: dict[str, Any]) -> None:
        """The match is over: scores and ranks (1 is best) per seat."""
        print(f"{self.game}: ranks {result['ranks']}", file=sys.stderr)


if __name__ == "__main__":
    run(MyBot())
