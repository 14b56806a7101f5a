"""``league sprt``: is B better than A? The command that plays and resumes
the sequential test (harness.cli.sprt_run) and prints its verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from games import UnknownGameError, get_game
from harness.cli.common import (
    _OPTIONS,
    EXIT_BOT,
    EXIT_HARNESS_ERROR,
    EXIT_INTERRUPTED,
    BotsOption,
    DbOption,
    DecisionOption,
    SandboxOption,
    _check_identity,
    _log_to_stderr,
    _me,
    _play_league,
    _resolve_bots,
    _sandbox,
    _store,
    app,
    fail,
)
from harness.stats import sprt_defaults as _SPRT

SPRT_HELP_HEAD = (
    "Is B better than A? A sequential probability ratio test on paired duplicate deals (B in "
    "A's seat, on A's cards, against the same field), stopped as soon as the answer is clear; "
    "resumable, stored like a league. Its Elo is the `league table`'s (per member in team "
    "games): the odds of finishing ahead of a field seat, B's against A's.")


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
             "deals from a secret key kept beside the database."),
    db: Path = DbOption,
    workers: Optional[int] = typer.Option(None, "--workers", "-w", min=1, metavar="N"),
    engine: str = typer.Option("auto", metavar="auto|ray|inline",
                               help="As `league run --engine`: auto (default), ray or inline."),
    address: Optional[str] = typer.Option(None, metavar="HOST:PORT",
                                          help="Existing Ray cluster (default: embedded)."),
    decision_ms: int = DecisionOption(),
    bots_dir: Optional[list[Path]] = BotsOption,
    sandbox_mode: str = SandboxOption,
) -> None:
    from harness.cli.sprt_run import StoredTest, sprt_league
    from harness.limits import Limits

    if engine not in ("auto", "ray", "inline"):
        fail(f"--engine {engine!r}: choose auto, ray or inline")
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
    specs = _resolve_bots(names, game, bots_dir, db)
    if specs[baseline].name == specs[candidate].name:
        fail("A and B are the same bot")
    resume = _sprt_resume(game, baseline, candidate, field_names, seats, elo0, elo1, alpha, beta,
                          max_deals, seed, db, workers, engine, address, decision_ms, bots_dir,
                          sandbox_mode)
    _log_to_stderr()
    sandbox = _sandbox(sandbox_mode, check=False)  # checked only if a match is to be played
    league = sprt_league(game, specs[baseline], specs[candidate],
                         [specs[f] for f in field_names], seats, max_deals,
                         Limits(decision_ms=decision_ms), seed)
    store = _store(db)
    _check_identity(store, league, league.name)
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
    store.set_league_stopped(league.name, _stopped_note(test.stop()))
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


def _stopped_note(stop: Any) -> Optional[str]:
    """Why the test's league ends short of its schedule, for `league status`
    and the report (None: it goes on, and its unplayed matches remain)."""
    if stop is None:
        return None
    if stop.verdict is None:
        return f"ended at the cap ({stop.deals} deals) with no verdict"
    at_cap = "" if stop.reason == "bounds" else ", at the cap"
    return f"decided: {stop.verdict} accepted after {stop.deals} deals{at_cap}"


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
        from harness.stats.sprt import MIN_CELL

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
