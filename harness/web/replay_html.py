"""A match replay as one self-contained HTML page, to step through by hand.

The engine replays the stored actions here, in Python, and the page gets
every step precomputed as JSON: the page needs no engine, no server and no
network, so it can be mailed, archived or opened from a results folder
years later. Observations are stored as a full key frame every
``KEYFRAME`` steps and as the changed keys in between, so a capped match
of thousands of decisions stays a few megabytes.

Each decision's stderr, where a league keeps it (``[logs] stderr = "all"``),
is shown with its decision, every bot's under the move.

Everything a bot controls (its name, its stderr, a fault's detail) reaches
the page with its control and invisible format characters written as
visible escapes (``harness.proc.safe_text.printable``: a bidi override would
reorder the line in the browser too), and either through ``html.escape`` or
inside the JSON block, where ``<``, ``>`` and ``&`` are written as
``\\u003c``-style escapes: no string can close the ``<script>`` element or
open a tag. The page's script (``assets/replay.js``, with its stylesheet
``assets/replay.css``) only ever sets ``textContent``.

Every step draws the table as well as printing it: ``assets/table.js``
(``window.drawTable``, styled by ``assets/table.css``) turns an observation
into cards, dice, piles, grids and a score strip, one renderer per game, for
the public view (the keys all seats' views share) and for each seat's view,
so hidden information stays as hidden as the observation keeps it. The JSON
stays under each drawing: it is the exact data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games import GameError
from harness.proc.safe_text import printable
from harness.replay import replay_game
from harness.web.page import asset, esc, html_page

if TYPE_CHECKING:
    from harness.store import Store

KEYFRAME = 50          # full observations every this many steps
MAX_LEGAL = 200        # legal actions listed per step (the move taken always is)
SEAT_COLOURS = ["#3566c8", "#d9821c", "#2b8f57", "#8a4fc7", "#1c93a8", "#c8457f", "#8c6239"]


# ---- data -------------------------------------------------------------------
def script_json(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``</script>``, no
    ``<!--``, no line separators that old parsers choke on."""
    text = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _finite(value: Any) -> Any:
    """NaN and infinities as None: JSON has no spelling for them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class _Strings:
    """A table of action descriptions: steps refer to them by index, since
    the same few hundred descriptions recur thousands of times."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.items)
            self.items.append(text)
        return self.index[text]


def _delta(previous: dict[str, Any], current: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    changed = {k: v for k, v in current.items() if k not in previous or previous[k] != v}
    return changed, [k for k in previous if k not in current]


def _fault_steps(seats: list[dict[str, Any]], decisions: list[int]) -> dict[int, list[int]]:
    """Step index of each seat's fault: the step whose decision number is the
    fault's (as the text replay marks it), clamped into the match."""
    marks: dict[int, list[int]] = {}
    for seat in seats:
        if not seat.get("fault_kind"):
            continue
        wanted = seat.get("fault_decision") or 0
        index = next((i for i, d in enumerate(decisions) if d >= wanted), len(decisions) - 1)
        marks.setdefault(max(index, 0), []).append(seat["seat"])
    return marks


def _step(game: Any, action: Any, index: int, previous: list[dict[str, Any]],
          strings: _Strings, times: list[Any] | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One step: the state before ``action`` (None: the final position)."""
    views = [json.loads(json.dumps(game.observation(s))) for s in range(game.num_players)]
    step: dict[str, Any] = {"d": game.decisions, "p": game.current_player()}
    if index % KEYFRAME == 0:
        step["k"], step["o"] = 1, views
    else:
        pairs = [_delta(p, v) for p, v in zip(previous, views)]
        step["o"] = [changed for changed, _ in pairs]
        if any(removed for _, removed in pairs):
            step["x"] = [removed for _, removed in pairs]
    step["sc"] = json.loads(json.dumps(list(game.scores())))
    if game.events:
        step["e"] = list(game.events)
        game.events.clear()
    if action is not None:
        step.update(_choices(game, action, strings))
        if times is not None:
            step["ms"] = times[index] if index < len(times) else None
    return step, views


def _choices(game: Any, action: Any, strings: _Strings) -> dict[str, Any]:
    legal = list(game.legal_actions())
    shown = legal[:MAX_LEGAL]
    if action in legal and action not in shown:
        shown.append(action)
    return {"a": strings(game.describe_action(action)),
            "l": [strings(game.describe_action(a)) for a in shown],
            "t": shown.index(action) if action in shown else -1,
            "more": len(legal) - len(shown)}


def _steps(replay: dict[str, Any], strings: _Strings) -> Iterator[dict[str, Any]]:
    times = replay.get("times_ms")
    previous: list[dict[str, Any]] = []
    for index, (game, action) in enumerate(replay_game(replay, narrate=True)):
        step, previous = _step(game, action, index, previous, strings, times)
        yield step


def _compact_scores(steps: list[dict[str, Any]]) -> None:
    """Keep a step's scores only where they changed: the page carries them forward."""
    last = None
    for step in steps:
        if step["sc"] == last and not step.get("k"):
            del step["sc"]
        else:
            last = step["sc"]


def replay_data(row: dict[str, Any], seats: list[dict[str, Any]], replay: dict[str, Any],
                stderr: Sequence[tuple[int, int, str]] = ()) -> dict[str, Any]:
    """Everything the page shows, as plain JSON-able data. A replay stored
    under other rules keeps its standings and faults, with the error said.
    ``stderr``: (decision, seat, text) of each decision's stderr, where kept."""
    strings = _Strings()
    data: dict[str, Any] = {"match": _match_info(row), "seats": [_seat_info(s) for s in seats],
                            "timed": replay.get("times_ms") is not None}
    try:
        steps = list(_steps(replay, strings))
    except (GameError, ValueError, KeyError, TypeError) as exc:
        data.update(steps=[], strings=[], faults={}, error=f"cannot replay this match: {exc}")
        return data
    _compact_scores(steps)
    marks = _fault_steps(seats, [s["d"] for s in steps])
    for index, fault_seats in marks.items():
        steps[index]["f"] = fault_seats
    _attach_stderr(steps, stderr)
    data.update(steps=steps, strings=strings.items)
    return data


def _attach_stderr(steps: list[dict[str, Any]], stderr: Sequence[tuple[int, int, str]]) -> None:
    """Each decision's stderr on its step, as ``se``: [seat, text] pairs,
    the text escaped (printable) and shown by the script as textContent."""
    step_of = {step["d"]: index for index, step in enumerate(steps[:-1])}
    for decision, seat, text in stderr:
        index = step_of.get(decision)
        if index is not None:
            steps[index].setdefault("se", []).append([seat, printable(text)])


def _match_info(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "league", "game", "rules_version", "seed", "deal", "status", "capped",
            "faulted", "decisions", "duration_s")
    return {k: row.get(k) for k in keys}


def _seat_info(seat: dict[str, Any]) -> dict[str, Any]:
    name, _, version = str(seat["bot"]).partition("@")
    fault = None
    if seat.get("fault_kind"):
        fault = {"kind": seat["fault_kind"], "decision": seat.get("fault_decision"),
                 "detail": printable(seat.get("fault_detail") or "", False)}
    return {"seat": seat["seat"], "bot": printable(name, False), "version": version, "score": seat.get("score"),
            "rank": seat.get("rank"), "team": seat.get("team"), "fault": fault}


# ---- page -------------------------------------------------------------------
def _team_games(data: dict[str, Any]) -> bool:
    """Whether seats play in teams (in individual games each seat is its own team)."""
    return any(s.get("team") not in (None, s["seat"]) for s in data["seats"])


def _seat_chips(data: dict[str, Any]) -> str:
    chips = []
    teams = _team_games(data)
    for seat in data["seats"]:
        colour = SEAT_COLOURS[seat["seat"] % len(SEAT_COLOURS)]
        fault = (f' <span class="tag">{esc(seat["fault"]["kind"])}</span>'
                 if seat["fault"] else "")
        team = f' <span class="muted">team {esc(seat["team"])}</span>' if teams else ""
        chips.append(f'<span class="chip" style="--c:{colour}">seat {seat["seat"]} · '
                     f'<b>{esc(seat["bot"])}</b>{team}{fault}</span>')
    return f'<div class="seats">{"".join(chips)}</div>'


def _header(data: dict[str, Any]) -> str:
    match = data["match"]
    flags = []
    if match.get("capped"):
        flags.append('<span class="tag">capped</span>')
    if match.get("faulted"):
        flags.append(f'<span class="tag">{esc(match["faulted"])} fault(s)</span>')
    return (f'<h1>Match <span class="mono">{esc(match["id"])}</span> {" ".join(flags)}</h1>'
            f'<p class="sub">{esc(match["game"])} (rules v{esc(match["rules_version"])}) · '
            f'league {esc(match["league"])} · deal {esc(match["deal"])} · seed '
            f'{esc(match["seed"])} · {esc(match["decisions"])} decisions</p>{_seat_chips(data)}')


def _icon(path: str) -> str:
    """A button glyph as inline SVG: media-control characters are missing
    from many fonts (DejaVu draws them as boxes)."""
    return (f'<svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true">'
            f'<path d="{path}" fill="currentColor"/></svg>')


def _controls(data: dict[str, Any]) -> str:
    if data.get("error"):
        return f'<div class="card error">{esc(data["error"])}</div>'
    last = max(len(data["steps"]) - 1, 0)
    return f"""<div class="card">
<div class="controls">
<button id="first" title="first step (Home)">{_icon("M3 2h2v12H3zM14 2v12L6 8z")}</button>
<button id="prev" title="previous step (&#x2190;)">{_icon("M12 2v12L4 8z")}</button>
<button id="next" title="next step (&#x2192;)">{_icon("M4 2v12l8-6z")}</button>
<button id="last" title="final position (End)">{_icon("M11 2h2v12h-2zM2 2v12l8-6z")}</button>
<span id="step-label">step 0 of {last}</span>
<input id="slider" type="range" min="0" max="{last}" value="0" aria-label="step">
</div>
<svg id="timeline" role="img" aria-label="decisions by seat; faults in red"></svg>
<div class="hint">Keys: &#x2190; &#x2192; step, Home / End, PageUp / PageDown ten steps.
Link to a step with <code>#step=N</code>. Colours: the seat that acts; red: a fault.</div>
</div>
<div class="grid">
<div class="card" id="decision"></div>
<div>
<div class="card"><h2>Table</h2><div class="legend">what every seat's view has in common,
and the scores as they stand</div><div id="public"></div></div>
<div class="card"><h2>Each seat's view</h2><div class="legend">the observation each bot
receives<span class="sw" style="background:#e6efff;border:1px solid #cfdcf5"></span>private to
the seat<span class="sw" style="background:none;color:#d9821c">&#x25CF;</span>changed by the
last move</div><div class="views" id="views"></div></div>
</div>
</div>"""


def _standings(data: dict[str, Any], seats: list[dict[str, Any]]) -> str:
    rows = []
    for seat in sorted(seats, key=lambda s: (s.get("rank") or 0, s["seat"])):
        info = next(s for s in data["seats"] if s["seat"] == seat["seat"])
        fault = ""
        if seat.get("fault_kind"):
            fault = (f'<span class="tag">{esc(seat["fault_kind"])}</span> at decision '
                     f'{esc(seat.get("fault_decision"))}: {esc(seat.get("fault_detail") or "")}')
            if seat.get("fault_stderr"):
                fault += (f'<details><summary>stderr (last lines)</summary>'
                          f'<pre>{esc(seat["fault_stderr"])}</pre></details>')
        colour = SEAT_COLOURS[seat["seat"] % len(SEAT_COLOURS)]
        rows.append(f'<tr class="{"faulted" if fault else ""}"><td class="num">{esc(seat.get("rank"))}'
                    f'</td><td><span class="chip" style="--c:{colour}">seat {seat["seat"]}</span>'
                    f'</td><td><b>{esc(info["bot"])}</b> <span class="muted mono">'
                    f'{esc(info["version"][:12])}</span></td><td class="num">{esc(_num(seat.get("score")))}'
                    f'</td><td>{fault or "&mdash;"}</td></tr>')
    return ('<div class="card" id="standings"><h2>Final standings</h2><table><thead><tr>'
            '<th class="num">rank</th><th>seat</th><th>bot</th><th class="num">score</th>'
            f'<th>fault</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def replay_page(row: dict[str, Any], seats: list[dict[str, Any]], replay: dict[str, Any],
                stderr: Sequence[tuple[int, int, str]] = ()) -> str:
    """The whole page for one stored match (as ``Store.match`` returns it),
    with each decision's stderr where kept (Store.decision_stderr)."""
    data = replay_data(row, seats, replay, stderr)
    data["colours"] = SEAT_COLOURS
    body = (f"{_header(data)}\n{_controls(data)}\n{_standings(data, seats)}\n"
            f'<script type="application/json" id="replay-data">{script_json(data)}</script>')
    # table.js first: it defines window.drawTable, which replay.js calls
    script = "" if data.get("error") else f'{asset("table.js")}\n{asset("replay.js")}'
    return html_page(f"match {row['id']}", body, f'{asset("replay.css")}\n{asset("table.css")}', script)


def write_replay_html(store: Store, match_id: str, path: Path | str) -> Path:
    """Write match ``match_id`` (a unique prefix will do) of ``store`` as one
    self-contained page at ``path``; raises KeyError for no such match (or a
    prefix matching several). Only reads ``store``: ``Store(db, readonly=True)``."""
    row, seats, replay = store.match(match_id)
    path = Path(path)
    page = replay_page(row, seats, replay, store.decision_stderr(row["id"]))
    path.write_text(page, encoding="utf-8")
    return path

