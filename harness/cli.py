"""The ``league`` command line: playing (games, bots, play, check, run, doctor).

The read commands (table, status, matches, replay, logs) live in
:mod:`harness.cli_results`. An ordinary mistake never prints a traceback:
one line says what is wrong and what to do, and the exit code says which
kind of problem it was (see EXIT_CODES).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

from games import UnknownGameError, get_game, implemented_games
from harness.catalog import ManifestError, UnknownBotError, discover_all, resolve
from harness.safe_text import printable

EXIT_HARNESS_ERROR = 1  # a match the harness itself failed to play (retried next run)
EXIT_USAGE = 2  # bad input: an option, a league file, a bot, a manifest
EXIT_BOT = 3  # play: a bot faulted; run: a bot left matches unplayed; check: a check failed
EXIT_DB = 4  # the results database cannot be used
EXIT_INTERRUPTED = 130
EXIT_CODES = (f"Exit codes: 0 done; {EXIT_HARNESS_ERROR} harness error in a match (retried by the "
              f"next run); {EXIT_USAGE} bad input; {EXIT_BOT} a bot faulted (play, check) or left "
              f"matches for a later run (run: it did not start, or faulted in 3 matches in a "
              f"row); {EXIT_DB} unusable results database; {EXIT_INTERRUPTED} "
              "interrupted.")

app = typer.Typer(
    no_args_is_help=True, pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Tournament and bot-competition harness for eleven card and dice games.",
    epilog=EXIT_CODES)

BotsOption = typer.Option(None, "--bots", metavar="DIR",
                          help="Extra folder of bot manifests (repeatable).")
DbOption = typer.Option(Path("results.db"), "--db", metavar="FILE", help="SQLite results file.")
SandboxOption = typer.Option(
    "bwrap", "--sandbox", metavar="bwrap|none",
    help="Bot isolation: bwrap (default; bubblewrap namespaces) or none (trusted local bots "
         "only: they can read and change anything you can).")


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"league (card-league) {version('card-league')}")
        except PackageNotFoundError:
            typer.echo("league (card-league), not installed as a package")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
    accept_weak_limits: bool = typer.Option(
        False, "--accept-weak-limits",
        help="Run bots in the sandbox even where this machine cannot keep every limit "
             "PROTOCOL.md promises (no control groups, not root, no syscall filter: "
             "`league doctor` lists what is missing). Only for bots you would trust a little."),
) -> None:
    """Tournament and bot-competition harness for eleven card and dice games."""
    _OPTIONS["accept_weak_limits"] = accept_weak_limits


_OPTIONS: dict[str, bool] = {"accept_weak_limits": False}


def _sandbox(mode: str) -> Any:
    """The isolation to run bots in; refuses a machine where it cannot work."""
    from harness.sandbox import Sandbox, SandboxUnavailable

    try:
        sandbox = Sandbox(mode, weak_limits_ok=_OPTIONS["accept_weak_limits"])
        sandbox.check()
    except (ValueError, SandboxUnavailable) as exc:
        fail(str(exc))
    if sandbox.mode == "bwrap" and _OPTIONS["accept_weak_limits"]:
        from harness.sandbox import probe

        for weakness in probe().weaknesses():
            typer.secho(f"warning: --accept-weak-limits: {weakness}", fg=typer.colors.YELLOW,
                        err=True)
    if sandbox.mode == "none":
        typer.secho("warning: --sandbox none: bots run unisolated, with your rights; use it "
                    "only for bots you trust", fg=typer.colors.YELLOW, err=True)
    return sandbox


def _log_to_stderr() -> None:
    """The library logs; the CLI decides that its messages reach the user, and
    that Ray's start-up notices do not."""
    logger = logging.getLogger("harness")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    logger.setLevel(logging.INFO)
    import ray  # noqa: F401 - ray sets its loggers up on import: quiet them after that

    logging.getLogger("ray").setLevel(logging.ERROR)


class _StderrHandler(logging.Handler):
    """Writes to whatever sys.stderr is at the time (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(printable(self.format(record)) + "\n")  # may quote a bot's words


def _bot_dirs(bots_dir: Optional[list[Path]]) -> Optional[list[Path]]:
    for directory in bots_dir or []:
        if not directory.is_dir():
            fail(f"--bots {directory}: no such folder")
    return bots_dir


def _resolve_bots(names: list[str], game: str, bots_dir: Optional[list[Path]]) -> dict[str, Any]:
    specs = {}
    for name in names:
        try:
            specs[name] = resolve(name, _bot_dirs(bots_dir))
            specs[name].version_hash()  # its files too: outside its folder, over the caps
        except (OSError, UnknownBotError, ManifestError) as exc:
            fail(str(exc))
        if not specs[name].plays(game):
            fail(f"bot {name!r} does not play {game} (its manifest's games: "
                 f"{', '.join(specs[name].games or ())})")
    return specs


# ---- games and bots ----------------------------------------------------------------
@app.command()
def games(
    game: Optional[str] = typer.Argument(None, help="One game's details (a slug)."),
    schema: bool = typer.Option(False, "--schema",
                                help="Print the game's JSON Schema for obs and actions."),
) -> None:
    """The registered games with their player counts, or one game's details."""
    if game is None:
        if schema:
            fail("--schema needs a game: league games GAME --schema")
        for slug in implemented_games():
            typer.echo(_game_line(slug))
        return
    try:
        get_game(game)
    except UnknownGameError as exc:
        fail(f"{exc}; known games: {', '.join(implemented_games())}")
    if schema:
        from games.schemas import schema_for

        typer.echo(json.dumps(schema_for(game), indent=2))
        return
    typer.echo(_game_line(game))
    typer.echo(f"rules, observations and actions: docs/games/{game}.md; "
               f"schema: league games {game} --schema")


def _game_line(slug: str) -> str:
    info = get_game(slug).INFO
    teams = ""
    for n in info.player_counts():
        layout = info.teams(n)
        if layout:
            teams += f" teams@{n}p={'/'.join('+'.join(map(str, t)) for t in layout)}"
    counts = info.player_counts()
    span = "/".join(map(str, counts)) if info.only_counts else f"{counts[0]}-{counts[-1]}"
    return (f"{slug:16} {span:>5} players  v{info.rules_version}  {info.title} "
            f"({info.seed_ref}){teams}")


@app.command()
def bots(bots_dir: Optional[list[Path]] = BotsOption) -> None:
    """The bots found on the bot path, their versions and the games they play."""
    catalog, problems = discover_all(_bot_dirs(bots_dir))
    for problem in problems:
        typer.secho(f"warning: {printable(problem)}", fg=typer.colors.YELLOW, err=True)
    width = max((len(printable(name, False)) for name in catalog), default=4)
    for name, spec in sorted(catalog.items()):
        plays = "all games" if spec.games is None else ", ".join(spec.games)
        try:
            version = spec.version_hash()
        except (OSError, ManifestError) as exc:
            typer.secho(f"warning: {printable(f'{name}: {exc}')}", fg=typer.colors.YELLOW, err=True)
            continue
        typer.echo(f"{printable(name, False):{width}}  {version}  {plays}")
        if spec.description:
            typer.echo(f"{'':{width}}  {printable(spec.description, False)}")


# ---- one match -----------------------------------------------------------------------
@app.command()
def play(
    game: str = typer.Argument(..., help="Game slug (see `league games`)."),
    players: list[str] = typer.Argument(..., help="One bot name per seat, in seat order."),
    seed: int = typer.Option(0, help="Deal seed: same seed, same bots, same match."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="Print every decision, with the bot's time."),
    trace: bool = typer.Option(False, "--trace",
                               help="Print every protocol message, both ways, as JSON."),
    decision_ms: int = typer.Option(2000, min=1, metavar="MS",
                                    help="Per-decision deadline (wall clock)."),
    startup_ms: int = typer.Option(15000, min=1, metavar="MS",
                                   help="Start-up and handshake deadline."),
    bots_dir: Optional[list[Path]] = BotsOption,
    json_out: bool = typer.Option(False, "--json", help="Print only the result record, as JSON."),
    sandbox_mode: str = SandboxOption,
) -> None:
    """Play one match and print its log and standings; exits 3 if a bot faulted."""
    from harness.league import play_match_id
    from harness.match import BotPool, Limits, run_match
    from harness.replay import seats_header

    try:
        info = get_game(game).INFO
        info.check_players(len(players))
    except (UnknownGameError, ValueError) as exc:
        fail(str(exc))
    specs = _resolve_bots(players, game, bots_dir)
    sandbox = _sandbox(sandbox_mode)
    limits = Limits(decision_s=decision_ms / 1000, startup_s=startup_ms / 1000)
    pool = BotPool({spec.name: spec for spec in specs.values()}, limits, sandbox)
    names = [specs[p].name for p in players]
    say = (lambda line: typer.echo(line, err=True)) if json_out else typer.echo
    if trace:
        pool.trace = lambda way, bot, message: say(
            f"{'>>' if way == 'to' else '<<'} {printable(bot, False)}: "
            f"{json.dumps(message, default=repr)}")
    if not json_out:
        typer.echo(f"{info.title}: {len(players)} players, seed {seed}")
        if verbose:
            typer.echo(seats_header(names))
    try:
        # The ID says nothing about the deal (bots see it in `start`), yet is
        # the same for the same seed and bots, so a match replays exactly.
        result = run_match(game, seed, names, pool, match_id=play_match_id(game, seed, names),
                           on_event=say if verbose else None)
    finally:
        pool.close()
    if json_out:
        typer.echo(json.dumps(result.to_dict()))
    else:
        print_standings(result)
    if any(result.faults):
        raise typer.Exit(EXIT_BOT)


def print_standings(result: Any) -> None:
    typer.echo(f"\nfinal standings ({result.decisions} decisions"
               f"{', CAPPED' if result.capped else ''}):")
    order = sorted(range(len(result.bots)), key=lambda s: (result.ranks[s], s))
    bots = [printable(bot, False) for bot in result.bots]
    width = max(len(bot) for bot in bots)
    for seat in order:
        fault = result.faults[seat]
        note = (f"  FAULT {fault.kind} at decision {fault.decision}: "
                f"{printable(fault.detail, False)}" if fault else "")
        typer.echo(f"  {result.ranks[seat]}. seat {seat} {bots[seat]:{width}} "
                   f"score {result.scores[seat]:g}{note}")
    for seat, fault in enumerate(result.faults):
        if fault is not None:
            print_stderr_tail(f"seat {seat} ({bots[seat]})", fault.stderr_tail)


def print_stderr_tail(who: str, tail: str, lines: int = 15) -> None:
    """The last ``lines`` lines of a bot's stderr, escaped (a CR shows as
    ``\\r``, not as a line that overwrites the one before)."""
    shown = printable(tail).rstrip("\n").split("\n")[-lines:] if tail.strip("\n") else []
    if not shown:
        typer.echo(f"\n{who} wrote nothing to stderr")
        return
    typer.echo(f"\nlast {len(shown)} lines of {who}'s stderr:")
    for line in shown:
        typer.echo(f"  | {line}")


# ---- compliance ------------------------------------------------------------------------
@app.command(short_help="Check that a bot follows the protocol, step by step; exits 3 on any "
                         "failure.")
def check(
    bot: str = typer.Argument(..., help="Bot name, or the path of its manifest."),
    game: Optional[list[str]] = typer.Option(None, "--game", "-g", metavar="GAME",
                                             help="Only these games (repeatable)."),
    decision_ms: int = typer.Option(1000, min=1, metavar="MS",
                                    help="The decision limit to check the bot's times against."),
    bots_dir: Optional[list[Path]] = BotsOption,
    sandbox_mode: str = SandboxOption,
) -> None:
    """Check that a bot follows the protocol: handshake, one match per game and
    player count, legal answers in time, nothing but MessagePack on stdout, a
    clean quit. Prints a verdict per step; exits 3 on any failure."""
    from harness.check import run_checks

    try:
        spec = resolve(bot, _bot_dirs(bots_dir))
        spec.version_hash()  # its files too: outside its folder, over the caps
    except (OSError, UnknownBotError, ManifestError) as exc:
        fail(str(exc))
    slugs = game or [g for g in implemented_games() if spec.plays(g)]
    for slug in slugs:
        if slug not in implemented_games():
            fail(f"unknown game {slug!r}; known games: {', '.join(implemented_games())}")
        if not spec.plays(slug):
            fail(f"bot {spec.name!r} does not play {slug}")
    sandbox = _sandbox(sandbox_mode)
    failures = 0
    for verdict in run_checks(spec, slugs, decision_ms / 1000, sandbox):
        mark = typer.style("ok  ", fg=typer.colors.GREEN) if verdict.ok else \
            typer.style("FAIL", fg=typer.colors.RED)
        typer.echo(f"{mark} {verdict.step}: {printable(verdict.detail, False)}")
        failures += not verdict.ok
        if verdict.stderr_tail:
            print_stderr_tail(printable(spec.name, False), verdict.stderr_tail)
    typer.echo(f"\n{printable(spec.name, False)}: "
               f"{'all checks passed' if not failures else f'{failures} failed'}")
    if failures:
        raise typer.Exit(EXIT_BOT)


# ---- leagues ---------------------------------------------------------------------------
def _store(db: Path, readonly: bool = False) -> Any:
    from harness.store import Store, StoreError

    try:
        return Store(db, readonly=readonly)
    except StoreError as exc:
        fail(str(exc), EXIT_DB)


def _load_league(league: str, bots_dir: Optional[list[Path]]) -> Any:
    from harness.league import LeagueFileError, load_league

    try:
        loaded = load_league(league, _bot_dirs(bots_dir))
    except LeagueFileError as exc:
        fail(str(exc))
    for message in loaded.left_out:  # a broken entrant; the others play
        typer.secho(f"warning: {printable(message)}", fg=typer.colors.YELLOW, err=True)
    return loaded


IDENTITY_FIELDS = ("game", "players", "seed", "bots", "rotation", "partners", "copies")


def _check_identity(store: Any, league: Any, path: str) -> None:
    """A league's results only mix with results of the same league: changing
    what it is under the same name is refused, naming the change. A league
    that left a broken bot out is a league of the others (its config records
    the bots that play): resumed with that bot back, or with a bot it played
    with now left out, it is another league, and refused."""
    stored = store.league_config(league.name)
    if stored is None:
        return
    current = league.config()
    changes = [f"{field} {stored.get(field)!r} -> {current.get(field)!r}"
               for field in IDENTITY_FIELDS if stored.get(field) != current.get(field)]
    if changes:
        # leagues stored before rotation = "balanced" became the default
        hint = (f' Or add rotation = "{stored.get("rotation")}" to {path} to go on with the '
                "seatings it was played with." if stored.get("rotation") != current["rotation"]
                and "rotation" not in _league_fields(league) else "")
        if league.left_out and stored.get("bots") != current.get("bots"):
            hint += (" Bots were left out (see the warnings above): fix them, and it is the "
                     "league it was.")
        fail(f"league {league.name!r} in {store.path} was played as another league "
             f"({'; '.join(changes)}); its results would mix. Give {path} a new name, or "
             f"use another --db.{hint} (deals and limits may change: they extend or re-time "
             "the same league; with rotation = \"balanced\", the order of bots may too)")


def _league_fields(league: Any) -> set[str]:
    """The fields the league's file sets (none for a league made in code)."""
    import tomllib

    try:
        return set(tomllib.loads(league.path.read_text())) if league.path else set()
    except (OSError, tomllib.TOMLDecodeError):
        return set()


class ProgressBar:
    """A live bar on a terminal, a line every few seconds in a log file, and
    every half minute this run's leaders so far."""

    LEADERS_EVERY_S = 30.0

    def __init__(self, bot_names: dict[str, str]) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.last_leaders = time.monotonic()
        self.bot_names = bot_names

    def __call__(self, progress: Any) -> None:
        now = time.monotonic()
        finished = progress.done >= progress.total
        if not self.tty and now - self.last < 5 and not finished:
            return
        self.last = now
        rate = progress.rate
        remaining = progress.total - progress.done
        eta = _clock(remaining / rate) if rate > 0 else "--:--"
        width = 30
        filled = int(width * progress.done / progress.total) if progress.total else width
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {progress.done}/{progress.total} "
                f"({progress.played} this run) {rate:.1f}/s elapsed "
                f"{_clock(progress.elapsed_s)} ETA {eta} faulted {progress.faulted}")
        sys.stderr.write(("\r" + line) if self.tty else line + "\n")
        if now - self.last_leaders >= self.LEADERS_EVERY_S and progress.leaders:
            self.last_leaders = now
            top = ", ".join(f"{printable(bot, False)} {rank:.2f}" for bot, rank in progress.leaders)
            sys.stderr.write(("\n" if self.tty else "") + f"leading (average rank this run): {top}\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


@app.command()
def run(
    league: str = typer.Argument(..., help="League file, or its name in leagues/."),
    db: Path = DbOption,
    workers: Optional[int] = typer.Option(
        None, "--workers", "-w", min=1, metavar="N",
        help="Parallel match workers (Ray actors); default: the cluster's CPU count."),
    per_worker: Optional[int] = typer.Option(
        None, "--matches-per-worker", min=1, metavar="N",
        help="Matches each worker keeps in flight at once, interleaved on one thread (while one "
             "waits for a bot, another uses the core); default: 2 when there are fewer workers "
             "than CPUs, else 1."),
    address: Optional[str] = typer.Option(
        None, metavar="HOST:PORT",
        help="Existing Ray cluster, or auto: the one `ray start` began on this machine "
             "(default: an embedded Ray of its own, whatever RAY_ADDRESS says)."),
    engine: str = typer.Option("ray", metavar="ray|inline",
                               help="ray (default) or inline (no Ray, for debugging)."),
    max_matches: Optional[int] = typer.Option(None, min=1, metavar="N",
                                              help="Stop after this many new matches."),
    bots_dir: Optional[list[Path]] = BotsOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    sandbox_mode: str = SandboxOption,
) -> None:
    """Play every scheduled match of a league not yet in the database (resumable)."""
    if engine not in ("ray", "inline"):
        fail("--engine must be ray or inline")
    _log_to_stderr()
    sandbox = _sandbox(sandbox_mode)
    spec = _load_league(league, bots_dir)
    store = _store(db)
    _check_identity(store, spec, league)
    live = [r for r in store.live_runs(spec.name) if r["pid"] != os.getpid()]
    if live:
        fail(f"league {spec.name!r} is already running in {db} (pid {live[0]['pid']} on "
             f"{live[0]['host']}); two runs would play the same matches")
    done, _ = store.league_match_count(spec.name)
    total = spec.size()
    typer.echo(f"league {spec.name}: {spec.game}, {len(spec.bots)} bots, {spec.players} per "
               f"match, {total} matches scheduled, {done} already in {db}", err=True)
    _warn_seat_order(spec)
    bar = None if quiet else ProgressBar({spec.bot_id(n): n for n in spec.bots})
    resume = f"{_me()} run {league} --db {db}"
    try:
        summary = _play_league(spec, store, workers=workers, engine=engine, address=address,
                               progress=bar, max_matches=max_matches, concurrency=per_worker,
                               sandbox=sandbox)
    except KeyboardInterrupt:  # a third Ctrl-C, while stopping
        typer.echo(f"\ninterrupted; resume with: {resume}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        if bar:
            bar.close()
    _report(summary, resume)
    if summary.played:
        _save_ratings(store, spec.name)
        typer.echo(f"ratings saved; see them with: {_me()} table {spec.name} --db {db}", err=True)
    if summary.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if summary.unplayed:  # a bot did not start, or was broken: its matches are left
        raise typer.Exit(EXIT_BOT)
    if summary.errors:
        raise typer.Exit(EXIT_HARNESS_ERROR)


def _warn_seat_order(league: Any) -> None:
    """Say so when the seatings of a "cyclic" or "none" league are not
    balanced: ratings then move with who sits after whom."""
    if league.rotation == "balanced":
        return
    checked = 1000
    unbalanced = league.unbalanced_tables(checked)
    if unbalanced:
        typer.secho(f'rotation = "{league.rotation}": at {unbalanced} of '
                    f"{min(checked, league.table_count())} tables some bot takes one seat, "
                    "or sits directly after one bot, more often than another, and ratings move "
                    "with seat order (the default, rotation = "
                    '"balanced", evens both: README, "Seatings")', err=True,
                    fg=typer.colors.YELLOW)


def _play_league(league: Any, store: Any, **options: Any) -> Any:
    """``run_league``, an ``--address`` that reaches no cluster being bad input."""
    from harness.runner import ClusterUnreachable, run_league

    try:
        return run_league(league, store, **options)
    except ClusterUnreachable as exc:
        fail(str(exc))


def _me() -> str:
    """How the user can type this command again: `league` when that is on PATH."""
    import shutil

    invoked = Path(sys.argv[0])
    on_path = shutil.which("league")
    if on_path and invoked.name == "league" and Path(on_path).resolve() == invoked.resolve():
        return "league"
    if invoked.name == "league" and invoked.exists():
        return os.path.relpath(invoked) if not invoked.is_absolute() or \
            str(invoked).startswith(os.getcwd()) else str(invoked)
    return "league"


def _report(summary: Any, resume: str) -> None:
    """The run's last lines: what was played, and what is missing and why
    (harness errors, broken bots), with how to play the rest."""
    if not (summary.played or summary.unplayed or summary.errors or summary.interrupted):
        typer.echo("nothing to play: every scheduled match is stored", err=True)
        return
    per_match = summary.process_starts / summary.played if summary.played else 0.0
    typer.echo(f"played {summary.played} matches in {summary.elapsed_s:.1f}s "
               f"({summary.rate:.1f}/s after {summary.startup_s:.1f}s of start-up; "
               f"{summary.workers} worker(s) x {summary.in_flight} in flight), "
               f"{summary.faulted} with faults, {summary.process_starts} bot process starts "
               f"({per_match:.3f} per match)", err=True)
    if summary.errors:
        typer.secho(f"{summary.errors} matches ended in a harness error and are not stored (a "
                    "bug of the harness, not of a bot; the next run plays them again):",
                    fg=typer.colors.RED, err=True)
        for line in summary.error_lines:
            typer.echo(f"  {printable(line, False)}", err=True)
    for bot in sorted(set(summary.broken) | set(summary.left)):
        _report_bot(bot, summary.broken_why.get(bot, "did not start"), summary.left.get(bot, 0))
    remaining = summary.scheduled - summary.already_done - summary.played
    if summary.interrupted or remaining > 0:
        typer.echo(f"stopped with {remaining} matches left; resume with: {resume}", err=True)


def _report_bot(bot: str, why: str, left: int) -> None:
    """A bot that was broken, or left matches unplayed: why, and what to do."""
    bot, why = printable(bot, False), printable(why, False)
    name = bot.split("@")[0]
    if not left:
        typer.secho(f"bot {bot} {why}; every match of it had been sent out already, so none "
                    f"is left (see `league matches --bot {name}`)", fg=typer.colors.YELLOW,
                    err=True)
        return
    typer.secho(f"bot {bot} {why}: {left} of its matches are left unplayed (see `league check "
                f"{name}` and `league matches --bot {name}`); fix it and run again",
                fg=typer.colors.RED, err=True)


def _save_ratings(store: Any, league: str) -> list[Any]:
    """Fit the ratings from every stored result and save them (run only:
    the read commands never write)."""
    from harness.ratings import rate

    rows = rate(store.ratings_source(league))
    store.save_ratings(league, [r.as_dict() for r in rows])
    return rows


SPRT_HELP_HEAD = (
    "Is B better than A? A sequential probability ratio test on paired duplicate deals (B in "
    "A's seat, on A's cards, against the same field), stopped as soon as the answer is clear; "
    "resumable, stored like a league. Its Elo is the `league table`'s (per member in team "
    "games): the odds of finishing ahead of a field seat, B's against A's.")


def _sprt_defaults() -> Any:
    """The test's defaults and what they cost (a module without numpy)."""
    from harness import sprt_defaults

    return sprt_defaults


_SPRT = _sprt_defaults()


@app.command(short_help="Is B better than A? A sequential test on paired duplicate deals, in "
                         "table Elo; resumable.", help=f"{SPRT_HELP_HEAD}\n\n{_SPRT.DEFAULTS_NOTE}")
def sprt(
    game: str = typer.Argument(..., help="Game slug."),
    baseline: str = typer.Argument(..., help="A: the bot to beat."),
    candidate: str = typer.Argument(..., help="B: is it better than A?"),
    field: Optional[list[str]] = typer.Option(
        None, "--field", metavar="BOT",
        help="The other seats' bots, in turn (repeatable; default: A itself, so that B and A "
             "meet copies of A, the field that tells most per deal). Another field is another "
             "test."),
    players: Optional[int] = typer.Option(None, min=2, metavar="N",
                                          help="Seats per match (default: the game's fewest)."),
    elo0: float = typer.Option(_SPRT.DEFAULT_ELO0, "--elo0",
                               help="H0: B is this much better, in table Elo (the `league table` "
                                    "scale; per member in team games)."),
    elo1: float = typer.Option(_SPRT.DEFAULT_ELO1, "--elo1",
                               help="H1: B is this much better (table Elo)."),
    alpha: float = typer.Option(_SPRT.DEFAULT_ALPHA, min=0.0001, max=0.5,
                                help="False positive rate: H1 taken when H0 is true."),
    beta: float = typer.Option(_SPRT.DEFAULT_BETA, min=0.0001, max=0.5,
                               help="False negative rate: H0 taken when H1 is true."),
    max_deals: int = typer.Option(
        _SPRT.DEFAULT_MAX_DEALS, "--max-deals", min=1, metavar="N",
        help="The cap, in deals (4 matches each). A test that reaches it without crossing a "
             "bound is decided by the LLR's sign if it has by then the information of a "
             "fixed-sample test with the same error rates, else ends with no verdict (raise "
             "the cap to go on)."),
    max_pairs: Optional[int] = typer.Option(None, "--max-pairs", min=2, hidden=True,
                                            help="Old form of the cap: pairs, 2 a deal."),
    seed: Optional[int] = typer.Option(
        None, "--seed", metavar="N",
        help="Public deal seed: reproducible deals (another seed is another test). Default: "
             "deals from a secret key kept in the database."),
    db: Path = DbOption,
    workers: Optional[int] = typer.Option(None, "--workers", "-w", min=1, metavar="N"),
    engine: str = typer.Option("ray", metavar="ray|inline"),
    address: Optional[str] = typer.Option(None, metavar="HOST:PORT",
                                          help="Existing Ray cluster (default: embedded)."),
    decision_ms: int = typer.Option(1000, min=1, metavar="MS"),
    bots_dir: Optional[list[Path]] = BotsOption,
    sandbox_mode: str = SandboxOption,
) -> None:
    from harness.match import Limits
    from harness.sprt_run import StoredTest, sprt_league

    if engine not in ("ray", "inline"):
        fail("--engine must be ray or inline")
    if elo0 >= elo1:
        fail("--elo0 must be below --elo1")
    if max_pairs is not None:
        max_deals = -(-max_pairs // 2)
    try:
        info = get_game(game).INFO
    except UnknownGameError as exc:
        fail(str(exc))
    seats = players or info.player_counts()[0]
    try:
        info.check_players(seats)
    except ValueError as exc:
        fail(str(exc))
    field_names = field or [baseline]
    names = [baseline, candidate, *field_names]
    specs = _resolve_bots(names, game, bots_dir)
    if specs[baseline].name == specs[candidate].name:
        fail("A and B are the same bot")
    resume = _sprt_resume(game, baseline, candidate, field_names, seats, elo0, elo1, alpha, beta,
                          max_deals, seed, db, workers, engine, address, decision_ms, bots_dir,
                          sandbox_mode)
    _log_to_stderr()
    sandbox = _sandbox(sandbox_mode)
    league = sprt_league(game, specs[baseline], specs[candidate],
                         [specs[f] for f in field_names], seats, max_deals,
                         Limits(decision_s=decision_ms / 1000), seed)
    store = _store(db)
    _check_identity(store, league, league.name)
    if seed is None:
        league.secret = store.league_secret(league.name)
    tester = StoredTest(store, league, elo0, elo1, alpha, beta)
    test = tester.test()
    summary, interrupted = None, False
    if test.stop() is None:
        try:
            summary = _play_league(league, store, workers=workers, engine=engine,
                                   address=address, sandbox=sandbox, stop_when=tester.decided)
            interrupted = summary.interrupted
        except KeyboardInterrupt:  # a third Ctrl-C, while stopping
            interrupted = True
        test = tester.test()
    why, code = _sprt_stopped(test, summary, interrupted, tester.missing())
    _print_sprt(test, league, why)
    if code is not None:
        typer.echo(f"resume with: {resume}", err=True)
        raise typer.Exit(code)
    stop = test.stop()
    if stop is not None and stop.verdict is None:
        more = _sprt_resume(game, baseline, candidate, field_names, seats, elo0, elo1, alpha,
                            beta, 2 * max_deals, seed, db, workers, engine, address, decision_ms,
                            bots_dir, sandbox_mode)
        typer.echo(f"to test on with twice the cap: {more}", err=True)


def _sprt_resume(game: str, baseline: str, candidate: str, field: list[str], players: int,
                 elo0: float, elo1: float, alpha: float, beta: float, max_deals: int,
                 seed: Optional[int], db: Path, workers: Optional[int], engine: str,
                 address: Optional[str], decision_ms: int, bots_dir: Optional[list[Path]],
                 sandbox_mode: str) -> str:
    """The command that goes on with this very test: every setting spelt
    out (defaults too, so that a later change of a default cannot make it
    another test), and the run's own options as given."""
    import shlex

    words = [*([] if not _OPTIONS["accept_weak_limits"] else ["--accept-weak-limits"]),
             "sprt", game, baseline, candidate]
    for bot in field:
        words += ["--field", bot]
    words += ["--players", str(players), "--elo0", repr(elo0), "--elo1", repr(elo1),
              "--alpha", repr(alpha), "--beta", repr(beta), "--max-deals", str(max_deals)]
    if seed is not None:
        words += ["--seed", str(seed)]
    words += ["--db", str(db), "--decision-ms", str(decision_ms)]
    for directory in bots_dir or []:
        words += ["--bots", str(directory)]
    words += ["--sandbox", sandbox_mode, "--engine", engine]
    if workers is not None:
        words += ["--workers", str(workers)]
    if address is not None:
        words += ["--address", address]
    return " ".join([_me(), *map(shlex.quote, words)])


def _sprt_stopped(test: Any, summary: Any, interrupted: bool,
                  missing: int) -> tuple[Optional[str], Optional[int]]:
    """Why a test without its answer stopped, and the exit code (None: it
    has its answer, or reached the cap)."""
    if test.stop() is not None:
        return None, None
    if interrupted:
        return "interrupted (Ctrl-C or a stop signal) before a verdict", EXIT_INTERRUPTED
    if summary is not None and (summary.broken or summary.left):
        bots = sorted(set(summary.broken) | set(summary.left))
        said = "; ".join(f"bot {bot} {summary.broken_why.get(bot, 'did not start')}, "
                         f"{summary.left.get(bot, 0)} of its matches left unplayed"
                         for bot in bots)
        names = " and ".join(f"`league check {bot.split('@')[0]}`" for bot in bots)
        return f"stopped before a verdict: {said}; see {names}, fix it and resume", EXIT_BOT
    if summary is not None and summary.errors:
        return (f"stopped before a verdict: {summary.errors} matches ended in a harness error "
                f"(not stored; see the log above; a resumed run plays them again)",
                EXIT_HARNESS_ERROR)
    return (f"stopped before a verdict with {missing} deals not fully played (their matches "
            f"are played when the test resumes)", EXIT_HARNESS_ERROR)


def _print_sprt(test: Any, league: Any, why: Optional[str] = None) -> None:
    """The test's state: deals, comparisons, Elo, LLR, and the verdict or
    why there is none."""
    low, high = test.bounds()
    estimate = test.estimate()
    stop = test.stop()
    per = " per member" if test.team_size > 1 else ""
    counts = test.counts()
    typer.echo(f"SPRT {league.game}, {league.players} players, {league.candidate} (B) against "
               f"{league.baseline} (A), field {', '.join(league.field_bots)}")
    after = test.deals - test.used()
    typer.echo(f"  deals: {test.used()} of at most {test.max_deals} ({4 * test.used()} matches)"
               + (f"; {after} more played after the stop, not counted" if after else ""))
    typer.echo(f"  comparisons with the field seats (ties left out): B won {counts.b_wins}, "
               f"lost {counts.b_losses}; A won {counts.a_wins}, lost {counts.a_losses}")
    typer.echo(f"  Elo of B over A {estimate.elo:+.1f} [{estimate.elo_low:+.1f}, "
               f"{estimate.elo_high:+.1f}] (table Elo{per}), LOS {estimate.los:.1%}")
    typer.echo(f"  LLR {test.llr():.3f}, bounds [{low:.3f}, {high:.3f}] (elo0 {test.elo0:g}, "
               f"elo1 {test.elo1:g}, alpha {test.alpha:g}, beta {test.beta:g})")
    typer.echo(f"  verdict: {_sprt_verdict(test, league, stop, why)}")


def _sprt_verdict(test: Any, league: Any, stop: Any, why: Optional[str]) -> str:
    b, a = league.candidate, league.baseline
    if stop is None:
        if not test.deals:
            return f"none yet: {why or 'no deal fully played'}"
        low, high = test.bounds()
        return (f"none yet: {why or 'the test goes on'} (LLR {test.llr():.3f}, between the "
                f"bounds {low:.3f} and {high:.3f}, after {test.deals} deals)")
    if stop.verdict is None:
        from harness.sprt import MIN_CELL

        if min(test.counts()) < MIN_CELL:
            return (f"none: the cap ({stop.deals} deals) came before a bound, with fewer than "
                    f"{MIN_CELL} of one count of comparisons (a field that A and B nearly always "
                    "beat, or lose to, tells little: try another --field)")
        return (f"none: the cap ({stop.deals} deals) came before a bound, and the estimate "
                f"cannot yet tell {test.elo0:g} from {test.elo1:g} Elo (it has "
                f"{stop.information / stop.needed:.0%} of the information a fixed-sample test of "
                "the two needs); raise --max-deals to go on")
    said = (f"H1: {b} is better than {a} (by {test.elo1:g} Elo or more)" if stop.verdict == "H1"
            else f"H0: {b} is not better than {a} by {test.elo1:g} Elo (B is about "
                 f"{test.elo0:g} Elo better, or worse)")
    if stop.reason == "bounds":
        side = "upper" if stop.verdict == "H1" else "lower"
        return f"{said}; the LLR reached the {side} bound at deal {stop.deals}"
    return (f"{said}; decided at the cap ({stop.deals} deals) with no bound crossed, as a "
            f"fixed-sample test would (the estimate rejects {test.elo0 if stop.verdict == 'H1' else test.elo1:g} "
            "Elo at the test's error rate)")


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


from harness import cli_results  # noqa: E402,F401 - registers the read commands on `app`


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    # run the imported module's app, the one the read commands registered on
    from harness.cli import main as imported_main

    imported_main()
