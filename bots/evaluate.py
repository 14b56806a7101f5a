"""In-process policy evaluation: play policies against each other without
subprocesses (``bots.local_match``), with every observation passed through
msgpack exactly as a bot process would receive it. Used by tests and to
report a heuristic's win rate against random play (docs/GAME_AUTHORING.md).

    python -m bots.evaluate limit --players 4 --matches 200
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass

from bots.heuristics import Policy, load
from bots.local_match import play_match
from games import get_game


def random_policy(obs: dict, legal: list, rng: random.Random) -> int:
    return rng.randrange(len(legal))


def play(slug: str, policies: Sequence[Policy], seed: int) -> list[int]:
    """One match, one policy per seat; returns standings (1 = best)."""
    game = get_game(slug).new(len(policies), seed)
    rngs = [random.Random(seed * 1000 + seat) for seat in range(len(policies))]
    return play_match(game, policies, rngs).standings()


@dataclass
class Comparison:
    matches: int
    hero_wins: float  # rank-1 finishes, shared ties split
    expected_random: float  # what a random seat would win on average

    @property
    def win_rate(self) -> float:
        return self.hero_wins / self.matches


def compare(slug: str, num_players: int, hero: Policy, matches: int, seed: int = 0) -> Comparison:
    """The hero in one seat (rotating) against random policies in the others.
    A win is a first place, shared ties split; in team games a first place of
    the hero's team (with a random partner), split among the winning teams."""
    units = get_game(slug).INFO.teams(num_players) or [(s,) for s in range(num_players)]
    wins = 0.0
    for match in range(matches):
        hero_seat = match % num_players
        policies: list[Policy] = [random_policy] * num_players
        policies[hero_seat] = hero
        standings = play(slug, policies, seed + match)
        if standings[hero_seat] == 1:
            wins += 1 / sum(1 for unit in units if standings[unit[0]] == 1)
    return Comparison(matches, wins, matches / len(units))


def main() -> None:
    parser = argparse.ArgumentParser(description="heuristic vs random win rate")
    parser.add_argument("game")
    parser.add_argument("--players", type=int)
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    info = get_game(args.game).INFO
    counts = [args.players] if args.players else list(info.player_counts())
    for n in counts:
        result = compare(args.game, n, load(args.game), args.matches, args.seed)
        who = "heuristic's team" if info.teams(n) else "heuristic"
        print(
            f"{args.game} {n}p: {who} wins {result.win_rate:.1%} of {result.matches} "
            f"matches (random play: {result.expected_random / result.matches:.1%})"
        )


if __name__ == "__main__":
    main()
