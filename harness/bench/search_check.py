"""The search bot in real leagues at the default limits: every game, through
the harness (sandboxed bot processes, Ray, a SQLite file), against the
heuristic and the random bot. It shows what the in-process arena cannot:
that the search never times out or breaks a limit where users run it, and
how long its decisions take as the harness measures them (the deadline's
clock, pipes and a loaded machine included).

    python -m harness.bench.search_check --deals 2          # every game
    python -m harness.bench.search_check limit grazia --deals 4

Per game it prints the matches played, the faults per bot and kind, each
bot's mean and slowest decision, and the Elo of search over heuristic from
the league's own rating fit. Exit status 1 when the search faulted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from games import get_game, implemented_games
from harness.league import load_league
from harness.runner import run_league
from harness.stats.ratings import rating_fit
from harness.store import Store
from harness.web.report import fault_counts

BOTS = ("search", "heuristic", "random")


def league_file(folder: Path, slug: str, deals: int) -> Path:
    """Three players where the game allows (one table, every rotation), else
    the fewest; default limits (no [limits] table)."""
    info = get_game(slug).INFO
    players = 3 if info.min_players <= 3 <= info.max_players else info.min_players
    path = folder / f"search_{slug}.toml"
    path.write_text(f'name = "search_{slug}"\ngame = "{slug}"\nbots = {list(BOTS)!r}\n'
                    f"players = {players}\ndeals = {deals}\n".replace("'", '"'))
    return path


def check_game(folder: Path, slug: str, deals: int, workers: int | None) -> bool:
    league = load_league(str(league_file(folder, slug, deals)))
    store = Store(folder / f"{slug}.db")
    summary = run_league(league, store, workers=workers, concurrency=2)
    faults = fault_counts(store, league.name)
    think = store.think_times(league.name)
    fit = rating_fit(store.seat_tuples(league.name))
    ids = {name: league.bot_id(name) for name in BOTS}
    diff = fit.difference(ids["search"], ids["heuristic"])
    print(f"{slug} ({league.players}p): {summary.played} matches, harness errors {summary.errors}, "
          f"search - heuristic {diff.elo:+.0f} Elo [{diff.elo_low:+.0f}, {diff.elo_high:+.0f}]")
    for name in BOTS:
        moves, mean_ms, max_ms = think.get(ids[name], (0, 0.0, 0.0))
        kinds = {kind: n for (bot, kind), n in faults.items() if bot == ids[name]}
        print(f"  {name:10} {moves:6d} decisions, mean {mean_ms:6.1f} ms, slowest {max_ms:6.0f} ms, "
              f"faults {kinds or 'none'}")
    return not any(bot == ids["search"] for bot, _ in faults) and summary.errors == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="default: every game")
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--workers", type=int, help="default: the CPU count")
    args = parser.parse_args(argv)
    clean = True
    with tempfile.TemporaryDirectory(prefix="search-check-") as tmp:
        for slug in args.games or implemented_games():
            clean &= check_game(Path(tmp), slug, args.deals, args.workers)
    print("search: no faults at the default limits" if clean else "search: FAULTS, see above")
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
