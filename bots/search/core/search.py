"""Determinized Monte Carlo search over one decision, with a default move.

Each iteration is one playout: a world (a full state sampled from the seat's
observation by ``games.determinize``, dealt again by the game's opponent
model where it has one), one candidate applied, then every seat plays the
rollout policy (``core.policies``) until the playout stops, and the result
is scored for the seat's player or team (``core.config``).

Candidates: every legal move, or with more than ``max_candidates`` the
default move and those the game's prior rates best. Every candidate still
in the race is played in the same world with the same rollout seed
(common random numbers): they are compared on paired results, and the
noise of the hidden cards mostly cancels. From ``min_worlds`` on, a
candidate behind the leader by ``z_prune`` standard errors (Student's t
for the few worlds seen) leaves the race. At the end the leader is played
only if it beats the default move by ``z_final`` standard errors, raised
for the number of rivals (Bonferroni: the best of several noisy estimates
looks better than it is); a search that cannot tell the moves apart plays
the default move: the heuristic's, or the game's tuned one
(``GameConfig.base``).

A game may search some steps its own way (``GameConfig.turn_search``:
tile_hunt's final round).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from bots.heuristics import load
from bots.search.core.config import GameConfig, config_for
from bots.search.core.policies import make_policy
from games import get_game
from games.determinize import from_observation


class Budget:
    """Iterations (playouts) or wall-clock time, whichever is given."""

    def __init__(self, iterations: int | None = None, seconds: float | None = None) -> None:
        self.iterations = iterations
        self.deadline = None if seconds is None else time.perf_counter() + seconds
        self.used = 0

    def spend(self, playouts: int = 1) -> None:
        self.used += playouts

    def exhausted(self) -> bool:
        if self.iterations is not None and self.used >= self.iterations:
            return True
        return self.deadline is not None and time.perf_counter() >= self.deadline


@dataclass
class Outcome:
    index: int
    heuristic: int
    iterations: int = 0
    worlds: int = 0
    candidates: int = 0
    searched: bool = False
    means: dict[int, float] = field(default_factory=dict)


def _logistic(x: float) -> float:
    if x < -30:
        return 0.0
    if x > 30:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


def corrected_z(z: float, rivals: int) -> float:
    """The bar ``z`` raised for the best of ``rivals`` moves (Bonferroni):
    the best of many noisy estimates looks better than it is."""
    if rivals <= 1:
        return z
    tail = (1.0 - NormalDist().cdf(z)) / rivals
    return NormalDist().inv_cdf(1.0 - tail)


def t_quantile(z: float, df: int) -> float:
    """Student's t quantile for the normal quantile ``z`` (Cornish-Fisher):
    with few worlds, standard errors are unsure and the bar rises."""
    if df <= 0:
        return float("inf")
    z3, z5 = z ** 3, z ** 5
    return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df)


def _paired(a: dict[int, float], b: dict[int, float]) -> tuple[float, float, int]:
    """Mean and standard error of a - b over the worlds both were played in."""
    common = [w for w in a if w in b]
    k = len(common)
    if k == 0:
        return 0.0, float("inf"), 0
    diffs = [a[w] - b[w] for w in common]
    mean = sum(diffs) / k
    if k < 2:
        return mean, float("inf"), k
    var = sum((d - mean) ** 2 for d in diffs) / (k - 1)
    return mean, math.sqrt(var / k), k


class Searcher:
    """The search for one seat of one match."""

    def __init__(self, slug: str, seat: int, num_players: int, seed: int,
                 config: GameConfig | None = None) -> None:
        self.slug = slug
        self.seat = seat
        self.num_players = num_players
        self.config = config or config_for(slug)
        self.heuristic = self.config.base or load(slug)
        self.policy = make_policy(self.config.policy, slug, self.config.rollout)
        self.prior = self.config.prior
        self.rng = random.Random(seed)
        teams = get_game(slug).INFO.teams(num_players)
        units = [tuple(t) for t in teams] if teams else [(s,) for s in range(num_players)]
        self.my_unit = next(u for u in units if seat in u)
        self.opponents = [u[0] for u in units if u != self.my_unit]
        self.cap = get_game(slug).INFO.max_decisions
        self.turn_search = self.config.turn_search(self) if self.config.turn_search else None
        self.refine = self.config.refine() if self.config.refine else None
        # where the searched worlds come from: (slug, obs, seed, decisions) ->
        # a state; the arena's --oracle probe (bots.search.lab) swaps in the true state
        self.worlds = from_observation

    # ---- scoring a playout ------------------------------------------------
    def value(self, state: Any) -> float:
        me = self.seat
        if state.is_terminal() or state.decisions >= self.cap:
            ranks = state.standings()
            mine = ranks[me]
            return sum(1.0 if mine < ranks[o] else 0.5 if mine == ranks[o] else 0.0
                       for o in self.opponents) / len(self.opponents)
        estimate = self.config.estimate
        scores = estimate(state) if estimate is not None else state.scores()
        left = max(self.config.remaining(state), 0.25)
        scale = 1.7 / (self.config.sigma * math.sqrt(left))
        return sum(_logistic((scores[me] - scores[o]) * scale)
                   for o in self.opponents) / len(self.opponents)

    def playout(self, state: Any, rng: random.Random, depth: int | None = None) -> float:
        """Plays ``state`` on with the rollout policy until the match ends or
        ``depth`` (default: the config's) round boundaries have passed, and
        scores it."""
        cfg = self.config
        policy = self.policy
        cap = self.cap
        fast = cfg.fast_playout if cfg.policy == "heuristic" else None
        hero = self.seat if cfg.playout_base else -1
        if cfg.round_of is None:
            if fast is not None:
                fast(state, rng, hero)
            while not state.is_terminal() and state.decisions < cap:
                legal = state.legal_actions()
                index = 0 if len(legal) == 1 else policy(state, state.current_player(), legal, rng)
                state.apply_unchecked(legal[index])
            return self.value(state)
        round_of = cfg.round_of
        stop = round_of(state) + (cfg.depth if depth is None else depth)
        while not state.is_terminal() and state.decisions < cap and round_of(state) < stop:
            if fast is not None:
                before = state.decisions
                fast(state, rng, hero)
                if state.decisions != before:
                    continue  # else it stopped short of the cap: step on
            legal = state.legal_actions()
            index = 0 if len(legal) == 1 else policy(state, state.current_player(), legal, rng)
            state.apply_unchecked(legal[index])
        return self.value(state)

    # ---- one decision --------------------------------------------------------
    def choose(self, obs: dict, legal: list, budget: Budget, decisions: int = 0) -> Outcome:
        if len(legal) == 1:
            return Outcome(0, 0)
        heuristic = self.heuristic(obs, legal, self.rng)
        cfg = self.config
        if cfg.search_step is not None and not cfg.search_step(obs):
            return Outcome(heuristic, heuristic)
        if self.turn_search is not None and cfg.turn_step is not None and cfg.turn_step(obs):
            index, playouts, worlds = self.turn_search.choose(obs, legal, budget, decisions,
                                                              heuristic)
            return Outcome(index, heuristic, playouts, worlds, len(legal), True)
        base_seed = self.rng.getrandbits(48)
        alive = list(range(len(legal)))
        if len(alive) > cfg.max_candidates and self.prior is not None:
            # the prior's ratings read only this seat's view: any world will do
            world = from_observation(self.slug, obs, base_seed - 1, decisions)
            actions = world.legal_actions()
            if len(actions) == len(legal):
                values = self.prior(world, self.seat, actions)
                alive.sort(key=lambda a: -values[a])
                alive = alive[:cfg.max_candidates]
                if heuristic not in alive:
                    alive[-1] = heuristic
        # the default move first: it is played in every world that starts
        alive.remove(heuristic)
        alive.insert(0, heuristic)
        results: dict[int, dict[int, float]] = {a: {} for a in alive}
        candidates = len(alive)
        worlds = 0
        while not budget.exhausted() and len(alive) > 1:
            world = self.worlds(self.slug, obs, base_seed + worlds, decisions)
            if self.refine is not None:
                self.refine(world, obs, random.Random(~(base_seed + worlds)))
            actions = world.legal_actions()
            if len(actions) != len(legal):  # never expected: the world is inconsistent
                worlds += 1
                continue
            rollout_seed = self.rng.getrandbits(32)
            for a in alive:
                if budget.exhausted():
                    break
                state = world.clone()
                state.apply_unchecked(actions[a])
                results[a][worlds] = self.playout(state, random.Random(rollout_seed))
                budget.spend()
            worlds += 1
            if worlds >= cfg.min_worlds:
                alive = self._prune(alive, results)
        outcome = Outcome(heuristic, heuristic, budget.used, worlds, candidates, True)
        outcome.means = {a: sum(r.values()) / len(r) for a, r in results.items() if r}
        if len(alive) == 1:
            outcome.index = alive[0]
            return outcome
        leader = self._leader(alive, results)
        if leader != heuristic and heuristic in alive:
            mean, se, k = _paired(results[leader], results[heuristic])
            z = corrected_z(cfg.z_final, len(alive) - 1)
            if k < cfg.min_worlds or mean <= t_quantile(z, k - 1) * se or mean <= 0:
                leader = heuristic
        outcome.index = leader
        return outcome

    def _leader(self, alive: list[int], results: dict[int, dict[int, float]]) -> int:
        def mean(a: int) -> float:
            r = results[a]
            return sum(r.values()) / len(r) if r else -1.0
        return max(alive, key=mean)

    def _prune(self, alive: list[int], results: dict[int, dict[int, float]]) -> list[int]:
        leader = self._leader(alive, results)
        z = self.config.z_prune
        kept = []
        for a in alive:
            if a == leader:
                kept.append(a)
                continue
            mean, se, k = _paired(results[leader], results[a])
            if k >= self.config.min_worlds and mean > t_quantile(z, k - 1) * se and mean > 0:
                continue
            kept.append(a)
        return kept
