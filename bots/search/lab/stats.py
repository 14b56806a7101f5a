"""Duplicate-deal figures: a seat's pairwise results, their Elo, and 95%
intervals from a bootstrap over deals (a deal's matches move together).

A match yields the seat's result against each other player (team): 1 for
finishing ahead, 0.5 for a tie, 0 behind. The Elo difference is 400
log10(p / (1 - p)) of the mean pairwise result p. Where every pair went
one way the bootstrap has nothing to resample, and the interval is
one-sided instead (``one_sided_bound``). ``paired`` compares two runs on
the deals both played, where each deal's luck cancels.
"""

from __future__ import annotations

import math
import random
import statistics

from games import get_game


def units_of(slug: str, players: int) -> list[tuple[int, ...]]:
    teams = get_game(slug).INFO.teams(players)
    return [tuple(t) for t in teams] if teams else [(s,) for s in range(players)]


def pair_results(slug: str, players: int, ranks: list[int], hero: int) -> list[float]:
    """``hero``'s result against each other player (team): 1 ahead, 0.5 tied, 0 behind."""
    return [1.0 if ranks[hero] < ranks[u[0]] else 0.5 if ranks[hero] == ranks[u[0]] else 0.0
            for u in units_of(slug, players) if hero not in u]


def elo(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return 400 * math.log10(p / (1 - p))


def _by_deal(rows: list[dict]) -> dict[int, list[float]]:
    by_deal: dict[int, list[float]] = {}
    for row in rows:
        by_deal.setdefault(row["seed"], []).extend(row["pairs"])
    return by_deal


def one_sided_bound(deals: int, confidence: float = 0.975) -> float:
    """The least Elo consistent with every pair of every one of ``deals``
    deals won. A deal's share won lies in [0, 1] with mean p, so by
    Markov's inequality a deal is won whole with chance at most p, and all
    of them with at most p ** deals: below p = (1 - confidence) ** (1 /
    deals) such a sweep happens less than 1 - confidence of the time. It
    assumes nothing about how a deal's pairs move together."""
    return elo((1 - confidence) ** (1 / deals))


def _bootstrap_interval(by_deal: dict[int, list[float]], boot: int) -> tuple[float, float]:
    deals = sorted(by_deal)
    rng = random.Random(0)
    samples = []
    for _ in range(boot):
        pick = [by_deal[deals[rng.randrange(len(deals))]] for _ in deals]
        total = sum(len(x) for x in pick)
        samples.append(elo(sum(sum(x) for x in pick) / total))
    samples.sort()
    return samples[int(0.025 * boot)], samples[int(0.975 * boot) - 1]


def summarize(rows: list[dict], boot: int = 2000) -> dict:
    by_deal = _by_deal(rows)
    deals = sorted(by_deal)
    flat = [x for d in deals for x in by_deal[d]]
    p = sum(flat) / len(flat)
    lo: float | None
    hi: float | None
    if p == 1.0:
        lo, hi = one_sided_bound(len(deals)), None
    elif p == 0.0:
        lo, hi = None, -one_sided_bound(len(deals))
    else:
        lo, hi = _bootstrap_interval(by_deal, boot)
    times = [t for row in rows for t in row["times_ms"]]
    return {
        "matches": len(rows), "deals": len(deals), "pairs": len(flat), "p": p, "elo": elo(p),
        "lo": lo, "hi": hi,
        "mean_ms": statistics.mean(times) if times else 0.0,
        "max_ms": max(times) if times else 0.0,
        "searched_decisions": len(times),
        "deviation_rate": (sum(r.get("deviated", 0) for r in rows)
                           / max(1, sum(r.get("searched", 0) for r in rows))),
        "playouts_per_search": (sum(r.get("playouts", 0) for r in rows)
                                / max(1, sum(r.get("searched", 0) for r in rows))),
    }


def interval_text(summary: dict) -> str:
    if summary["hi"] is None:
        return f"[{summary['lo']:+.0f}, won all]"
    if summary["lo"] is None:
        return f"[lost all, {summary['hi']:+.0f}]"
    return f"[{summary['lo']:+.0f}, {summary['hi']:+.0f}]"


def paired(base: list[dict], new: list[dict], boot: int = 2000) -> dict:
    """Two runs compared on the deals both played: each run's Elo there and
    new minus base, with a 95% bootstrap interval over those deals (a deal's
    matches in both runs move together, so the deal's own luck cancels)."""
    a, b = _by_deal(base), _by_deal(new)
    deals = sorted(set(a) & set(b))
    if not deals:
        raise ValueError("the two runs share no deal")

    def run_elo(d: dict[int, list[float]], picked: list[int]) -> float:
        results = [x for deal in picked for x in d[deal]]
        return elo(sum(results) / len(results))

    rng = random.Random(0)
    samples = sorted(
        run_elo(b, pick) - run_elo(a, pick)
        for pick in ([deals[rng.randrange(len(deals))] for _ in deals] for _ in range(boot)))
    return {"deals": len(deals), "base": run_elo(a, deals), "new": run_elo(b, deals),
            "diff": run_elo(b, deals) - run_elo(a, deals),
            "lo": samples[int(0.025 * boot)], "hi": samples[int(0.975 * boot) - 1]}
