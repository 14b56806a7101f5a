"""What the fast-path tests (tests/test_<game>_fast_path.py) share: positions
to start a fast playout from, the state compared, and the check that a
copy of an engine's observation equals the engine's own.

The search's fast paths read engine states directly and keep copies of
engine rules (bots/search/games/): each copy names the engine rules
version it mirrors, and these tests hold it to the engine from many deals
at every player count."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from games.playthrough import wire

SEEDS = range(30)


def fields(state: Any, caches: tuple[str, ...] = ("rng", "events")) -> dict:
    """The state's fields, its caches and rng left out (compared apart)."""
    return {k: v for k, v in state.__dict__.items() if k not in caches}


def positions(game: Any, policy: Callable[..., int], stops: list[int],
              rng: random.Random) -> Iterator[Any]:
    """Clones of ``game`` as it reaches each decision count in ``stops``
    (ascending), along a match of ``policy`` (state, seat, legal, rng) with
    random moves mixed in (half of them)."""
    stops = list(stops)
    while not game.is_terminal() and stops:
        if game.decisions == stops[0]:
            stops.pop(0)
            yield game.clone()
        legal = game.legal_actions()
        if rng.random() < 0.5:
            index = rng.randrange(len(legal))
        else:
            index = policy(game, game.current_player(), legal, rng)
        game.apply_unchecked(legal[index])


def check_observation_copy(game: Any, copy: Callable[[Any, int], dict],
                           policy: Callable[..., int], rng: random.Random, every: int,
                           limit: int) -> int:
    """Plays ``game`` (``policy`` with random moves mixed in, a third of
    them) for at most ``limit`` decisions and, every ``every`` decisions,
    checks that ``copy(state, seat)`` equals the keys it copies of the
    engine's observation for the seat to act, both through msgpack as a
    heuristic reads them. The number of checks."""
    checked = 0
    while not game.is_terminal() and game.decisions < limit:
        seat, legal = game.current_player(), game.legal_actions()
        if game.decisions % every == 0:
            copied = wire(copy(game, seat))
            engine = wire(game.observation(seat))
            assert copied == {key: engine[key] for key in copied}, game.decisions
            checked += 1
        index = rng.randrange(len(legal)) if rng.random() < 0.3 else \
            policy(game, seat, legal, rng)
        game.apply_unchecked(legal[index])
    return checked
