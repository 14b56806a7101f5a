"""The ``league`` commands about one bot or one match: games, bots, play,
check and doctor."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

import typer

from games import UnknownGameError, get_game, implemented_games
from harness.cli.common import (
    END_FAULT,
    EXIT_BOT,
    EXIT_INTERRUPTED,
    BankOption,
    BotsOption,
    ClockOption,
    DecisionOption,
    IncrementOption,
    SandboxOption,
    _bot_dirs,
    _resolve_bots,
    _sandbox,
    app,
    build_bot,
    fail,
    print_stderr_tail,
    time_limits,
)
from harness.limits import DEFAULT_LIMITS
from harness.match import STDERR_MATCH_BYTES
from harness.proc.botproc import STDERR_DECISION_BYTES, STDERR_DECISION_LINES
from harness.proc.catalog import ManifestError, UnknownBotError, discover_all, resolve
from harness.proc.safe_text import printable
from harness.suggest import did_you_mean


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
        fail(str(exc))  # it names the known games
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
    show_stderr: bool = typer.Option(
        False, "--stderr",
        help="Show what each bot wrote to stderr, per decision (with -v, under each decision; "
             f"else after the match): each decision's first {STDERR_DECISION_LINES} lines "
             f"within {STDERR_DECISION_BYTES // 1024} KiB, {STDERR_MATCH_BYTES // 1024} KiB a "
             "bot a match."),
    decision_ms: int = DecisionOption(),
    clock_ms: int = ClockOption(),
    increment_ms: int = IncrementOption(),
    bank_ms: int = BankOption(),
    startup_ms: int = typer.Option(DEFAULT_LIMITS.startup_ms, min=1, metavar="MS",
                                   help="Start-up and handshake deadline; by default a league's."),
    bots_dir: Optional[list[Path]] = BotsOption,
    json_out: bool = typer.Option(False, "--json", help="Print only the result record, as JSON."),
    sandbox_mode: str = SandboxOption,
    human: Optional[int] = typer.Option(
        None, "--human", min=0, metavar="SEAT",
        help="Play this seat yourself, in the terminal (your view only; q quits); the bots "
             "take the other seats in order."),
) -> None:
    """Play one match and print its log and standings.

    Exit codes: 0 every bot played cleanly; 3 a bot faulted, during the
    match or after it ended (it died, or wrote to stdout, while handling
    `end`: the standings stand, the fault is shown below them); 2 bad input."""
    from harness.human import HumanQuit
    from harness.league import play_match_id
    from harness.match import BotPool, run_match
    from harness.replay import seats_header

    try:
        info = get_game(game).INFO
        info.check_players(len(players) + (human is not None))
    except (UnknownGameError, ValueError) as exc:
        fail(str(exc))
    specs = _resolve_bots(players, game, bots_dir)
    sandbox = _sandbox(sandbox_mode)
    limits = time_limits(decision_ms, clock_ms, increment_ms, bank_ms, startup_ms)
    pool = BotPool({spec.name: spec for spec in specs.values()}, limits, sandbox)
    names = [specs[p].name for p in players]
    if human is not None:
        names, pool = _seat_human(human, names, pool, verbose or trace or json_out)
    say = (lambda line: typer.echo(line, err=True)) if json_out else typer.echo
    if trace:
        pool.trace = lambda way, bot, message: say(trace_line(way, bot, message))
    pool.keep_stderr = show_stderr
    if not json_out:
        typer.echo(f"{info.title}: {len(names)} players, seed {seed}")
        if verbose:
            typer.echo(seats_header(names))
    try:
        # The ID says nothing about the deal (bots see it in `start`), yet is
        # the same for the same seed and bots, so a match replays exactly.
        result = run_match(game, seed, names, pool, match_id=play_match_id(game, seed, names),
                           on_event=say if verbose else None)
    except HumanQuit as quit:
        typer.echo(f"\nyou quit ({quit}): the match is abandoned, nothing is recorded")
        raise typer.Exit(EXIT_INTERRUPTED if quit.interrupted else 0) from None
    finally:
        pool.close()
    # a bot that failed on the match's `end` is seen as it is closed
    result.end_faults += [fault for fault in getattr(pool, "take_end_faults", list)()
                          if fault.match_id == result.match_id]
    if json_out:
        typer.echo(json.dumps(result.to_dict()))
    else:
        if show_stderr and not verbose:
            print_decision_stderr(result)
        print_standings(result)
    if any(result.faults) or result.end_faults:
        raise typer.Exit(EXIT_BOT)


def _seat_human(seat: int, names: list[str], pool: Any, shows_more: bool) -> tuple[list[str], Any]:
    """The seat names with a person at ``seat``, and a pool that serves that
    seat in this process (harness.human) and the bots' as before."""
    from harness.human import HumanSeat
    from harness.local import LocalPool

    if shows_more:
        fail("--human shows your seat's view only: --verbose, --trace and --json would show "
             "the other seats' moves and messages")
    if seat > len(names):
        fail(f"--human {seat}: the seats are 0 to {len(names)} ({len(names)} "
             f"bot{'s' if len(names) > 1 else ''} and you)")
    name = "human"
    while name in names:  # a bot of that name: the person's seat keeps its own
        name += "_"
    seated = [*names[:seat], name, *names[seat:]]
    return seated, LocalPool({name: HumanSeat}, pool.limits, specs=pool.specs,
                             sandbox=pool.sandbox, raise_errors=True, bundles=pool.bundles)


def trace_line(way: str, bot: str, message: Any) -> str:
    """One ``--trace`` line: a message as JSON, whichever encoding the bot
    speaks; bytes that decoded to no message (their fault follows) escaped,
    at most TRACE_BYTES of them."""
    from harness.proc.botproc import describe_bytes

    arrow = ">>" if way == "to" else "<<"
    if isinstance(message, bytes):
        return (f"{arrow} {printable(bot, False)}: {len(message):,} bytes that decode to no "
                f"message: {describe_bytes(message, TRACE_BYTES)}")
    return f"{arrow} {printable(bot, False)}: {json.dumps(message, default=repr)}"


TRACE_BYTES = 400  # of a reply that did not decode, in --trace


def print_decision_stderr(result: Any) -> None:
    """Each decision's stderr, by decision (``league play --stderr`` without -v)."""
    from harness.replay import stderr_lines

    typer.echo(f"\nstderr by decision ({len(result.stderr)} with output):"
               if result.stderr else "\nstderr: no bot wrote to stderr")
    for entry in sorted(result.stderr, key=lambda e: (e.decision, e.seat)):
        typer.echo(f"  [{entry.decision}]")
        for line in stderr_lines(entry.seat, result.bots[entry.seat], entry.text):
            typer.echo(line)


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
    for end_fault in result.end_faults:
        typer.echo(f"  seat {end_fault.seat} {bots[end_fault.seat]}: {END_FAULT} "
                   f"{end_fault.kind}: {printable(end_fault.detail, False)}")
    for seat, fault in enumerate(result.faults):
        if fault is not None:
            print_stderr_tail(f"seat {seat} ({bots[seat]})", fault.stderr_tail)
    for end_fault in result.end_faults:
        print_stderr_tail(f"seat {end_fault.seat} ({bots[end_fault.seat]})",
                          end_fault.stderr_tail)


# ---- compliance ------------------------------------------------------------------------
@app.command(short_help="Check that a bot follows the protocol, step by step; exits 3 on any "
                         "failure.")
def check(
    bot: str = typer.Argument(..., help="Bot name, or the path of its manifest."),
    game: Optional[list[str]] = typer.Option(None, "--game", "-g", metavar="GAME",
                                             help="Only these games (repeatable)."),
    decision_ms: int = DecisionOption("The decision limit to check the bot's times against; by "
                                      "default a league's."),
    clock_ms: int = ClockOption(),
    increment_ms: int = IncrementOption(),
    bank_ms: int = BankOption(),
    bots_dir: Optional[list[Path]] = BotsOption,
    sandbox_mode: str = SandboxOption,
    no_build: bool = typer.Option(False, "--no-build",
                                  help="Check the files as they are: skip the manifest's build "
                                       "step, which runs first by default."),
) -> None:
    """Check that a bot follows the protocol: handshake, one match per game and
    player count, legal answers in time, nothing but protocol messages on
    stdout (none after the last reply either), a clean quit. Prints a verdict per step; exits 3 on any failure. A bot with
    a build step in its manifest is built first (as `league build` does)."""
    from harness.check import run_checks

    try:
        spec = resolve(bot, _bot_dirs(bots_dir))
    except (OSError, UnknownBotError, ManifestError) as exc:
        fail(str(exc))
    sandbox = _sandbox(sandbox_mode) if spec.build and not no_build else None
    if sandbox is not None:
        build_bot(spec, sandbox)
    try:
        spec.version_hash()  # its files too: outside its folder, over the caps
    except (OSError, UnknownBotError, ManifestError) as exc:
        fail(str(exc))
    slugs = game or [g for g in implemented_games() if spec.plays(g)]
    for slug in slugs:
        if slug not in implemented_games():
            fail(f"unknown game {slug!r}{did_you_mean(slug, implemented_games())}; known games: "
                 f"{', '.join(implemented_games())}")
        if not spec.plays(slug):
            fail(f"bot {spec.name!r} does not play {slug}")
    sandbox = sandbox or _sandbox(sandbox_mode)
    failures = 0
    limits = time_limits(decision_ms, clock_ms, increment_ms, bank_ms)
    for verdict in run_checks(spec, slugs, limits, sandbox):
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


@app.command()
def doctor() -> None:
    """Which bot isolation works on this machine, and why not where it does not."""
    from harness.proc.sandbox import probe

    found = probe()
    for line in found.lines():
        typer.echo(line)
    typer.echo(f"harness user: {'root' if found.root else 'uid ' + str(os.geteuid())}")
    if not found.bwrap_works:
        typer.echo("league run and league play refuse to start bots until bubblewrap works, "
                   "unless given --sandbox none (trusted bots only)")
        raise typer.Exit(1)
