"""In-process duplicate-deal evaluation of the search bot against the
heuristic (or random), with every observation passed through msgpack as a
bot process would receive it.

    python -m bots.search.lab.arena limit --deals 20 --iterations 200
    python -m bots.search.lab.arena target --deals 10 --ms 100 --workers 2 --out /tmp/target.jsonl
    python -m bots.search.lab.arena target --paired /tmp/old.jsonl /tmp/new.jsonl

Each deal is played once per player (team) position: the search takes that
position (in team games both seats, as two independent bots: partners are
copies), the heuristic every other seat; so every deal is played from every
side. A match yields the search's pairwise results against each other
player (team), and the figures are the Elo of their mean with a 95%
bootstrap interval over deals (``stats.py``).
The search's decision times (wall clock, including the determinizations)
are reported as mean and max over its searched decisions.

``--oracle`` is a probe, not a bot anyone could run: the search's worlds
are the true state, with the other hands as they are and only what nobody
has seen shuffled again (``ORACLE_UNSEEN``). Against a plain run on the
same deals it measures what the hidden hands are worth to the search.

``--paired BASE NEW`` compares two runs' files (``--out``) on the deals
both played: the difference of their Elo with a bootstrap interval over
those deals, far tighter than the two runs' own intervals since a deal's
luck is shared. The search's own randomness still differs between runs: a
timed search decides differently on the same deal from one run to the next.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

from bots.evaluate import random_policy
from bots.heuristics import load
from bots.local_match import Mover, play_match
from bots.search.lab.stats import interval_text, pair_results, paired, summarize, units_of
from bots.search_bot import SearchBot
from games import get_game


def _shuffle_deck_and_certificates(state, rng: random.Random) -> None:
    pool = list(state.deck) + [c for certs in state.certs for c in certs]
    rng.shuffle(pool)
    for seat, certs in enumerate(state.certs):
        state.certs[seat], pool = pool[:len(certs)], pool[len(certs):]
    state.deck = pool


def _shuffle_deck(state, rng: random.Random) -> None:
    rng.shuffle(state.deck)


# per game, how the --oracle probe shuffles what no player has seen
ORACLE_UNSEEN = {
    "all_aboard": _shuffle_deck_and_certificates,
    "tateyoko": _shuffle_deck,
    "kings_order": lambda state, rng: None,  # the set-aside cards never come into play
    "target": _shuffle_deck,  # face-down discards have owners
}


def oracle_worlds(game):
    """The --oracle probe's world source: the true ``game`` as it stands."""
    reshuffle = ORACLE_UNSEEN.get(game.INFO.slug)
    if reshuffle is None:
        raise SystemExit(f"--oracle: no probe for {game.INFO.slug} "
                         f"(one of {', '.join(sorted(ORACLE_UNSEEN))})")

    def world(slug: str, obs: dict, seed: int, decisions: int):
        state = game.clone()
        reshuffle(state, random.Random(seed))
        return state
    return world


def play(slug: str, players: int, seed: int, hero_seats: tuple[int, ...], opponent: str,
         iterations: int | None, ms: float | None, overrides: dict | None = None,
         tag: str = "", oracle: bool = False) -> dict:
    """One match: the search in ``hero_seats``, ``opponent`` elsewhere
    (``oracle``: searching the true state, see ``--oracle``)."""
    game = get_game(slug).new(players, seed)
    match_id = f"arena:{slug}:{players}:{seed}:{hero_seats}:{tag}"
    bots: dict[int, SearchBot] = {}
    rngs = [random.Random(zlib.crc32(f"{match_id}:{s}".encode())) for s in range(players)]
    teams = get_game(slug).INFO.teams(players)
    for seat in hero_seats:
        bot = SearchBot(iterations=iterations, ms=ms, share=1.0, overrides=overrides)
        bot.on_start({"match_id": match_id, "game": slug, "seat": seat, "players": players,
                      "teams": [list(t) for t in teams] if teams else None,
                      "limits": {"decision_ms": 1000, "cpu_s": None}})
        if oracle:
            assert bot.searcher is not None
            bot.searcher.worlds = oracle_worlds(game)
            bot.searcher.refine = None  # the true hands need no refining
        bots[seat] = bot
    times: list[float] = []

    def searching(bot: SearchBot) -> Mover:
        def mover(obs: dict, legal: list, rng: random.Random) -> int:
            started = time.perf_counter()
            index = bot.choose(obs, legal, 1000)
            if len(legal) > 1:
                times.append((time.perf_counter() - started) * 1000)
            return index
        return mover

    other = random_policy if opponent == "random" else load(slug)
    play_match(game, [searching(bots[s]) if s in bots else other for s in range(players)], rngs)
    ranks = game.standings()
    hero = hero_seats[0]
    searched = sum(b.searched for b in bots.values())
    deviated = sum(b.deviated for b in bots.values())
    playouts = sum(b.playouts for b in bots.values())
    pairs = pair_results(slug, players, ranks, hero)
    return {"game": slug, "players": players, "seed": seed, "hero": list(hero_seats),
            "opponent": opponent, "pairs": pairs, "scores": list(game.scores()),
            "ranks": ranks, "times_ms": times, "decisions": game.decisions,
            "searched": searched, "deviated": deviated, "playouts": playouts}


@dataclass(frozen=True)
class StepTest:
    """A step test (``GameConfig.search_step``, ``turn_step``) given on the
    command line, picklable for the worker processes: true where the
    observation's ``field`` is (``wanted`` None) or is the text ``wanted``;
    always true with no field."""

    field: str
    wanted: str | None

    def __call__(self, obs: dict) -> bool:
        if not self.field:
            return True
        value = obs[self.field]
        return bool(value) if self.wanted is None else str(value) == self.wanted


def _task(args):
    return play(*args)


def _read_rows(paths: list[Path], game: str) -> list[dict]:
    rows = [json.loads(line) for path in paths for line in path.read_text().splitlines()
            if line.strip()]
    return [r for r in rows if r["game"] == game]


def main() -> None:
    parser = argparse.ArgumentParser(description="search vs heuristic, duplicate deals, in process")
    parser.add_argument("game")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--first-deal", type=int, default=0)
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--ms", type=float, default=100.0)
    parser.add_argument("--opponent", default="heuristic", choices=["heuristic", "random"])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, help="append one JSON line per match")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a GameConfig field (numbers; policy as a name; "
                             "none turns a hook off, always makes a step test true, "
                             "obs:FIELD a step test true where the observation's FIELD "
                             "is, obs:FIELD==TEXT where it is TEXT)")
    parser.add_argument("--summary", type=Path, nargs="*", help="only summarize these files")
    parser.add_argument("--oracle", action="store_true",
                        help="a probe: the search sees the other hands (see the module's doc)")
    parser.add_argument("--paired", type=Path, nargs=2, metavar=("BASE", "NEW"),
                        help="only compare two runs' files on the deals both played")
    args = parser.parse_args()
    if args.summary:
        print(json.dumps(summarize(_read_rows(args.summary, args.game))))
        return
    if args.paired:
        base, new = (_read_rows([path], args.game) for path in args.paired)
        result = paired(base, new)
        print(f"{args.game}: {result['deals']} common deals, base {result['base']:+.0f}, "
              f"new {result['new']:+.0f}, new - base {result['diff']:+.0f} "
              f"[{result['lo']:+.0f}, {result['hi']:+.0f}] Elo", file=sys.stderr)
        print(json.dumps(result))
        return
    iterations = args.iterations
    ms = None if iterations else args.ms
    overrides: dict[str, object] = {}
    for item in args.set:
        key, value = item.split("=", 1)
        if value in ("none", "always"):  # a hook off, or a step test always true
            overrides[key] = None if value == "none" else StepTest("", None)
            continue
        if value.startswith("obs:"):  # a step test on one observation field
            field, _, wanted = value[4:].partition("==")
            overrides[key] = StepTest(field, wanted or None)
            continue
        try:
            overrides[key] = int(value)
        except ValueError:
            try:
                overrides[key] = float(value)
            except ValueError:
                overrides[key] = value
    tasks = [
        (args.game, args.players, 10_000 + deal, unit, args.opponent, iterations, ms, overrides,
         "", args.oracle)
        for deal in range(args.first_deal, args.first_deal + args.deals)
        for unit in units_of(args.game, args.players)
    ]
    rows = []
    started = time.time()
    sink = args.out.open("a") if args.out else None
    pool = mp.Pool(args.workers) if args.workers > 1 else None
    results = pool.imap_unordered(_task, tasks) if pool else map(_task, tasks)
    for row in results:
        row["config"] = {k: asdict(v) if isinstance(v, StepTest) else v
                         for k, v in overrides.items()}
        if args.oracle:
            row["config"]["oracle"] = True
        rows.append(row)
        if sink:
            sink.write(json.dumps(row) + "\n")
            sink.flush()
    if pool:
        pool.close()
    summary = summarize(rows)
    summary["wall_s"] = round(time.time() - started, 1)
    budget = f"{iterations} playouts" if iterations else f"{ms:.0f} ms"
    print(f"{args.game} {args.players}p search ({budget}) vs {args.opponent}: "
          f"{summary['matches']} matches on {summary['deals']} deals, p={summary['p']:.3f}, "
          f"Elo {summary['elo']:+.0f} {interval_text(summary)}, "
          f"decision {summary['mean_ms']:.0f} ms mean, {summary['max_ms']:.0f} ms max, "
          f"{summary['playouts_per_search']:.0f} playouts a search, "
          f"{summary['deviation_rate']:.0%} of searches leave the default move, "
          f"{summary['wall_s']} s", file=sys.stderr)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
