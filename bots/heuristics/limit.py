"""limit heuristic: aim for the exact hit, otherwise add cards while the
basket stays safely below the limit, assuming the others add about as much."""

from __future__ import annotations

import random


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    limit = obs["limit"][0]
    in_basket = sum(value for _, value in obs["basket"])
    room = limit - in_basket
    cards = [a for a in legal if a != 0]
    if room in cards:
        return legal.index(room)  # exact hit takes both prizes
    seat = obs["seat"]
    others_left = sum(
        sum(v for v in hand if v not in blocked)
        for s, (hand, blocked) in enumerate(zip(obs["hands"], obs["blocked"]))
        if s != seat
    )
    # Others will likely add part of their cards: keep a margin for it.
    margin = min(room - 1, others_left // 6)
    safe = [c for c in cards if c <= room - margin]
    if safe:
        mine = sum(v for s, v in obs["basket"] if s == seat)
        leader = max(
            (sum(v for s, v in obs["basket"] if s == other) for other in range(obs["num_players"])),
            default=0,
        )
        if mine <= leader or rng.random() < 0.5:
            return legal.index(max(safe))
    return legal.index(0)
