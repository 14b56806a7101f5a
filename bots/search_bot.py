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
  less when the match's CPU-seconds limit comes near;
* with a match clock or a bank (``act``'s clock fields, PROTOCOL.md
  "Clocks"), a share of them instead (``clock_budget_ms``): the clock left
  over the decisions it expects still to make, plus most of the increment;
  or, with a bank alone, the SEARCH_MS budget plus the bank's share. More on
  decisions with more legal moves; never closer to the hard deadline
  (``time_left_ms``) than a margin for the harness's overhead. Its own
  decisions per match it learns game by game, from the matches it played.

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
from games import get_game

# A playout started just before the deadline may run over it by this much.
SAFETY_S = 0.005
# Under a clock or bank: what is kept from the hard deadline for the harness's
# overhead (pipes, decoding, a loaded machine), the larger of the two
MARGIN_MS = 20.0
MARGIN_SHARE = 0.1
# Own decisions in a match, before one has ended: the search bot's against
# the heuristic at each game's fewest seats (the mean of seeds 1-3)
FIRST_GUESS_DECISIONS = {"limit": 39, "cat_in_the_box": 29, "tile_hunt": 24, "grazia": 33,
                         "target": 18, "all_aboard": 36, "tenos_square": 60, "twin_shoot": 78,
                         "tateyoko": 58, "kings_order": 43, "seven_peak": 23}
MIN_TO_GO = 5  # spend no more than a fifth of what is left (before the move weight)
INCREMENT_SHARE = 0.8  # of the increment, spent at once; the rest saved


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
        self.decision_ms = 1000
        self.lengths: dict[str, float] = {}  # own decisions per match, by game (a running mean)
        # Every game's modules before the hello (the start-up limit covers them):
        # imported at a game's first start they were charged to its first decision.
        for slug in available():
            load(slug)
            config_for(slug)
            get_game(slug)

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
        self.decision_ms = limits.get("decision_ms") or 1000
        self.cpu_at_start = time.process_time()
        self.decision = 0
        self.times_ms = []
        self.searched = 0
        self.deviated = 0
        self.playouts = 0

    def on_end(self, result: dict) -> None:
        if self.searcher is not None and self.decision:
            slug = self.searcher.slug
            known = self.lengths.get(slug)
            self.lengths[slug] = self.decision if known is None else 0.7 * known + 0.3 * self.decision

    def clock_budget_ms(self, time_left_ms: int, choices: int) -> float:
        """This decision's share of the clock, or of the bank (module docstring)."""
        clock = self.clock
        slug = self.searcher.slug if self.searcher else ""
        expected = self.lengths.get(slug) or FIRST_GUESS_DECISIONS.get(slug, 40)
        to_go = max(MIN_TO_GO, expected - self.decision)
        if clock["clock_ms"] is not None:
            target = clock["clock_ms"] / to_go + INCREMENT_SHARE * clock["increment_ms"]
        else:
            target = min(self.ms, self.share * self.decision_ms) + clock["bank_ms"] / to_go
        target *= min(2.0, max(0.5, (choices / 4) ** 0.5))  # more moves, more to compare
        hard = time_left_ms - max(MARGIN_MS, MARGIN_SHARE * time_left_ms)
        return max(0.0, min(target, hard))

    def budget(self, time_left_ms: int, choices: int = 2) -> Budget:
        if self.iterations is not None:
            return Budget(iterations=self.iterations)
        if self.clock["clock_ms"] is not None or self.clock["bank_ms"]:
            seconds = self.clock_budget_ms(time_left_ms, choices) / 1000.0
        else:
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
        budget = self.budget(time_left_ms, len(legal))
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
