"""The ``league`` read commands: table, status, matches, report, replay and logs.

They open the results database read-only: reading never writes a byte.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any, Optional

import typer

from harness.cli.common import END_FAULT, DbOption, _store, app, fail, print_stderr_tail
from harness.proc.safe_text import printable
from harness.suggest import did_you_mean


def _ahead(elo: float) -> str:
    """How often a side ``elo`` above another finishes ahead of it when they
    do not tie, as the ratings' model has it (harness.stats.ratings)."""
    return f"{100 / (1 + 10 ** (-elo / 400)):.0f}%"


TABLE_HELP = "Elo ratings from one fit of all stored results of a league.\n\n" + textwrap.fill(
    "The Elo difference d gives the odds of finishing ahead: 10^(d/400) to 1, ties aside (ties "
    "do not move ratings), at any number of seats. In team games the Elo is per member and a "
    f"team plays at the sum of its members' Elo. So with A 100 points above B: alone, A "
    f"finishes ahead of B {_ahead(100)} of the time; with teams of copies, two copies of A "
    f"ahead of two of B {_ahead(200)} (200 between the teams); with mixed partners, A and any "
    f"partner ahead of B and the same partner {_ahead(100)}. Mean 1500. Intervals (95%) and LOS come from one t approximation of the fit, whose variance is "
    "the model's after one deal and more and more the one measured between deal groups as "
    "deals are added. Below the table: each bot against the next one down, the Elo difference "
    "with its interval and the likelihood of superiority (LOS: the chance that the first is "
    "the stronger; the interval is above 0 exactly when LOS is above 97.5%); --versus A "
    "--versus B for any two. By default each bot's latest version is shown; the fit uses "
    "every version's results. ms/move and max ms: the bot's mean and slowest decision, wall "
    "clock as the deadline counts it.", 76)


def _league_name(store: Any, league: str) -> str:
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
        return str(name)
    fail(f"no league {league!r}{did_you_mean(league, known)} in {store.path}; known: "
         f"{', '.join(known) or 'none yet'}")


@app.command(help=TABLE_HELP)
def table(
    league: str = typer.Argument(..., help="League name (as stored) or league file."),
    db: Path = DbOption,
    matrix: bool = typer.Option(False, "--matrix",
                                help="Also the head-to-head score rates, ordered by rating."),
    all_versions: bool = typer.Option(False, "--all-versions",
                                      help="Show every version of each bot, not just the latest."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Machine-readable CSV."),
    versus: Optional[list[str]] = typer.Option(
        None, "--versus", metavar="BOT", help="Twice: the difference between these two bots."),
) -> None:
    from harness.stats.ratings import head_to_head, rating_fit

    store = _store(db, readonly=True)
    name = _league_name(store, league)
    if not store.league_match_count(name)[0]:
        fail(f"no results for league {name!r} in {db}")
    if versus is not None and len(versus) != 2:
        fail("--versus takes two bots: --versus A --versus B")
    # the sufficient statistics the store keeps (else seat rows, read in chunks)
    fit = rating_fit(store.ratings_source(name))
    rows = fit.rows
    if not all_versions:
        latest = {versions[-1] for versions in store.bot_versions().values()}
        rows = [r for r in rows if r.bot in latest] or rows
    labels = _labels([r.bot for r in rows])
    order = [r.bot for r in rows]
    pairs = _differences(fit, order, versus)
    think = store.think_times(name)
    if as_json:
        payload: dict[str, Any] = {"league": name,
                                   "ratings": [{**r.as_dict(), **_think_dict(think.get(r.bot))}
                                               for r in rows],
                                   "differences": [d.as_dict() for d in fit.differences()
                                                   if d.first in order and d.second in order]}
        if matrix:
            bots, rates, games = _ordered_head_to_head(head_to_head(store.ratings_source(name)),
                                                       order)
            payload["head_to_head"] = {
                a: {b: (None if games[i][j] == 0 else round(float(rates[i][j]), 4))
                    for j, b in enumerate(bots) if i != j} for i, a in enumerate(bots)}
        typer.echo(json.dumps(payload, indent=2))
        return
    if as_csv:
        _print_csv(rows, think)
        return
    matches, faulted = store.league_match_count(name)
    typer.echo(f"league {name}: {matches} matches ({faulted} with faults)")
    _print_table(rows, labels, think)
    _print_differences(pairs, labels)
    if matrix:
        _print_matrix(_ordered_head_to_head(head_to_head(store.ratings_source(name)), order),
                      labels)


def _differences(fit: Any, order: list[str], versus: Optional[list[str]]) -> list[Any]:
    if versus:
        try:
            pair = fit.difference(versus[0], versus[1])
        except KeyError as exc:
            fail(str(exc.args[0]))
        _warn_twins(fit.bots, (pair.first, pair.second))
        return [pair]
    return [fit.difference(a, b) for a, b in zip(order, order[1:])]


def _warn_twins(bots: list[str], chosen: tuple[str, ...]) -> None:
    """--versus rates one name: copies of one bot (``copies`` in the league
    file, or bots repeated at a table) are that name, pooled, but the same
    code under other names is rated apart; say so."""
    for bot in chosen:
        name, _, version = bot.partition("@")
        twins = [b.split("@")[0] for b in bots
                 if b != bot and version and b.partition("@")[2] == version]
        if twins:
            typer.secho(f"note: {', '.join(printable(t, False) for t in twins)} "
                        f"{'is' if len(twins) == 1 else 'are'} the same code as "
                        f"{printable(name, False)} under another name, rated apart: this compares "
                        f"{printable(name, False)} alone (seat copies of one bot with copies = "
                        f"{{ {printable(name, False)} = N }} to pool them)",
                        err=True, fg=typer.colors.YELLOW)


def _print_differences(pairs: list[Any], labels: dict[str, str]) -> None:
    if not pairs:
        return
    typer.echo("\nElo difference (per member in team games), 95% interval and likelihood of "
               "superiority (LOS, the chance that the first is the stronger):")
    width = max(len(labels.get(d.first, d.first)) + len(labels.get(d.second, d.second))
                for d in pairs) + 4
    for d in pairs:
        who = f"{labels.get(d.first, d.first)} - {labels.get(d.second, d.second)}"
        typer.echo(f"  {who:{width}} {d.elo:+7.1f} [{d.elo_low:+7.1f}, {d.elo_high:+7.1f}]  "
                   f"LOS {d.los:6.1%}")


def _labels(bot_ids: list[str]) -> dict[str, str]:
    """name, or name@version-prefix where one name has several versions shown;
    escaped, since a bot names itself."""
    names = [b.split("@")[0] for b in bot_ids]
    return {b: printable(n if names.count(n) == 1 else f"{n}@{b.split('@', 1)[1][:6]}", False)
            for b, n in zip(bot_ids, names)}


Think = dict[str, tuple[int, float, float]]


def _think_dict(times: tuple[int, float, float] | None) -> dict[str, Any]:
    """A bot's think time: mean and slowest decision, ms (None: not timed)."""
    if times is None:
        return {"think_ms_mean": None, "think_ms_max": None}
    return {"think_ms_mean": round(times[1], 2), "think_ms_max": round(times[2], 2)}


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def _print_table(rows: list[Any], labels: dict[str, str], think: Think) -> None:
    cells = []
    for i, r in enumerate(rows, 1):
        times = _think_dict(think.get(r.bot))
        cells.append([str(i), labels[r.bot], f"{r.elo:.1f}", f"[{r.elo_low:.1f}, {r.elo_high:.1f}]",
                      str(r.games), f"{r.avg_score:.2f}", f"{r.avg_rank:.2f}", str(r.faults),
                      _ms(times["think_ms_mean"]), _ms(times["think_ms_max"])])
    header = ["#", "bot", "elo", "95% interval", "games", "avg score", "avg rank", "faults",
              "ms/move", "max ms"]
    widths = [max(len(row[c]) for row in cells + [header]) for c in range(len(header))]
    left = {1}
    for row in [header] + cells:
        typer.echo("  ".join(cell.ljust(w) if c in left else cell.rjust(w)
                             for c, (cell, w) in enumerate(zip(row, widths))).rstrip())


def _print_csv(rows: list[Any], think: Think) -> None:
    import csv

    writer = csv.writer(sys.stdout)
    writer.writerow(["rank", "bot", "elo", "elo_low", "elo_high", "games", "avg_score",
                     "avg_rank", "faults", "think_ms_mean", "think_ms_max"])
    for position, r in enumerate(rows, 1):
        times = _think_dict(think.get(r.bot))
        writer.writerow([position, printable(r.bot, False), f"{r.elo:.1f}", f"{r.elo_low:.1f}",
                         f"{r.elo_high:.1f}", r.games, f"{r.avg_score:.3f}",
                         f"{r.avg_rank:.3f}", r.faults,
                         "" if times["think_ms_mean"] is None else times["think_ms_mean"],
                         "" if times["think_ms_max"] is None else times["think_ms_max"]])


def _ordered_head_to_head(matrix: tuple[list[str], Any, Any],
                          order: list[str]) -> tuple[list[str], list[list[float]], list[list[float]]]:
    bots, rates, games = matrix
    position = {b: i for i, b in enumerate(bots)}
    keep = [b for b in order if b in position]
    index = [position[b] for b in keep]
    return (keep, [[float(rates[i][j]) for j in index] for i in index],
            [[float(games[i][j]) for j in index] for i in index])


def _print_matrix(matrix: tuple[list[str], list[list[float]], list[list[float]]],
                  labels: dict[str, str]) -> None:
    bots, rates, games = matrix
    typer.echo("\nhead to head: the row's score rate against the column (ties count half), "
               "n comparisons")
    names = [labels.get(b, b) for b in bots]
    cell = max(14, *(len(n) + 2 for n in names))
    first = max(len(n) for n in names) + 2
    typer.echo(" " * first + "".join(f"{n:>{cell}}" for n in names))
    for i, row_name in enumerate(names):
        cells = "".join(
            f"{'-':>{cell}}" if i == j or games[i][j] == 0
            else f"{f'{rates[i][j]:.1%} n={int(games[i][j])}':>{cell}}" for j in range(len(bots)))
        typer.echo(f"{row_name:{first}}{cells}")


@app.command()
def status(db: Path = DbOption) -> None:
    """Per league: matches scheduled, done, in flight, remaining and faulted.

    Done + remaining = scheduled: done counts the matches of its bots'
    versions as last run. Below the table: the stored matches not counted
    (earlier bot versions) and leagues that stopped early (a decided SPRT)."""
    store = _store(db, readonly=True)
    rows = store.leagues()
    if not rows:
        typer.echo(f"no leagues in {db} yet")
        return
    width = max(6, *(len(r["name"]) for r in rows))
    typer.echo(f"{'league':{width}} {'game':14} {'scheduled':>9} {'done':>8} {'in flight':>10} "
               f"{'remaining':>10} {'faulted':>8}")
    notes = []
    for row in rows:
        counts = store.league_counts(row["name"])
        flying = store.in_flight(row["name"])
        typer.echo(f"{row['name']:{width}} {row['game']:14} {counts.scheduled:9d} "
                   f"{counts.current:8d} {flying:10d} {counts.remaining:10d} {counts.faulted:8d}")
        notes += [f"{printable(row['name'], False)}: {note}" for note in _count_notes(counts)]
    for note in notes:
        typer.echo(note)


def _count_notes(counts: Any) -> list[str]:
    """What a league's counts leave unsaid: why it stopped short of its
    schedule, and its stored matches that its schedule does not hold."""
    notes = []
    if counts.stopped:
        notes.append(f"{counts.stopped}; the {counts.unplayed} unplayed scheduled matches will "
                     "not be played")
    if counts.elsewhere():
        notes.append(f"also stored: {counts.elsewhere()} (kept and rated as such, not counted "
                     "as done)")
    return notes


FAULT_KINDS = ("startup", "timeout", "crash", "bad_message", "illegal_action", "limit")


@app.command()
def matches(
    db: Path = DbOption,
    league: Optional[str] = typer.Option(None, metavar="NAME", help="Only this league."),
    bot: Optional[str] = typer.Option(None, metavar="NAME",
                                      help="Only matches with this bot (name or name@version)."),
    fault: Optional[str] = typer.Option(None, metavar="KIND",
                                        help=f"Only matches with this fault: {', '.join(FAULT_KINDS)}."),
    limit: int = typer.Option(50, min=1, metavar="N", help="At most this many, newest first."),
) -> None:
    """List matches, newest first; with --fault, each fault's detail and stderr."""
    store = _store(db, readonly=True)
    leagues = [row["name"] for row in store.leagues()]
    if league is not None and league not in leagues:
        fail(f"no league {league!r}{did_you_mean(league, leagues)} in {db}; known: "
             f"{', '.join(leagues) or 'none yet'}")
    if fault is not None and fault not in FAULT_KINDS:
        fail(f"unknown fault kind {fault!r}{did_you_mean(fault, FAULT_KINDS)}; choose from "
             f"{', '.join(FAULT_KINDS)}")
    if bot is not None:
        versions = store.bot_versions()
        known = set(versions) | {v for vs in versions.values() for v in vs}
        if bot not in known:
            fail(f"no bot {bot!r}{did_you_mean(bot, versions)} in {db}; known: "
                 f"{', '.join(sorted(versions)) or 'none yet'}")
    for row in store.matches(league, bot, fault, limit):
        seats = json.loads(row["seats"])
        flags = (" CAPPED" if row["capped"] else "") + (f" faults={row['faulted']}" if row["faulted"] else "")
        after_end = len(store.end_faults(row["id"]))
        flags += f" end-faults={after_end}" if after_end else ""
        typer.echo(f"{row['id']}  {row['league']:12} {row['game']:14} deal {row['deal']:<5} "
                   f"{' '.join(printable(s.split('@')[0], False) for s in seats)}{flags}")
        if fault is not None:
            _, seat_rows, _ = store.match(row["id"])
            for after in store.end_faults(row["id"]):
                if after["kind"] == fault:
                    _echo_fault(after["seat"], after["bot"], f"{END_FAULT} {after['kind']}",
                                after["detail"], after["stderr"])
            for seat in seat_rows:
                if seat["fault_kind"] == fault:
                    _echo_fault(seat["seat"], seat["bot"],
                                f"{seat['fault_kind']} at decision {seat['fault_decision']}",
                                seat["fault_detail"], seat["fault_stderr"])


def _echo_fault(seat: int, bot: str, what: str, detail: str | None, stderr: str | None) -> None:
    """One fault of ``league matches --fault``: its seat, bot and detail, and
    the last lines of the bot's stderr (all of it escaped: a bot wrote it)."""
    typer.echo(f"    seat {seat} {printable(bot.split('@')[0], False)}: {what}: "
               f"{printable(detail or '', False)}")
    for line in printable(stderr or "").rstrip("\n").split("\n")[-5:]:
        typer.echo(f"      | {line}")


def _match(store: Any, match_id: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    try:
        return store.match(match_id)
    except KeyError as exc:
        fail(str(exc.args[0]))


@app.command(short_help="One self-contained HTML page: ratings, head to head, faults, replays.")
def report(
    league: str = typer.Argument(..., help="League name (as stored) or league file."),
    output: Path = typer.Option(None, "--output", "-o", metavar="FILE.html",
                                help="Where to write it (default: NAME-report.html)."),
    db: Path = DbOption,
) -> None:
    """One self-contained HTML page: ratings with intervals, convergence,
    head to head, faults with replay links, settings. No network needed."""
    from harness.web.report import write_report

    store = _store(db, readonly=True)
    name = _league_name(store, league)
    path = output or Path(f"{name}-report.html")
    if not path.parent.is_dir():
        fail(f"-o {path}: the folder {path.parent} does not exist")
    written = write_report(store, name, path)
    typer.echo(f"wrote {written} (open it in a browser)")


@app.command()
def replay(
    match_id: str = typer.Argument(..., help="Match ID (a unique prefix will do)."),
    db: Path = DbOption,
    html: Optional[Path] = typer.Option(None, "--html", metavar="FILE.html",
                                        help="Write a page that steps through the match "
                                             "(arrow keys) instead of printing the log."),
) -> None:
    """One match's log, replayed from its stored actions, with where a bot faulted."""
    from harness.match import Fault
    from harness.replay import replay_lines

    store = _store(db, readonly=True)
    if html is not None:
        from harness.web.replay_html import write_replay_html

        if not html.parent.is_dir():
            fail(f"--html {html}: the folder {html.parent} does not exist")
        try:
            written = write_replay_html(store, match_id, html)
        except KeyError as exc:
            fail(str(exc.args[0]))
        typer.echo(f"wrote {written} (open it in a browser; arrow keys step)")
        return
    row, seats, stored = _match(store, match_id)
    typer.echo(f"match {row['id']} ({row['league']}, {row['game']} v{row['rules_version']}, "
               f"seed {row['seed']}, deal {row['deal']})")
    faults = {s["seat"]: Fault(s["fault_kind"], s["fault_decision"], s["fault_detail"] or "")
              for s in seats if s["fault_kind"]}
    try:
        for line in replay_lines(stored, faults, store.decision_stderr(row["id"])):
            typer.echo(line)
    except ValueError as exc:  # stored under other rules
        fail(str(exc))
    typer.echo("final standings:")
    bots = {s["seat"]: printable(s["bot"], False) for s in seats}
    width = max(len(bot) for bot in bots.values())
    for seat in sorted(seats, key=lambda s: (s["rank"], s["seat"])):
        note = (f"  FAULT {seat['fault_kind']} at decision {seat['fault_decision']}: "
                f"{printable(seat['fault_detail'] or '', False)}" if seat["fault_kind"] else "")
        typer.echo(f"  {seat['rank']}. seat {seat['seat']} {bots[seat['seat']]:{width}} "
                   f"score {seat['score']:g}{note}")
    after_end = store.end_faults(row["id"])
    for after in after_end:
        typer.echo(f"  seat {after['seat']} {bots[after['seat']]}: {END_FAULT} {after['kind']}: "
                   f"{printable(after['detail'] or '', False)}")
    for seat in seats:
        if seat["fault_kind"]:
            print_stderr_tail(f"seat {seat['seat']} ({bots[seat['seat']]})", seat["fault_stderr"] or "")
    for after in after_end:
        print_stderr_tail(f"seat {after['seat']} ({bots[after['seat']]})", after["stderr"] or "")


@app.command()
def logs(
    match_id: str = typer.Argument(..., help="Match ID (a unique prefix will do)."),
    seat: Optional[int] = typer.Option(None, min=0, metavar="N", help="Only this seat."),
    db: Path = DbOption,
) -> None:
    """What a bot wrote to stderr: a faulted bot's last 4 KiB, and each decision's lines where kept.

    Leagues keep the stderr of a bot that faulted; a league file with
    `[logs] stderr = "all"` keeps what every bot wrote at each decision."""
    store = _store(db, readonly=True)
    row, seats, _ = _match(store, match_id)
    per_decision: dict[int, list[tuple[int, str]]] = {}
    for decision, seat_number, text in store.decision_stderr(row["id"]):
        per_decision.setdefault(seat_number, []).append((decision, text))
    if seat is not None and seat >= len(seats):
        fail(f"match {row['id']} has seats 0-{len(seats) - 1}")
    chosen = [s for s in seats if seat is None or s["seat"] == seat]
    after_end = {after["seat"]: after for after in store.end_faults(row["id"])}
    for entry in chosen:
        after = after_end.get(entry["seat"])
        typer.echo(f"== seat {entry['seat']} {printable(entry['bot'], False)}"
                   + (f" (FAULT {entry['fault_kind']} at decision {entry['fault_decision']})"
                      if entry["fault_kind"] else "")
                   + (f" ({END_FAULT} {after['kind']})" if after else ""))
        said = per_decision.get(entry["seat"], [])
        if not said or entry["fault_kind"] or after:
            typer.echo(_stderr_text(entry["fault_kind"] or (after and after["kind"]),
                                    entry["fault_stderr"] or (after and after["stderr"])))
        if said:
            typer.echo(f"-- per decision ({len(said)} with output):")
        for decision, text in said:
            for line in text.splitlines():
                typer.echo(f"[{decision}] {printable(line, False)}")


def _stderr_text(fault_kind: str | None, stderr: str | None) -> str:
    """A seat's stored stderr, or why there is none: a bot that faulted and
    wrote nothing is not one whose stderr was not kept."""
    if stderr:
        return printable(stderr).rstrip("\n")
    if fault_kind:
        return "(the bot faulted and wrote nothing to stderr)"
    return "(no stderr stored: the bot did not fault, and stderr is kept only for a bot that faulted)"
