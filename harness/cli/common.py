"""What the ``league`` commands share: the Typer ``app`` and its global
options, the exit codes, the options several commands take, ``fail``, and
the helpers that pick the sandbox, open the results database and play a
league.

The commands live beside it (play, run, sprt, results): each imports this
module and none imports another; ``harness.cli`` imports them all, so that
they register on ``app``. An ordinary mistake never prints a traceback: one
line says what is wrong and what to do (``fail``), and the exit code says
which kind of problem it was (see EXIT_CODES).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

from harness.limits import DEFAULT_LIMITS, LIMIT_BOUNDS
from harness.proc.catalog import ManifestError, UnknownBotError, resolve
from harness.proc.safe_text import printable

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

# How every command names a fault made after a match ended (records.EndFault).
END_FAULT = "FAULT after the match ended (while handling `end`; the standings stand):"

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


def DecisionOption(help: str = "Per-decision deadline (wall clock); by default a league's."
                   ) -> Any:
    """``--decision-ms`` (of `league play`, `check`, `sprt`): its default is
    a league's, from the one definition of the limits (harness.limits)."""
    return typer.Option(DEFAULT_LIMITS.decision_ms, "--decision-ms", min=1, metavar="MS", help=help)


def ClockOption() -> Any:
    """``--clock-ms`` (of `league play`, `check`): a match clock per bot."""
    return typer.Option(DEFAULT_LIMITS.clock_ms, "--clock-ms", min=0,
                        max=LIMIT_BOUNDS["clock_ms"][1], metavar="MS",
                        help="A match clock per bot, all its decisions together (0: none); "
                             "each decision may take at most what is left of it. By default "
                             "a league's.")


def IncrementOption() -> Any:
    return typer.Option(DEFAULT_LIMITS.increment_ms, "--increment-ms", min=0,
                        max=LIMIT_BOUNDS["increment_ms"][1], metavar="MS",
                        help="Added to the clock after each decision (needs --clock-ms).")


def BankOption() -> Any:
    return typer.Option(DEFAULT_LIMITS.bank_ms, "--bank-ms", min=0,
                        max=LIMIT_BOUNDS["bank_ms"][1], metavar="MS",
                        help="Overage per bot per match: a decision may run over "
                             "--decision-ms, the excess drawn from this bank (0: none).")


def time_limits(decision_ms: int, clock_ms: int, increment_ms: int, bank_ms: int,
                startup_ms: int = DEFAULT_LIMITS.startup_ms) -> Any:
    """The Limits the time options give; an increment without a clock is refused."""
    from harness.limits import Limits

    if increment_ms and not clock_ms:
        fail(f"--increment-ms {increment_ms} is added to a match clock: give --clock-ms too "
             "(or --bank-ms, overage on top of --decision-ms)")
    return Limits(decision_ms=decision_ms, startup_ms=startup_ms, clock_ms=clock_ms,
                  increment_ms=increment_ms, bank_ms=bank_ms)


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
    _warnings_to_stderr()


_OPTIONS: dict[str, bool] = {"accept_weak_limits": False}


def _sandbox(mode: str, check: bool = True) -> Any:
    """The isolation to run bots in; refuses a machine where it cannot work.
    ``check=False`` leaves the probe (a bwrap start) to whoever starts a bot
    (run_league, only where it has a match to play; _play_league says why)."""
    from harness.proc.sandbox import Sandbox, SandboxUnavailable

    try:
        sandbox = Sandbox(mode, weak_limits_ok=_OPTIONS["accept_weak_limits"])
        if check:
            sandbox.check()
    except (ValueError, SandboxUnavailable) as exc:
        fail(str(exc))
    if sandbox.mode == "bwrap" and _OPTIONS["accept_weak_limits"]:
        from harness.proc.sandbox import probe

        for weakness in probe().weaknesses():
            typer.secho(f"warning: --accept-weak-limits: {weakness}", fg=typer.colors.YELLOW,
                        err=True)
    if sandbox.mode == "none":
        typer.secho("warning: --sandbox none: bots run unisolated, with your rights; use it "
                    "only for bots you trust", fg=typer.colors.YELLOW, err=True)
    return sandbox


def _warnings_to_stderr() -> None:
    """Every command: the library's warnings (a LEAGUE_BOT_PATH folder that
    does not exist, a rebuilt bot copy) reach the user on stderr."""
    logger = logging.getLogger("harness")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    if logger.level == logging.NOTSET or logger.level > logging.WARNING:
        logger.setLevel(logging.WARNING)


def _log_to_stderr() -> None:
    """The library logs; the CLI decides that its messages reach the user.
    (Ray is not imported here: a run that needs no Ray never pays for it, and
    the runner quiets Ray's start-up notices where it starts one.)"""
    _warnings_to_stderr()
    logging.getLogger("harness").setLevel(logging.INFO)


class _StderrHandler(logging.Handler):
    """Writes to whatever sys.stderr is at the time (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(printable(self.format(record)) + "\n")  # may quote a bot's words


def _bot_dirs(bots_dir: Optional[list[Path]]) -> Optional[list[Path]]:
    for directory in bots_dir or []:
        if not directory.is_dir():
            fail(f"--bots {directory}: no such folder")
    return bots_dir


def _resolve_bots(names: list[str], game: str, bots_dir: Optional[list[Path]],
                  ladder_db: Optional[Path] = None) -> dict[str, Any]:
    """The bots by name; with ``ladder_db`` (a `league serve` site's file),
    ``NAME@vN`` is version N of a bot submitted there."""
    specs = {}
    for name in names:
        try:
            specs[name] = (_ladder_version(ladder_db, name) if ladder_db and "@v" in name
                           else resolve(name, _bot_dirs(bots_dir)))
            specs[name].version_hash()  # its files too: outside its folder, over the caps
        except (OSError, UnknownBotError, ManifestError) as exc:
            fail(str(exc))
        if not specs[name].plays(game):
            fail(f"bot {name!r} does not play {game} (its manifest's games: "
                 f"{', '.join(specs[name].games or ())})")
    return specs


def _ladder_version(db: Path, name: str) -> Any:
    """A validated version of a site's bot, as ``BOT.vN`` (bot names are one
    identity in a league: two versions need two names)."""
    from dataclasses import replace

    from harness.proc.catalog import load_manifest
    from harness.serve.db import ServerStore
    from harness.serve.storage import Storage

    bot, _, number = name.rpartition("@v")
    if not number.isdigit() or not db.exists():
        raise UnknownBotError(name)
    version = ServerStore(db).version(bot, int(number))
    if version is None or version.state not in ("valid", "paused", "retired"):
        raise UnknownBotError(f"{name} (no validated version {number} of {bot!r} in {db})")
    ready = Storage(Path(f"{db}.bots")).ready(version.sha256)
    if not ready.is_dir():
        raise UnknownBotError(f"{name} (its built files are not in {db}.bots)")
    return replace(load_manifest(ready / "bot.toml"), name=f"{bot}.v{number}")


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


def _store(db: Path, readonly: bool = False) -> Any:
    from harness.store import Store, StoreError

    try:
        return Store(db, readonly=readonly)
    except StoreError as exc:
        fail(str(exc), EXIT_DB)


# time_odds: one bot's own times tilt results toward or against it, where the
# league's own limits (not here) re-time every bot alike
IDENTITY_FIELDS = ("game", "players", "seed", "bots", "rotation", "partners", "copies",
                   "time_odds")


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


def _play_league(league: Any, store: Any, **options: Any) -> Any:
    """``run_league``, an ``--address`` that reaches no cluster, or a sandbox
    that cannot run here, being bad input."""
    from harness.proc.sandbox import SandboxUnavailable
    from harness.runner import ClusterUnreachable, run_league

    try:
        return run_league(league, store, **options)
    except (ClusterUnreachable, SandboxUnavailable) as exc:
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


def build_bot(spec: Any, sandbox: Any, timeout_s: float | None = None) -> None:
    """Run a bot's build step (harness.proc.build), saying so in a verdict
    line; a build that fails, or cannot start, ends the command (exit 3, with
    the tail of its output, escaped: a build prints what a stranger wrote)."""
    from harness.proc.build import BUILD_TIMEOUT_S, BuildError, run_build

    try:
        result = run_build(spec, sandbox, timeout_s or BUILD_TIMEOUT_S)
    except BuildError as exc:
        fail(str(exc), EXIT_BOT)
    summary = printable(result.summary(spec), False)  # the manifest's argv
    if result.ok:
        typer.echo(f"{typer.style('ok  ', fg=typer.colors.GREEN)} {summary}")
        return
    typer.echo(f"{typer.style('FAIL', fg=typer.colors.RED)} {summary}")
    shown = result.shown_output()
    typer.echo(f"\nlast {len(shown)} lines of its output:" if shown else "\nit printed nothing")
    for line in shown:
        typer.echo(f"  | {printable(line)}")
    raise typer.Exit(EXIT_BOT)
