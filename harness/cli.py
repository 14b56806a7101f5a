"""The ``league`` command line."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from games import UnknownGameError, get_game, implemented_games
from harness.catalog import ManifestError, UnknownBotError, discover_all, resolve

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Tournament and bot-competition harness for eleven card and dice games.")

BotsOption = typer.Option(None, "--bots", help="Extra directory of bot manifests (repeatable).")
DbOption = typer.Option(Path("results.db"), "--db", help="SQLite results file.")
SandboxOption = typer.Option(
    "bwrap", "--sandbox",
    help="Bot isolation: bwrap (default; bubblewrap namespaces) or none (trusted local bots "
         "only: they can read and change anything you can).")


def _sandbox(mode: str):
    """The isolation to run bots in; refuses a machine where it cannot work."""
    from harness.sandbox import Sandbox, SandboxUnavailable

    try:
        sandbox = Sandbox(mode)
        sandbox.check()
    except (ValueError, SandboxUnavailable) as exc:
        fail(str(exc))
    if sandbox.mode == "none":
        typer.secho("warning: --sandbox none: bots run unisolated, with your rights; use it "
                    "only for bots you trust", fg=typer.colors.YELLOW, err=True)
    return sandbox


def _log_to_stderr() -> None:
    """The library logs; the CLI decides that its messages reach the user."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("harness")
    if not logger.handlers:
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


@app.command()
def games() -> None:
    """The registered games with their player counts."""
    for slug in implemented_games():
        info = get_game(slug).INFO
        teams = ""
        for n in info.player_counts():
            layout = info.teams(n)
            if layout:
                teams += f" teams@{n}p={'/'.join('+'.join(map(str, t)) for t in layout)}"
        counts = info.player_counts()
        span = "/".join(map(str, counts)) if info.only_counts else f"{counts[0]}-{counts[-1]}"
        typer.echo(f"{slug:16} {span:>5} players  "
                   f"v{info.rules_version}  {info.title} ({info.seed_ref}){teams}")


@app.command()
def bots(bots_dir: Optional[list[Path]] = BotsOption) -> None:
    """The bots found on the bot path and the games they play."""
    catalog, problems = discover_all(bots_dir)
    for problem in problems:
        typer.secho(f"warning: {problem}", fg=typer.colors.YELLOW, err=True)
    for name, spec in sorted(catalog.items()):
        plays = "all games" if spec.games is None else ", ".join(spec.games)
        typer.echo(f"{name:14} {spec.version_hash()}  {plays}")
        if spec.description:
            typer.echo(f"{'':14} {spec.description}")


@app.command()
def play(
    game: str = typer.Argument(..., help="Game slug (see `league games`)."),
    players: list[str] = typer.Argument(..., help="One bot name per seat, in seat order."),
    seed: int = typer.Option(0, help="Deal seed: same seed, same bots, same match."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print every decision."),
    decision_ms: int = typer.Option(2000, help="Per-decision deadline (wall clock)."),
    startup_ms: int = typer.Option(15000, help="Startup and handshake deadline."),
    bots_dir: Optional[list[Path]] = BotsOption,
    json_out: bool = typer.Option(False, "--json", help="Print the result record as JSON."),
    sandbox_mode: str = SandboxOption,
) -> None:
    """Play one match and print its log and standings."""
    from harness.league import play_match_id
    from harness.match import BotPool, Limits, run_match

    try:
        info = get_game(game).INFO
        info.check_players(len(players))
        specs = {name: resolve(name, bots_dir) for name in players}
    except (UnknownGameError, UnknownBotError, ManifestError, ValueError) as exc:
        fail(str(exc))
    for name, spec in specs.items():
        if not spec.plays(game):
            fail(f"bot {name!r} does not play {game}")
    sandbox = _sandbox(sandbox_mode)
    limits = Limits(decision_s=decision_ms / 1000, startup_s=startup_ms / 1000)
    pool = BotPool({spec.name: spec for spec in specs.values()}, limits, sandbox)
    try:
        events = (lambda line: typer.echo(line)) if verbose else None
        if not json_out:
            typer.echo(f"{info.title}: {len(players)} players, seed {seed}")
        names = [specs[p].name for p in players]
        # The ID says nothing about the deal (bots see it in `start`), yet is
        # the same for the same seed and bots, so a match replays exactly.
        result = run_match(game, seed, names, pool, match_id=play_match_id(game, seed, names),
                           on_event=events)
    finally:
        pool.close()
    if json_out:
        typer.echo(json.dumps(result.to_dict()))
        return
    print_standings(result)


def print_standings(result) -> None:
    typer.echo(f"\nfinal standings ({result.decisions} decisions"
               f"{', CAPPED' if result.capped else ''}):")
    order = sorted(range(len(result.bots)), key=lambda s: (result.ranks[s], s))
    for seat in order:
        fault = result.faults[seat]
        note = f"  FAULT {fault.kind} at decision {fault.decision}: {fault.detail}" if fault else ""
        typer.echo(f"  {result.ranks[seat]}. seat {seat} {result.bots[seat]:12} "
                   f"score {result.scores[seat]:g}{note}")


# ---- leagues -------------------------------------------------------------------
def _store(db: Path):
    from harness.store import Store

    return Store(db)


def _load_league(league: str, bots_dir):
    from harness.league import LeagueFileError, load_league

    try:
        return load_league(league, bots_dir)
    except LeagueFileError as exc:
        fail(str(exc))


class ProgressBar:
    """A live bar on a terminal; a line every few seconds in a log file."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int, faulted: int, elapsed: float) -> None:
        import time as _time

        now = _time.monotonic()
        if not self.tty and now - self.last < 5 and done < total:
            return
        self.last = now
        rate = done / elapsed if elapsed > 0 else 0.0
        width = 30
        filled = int(width * done / total) if total else width
        eta = (total - done) / rate if rate > 0 else float("inf")
        eta_text = "--:--" if eta == float("inf") else f"{int(eta // 60):02d}:{int(eta % 60):02d}"
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} matches "
                f"{rate:.1f}/s ETA {eta_text} faulted {faulted}")
        sys.stderr.write(("\r" + line) if self.tty else line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


@app.command()
def run(
    league: str = typer.Argument(..., help="League file, or its name in leagues/."),
    db: Path = DbOption,
    workers: Optional[int] = typer.Option(
        None, "--workers", "-w", min=1,
        help="Parallel match workers (Ray actors); default: the cluster's CPU count."),
    per_worker: int = typer.Option(1, "--matches-per-worker", min=1,
                                   help="Matches each worker keeps in flight at once (threads)."),
    address: Optional[str] = typer.Option(None, help="Existing Ray cluster (default: embedded local Ray)."),
    engine: str = typer.Option("ray", help="ray (default) or inline (no Ray, for debugging)."),
    max_matches: Optional[int] = typer.Option(None, help="Stop after this many new matches."),
    bots_dir: Optional[list[Path]] = BotsOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    sandbox_mode: str = SandboxOption,
) -> None:
    """Play every scheduled match of a league not yet in the database (resumable)."""
    from harness.runner import run_league

    if engine not in ("ray", "inline"):
        fail("--engine must be ray or inline")
    _log_to_stderr()
    sandbox = _sandbox(sandbox_mode)
    spec = _load_league(league, bots_dir)
    store = _store(db)
    live = [run for run in store.live_runs(spec.name) if run["pid"] != os.getpid()]
    if live:
        fail(f"league {spec.name!r} is already running in {db} (pid {live[0]['pid']} on "
             f"{live[0]['host']}); two runs would play the same matches")
    done, _ = store.league_match_count(spec.name)
    total = spec.size()
    typer.echo(f"league {spec.name}: {spec.game}, {len(spec.bots)} bots, {spec.players} per "
               f"match, {total} matches scheduled, {done} already in {db}", err=True)
    bar = None if quiet else ProgressBar()
    try:
        summary = run_league(spec, store, workers=workers, engine=engine, address=address,
                             progress=bar, max_matches=max_matches, concurrency=per_worker,
                             sandbox=sandbox)
    finally:
        if bar:
            bar.close()
    per_match = summary.process_starts / summary.played if summary.played else 0.0
    typer.echo(f"played {summary.played} matches in {summary.elapsed_s:.1f}s "
               f"({summary.rate:.1f}/s after {summary.startup_s:.1f}s of start-up), "
               f"{summary.faulted} with faults, "
               f"{summary.process_starts} bot process starts ({per_match:.3f} per match)"
               + (f", {summary.errors} harness errors (not stored)" if summary.errors else ""),
               err=True)
    remaining = summary.scheduled - summary.already_done - summary.played
    if summary.interrupted or remaining > 0:
        typer.echo(f"stopped with {remaining} matches left; resume with: "
                   f"league run {league} --db {db}", err=True)
    _save_ratings(store, spec.name)
    typer.echo(f"ratings saved; see them with: league table {spec.name} --db {db}", err=True)
    if summary.interrupted:
        raise typer.Exit(130)
    if summary.errors:
        raise typer.Exit(1)


def _save_ratings(store, league: str):
    """Fit the ratings from every stored result and save them."""
    from harness.ratings import rate

    rows = rate(list(store.seat_rows(league)))
    store.save_ratings(league, [r.as_dict() for r in rows])
    return rows


@app.command()
def table(
    league: str = typer.Argument(..., help="League name (as stored) or league file."),
    db: Path = DbOption,
    matrix: bool = typer.Option(False, "--matrix", help="Also print the head-to-head matrix."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Machine-readable CSV."),
) -> None:
    """Elo ratings (Bradley-Terry fit of all results) with 95% bootstrap intervals."""
    from harness.ratings import head_to_head

    if not db.exists():
        fail(f"no results database {db}")
    store = _store(db)
    name = _league_name(store, league)
    seat_rows = list(store.seat_rows(name))
    if not seat_rows:
        fail(f"no results for league {name!r} in {db}")
    rows = _save_ratings(store, name)
    if as_json:
        bots, rates, games = head_to_head(seat_rows)
        payload = {"league": name, "ratings": [r.as_dict() for r in rows]}
        if matrix:
            payload["head_to_head"] = {
                a: {b: (None if games[i, j] == 0 else round(float(rates[i, j]), 4))
                    for j, b in enumerate(bots) if i != j} for i, a in enumerate(bots)}
        typer.echo(json.dumps(payload, indent=2))
        return
    if as_csv:
        import csv

        writer = csv.writer(sys.stdout)
        writer.writerow(["rank", "bot", "elo", "elo_low", "elo_high", "games", "avg_score",
                         "avg_rank", "faults"])
        for position, r in enumerate(rows, 1):
            writer.writerow([position, r.bot, f"{r.elo:.1f}", f"{r.elo_low:.1f}",
                             f"{r.elo_high:.1f}", r.games, f"{r.avg_score:.3f}",
                             f"{r.avg_rank:.3f}", r.faults])
        return
    matches, faulted = store.league_match_count(name)
    typer.echo(f"league {name}: {matches} matches ({faulted} with faults)")
    typer.echo(f"{'#':>3} {'bot':28} {'elo':>7} {'95% interval':>17} {'games':>6} "
               f"{'avg score':>10} {'avg rank':>9} {'faults':>7}")
    for position, r in enumerate(rows, 1):
        typer.echo(f"{position:>3} {r.bot:28} {r.elo:7.1f} [{r.elo_low:7.1f},{r.elo_high:7.1f}] "
                   f"{r.games:6d} {r.avg_score:10.2f} {r.avg_rank:9.2f} {r.faults:7d}")
    if matrix:
        bots, rates, games = head_to_head(seat_rows)
        typer.echo("\nhead to head (row's score rate against column; n = comparisons)")
        short = [b.split("@")[0][:12] for b in bots]
        typer.echo(" " * 14 + "".join(f"{s:>14}" for s in short))
        for i, bot in enumerate(short):
            cells = "".join(
                f"{'-':>14}" if i == j or games[i, j] == 0
                else f"{rates[i, j]:>7.1%} n={int(games[i, j]):<4}" for j in range(len(bots)))
            typer.echo(f"{bot:14}{cells}")


def _league_name(store, league: str) -> str:
    known = [row["name"] for row in store.leagues()]
    if league in known:
        return league
    import tomllib

    from harness.league import LeagueFileError, find_league_file

    try:
        name = tomllib.loads(find_league_file(league).read_text()).get("name")
    except (LeagueFileError, OSError, tomllib.TOMLDecodeError):
        name = None
    if name in known:
        return name
    fail(f"no league {league!r} in the database; known: {', '.join(known) or 'none'}")


@app.command()
def status(db: Path = DbOption) -> None:
    """Per league: matches done, in flight, remaining and faulted."""
    if not db.exists():
        fail(f"no results database {db}")
    store = _store(db)
    typer.echo(f"{'league':20} {'game':14} {'done':>8} {'in flight':>10} {'remaining':>10} "
               f"{'faulted':>8}")
    for row in store.leagues():
        done, faulted = store.league_match_count(row["name"])
        flying = store.in_flight(row["name"])
        typer.echo(f"{row['name']:20} {row['game']:14} {done:8d} {flying:10d} "
                   f"{max(row['scheduled'] - done, 0):10d} {faulted:8d}")


@app.command()
def matches(
    db: Path = DbOption,
    league: Optional[str] = typer.Option(None, help="Only this league."),
    bot: Optional[str] = typer.Option(None, help="Only matches with this bot (name or name@version)."),
    fault: Optional[str] = typer.Option(None, help="Only matches with this fault kind "
                                                   "(timeout, crash, bad_message, illegal_action, startup)."),
    limit: int = typer.Option(50, help="At most this many, newest first."),
) -> None:
    """List matches, newest first."""
    store = _store(db)
    for row in store.matches(league, bot, fault, limit):
        seats = json.loads(row["seats"])
        flags = (" CAPPED" if row["capped"] else "") + (f" faults={row['faulted']}" if row["faulted"] else "")
        typer.echo(f"{row['id']}  {row['league']:12} {row['game']:14} deal {row['deal']:<5} "
                   f"{' '.join(s.split('@')[0] for s in seats)}{flags}")


@app.command()
def replay(
    match_id: str = typer.Argument(..., help="Match ID (a unique prefix will do)."),
    db: Path = DbOption,
) -> None:
    """Print one match's log, replayed from its stored actions."""
    from harness.replay import replay_lines

    store = _store(db)
    try:
        row, seats, stored = store.match(match_id)
    except KeyError as exc:
        fail(str(exc.args[0]))
    typer.echo(f"match {row['id']} ({row['league']}, {row['game']} v{row['rules_version']}, "
               f"seed {row['seed']}, deal {row['deal']})")
    for line in replay_lines(stored):
        typer.echo(line)
    typer.echo("final standings:")
    for seat in sorted(seats, key=lambda s: (s["rank"], s["seat"])):
        note = (f"  FAULT {seat['fault_kind']} at decision {seat['fault_decision']}: "
                f"{seat['fault_detail']}" if seat["fault_kind"] else "")
        typer.echo(f"  {seat['rank']}. seat {seat['seat']} {seat['bot']:28} "
                   f"score {seat['score']:g}{note}")


@app.command()
def doctor() -> None:
    """Which bot isolation works on this machine, and why not where it does not."""
    from harness.sandbox import probe

    found = probe()
    for line in found.lines():
        typer.echo(line)
    typer.echo(f"harness user: {'root' if found.root else 'uid ' + str(os.geteuid())}")
    if not found.bwrap_works:
        typer.echo("league run and league play refuse to start bots until bubblewrap works, "
                   "unless given --sandbox none (trusted bots only)")
        raise typer.Exit(1)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
