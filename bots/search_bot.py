"""The search bot: determinized Monte Carlo search over the heuristic, for
every game (``bots/search/``).

At each decision it samples full states consistent with its own observation
(``games.determinize``), plays each candidate move out in every sampled world
with the game's heuristic playing all seats, stops a playout at a round
boundary and scores it, and plays the move that beats its default move
clearly, else the default move (``bots.search.core``): the heuristic's, or
in all_aboard, tateyoko, tile_hunt and target a tuned variant of it that
beats the heuristic on its own. Each game's settings and parts live in
``bots.search.games.<slug>``; docs/search.md has the measurements.

Budget per decision, from the environment (the manifest's ``[env]``):

* ``SEARCH_ITERATIONS=N``: exactly N playouts (reproducible: the same match
  and seat give the same moves; the seed comes from match_id and seat);
* else ``SEARCH_MS`` (default 100) milliseconds, but never more than
  ``SEARCH_SHARE`` (default 0.25) of the decision's ``time_left_ms``, and
  less when the match's CPU-seconds limit comes near.

``SEARCH_OPPONENT_MODEL=0`` turns off the games' opponent models
(``GameConfig.refine``: kings_order and target deal the other hands to fit
how the heuristic would have played). They are on by default: they assume players
who play like the heuristic, and gain nothing against other searches.
"""

from __future__ import annotations

import os
import sys
import time
import zlib
from dataclasses import replace

from bots.heuristics import available, load
from bots.sdk import Bot, run
from bots.search.core import Budget, Searcher, config_for

# A playout started just before the deadline may run over it by this much.
SAFETY_S = 0.005


class SearchBot(Bot):
    name = "search"

    def __init__(self, iterations: int | None = None, ms: float | None = None,
                 share: float | None = None, log: bool = False,
                 overrides: dict | None = None) -> None:
        env = os.environ
        if iterations is None and env.get("SEARCH_ITERATIONS"):
            iterations = int(env["SEARCH_ITERATIONS"])
        self.iterations = iterations
        self.ms = float(env.get("SEARCH_MS", "100")) if ms is None else ms
        self.share = float(env.get("SEARCH_SHARE", "0.25")) if share is None else share
        self.log = log or env.get("SEARCH_LOG") == "1"
        self.opponent_model = env.get("SEARCH_OPPONENT_MODEL", "1") != "0"
        self.searcher: Searcher | None = None
        self.overrides = overrides or {}  # GameConfig fields, for experiments
        self.cpu_limit_s: float | None = None
        self.cpu_at_start = 0.0
        self.decision = 0
        self.times_ms: list[float] = []
        self.searched = 0  # decisions searched, and how often the search
        self.deviated = 0  # left the default move (both per match)
        self.playouts = 0
        for slug in available():  # imports (numpy tables...) before the handshake
            load(slug)

    def on_start(self, match: dict) -> None:
        seed = zlib.crc32(f"{match['match_id']}:{match['seat']}".encode())
        config = config_for(match["game"])
        if not self.opponent_model:
            config = replace(config, refine=None)
        if self.overrides:
            config = replace(config, **self.overrides)
        self.searcher = Searcher(match["game"], match["seat"], match["players"], seed, config)
        limits = match.get("limits") or {}
        self.cpu_limit_s = limits.get("cpu_s")
        self.cpu_at_start = time.process_time()
        self.decision = 0
        self.times_ms = []
        self.searched = 0
        self.deviated = 0
        self.playouts = 0

    def budget(self, time_left_ms: int) -> Budget:
        if self.iterations is not None:
            return Budget(iterations=self.iterations)
        seconds = min(self.ms, self.share * time_left_ms) / 1000.0
        if self.cpu_limit_s:
            # keep the match within half its CPU seconds whatever its length
            used = time.process_time() - self.cpu_at_start
            spare = 0.5 * self.cpu_limit_s - used
            if spare < 5.0:
                seconds = min(seconds, max(0.0, spare / 100.0))
        return Budget(seconds=max(0.0, seconds - SAFETY_S))

    def choose(self, obs: dict, legal: list, time_left_ms: int) -> int:
        assert self.searcher is not None, "act before start"
        started = time.perf_counter()
        budget = self.budget(time_left_ms)
        outcome = self.searcher.choose(obs, legal, budget)
        self.decision += 1
        elapsed = (time.perf_counter() - started) * 1000
        self.times_ms.append(elapsed)
        if outcome.searched:
            self.searched += 1
            self.deviated += outcome.index != outcome.heuristic
            self.playouts += outcome.iterations
        if self.log and outcome.searched:
            print(f"search {self.searcher.slug} #{self.decision}: {outcome.iterations} playouts, "
                  f"{outcome.worlds} worlds, {outcome.candidates} moves, played "
                  f"{outcome.index} (heuristic {outcome.heuristic}), {elapsed:.0f} ms",
                  file=sys.stderr)
        return outcome.index


if __name__ == "__main__":
    run(SearchBot())
