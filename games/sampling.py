"""Helpers for ``Game.from_observation``: dealing the cards a seat has not
seen into the places hidden from it.

Every engine's ``from_observation`` (see ``games.base``) works out the
unseen cards (the deck less everything the observation shows: :func:`minus`,
:func:`unseen`), checks that they fill the hidden places (:func:`fit`),
shuffles them with its sampling generator and deals them out (:func:`take`,
or :func:`deal_constrained` where play has shown what a hand cannot hold).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["take", "minus", "unseen", "fit", "deal_constrained", "Slot"]

# (key, size, accepts card or None): one hidden place for deal_constrained
Slot = tuple[Any, int, "Callable[[int], bool] | None"]


def take(pool: list, k: int) -> list:
    """The last ``k`` cards of ``pool`` (removed)."""
    if k == 0:
        return []
    part = pool[-k:]
    del pool[-k:]
    return part


def minus(universe: Sequence[int], *known: Sequence[int]) -> list[int]:
    """``universe`` less every card in ``known`` (multisets), ascending."""
    left = Counter(universe)
    for cards in known:
        left.subtract(cards)
    if any(v < 0 for v in left.values()):
        raise ValueError("the observation shows a card more often than the deck holds it")
    return sorted(left.elements())


def unseen(universe: Sequence[int], known: Sequence[int], over: bool) -> list[int]:
    """:func:`minus`, except that once the match is ``over`` an impossible
    count gives no cards rather than an error (see :func:`fit`)."""
    try:
        return minus(universe, known)
    except ValueError:
        if over:
            return []
        raise


def fit(pool: list, needed: int, slug: str, over: bool = False) -> None:
    """Check that the unseen cards fill the hidden places exactly. Once the
    match is over the hidden places no longer matter (a finished round keeps
    no record of where its cards went): pad or cut with stand-ins."""
    if len(pool) == needed:
        return
    if not over:
        raise ValueError(f"{slug}: {len(pool)} unseen cards for {needed} hidden places")
    filler = pool[0] if pool else 0
    del pool[needed:]
    pool.extend([filler] * (needed - len(pool)))


def deal_constrained(pool: list[int], slots: list[Slot], rng: random.Random) -> dict[Any, list[int]]:
    """Deal ``pool`` (shuffled) into slots (key, size, accepts card or None),
    the most constrained first, each at random among the cards it accepts;
    a slot that cannot be filled takes any cards (its constraint dropped:
    the constraints should never conflict, and a sample beats a failure)."""
    left = list(pool)
    rng.shuffle(left)

    def room(slot: Slot) -> float:
        key, size, accepts = slot
        if accepts is None:
            return float("inf")
        return sum(1 for c in left if accepts(c)) - size

    result: dict[Any, list[int]] = {}
    pending = list(slots)
    while pending:
        pending.sort(key=room)
        key, size, accepts = pending.pop(0)
        if accepts is not None:
            fitting = [i for i, c in enumerate(left) if accepts(c)]
            if len(fitting) < size:
                fitting = list(range(len(left)))
        else:
            fitting = list(range(len(left)))
        chosen = set(rng.sample(fitting, size)) if size else set()
        result[key] = [left[i] for i in sorted(chosen)]
        left = [c for i, c in enumerate(left) if i not in chosen]
    return result
