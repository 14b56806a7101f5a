"""A game's tuned default move (``GameConfig.base``) against the heuristic
at every other seat, on duplicate deals, in process:

    python -m bots.search.lab.tuning GAME [--players 4] [--deals 1000] [--first-deal 0]

Each deal is played once from every seat; every observation goes through
msgpack, as a bot process receives it. The figures are the arena's
(``stats.py``): the Elo of the mean pairwise result, with a 95% bootstrap
interval over deals. How each default move was tuned: docs/search.md.
"""

from __future__ import annotations

import argparse
import random
import time
import zlib

from bots.heuristics import load
from bots.local_match import play_match
from bots.search.core import config_for
from bots.search.games.tile_hunt import evaluate as tile_hunt_evaluate
from bots.search.lab.stats import interval_text, pair_results, summarize
from games import get_game, implemented_games


def tuned_games() -> list[str]:
    """The games whose search has a default move of its own."""
    return [slug for slug in implemented_games() if config_for(slug).base is not None]


def _match(slug: str, players: int, seed: int, seat: int) -> dict:
    """One match: the tuned move at ``seat``, the heuristic elsewhere."""
    movers = [load(slug)] * players
    base = config_for(slug).base
    assert base is not None
    movers[seat] = base
    rngs = [random.Random(zlib.crc32(f"tuned:{seed}:{s}".encode())) for s in range(players)]
    game = play_match(get_game(slug).new(players, seed), movers, rngs, forced=False,
                      checked=False)
    return {"game": slug, "seed": seed, "hero": [seat],
            "pairs": pair_results(slug, players, game.standings(), seat), "times_ms": []}


def compare(slug: str, players: int = 4, deals: int = 200, first_deal: int = 0) -> dict:
    """The tuned move against the heuristic in every other seat, on
    duplicate deals (``summarize``'s figures)."""
    if config_for(slug).base is None:
        raise KeyError(f"no tuned move for {slug!r}; have: {', '.join(tuned_games())}")
    rows = [_match(slug, players, 20_000 + deal, seat)
            for deal in range(first_deal, first_deal + deals) for seat in range(players)]
    return summarize(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description="the search's tuned default move against the "
                                                 "heuristic, duplicate deals, in process")
    parser.add_argument("game", choices=sorted(tuned_games()))
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--first-deal", type=int, default=0)
    parser.add_argument("--no-followers", action="store_true",
                        help="tile_hunt: value the late phase's ends right after the take, not "
                             "after the followers' turns (the default before Dec 4)")
    args = parser.parse_args()
    if args.no_followers:
        tile_hunt_evaluate.FOLLOWERS = False
    started = time.time()
    result = compare(args.game, args.players, args.deals, args.first_deal)
    print(f"{args.game} {args.players}p tuned move vs heuristic: {result['deals']} deals "
          f"({args.first_deal}-{args.first_deal + args.deals - 1}), p={result['p']:.3f}, "
          f"Elo {result['elo']:+.0f} {interval_text(result)}, "
          f"{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
