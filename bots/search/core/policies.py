"""Rollout policies: how every seat plays inside a search's playouts.

A rollout policy is ``policy(state, seat, legal, rng) -> index`` on a full
engine state (a determinization). "heuristic" plays the game's heuristic:
its fast state-reading version where the game has one
(``GameConfig.rollout``), else "wire": the heuristic itself, given the
seat's observation and the legal actions through msgpack exactly as a bot
process receives them, so it sees only that seat's view even inside a
sampled world. "random" plays uniformly.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import msgpack

from bots.heuristics import load

RolloutPolicy = Callable[[Any, int, list, random.Random], int]
# prior(state, seat, legal) -> a rating per legal move, higher is better
Prior = Callable[[Any, int, list], list[float]]

_pack = msgpack.Packer(use_bin_type=True)


def _wire(value: Any) -> Any:
    return msgpack.unpackb(_pack.pack(value), raw=False, strict_map_key=False)


def wire_heuristic_rollout(slug: str) -> RolloutPolicy:
    choose = load(slug)

    def policy(state, seat: int, legal: list, rng: random.Random) -> int:
        obs, wire_legal = _wire([state.observation(seat), legal])
        return choose(obs, wire_legal, rng)

    return policy


def random_rollout(slug: str) -> RolloutPolicy:
    def policy(state, seat: int, legal: list, rng: random.Random) -> int:
        return rng.randrange(len(legal))

    return policy


POLICIES: dict[str, Callable[[str], RolloutPolicy]] = {
    "heuristic": wire_heuristic_rollout,
    "wire": wire_heuristic_rollout,
    "random": random_rollout,
}


def make_policy(kind: str, slug: str, fast: RolloutPolicy | None = None) -> RolloutPolicy:
    """The rollout policy ``kind`` for ``slug``; ``fast``: the game's
    state-reading heuristic, which "heuristic" plays where given."""
    if kind == "heuristic" and fast is not None:
        return fast
    return POLICIES[kind](slug)
