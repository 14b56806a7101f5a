"""A match replay as one self-contained HTML page, to step through by hand.

The engine replays the stored actions here, in Python, and the page gets
every step precomputed as JSON: the page needs no engine, no server and no
network, so it can be mailed, archived or opened from a results folder
years later. Observations are stored as a full key frame every
``KEYFRAME`` steps and as the changed keys in between, so a capped match
of thousands of decisions stays a few megabytes.

Everything a bot controls (its name, its stderr, a fault's detail) reaches
the page with its control and invisible format characters written as
visible escapes (``harness.safe_text.printable``: a bidi override would
reorder the line in the browser too), and either through ``html.escape`` or
inside the JSON block, where ``<``, ``>`` and ``&`` are written as
``\\u003c``-style escapes: no string can close the ``<script>`` element or
open a tag. The page's script only ever sets ``textContent``.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games import GameError
from harness.replay import replay_game
from harness.safe_text import printable

if TYPE_CHECKING:
    from harness.store import Store

KEYFRAME = 50          # full observations every this many steps
MAX_LEGAL = 200        # legal actions listed per step (the move taken always is)
SEAT_COLOURS = ["#3566c8", "#d9821c", "#2b8f57", "#8a4fc7", "#1c93a8", "#c8457f", "#8c6239"]

BASE_CSS = """
:root { --bg:#f5f6f8; --card:#fff; --ink:#1c2230; --muted:#5d6677; --line:#dde1e8;
  --accent:#3566c8; --bad:#c62828; --badbg:#fdecea; --hi:#fff4c2; --good:#1f7a4a; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans","DejaVu Sans",sans-serif; }
main { max-width:1260px; margin:0 auto; padding:22px 28px 64px; }
h1 { font-size:25px; margin:0 0 2px; letter-spacing:-.01em; }
h2 { font-size:18px; margin:0 0 10px; }
h3 { font-size:14px; margin:14px 0 6px; color:var(--muted); text-transform:uppercase;
  letter-spacing:.05em; }
.sub { color:var(--muted); margin:0 0 8px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px;
  padding:16px 20px; margin:16px 0; box-shadow:0 1px 2px rgba(20,30,50,.05); }
table { border-collapse:collapse; }
th,td { padding:5px 10px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { font-size:13px; color:var(--muted); font-weight:600; }
td.num,th.num { text-align:right; font-variant-numeric:tabular-nums; }
code,pre,.mono { font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono",monospace;
  font-size:13px; }
pre { white-space:pre-wrap; word-break:break-word; margin:0; }
a { color:var(--accent); }
.bad { color:var(--bad); font-weight:600; }
.tag { display:inline-block; padding:0 7px; border-radius:9px; font-size:12px; font-weight:600;
  background:var(--badbg); color:var(--bad); }
.muted { color:var(--muted); }
details summary { cursor:pointer; color:var(--muted); }
"""

REPLAY_CSS = """
.seats { display:flex; flex-wrap:wrap; gap:8px; margin-top:8px; }
.chip { border:1px solid var(--line); border-left:5px solid var(--c); border-radius:7px;
  padding:3px 10px; background:#fff; font-size:14px; }
.controls { display:flex; align-items:center; gap:8px; flex-wrap:wrap; }
.controls button { font:inherit; font-size:14px; padding:6px 12px 3px; color:#2a3344; border-radius:7px;
  border:1px solid #b9c1cf; background:#fff; cursor:pointer; min-width:44px; }
.controls button:hover { background:#eef2fa; }
.controls input[type=range] { flex:1; min-width:200px; }
#step-label { font-weight:600; font-variant-numeric:tabular-nums; min-width:190px; }
.hint { color:var(--muted); font-size:13px; }
#timeline { display:block; width:100%; height:26px; margin-top:10px; cursor:pointer;
  border-radius:4px; background:#eef0f4; }
.grid { display:grid; grid-template-columns: minmax(300px, 5fr) 7fr; gap:16px; align-items:start; }
.grid > .card, .grid > div > .card:first-child { margin-top:0; }
.grid > .card { margin-bottom:0; }
#decision { position:sticky; top:10px; max-height:calc(100vh - 20px); overflow:auto; }
.move { font-size:20px; font-weight:650; background:var(--hi); border-radius:8px; padding:8px 12px;
  margin:6px 0; border:1px solid #efd67a; }
.actor { font-size:15px; }
.fault-here { background:var(--badbg); border:1px solid #f3b7b2; color:#7d1a1a; border-radius:8px;
  padding:8px 12px; margin:8px 0; }
ol.legal { margin:0; padding-left:34px; max-height:340px; overflow:auto; }
ol.legal li { padding:1px 6px; border-radius:5px; }
ol.legal li.taken { background:var(--hi); font-weight:650; outline:1px solid #efd67a; }
ul.events { margin:0; padding-left:20px; }
.kv { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; }
.kv .k { color:var(--muted); font-family:ui-monospace,"DejaVu Sans Mono",monospace; font-size:13px; }
.views { display:grid; grid-template-columns:repeat(auto-fill, minmax(290px, 1fr)); gap:12px; }
.view { border:1px solid var(--line); border-top:4px solid var(--c); border-radius:8px; padding:8px 10px; }
.view.acting { box-shadow:0 0 0 2px var(--c); }
.view h4 { margin:0 0 6px; font-size:14px; }
.json { font-family:ui-monospace,"DejaVu Sans Mono",monospace; font-size:12.5px; line-height:1.45;
  white-space:pre-wrap; word-break:break-word; }
.json .line.private { background:#e6efff; }
.json .line.changed::before { content:"\\25CF"; color:#d9821c; margin-left:-12px; width:12px;
  display:inline-block; font-size:9px; vertical-align:middle; text-indent:0; }
.json .line { padding-left:28px; text-indent:-16px; }
.j-key { color:#7a3e9d; } .j-str { color:#1f7a4a; } .j-num { color:#1c5fb8; }
.j-lit { color:#b0461b; } .j-p { color:#7b8494; }
.legend { font-size:12.5px; color:var(--muted); margin-bottom:8px; }
.legend .sw { display:inline-block; width:11px; height:11px; border-radius:2px; vertical-align:-1px;
  margin:0 4px 0 10px; }
.scores td { padding:2px 10px; }
tr.faulted td { background:#fff7f6; }
.error { background:var(--badbg); border:1px solid #f3b7b2; padding:10px 14px; border-radius:8px; }
"""


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


def replay_data(row: dict[str, Any], seats: list[dict[str, Any]],
                replay: dict[str, Any]) -> dict[str, Any]:
    """Everything the page shows, as plain JSON-able data. A replay stored
    under other rules keeps its standings and faults, with the error said."""
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
    data.update(steps=steps, strings=strings.items)
    return data


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
def esc(value: Any) -> str:
    """HTML-escaped, control and format characters made visible (the pages
    show bots' names, fault details and stderr through it)."""
    return html.escape(printable(str(value)), quote=True)


def html_page(title: str, body: str, css: str = "", script: str = "") -> str:
    """The frame every page shares: inline CSS and script, nothing fetched."""
    tail = f"<script>\n{script}\n</script>\n" if script else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{BASE_CSS}{css}</style>\n</head>\n"
            f"<body>\n<main>\n{body}\n</main>\n{tail}</body>\n</html>\n")


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


def replay_page(row: dict[str, Any], seats: list[dict[str, Any]], replay: dict[str, Any]) -> str:
    """The whole page for one stored match (as ``Store.match`` returns it)."""
    data = replay_data(row, seats, replay)
    data["colours"] = SEAT_COLOURS
    body = (f"{_header(data)}\n{_controls(data)}\n{_standings(data, seats)}\n"
            f'<script type="application/json" id="replay-data">{script_json(data)}</script>')
    script = "" if data.get("error") else REPLAY_JS
    return html_page(f"match {row['id']}", body, REPLAY_CSS, script)


def write_replay_html(store: Store, match_id: str, path: Path | str) -> Path:
    """Write match ``match_id`` (a unique prefix will do) of ``store`` as one
    self-contained page at ``path``; raises KeyError for no such match (or a
    prefix matching several). Only reads ``store``: ``Store(db, readonly=True)``."""
    row, seats, replay = store.match(match_id)
    path = Path(path)
    path.write_text(replay_page(row, seats, replay), encoding="utf-8")
    return path


REPLAY_JS = r"""
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const steps = data.steps, strings = data.strings, seats = data.seats;
  const colours = data.colours, last = steps.length - 1;
  const scores = [];
  let current = 0;
  for (const st of steps) scores.push(st.sc || scores[scores.length - 1] || []);

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function seatName(s) { const seat = seats[s]; return seat ? seat.bot : "seat " + s; }
  function colour(s) { return colours[s % colours.length]; }

  // Observations: a key frame every few steps, the changed keys in between.
  function viewsAt(i) {
    let k = i;
    while (k > 0 && !steps[k].k) k--;
    let views = steps[k].o.map(o => Object.assign({}, o));
    for (let j = k + 1; j <= i; j++) {
      views = views.map((v, s) => {
        const next = Object.assign(v, steps[j].o[s]);
        for (const key of (steps[j].x ? steps[j].x[s] : [])) delete next[key];
        return next;
      });
    }
    return views;
  }

  // JSON, pretty and coloured, built from text nodes only.
  function tokens(value, out) {
    if (value === null || typeof value === "boolean") out.push(["j-lit", String(value)]);
    else if (typeof value === "number") out.push(["j-num", String(value)]);
    else if (typeof value === "string") out.push(["j-str", JSON.stringify(value)]);
    else if (Array.isArray(value)) {
      out.push(["j-p", "["]);
      value.forEach((v, n) => { if (n) out.push(["j-p", ", "]); tokens(v, out); });
      out.push(["j-p", "]"]);
    } else {
      out.push(["j-p", "{"]);
      Object.keys(value).forEach((key, n) => {
        if (n) out.push(["j-p", ", "]);
        out.push(["j-key", JSON.stringify(key)], ["j-p", ": "]);
        tokens(value[key], out);
      });
      out.push(["j-p", "}"]);
    }
    return out;
  }
  function spans(parent, list) {
    for (const [cls, text] of list) parent.appendChild(el("span", cls, text));
  }
  function valueNode(value) {
    const node = el("span");
    const text = JSON.stringify(value);
    if (text.length <= 90 || typeof value !== "object" || value === null) {
      spans(node, tokens(value, []));
      return node;
    }
    const open = Array.isArray(value) ? "[" : "{", close = Array.isArray(value) ? "]" : "}";
    node.appendChild(el("span", "j-p", open + "\n"));
    const keys = Object.keys(value);
    keys.forEach((key, n) => {
      node.appendChild(document.createTextNode("  "));
      if (!Array.isArray(value)) spans(node, [["j-key", JSON.stringify(key)], ["j-p", ": "]]);
      spans(node, tokens(value[key], []));
      node.appendChild(el("span", "j-p", (n < keys.length - 1 ? "," : "") + "\n"));
    });
    node.appendChild(el("span", "j-p", close));
    return node;
  }

  function commonKeys(views) {
    if (!views.length) return new Set();
    return new Set(Object.keys(views[0]).filter(key => key !== "seat" &&
      views.every(v => key in v && JSON.stringify(v[key]) === JSON.stringify(views[0][key]))));
  }

  function renderDecision(i) {
    const box = document.getElementById("decision");
    box.replaceChildren();
    const st = steps[i];
    if (i === last) {
      box.appendChild(el("h2", null, "Final position"));
      box.appendChild(el("p", "muted", "after " + st.d + " decisions; the standings are below"));
    } else {
      box.appendChild(el("h2", null, "Decision " + st.d));
      const actor = el("div", "actor");
      actor.appendChild(document.createTextNode("seat " + st.p + " · "));
      const who = el("b", null, seatName(st.p));
      who.style.color = colour(st.p);
      actor.appendChild(who);
      actor.appendChild(document.createTextNode(" to act"));
      box.appendChild(actor);
      const move = el("div", "move", strings[st.a]);
      move.id = "move";
      box.appendChild(move);
      if (data.timed) {
        const took = st.ms === null || st.ms === undefined
          ? "played by a random stand-in (the seat had faulted)" : "decided in " + st.ms + " ms";
        box.appendChild(el("div", "muted", took));
      }
    }
    for (const s of st.f || []) {
      const f = seats[s].fault;
      box.appendChild(el("div", "fault-here", "\u26A0 seat " + s + " (" + seats[s].bot +
        ") faulted at decision " + f.decision + ": " + f.kind + " \u2014 " + f.detail +
        ". A random stand-in plays its seat from here."));
    }
    if (i === 0 && st.e) addEvents(box, "Set-up", st.e);
    if (i < last && steps[i + 1].e) addEvents(box, "What this move led to", steps[i + 1].e);
    if (i < last) {
      box.appendChild(el("h3", null, "Legal actions (" + (st.l.length + st.more) + ")"));
      const list = el("ol", "legal");
      st.l.forEach((index, n) => {
        const item = el("li", n === st.t ? "taken" : null, strings[index] + (n === st.t ? "  \u2713" : ""));
        list.appendChild(item);
      });
      box.appendChild(list);
      if (st.more) box.appendChild(el("div", "muted", "\u2026 and " + st.more + " more"));
    }
  }
  function addEvents(box, title, events) {
    box.appendChild(el("h3", null, title));
    const list = el("ul", "events");
    for (const text of events) list.appendChild(el("li", null, text));
    box.appendChild(list);
  }

  function renderPublic(views, common, i) {
    const box = document.getElementById("public");
    box.replaceChildren();
    const table = el("table", "scores");
    const head = el("tr");
    head.appendChild(el("th", null, "seat"));
    head.appendChild(el("th", null, "bot"));
    head.appendChild(el("th", "num", "score now"));
    table.appendChild(head);
    scores[i].forEach((score, s) => {
      const row = el("tr");
      const cell = el("td", null, String(s));
      cell.style.borderLeft = "4px solid " + colour(s);
      row.appendChild(cell);
      row.appendChild(el("td", null, seatName(s) + (seats[s] && seats[s].fault &&
        steps.slice(0, i + 1).some(x => (x.f || []).includes(s)) ? "  (faulted)" : "")));
      row.appendChild(el("td", "num", String(score)));
      table.appendChild(row);
    });
    box.appendChild(table);
    const kv = el("div", "kv");
    kv.style.marginTop = "10px";
    for (const key of common) {
      kv.appendChild(el("div", "k", key));
      kv.appendChild(valueNode(views[0][key]));
    }
    box.appendChild(kv);
  }

  function renderViews(views, common, before, i) {
    const box = document.getElementById("views");
    box.replaceChildren();
    views.forEach((view, s) => {
      const card = el("div", "view" + (s === steps[i].p && i < last ? " acting" : ""));
      card.style.setProperty("--c", colour(s));
      card.appendChild(el("h4", null, "seat " + s + " \u00B7 " + seatName(s) +
        (s === steps[i].p && i < last ? "  (to act)" : "")));
      const body = el("div", "json");
      body.appendChild(el("span", "j-p", "{\n"));
      const keys = Object.keys(view);
      keys.forEach((key, n) => {
        const changed = before && JSON.stringify(before[s][key]) !== JSON.stringify(view[key]);
        const line = el("div", "line" + (common.has(key) || key === "seat" ? "" : " private") +
          (changed ? " changed" : ""));
        spans(line, [["j-key", JSON.stringify(key)], ["j-p", ": "]]);
        line.appendChild(valueNode(view[key]));
        if (n < keys.length - 1) line.appendChild(el("span", "j-p", ","));
        body.appendChild(line);
      });
      body.appendChild(el("span", "j-p", "}"));
      card.appendChild(body);
      box.appendChild(card);
    });
  }

  function drawTimeline() {
    const svg = document.getElementById("timeline");
    // the SVG namespace: a name, never fetched (split so that the page holds no URL)
    const ns = "http:" + "//www.w3.org/2000/svg";
    const width = Math.max(steps.length, 1);
    svg.setAttribute("viewBox", "0 0 " + width + " 10");
    svg.setAttribute("preserveAspectRatio", "none");
    steps.forEach((st, i) => {
      const r = document.createElementNS(ns, "rect");
      r.setAttribute("x", i); r.setAttribute("y", st.f ? 0 : 2);
      r.setAttribute("width", 1); r.setAttribute("height", st.f ? 10 : 6);
      r.setAttribute("fill", st.f ? "#d32f2f" : (i === last ? "#333" : colour(st.p)));
      svg.appendChild(r);
    });
    const cursor = document.createElementNS(ns, "rect");
    cursor.id = "cursor";
    cursor.setAttribute("y", 0); cursor.setAttribute("height", 10); cursor.setAttribute("width", 1);
    cursor.setAttribute("fill", "none"); cursor.setAttribute("stroke", "#111");
    cursor.setAttribute("stroke-width", "2.5");
    cursor.setAttribute("vector-effect", "non-scaling-stroke");
    svg.appendChild(cursor);
    svg.addEventListener("click", event => {
      const box = svg.getBoundingClientRect();
      go(Math.floor((event.clientX - box.left) / box.width * steps.length));
    });
  }

  function go(i) {
    i = Math.max(0, Math.min(last, Number.isFinite(i) ? Math.round(i) : 0));
    current = i;
    const views = viewsAt(i), before = i > 0 ? viewsAt(i - 1) : null;
    const common = commonKeys(views);
    renderDecision(i);
    renderPublic(views, common, i);
    renderViews(views, common, before, i);
    document.getElementById("step-label").textContent = i === last
      ? "final position (step " + i + " of " + last + ")" : "step " + i + " of " + last;
    document.getElementById("slider").value = String(i);
    const cursor = document.getElementById("cursor");
    cursor.setAttribute("x", i);
    document.body.dataset.step = String(i);
    if (location.hash !== "#step=" + i) history.replaceState(null, "", "#step=" + i);
  }
  window.replayGo = go;
  window.replayStep = () => current;

  function fromHash() {
    const m = /^#step=(\d+|end)$/.exec(location.hash);
    return m ? (m[1] === "end" ? last : Number(m[1])) : 0;
  }

  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(current - 1));
  document.getElementById("next").addEventListener("click", () => go(current + 1));
  document.getElementById("last").addEventListener("click", () => go(last));
  document.getElementById("slider").addEventListener("input", e => go(Number(e.target.value)));
  document.addEventListener("keydown", event => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target && event.target.id === "slider") return;  // the slider steps itself
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 };
    if (event.key in moves) go(current + moves[event.key]);
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(last);
    else return;
    event.preventDefault();
  });
  window.addEventListener("hashchange", () => { if (fromHash() !== current) go(fromHash()); });
  drawTimeline();
  go(fromHash());
})();
"""
