"""The ``league`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from games import UnknownGameError, get_game, implemented_games
from harness.catalog import ManifestError, UnknownBotError, discover, resolve

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Tournament and bot-competition harness for eleven card and dice games.")

BotsOption = typer.Option(None, "--bots", help="Extra directory of bot manifests (repeatable).")
DbOption = typer.Option(Path("results.db"), "--db", help="SQLite results file.")


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
    try:
        catalog = discover(bots_dir)
    except ManifestError as exc:
        fail(str(exc))
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
) -> None:
    """Play one match and print its log and standings."""
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
    limits = Limits(decision_s=decision_ms / 1000, startup_s=startup_ms / 1000)
    pool = BotPool({spec.name: spec for spec in specs.values()}, limits)
    try:
        events = (lambda line: typer.echo(line)) if verbose else None
        typer.echo(f"{info.title}: {len(players)} players, seed {seed}")
        result = run_match(game, seed, [specs[p].name for p in players], pool, limits,
                           match_id=f"play-{game}-{seed}", on_event=events)
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


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
