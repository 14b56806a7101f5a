"""``league run``: play a league's scheduled matches not yet stored, with a
progress bar, and say what was played, what is missing and why."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

import typer

from harness.cli.common import (
    EXIT_BOT,
    EXIT_HARNESS_ERROR,
    EXIT_INTERRUPTED,
    BotsOption,
    DbOption,
    SandboxOption,
    _bot_dirs,
    _check_identity,
    _log_to_stderr,
    _me,
    _play_league,
    _sandbox,
    _store,
    app,
    fail,
)
from harness.proc.safe_text import printable


def _load_league(league: str, bots_dir: Optional[list[Path]]) -> Any:
    from harness.league import LeagueFileError, load_league

    try:
        loaded = load_league(league, _bot_dirs(bots_dir))
    except LeagueFileError as exc:
        fail(str(exc))
    for message in loaded.left_out:  # a broken entrant; the others play
        typer.secho(f"warning: {printable(message)}", fg=typer.colors.YELLOW, err=True)
    return loaded


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
        help="Parallel match workers; more than 1 are Ray actors (--engine auto). Default: 1 "
             "in this process, or the CPU count on Ray."),
    per_worker: Optional[int] = typer.Option(
        None, "--matches-per-worker", min=1, metavar="N",
        help="Matches each worker keeps in flight at once, interleaved on one thread (while one "
             "waits for a bot, another uses the core); default: 2 when there are fewer workers "
             "than CPUs, else 1."),
    address: Optional[str] = typer.Option(
        None, metavar="HOST:PORT",
        help="Existing Ray cluster, or auto: the one `ray start` began on this machine "
             "(default: an embedded Ray of its own, whatever RAY_ADDRESS says)."),
    engine: str = typer.Option(
        "auto", metavar="auto|ray|inline",
        help="auto (default): Ray with --address or more than one --workers; else in this "
             "process, handing what is left to an embedded Ray only on a machine of more than "
             "2 CPUs once it would take over 60 s more here. ray or inline: always that."),
    max_matches: Optional[int] = typer.Option(None, min=1, metavar="N",
                                              help="Stop after this many new matches."),
    bots_dir: Optional[list[Path]] = BotsOption,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    sandbox_mode: str = SandboxOption,
) -> None:
    """Play every scheduled match of a league not yet in the database (resumable)."""
    if engine not in ("auto", "ray", "inline"):
        fail(f"--engine {engine!r}: choose auto, ray or inline")
    _log_to_stderr()
    sandbox = _sandbox(sandbox_mode, check=False)  # checked only if a match is to be played
    spec = _load_league(league, bots_dir)
    store = _store(db)
    _check_identity(store, spec, league)
    live = [r for r in store.live_runs(spec.name) if r["pid"] != os.getpid()]
    if live:
        fail(f"league {spec.name!r} is already running in {db} (pid {live[0]['pid']} on "
             f"{live[0]['host']}); two runs would play the same matches")
    from harness.runner import count_schedule

    counts = count_schedule(spec, store)
    typer.echo(f"league {spec.name}: {spec.game}, {len(spec.bots)} bots, {spec.players} per "
               f"match: {_plan(counts, store, spec, db)}", err=True)
    _warn_seat_order(spec)
    bar = None if quiet else ProgressBar({spec.bot_id(n): n for n in spec.bots})
    resume = f"{_me()} run {league} --db {db}"
    try:
        summary = _play_league(spec, store, workers=workers, engine=engine, address=address,
                               progress=bar, max_matches=max_matches, concurrency=per_worker,
                               sandbox=sandbox, counts=counts)
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


def _plan(counts: Any, store: Any, league: Any, db: Path) -> str:
    """What the run has to do, in numbers that add up: to play, of the
    scheduled, the rest stored already (for these bot versions), and the
    league's other stored matches, which the schedule does not hold."""
    said = (f"{counts.to_play} to play ({counts.scheduled} scheduled; {counts.stored} already "
            f"stored in {db} for these bot versions")
    if counts.elsewhere:
        kinds = store.league_counts(league.name, [league.bot_id(n) for n in league.bots],
                                    league.deals).elsewhere()
        said += f"; also stored: {kinds or counts.elsewhere}, kept and rated as such, not counted"
    return said + ")"


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


def _report(summary: Any, resume: str) -> None:
    """The run's last lines: what was played, and what is missing and why
    (harness errors, broken bots), with how to play the rest."""
    if not (summary.played or summary.unplayed or summary.errors or summary.interrupted):
        typer.echo("nothing to play: every scheduled match is stored", err=True)
        return
    per_match = summary.process_starts / summary.played if summary.played else 0.0
    typer.echo(f"played {summary.played} matches in {summary.elapsed_s:.1f}s "
               f"({summary.rate:.1f}/s after {summary.startup_s:.1f}s of start-up; "
               f"{_engine_words(summary.engine)}{summary.workers} worker(s) x "
               f"{summary.in_flight} in flight), "
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


def _engine_words(engine: str) -> str:
    """How the run played, before its workers: "inline, " (in this process),
    "Ray, " or "inline, then Ray, " (a hand-over, --engine auto)."""
    return (engine.replace("ray", "Ray") + ", ") if engine else ""


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
    from harness.stats.ratings import rate

    rows = rate(store.ratings_source(league))
    store.save_ratings(league, [r.as_dict() for r in rows])
    return rows
