"""A league's results as one self-contained HTML report.

The report is for reading in a browser, offline, possibly years later and on
another machine: all CSS is inline and every chart is SVG drawn here, in
Python (no script library, nothing fetched). It holds the rating table with
interval bars, the head-to-head heatmap, how each rating converged as
matches came in, the faults per bot and kind with links to replay pages of
faulted matches (written next to the report), and the league's settings.

The convergence chart refits the ratings on prefixes of the league's
matches in finishing order. Checkpoints are spaced geometrically, so all
the fits together cost about three fits of the whole league, and the last
prefix is the whole league, whose fit is the rating table.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.stats.ratings import FinishOrder, head_to_head, rate
from harness.web.page import asset, esc, html_page
from harness.web.replay_html import write_replay_html

if TYPE_CHECKING:
    from harness.store import LeagueCounts, Store

PALETTE = ["#3566c8", "#d9821c", "#2b8f57", "#c0392b", "#8a4fc7", "#1c93a8", "#c8457f",
           "#7d6b2d", "#4d5a6b", "#e0b400"]
MAX_REPLAYS = 50
CHECKPOINTS = 12
ELO_MEAN = 1500.0


# ---- reading the league -----------------------------------------------------
def checkpoints(matches: int, count: int = CHECKPOINTS) -> list[int]:
    """Match counts to refit at: every count for a tiny league, else
    geometric from about 1% of the league to all of it (early ratings move
    most; geometric spacing keeps the total cost near three full fits)."""
    if matches <= count:
        return list(range(1, matches + 1))
    first = max(2, matches // 100)
    ratio = (matches / first) ** (1 / (count - 1))
    return sorted({min(matches, round(first * ratio ** i)) for i in range(count)} | {matches})


def convergence(seats: FinishOrder, points: Sequence[int]) -> list[tuple[int, list[Any]]]:
    """(matches, rating rows) at each checkpoint: the first k matches to
    finish (the league's rows are read once, as columns: a million matches'
    rows as dicts would cost gigabytes)."""
    return [(k, rate(seats.first(k))) for k in points]


def _labels(bots: Sequence[str]) -> dict[str, str]:
    """The bot's name, or name@version-prefix where one name has several versions."""
    names = [b.split("@")[0] for b in bots]
    return {b: (n if names.count(n) == 1 else f"{n}@{b.partition('@')[2][:6]}")
            for b, n in zip(bots, names)}


# ---- SVG helpers ------------------------------------------------------------
def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round tick values (1, 2, 5 times a power of ten) covering [low, high]."""
    if not high > low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.ceil(low / step) * step
    return [start + i * step for i in range(int((high - start) / step + 1e-9) + 1)]


def _fmt(value: float) -> str:
    return f"{value:.0f}"


class Scale:
    """A linear (or log) map from data to pixels."""

    def __init__(self, low: float, high: float, start: float, end: float, log: bool = False):
        self.log = log
        self.low, self.high = (math.log10(low), math.log10(high)) if log else (low, high)
        if self.high == self.low:
            self.low, self.high = self.low - 1, self.high + 1
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        value = math.log10(value) if self.log else value
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)


def _svg(width: float, height: float, body: str, label: str) -> str:
    return (f'<svg width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} '
            f'{height:.0f}" role="img" aria-label="{esc(label)}">{body}</svg>')


# ---- rating table with interval bars ----------------------------------------
BAR_W, BAR_H = 340, 26


def _elo_domain(rows: Sequence[Any]) -> tuple[float, float]:
    """The Elo range the bars share: every interval and the mean, unless one
    bot's interval is so wide that it would squash all others to dots (a bot
    with almost no decisive games); then that bar runs off the edge."""
    lows = [r.elo_low for r in rows if math.isfinite(r.elo_low)]
    highs = [r.elo_high for r in rows if math.isfinite(r.elo_high)]
    elos = [r.elo for r in rows]
    low, high = min(lows + elos + [ELO_MEAN]), max(highs + elos + [ELO_MEAN])
    widths = sorted(w for w in (r.elo_high - r.elo_low for r in rows) if math.isfinite(w))
    typical = widths[len(widths) // 2] if widths else 100.0
    core_low = min(elos + [ELO_MEAN]) - 1.5 * typical
    core_high = max(elos + [ELO_MEAN]) + 1.5 * typical
    low, high = max(low, core_low), min(high, core_high)
    pad = max((high - low) * 0.06, 5.0)
    return low - pad, high + pad


def _finite(value: float, default: float) -> float:
    return value if math.isfinite(value) else default


def _interval_bar(row: Any, scale: Scale, ticks: list[float], colour: str) -> str:
    left = scale(_finite(row.elo_low, -1e9))
    right = scale(_finite(row.elo_high, 1e9))
    clip_l, clip_r = max(left, scale.start), min(right, scale.end)
    mid = BAR_H / 2
    parts = [f'<line x1="{scale(t):.1f}" x2="{scale(t):.1f}" y1="0" y2="{BAR_H}" '
             f'stroke="#eceff4"/>' for t in ticks]
    parts.append(f'<line x1="{scale(ELO_MEAN):.1f}" x2="{scale(ELO_MEAN):.1f}" y1="0" '
                 f'y2="{BAR_H}" stroke="#9aa3b2" stroke-dasharray="3 3"/>')
    parts.append(f'<rect x="{clip_l:.1f}" y="{mid - 5}" width="{max(clip_r - clip_l, 1):.1f}" '
                 f'height="10" rx="5" fill="{colour}" fill-opacity="0.22" stroke="{colour}" '
                 f'stroke-opacity="0.7"/>')
    for edge, clipped, sign in ((clip_l, left < scale.start, -1), (clip_r, right > scale.end, 1)):
        if clipped:
            parts.append(f'<path d="M{edge + sign * 1:.1f} {mid}l{-sign * 7} -6v12z" fill="{colour}"/>')
    parts.append(f'<circle cx="{scale(row.elo):.1f}" cy="{mid}" r="5" fill="{colour}" '
                 f'stroke="#fff" stroke-width="1.5"/>')
    return _svg(BAR_W, BAR_H, "".join(parts),
                f"Elo {row.elo:.0f}, 95% interval {row.elo_low:.0f} to {row.elo_high:.0f}")


def _bar_axis(scale: Scale, ticks: list[float]) -> str:
    parts = []
    for t in ticks:
        x = scale(t)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="16" y2="22" stroke="#9aa3b2"/>'
                     f'<text x="{x:.1f}" y="12" font-size="11" fill="#5d6677" '
                     f'text-anchor="middle">{_fmt(t)}</text>')
    return _svg(BAR_W, 22, "".join(parts), "Elo axis")


def rating_table(rows: Sequence[Any], labels: dict[str, str], colours: dict[str, str],
                 think: dict[str, tuple[int, float, float]] | None = None) -> str:
    """The table, best first, with each bot's 95% interval drawn to one scale,
    and its mean and slowest decision (ms) where timed."""
    think = think or {}
    low, high = _elo_domain(rows)
    scale = Scale(low, high, 20, BAR_W - 20)   # room for the axis labels at the ends
    ticks = nice_ticks(low, high, 6)
    body = []
    for position, r in enumerate(rows, 1):
        body.append(
            f'<tr><td class="num">{position}</td><td><span class="swatch" style="background:'
            f'{colours[r.bot]}"></span><b>{esc(labels[r.bot])}</b></td>'
            f'<td class="num"><b>{r.elo:.0f}</b></td>'
            f'<td class="num muted">{r.elo_low:.0f} &ndash; {r.elo_high:.0f}</td>'
            f'<td class="bar">{_interval_bar(r, scale, ticks, colours[r.bot])}</td>'
            f'<td class="num">{r.games}</td><td class="num">{r.avg_score:.2f}</td>'
            f'<td class="num">{r.avg_rank:.2f}</td>'
            f'<td class="num{" zero" if not r.faults else ""}">{r.faults}</td>'
            f'{_think_cells(think.get(r.bot))}</tr>')
    return ('<div class="scroll"><table class="ratings"><thead><tr><th class="num">#</th>'
            '<th>bot</th><th class="num">Elo</th><th class="num">95% interval</th>'
            f'<th class="bar">{_bar_axis(scale, ticks)}</th><th class="num">games</th>'
            '<th class="num">avg score</th><th class="num">avg rank</th>'
            '<th class="num">faults</th><th class="num">ms/move</th><th class="num">max ms</th>'
            f'</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def _think_cells(times: tuple[int, float, float] | None) -> str:
    if times is None:
        return '<td class="num muted">&ndash;</td><td class="num muted">&ndash;</td>'
    return f'<td class="num">{times[1]:.1f}</td><td class="num">{times[2]:.0f}</td>'


# ---- head-to-head heatmap ---------------------------------------------------
def _mix(a: str, b: str, t: float) -> str:
    ca = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def rate_colour(value: float) -> str:
    """Diverging: orange-red below 50%, near-white at 50%, blue above."""
    if value < 0.5:
        return _mix("#d0542c", "#f5f5f3", value / 0.5)
    return _mix("#f5f5f3", "#2f62c9", (value - 0.5) / 0.5)


def heatmap(order: Sequence[str], matrix: tuple[list[str], Any, Any], labels: dict[str, str]) -> str:
    """Score rate of each row bot against each column bot, ordered by rating."""
    bots, rates, games = matrix
    where = {b: i for i, b in enumerate(bots)}
    keep = [b for b in order if b in where]
    n = len(keep)
    cell = 64 if n <= 8 else max(30, 520 // n)
    left = 14 + 7.4 * max((len(labels[b]) for b in keep), default=4)
    top = 16 + 6.2 * max((len(labels[b]) for b in keep), default=4)
    parts = []
    for j, b in enumerate(keep):
        x = left + j * cell + cell / 2
        parts.append(f'<text transform="translate({x:.1f},{top - 8:.1f}) rotate(-40)" '
                     f'font-size="12.5" fill="#1c2230">{esc(labels[b])}</text>')
    for i, a in enumerate(keep):
        y = top + i * cell
        parts.append(f'<text x="{left - 10:.1f}" y="{y + cell / 2 + 4:.1f}" font-size="12.5" '
                     f'text-anchor="end" fill="#1c2230">{esc(labels[a])}</text>')
        for j, b in enumerate(keep):
            parts.append(_heat_cell(left + j * cell, y, cell, a == b,
                                    float(rates[where[a]][where[b]]), int(games[where[a]][where[b]])))
    longest = 6.2 * max((len(labels[b]) for b in keep), default=4)
    width, height = left + n * cell + longest * 0.8 + 10, top + n * cell + 10
    return _svg(width, height, "".join(parts), "head-to-head score rates")


def _heat_cell(x: float, y: float, size: float, diagonal: bool, value: float, count: int) -> str:
    if diagonal or count == 0 or not math.isfinite(value):
        return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{size}" height="{size}" fill="#eceef2" '
                f'stroke="#fff" stroke-width="2"><title>{"same bot" if diagonal else "never met"}'
                f'</title></rect>')
    ink = "#ffffff" if abs(value - 0.5) > 0.3 else "#1c2230"
    text = (f'<text x="{x + size / 2:.1f}" y="{y + size / 2 + (0 if size >= 48 else 4):.1f}" '
            f'font-size="{13 if size >= 48 else 10.5}" font-weight="600" fill="{ink}" '
            f'text-anchor="middle">{value * 100:.0f}%</text>')
    if size >= 48:
        text += (f'<text x="{x + size / 2:.1f}" y="{y + size / 2 + 15:.1f}" font-size="10.5" '
                 f'fill="{ink}" fill-opacity="0.85" text-anchor="middle">n={count}</text>')
    return (f'<g><rect x="{x:.1f}" y="{y:.1f}" width="{size}" height="{size}" '
            f'fill="{rate_colour(value)}" stroke="#fff" stroke-width="2"/>{text}'
            f'<title>{value * 100:.1f}% of {count} comparisons</title></g>')


def _heat_legend() -> str:
    stops = "".join(f'<rect x="{20 + i * 12}" y="0" width="12" height="12" '
                    f'fill="{rate_colour(i / 20)}"/>' for i in range(21))
    labels = "".join(f'<text x="{x}" y="27" font-size="11" fill="#5d6677" text-anchor="middle">'
                     f'{t}</text>' for x, t in ((26, "0%"), (146, "50%"), (266, "100%")))
    return _svg(290, 32, stops + labels, "colour scale")


# ---- convergence ------------------------------------------------------------
CONV_W, CONV_H = 1140, 380
CONV_M = {"left": 62, "right": 200, "top": 16, "bottom": 48}


def convergence_chart(history: list[tuple[int, list[Any]]], order: Sequence[str],
                      labels: dict[str, str], colours: dict[str, str]) -> str:
    """Each bot's Elo (line) and 95% interval (band) after k matches."""
    final = {r.bot: r for r in history[-1][1]}
    xs = [k for k, _ in history]
    log = xs[-1] / xs[0] >= 10
    x = Scale(xs[0], xs[-1], CONV_M["left"], CONV_W - CONV_M["right"], log=log)
    low, high = _elo_domain(list(final.values()))
    span = high - low
    low, high = low - span * 0.2, high + span * 0.2   # early, wider bands run off the plot
    y = Scale(low, high, CONV_H - CONV_M["bottom"], CONV_M["top"])
    parts = [_conv_axes(x, y, xs, low, high, log)]
    parts.append(f'<clipPath id="plot"><rect x="{CONV_M["left"]}" y="{CONV_M["top"]}" '
                 f'width="{x.end - x.start:.1f}" height="{y.start - y.end:.1f}"/></clipPath>')
    series = {b: [(k, r) for k, rows in history for r in rows if r.bot == b] for b in order}
    for bot in order:
        parts.append(_conv_series(series[bot], x, y, colours[bot]))
    parts.append(_conv_legend(order, final, labels, colours))
    return _svg(CONV_W, CONV_H, "".join(parts), "ratings against matches played")


def _conv_axes(x: Scale, y: Scale, xs: list[int], low: float, high: float, log: bool) -> str:
    parts = []
    for t in nice_ticks(low, high, 7):
        parts.append(f'<line x1="{x.start}" x2="{x.end}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                     f'stroke="{"#9aa3b2" if t == ELO_MEAN else "#eceff4"}"'
                     f'{" stroke-dasharray=&quot;3 3&quot;" if t == ELO_MEAN else ""}/>'
                     f'<text x="{x.start - 8}" y="{y(t) + 4:.1f}" font-size="11" fill="#5d6677" '
                     f'text-anchor="end">{_fmt(t)}</text>')
    for t in _x_ticks(xs, log):
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{y.end}" y2="{y.start}" '
                     f'stroke="#eceff4"/><text x="{x(t):.1f}" y="{y.start + 17:.1f}" font-size="11" '
                     f'fill="#5d6677" text-anchor="middle">{t:g}</text>')
    parts.append(f'<text x="{(x.start + x.end) / 2:.1f}" y="{CONV_H - 8}" font-size="12.5" '
                 f'fill="#1c2230" text-anchor="middle">matches played, in finishing order'
                 f'{" (log scale)" if log else ""}</text>'
                 f'<text transform="translate(16,{(y.start + y.end) / 2:.1f}) rotate(-90)" '
                 f'font-size="12.5" fill="#1c2230" text-anchor="middle">Elo</text>')
    return "".join(parts)


def _x_ticks(xs: list[int], log: bool) -> list[float]:
    if not log:
        ticks = [t for t in nice_ticks(xs[0], xs[-1], 7) if t == int(t)]
        return ticks or [xs[0], xs[-1]]
    ticks = []
    power = 10 ** math.floor(math.log10(xs[0]))
    while power <= xs[-1]:
        ticks += [m * power for m in (1, 2, 5) if xs[0] <= m * power <= xs[-1]]
        power *= 10
    return ticks


def _conv_series(points: list[tuple[int, Any]], x: Scale, y: Scale, colour: str) -> str:
    points = [(k, r) for k, r in points
              if all(math.isfinite(v) for v in (r.elo, r.elo_low, r.elo_high))]
    if not points:
        return ""
    upper = " ".join(f"{x(k):.1f},{y(r.elo_high):.1f}" for k, r in points)
    lower = " ".join(f"{x(k):.1f},{y(r.elo_low):.1f}" for k, r in reversed(points))
    line = " ".join(f"{x(k):.1f},{y(r.elo):.1f}" for k, r in points)
    dots = "".join(f'<circle cx="{x(k):.1f}" cy="{y(r.elo):.1f}" r="3" fill="{colour}"/>'
                   for k, r in points)
    return (f'<g clip-path="url(#plot)"><polygon points="{upper} {lower}" fill="{colour}" '
            f'fill-opacity="0.12" stroke="{colour}" stroke-opacity="0.35" stroke-width="1"/>'
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2.2"/>'
            f'{dots}</g>')


def _conv_legend(order: Sequence[str], final: dict[str, Any], labels: dict[str, str],
                 colours: dict[str, str]) -> str:
    left = CONV_W - CONV_M["right"] + 22
    parts = []
    for i, bot in enumerate(order):
        top = CONV_M["top"] + 8 + i * 22
        parts.append(f'<rect x="{left}" y="{top - 9}" width="18" height="10" rx="2" '
                     f'fill="{colours[bot]}" fill-opacity="0.25" stroke="{colours[bot]}"/>'
                     f'<text x="{left + 26}" y="{top}" font-size="12.5" fill="#1c2230">'
                     f'{esc(labels[bot])} <tspan fill="#5d6677">{final[bot].elo:.0f}</tspan></text>')
    return "".join(parts)


# ---- faults -----------------------------------------------------------------
def fault_counts(store: Store, league: str) -> dict[tuple[str, str], int]:
    rows = store.db.execute(
        "SELECT s.bot, s.fault_kind, COUNT(*) FROM seats s JOIN matches m ON m.id = s.match_id "
        "WHERE m.league = ? AND s.fault_kind IS NOT NULL GROUP BY 1, 2", [league]).fetchall()
    return {(bot, kind): int(count) for bot, kind, count in rows}


def fault_examples(store: Store, league: str, counts: dict[tuple[str, str], int],
                   most: int = MAX_REPLAYS) -> list[dict[str, Any]]:
    """Up to ``most`` faults in distinct matches, taken in turn from every
    (bot, kind), newest first within each: every kind of trouble gets an
    example, however rare, before any gets a second."""
    queues = {key: list(store.db.query(
        "SELECT s.match_id, s.seat, s.bot, s.fault_kind, s.fault_decision, s.fault_detail, "
        "m.deal, m.finished_at FROM seats s JOIN matches m ON m.id = s.match_id "
        "WHERE m.league = ? AND s.bot = ? AND s.fault_kind = ? ORDER BY m.finished_at DESC "
        "LIMIT ?", [league, key[0], key[1], most])) for key in sorted(counts)}
    chosen: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(chosen) < most and any(queues.values()):
        for queue in queues.values():
            while queue and queue[0]["match_id"] in seen:
                queue.pop(0)
            if queue and len(chosen) < most:
                row = queue.pop(0)
                seen.add(row["match_id"])
                chosen.append(row)
    return chosen


def replay_name(match_id: str) -> str:
    return f"replay-{match_id}.html"


def faults_section(order: Sequence[str], counts: dict[tuple[str, str], int],
                   examples: list[dict[str, Any]], labels: dict[str, str], total: int) -> str:
    if not counts:
        return "<p>No bot faulted in this league.</p>"
    kinds = sorted({kind for _, kind in counts})
    bots = list(order) + sorted({b for b, _ in counts} - set(order))
    first: dict[tuple[str, str], str] = {}
    for row in examples:
        first.setdefault((row["bot"], row["fault_kind"]), row["match_id"])
    head = "".join(f'<th class="num">{esc(k)}</th>' for k in kinds)
    body = []
    for bot in bots:
        cells = []
        for kind in kinds:
            count = counts.get((bot, kind), 0)
            link = first.get((bot, kind))
            text = f'<a href="{esc(replay_name(link))}">{count}</a>' if link and count else str(count)
            cells.append(f'<td class="num{"" if count else " zero"}">{text}</td>')
        body.append(f'<tr><td><b>{esc(labels.get(bot, bot))}</b></td>{"".join(cells)}</tr>')
    table = (f'<table><thead><tr><th>bot</th>{head}</tr></thead><tbody>{"".join(body)}'
             '</tbody></table>')
    return table + _fault_list(examples, labels, total)


def _fault_list(examples: list[dict[str, Any]], labels: dict[str, str], total: int) -> str:
    rows = []
    for row in examples:
        detail = str(row["fault_detail"] or "")
        detail = detail if len(detail) <= 240 else detail[:240] + "…"
        rows.append(f'<tr><td class="mono"><a href="{esc(replay_name(row["match_id"]))}">'
                    f'{esc(row["match_id"])}</a></td><td class="num">{esc(row["deal"])}</td>'
                    f'<td>{esc(labels.get(row["bot"], row["bot"]))} <span class="muted">seat '
                    f'{esc(row["seat"])}</span></td><td><span class="tag">{esc(row["fault_kind"])}'
                    f'</span></td><td class="num">{esc(row["fault_decision"])}</td>'
                    f'<td class="detail">{esc(detail)}</td></tr>')
    more = (f'<p class="muted">{total - len(examples)} more faulted matches are not linked; list '
            'them with <code>league matches --league NAME --fault KIND</code>.</p>'
            if total > len(examples) else "")
    return ('<h3>Faulted matches, with replays</h3><div class="scroll"><table class="faultlist">'
            '<thead><tr><th>match</th><th class="num">deal</th><th>bot</th><th>fault</th>'
            '<th class="num">decision</th><th>detail</th></tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table></div>{more}')


# ---- settings ---------------------------------------------------------------
def settings_section(league: dict[str, Any]) -> str:
    config = json.loads(league.get("config") or "{}")
    first = ("name", "game", "bots", "players", "deals", "rotation", "partners", "seed")
    config = {**{k: config[k] for k in first if k in config}, **config}
    rows = []
    for key, value in config.items():
        if isinstance(value, dict):
            rows += [(f"{key}.{k}", v) for k, v in value.items()]
        else:
            rows.append((key, value))
    if "seed" not in config:
        rows.append(("seed", "secret (kept beside the results database)"))
    rows += [("scheduled matches", league.get("scheduled")),
             ("first run", _when(league.get("created_at"))),
             ("last run", _when(league.get("updated_at")))]
    cells = "".join(f"<tr><td>{esc(k)}</td><td>{esc(_show(v))}</td></tr>" for k, v in rows)
    return f'<table class="settings"><tbody>{cells}</tbody></table>'


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return "" if value is None else str(value)


def _when(stamp: Any) -> str:
    if not stamp:
        return ""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(float(stamp)))


# ---- the page ---------------------------------------------------------------
def report_html(store: Store, league_name: str) -> tuple[str, list[str]]:
    """The report page and the match IDs whose replays it links to."""
    league = next((r for r in store.leagues() if r["name"] == league_name), None)
    if league is None:
        raise KeyError(f"no league {league_name!r} in {store.path}")
    played, faulted = store.league_match_count(league_name)
    counts = fault_counts(store, league_name) if played else {}
    examples = fault_examples(store, league_name, counts) if counts else []
    body = [_title(league, store.league_counts(league_name), faulted)]
    if played:
        body += _result_sections(store, league_name, counts, examples, faulted,
                                 store.think_times(league_name))
    else:
        body.append('<div class="card"><p>No results yet: run the league first.</p></div>')
    body.append(f'<div class="card" id="settings"><h2>Settings</h2>{settings_section(league)}</div>')
    body.append(f'<p class="muted">Generated {_when(time.time())} from '
                f'<span class="mono">{esc(Path(store.path).name)}</span>.</p>')
    return (html_page(f"league {league_name}", "\n".join(body), asset("report.css")),
            [row["match_id"] for row in examples])


def _title(league: dict[str, Any], counts: LeagueCounts, faulted: int) -> str:
    """The name and the counts, which add up: of the scheduled matches, those
    played for the bots' current versions; the other stored matches apart
    (earlier versions: rated, as those versions, but not played for this
    schedule); faults over everything stored, as the faults section counts."""
    said = f"{counts.current} of {counts.scheduled} scheduled matches played"
    if counts.stopped:
        said += f" ({counts.stopped}; the other {counts.unplayed} will not be played)"
    if counts.elsewhere():
        said += (f" · also stored: {counts.elsewhere()} (rated as such, not counted as played)"
                 f" · {faulted} of all {counts.stored} stored with faults")
    else:
        said += f" · {faulted} with faults"
    return (f'<h1>League {esc(league["name"])}</h1><p class="sub">{esc(league["game"])} · '
            f'{esc(said)}</p><nav><a href="#ratings">ratings</a><a href="#convergence">convergence</a>'
            '<a href="#h2h">head to head</a><a href="#faults">faults</a>'
            '<a href="#settings">settings</a></nav>')


def _result_sections(store: Store, league: str, counts: dict[tuple[str, str], int],
                     examples: list[dict[str, Any]], faulted: int,
                     think: dict[str, tuple[int, float, float]]) -> list[str]:
    # the finishing order first: matches stored after it are left out
    seats = FinishOrder(store.seat_tuples(league), store.finish_order(league))
    played = seats.matches
    history = convergence(seats, checkpoints(played))
    table = history[-1][1]
    order = [r.bot for r in table]
    labels = _labels(order + sorted({b for b, _ in counts} - set(order)))
    colours = {bot: PALETTE[i % len(PALETTE)] for i, bot in enumerate(order)}
    return [
        '<div class="card" id="ratings"><h2>Ratings</h2><p class="lead">Elo on the logistic '
        'scale around 1500 (dashed): 100 points apart, a bot finishes ahead of the other about '
        '64% of the time when they do not tie (in team games the Elo is per member: two copies '
        'of a bot 100 points up finish ahead of two copies of the other 76% of the time). '
        'Bars: 95% intervals; dot: the estimate.</p>'
        f'{rating_table(table, labels, colours, think)}</div>',
        '<div class="card" id="convergence"><h2>Convergence</h2><p class="lead">Each bot\'s '
        'rating refitted on the first k matches to finish, with its 95% interval: once the '
        'bands stop moving and separate, more matches change little.</p>'
        f'<div class="scroll">{convergence_chart(history, order, labels, colours)}</div></div>',
        '<div class="card" id="h2h"><h2>Head to head</h2><p class="lead">The row bot\'s score '
        'rate against the column bot (finishing ahead = 1, a tie = ½), over n pairwise '
        'comparisons; ordered by rating.</p>'
        f'<div class="scroll">{heatmap(order, head_to_head(seats.first(played)), labels)}</div>'
        f'{_heat_legend()}</div>',
        f'<div class="card" id="faults"><h2>Faults</h2><p class="lead">Faulted seats per bot and '
        'kind (a random stand-in played on for the bot). Counts and match IDs link to replays.'
        f'</p>{faults_section(order, counts, examples, labels, faulted)}</div>',
    ]


def write_report(store: Store, league_name: str, path: Path | str) -> Path:
    """Write the report of ``league_name`` to ``path``, and next to it a
    replay page ``replay-<match id>.html`` for each faulted match it links
    (at most 50). Only reads ``store``, so open it with ``Store(db, readonly=True)``;
    raises KeyError for an unknown league."""
    path = Path(path)
    page, linked = report_html(store, league_name)
    for match_id in linked:
        write_replay_html(store, match_id, path.parent / replay_name(match_id))
    path.write_text(page, encoding="utf-8")
    return path
