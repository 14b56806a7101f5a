"""Rollout policies: how every seat plays inside a search's playouts.

A rollout policy is ``policy(state, seat, legal, rng) -> index`` on a full
engine state (a determinization). The default wraps the game's heuristic
(``bots/heuristics/<slug>.py``): it builds the acting seat's observation and
passes it, with the legal actions, through msgpack exactly as a bot process
would receive them, so the heuristic sees only that seat's view even inside
a sampled world. ``random`` plays uniformly.

The fast versions (``bots.search.fast``) read the state directly and pick
the heuristics' moves; tile_hunt's, for instance, vectorizes and memoizes
the heuristic's dice DP (about 3 ms a roll otherwise).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import msgpack

from bots.heuristics import load

RolloutPolicy = Callable[[Any, int, list, random.Random], int]

_pack = msgpack.Packer(use_bin_type=True)


def _wire(value: Any) -> Any:
    return msgpack.unpackb(_pack.pack(value), raw=False, strict_map_key=False)


def heuristic_rollout(slug: str) -> RolloutPolicy:
    """The heuristic's moves: its fast state-reading version where there is
    one (``bots.search.fast``), else the heuristic on the wire observation."""
    from bots.search.fast import FAST

    if slug in FAST:
        return FAST[slug]
    return wire_heuristic_rollout(slug)


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
    "heuristic": heuristic_rollout,
    "wire": wire_heuristic_rollout,
    "random": random_rollout,
}


def make_policy(kind: str, slug: str) -> RolloutPolicy:
    return POLICIES[kind](slug)
