// A version being validated: ask the API every two seconds, and reload the
// page (which the server renders) once the verdict is in.
"use strict";
(function () {
  const state = document.getElementById("state");
  if (!state || !state.dataset.poll) return;
  if (state.textContent !== "queued" && state.textContent !== "validating") return;
  const poll = function () {
    fetch(state.dataset.poll, { credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (version) {
        if (version && version.state !== "queued" && version.state !== "validating") {
          window.location.reload();
        } else {
          if (version) state.textContent = version.state;
          window.setTimeout(poll, 2000);
        }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  };
  window.setTimeout(poll, 1000);
})();

// ---- the front page's leaderboards, redrawn as results arrive ----------------
// Polls the API every five seconds and rebuilds each table's rows from the
// data with DOM calls and textContent only (bot names come from strangers).
(function () {
  const holder = document.getElementById("leaderboards");
  if (!holder || !holder.dataset.live) return;
  const SVG = "http://www.w3.org/2000/svg";
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function bar(row) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "bar");
    svg.setAttribute("viewBox", "0 0 160 14");
    svg.setAttribute("width", "160");
    svg.setAttribute("height", "14");
    const band = document.createElementNS(SVG, "rect");
    band.setAttribute("class", "band");
    band.setAttribute("x", row.bar.x); band.setAttribute("y", "4");
    band.setAttribute("width", row.bar.w); band.setAttribute("height", "6"); band.setAttribute("rx", "3");
    const mid = document.createElementNS(SVG, "rect");
    mid.setAttribute("class", "mid");
    mid.setAttribute("x", row.bar.c - 1); mid.setAttribute("y", "1");
    mid.setAttribute("width", "2"); mid.setAttribute("height", "12");
    svg.appendChild(band); svg.appendChild(mid);
    return svg;
  }
  function moved(row) {
    if (row.moved === null || row.moved === undefined) return el("span", "muted", "new");
    if (row.moved >= 0.5) return el("span", "up", "▲" + Math.round(row.moved));
    if (row.moved <= -0.5) return el("span", "down", "▼" + Math.round(-row.moved));
    return el("span", "muted", "–");
  }
  function rowOf(row) {
    const tr = el("tr", row.boss ? "boss" : "");
    tr.appendChild(el("td", "num", row.rank));
    const who = el("td");
    if (row.boss) {
      who.appendChild(el("span", "badge", "boss"));
      who.appendChild(document.createTextNode(" " + row.entrant));
    } else {
      const link = el("a", "", row.bot);
      link.href = "/bots/" + encodeURIComponent(row.bot);
      who.appendChild(link);
      who.appendChild(document.createTextNode(" "));
      who.appendChild(el("span", "muted", "v" + row.version));
    }
    tr.appendChild(who);
    tr.appendChild(el("td", "", row.owner));
    const elo = el("td", "num", Math.round(row.elo) + " ");
    elo.appendChild(el("span", "muted", "±" + Math.round((row.high - row.low) / 2)));
    tr.appendChild(elo);
    const cell = el("td", "bar-col");
    cell.appendChild(bar(row));
    tr.appendChild(cell);
    tr.appendChild(el("td", "num", row.games));
    const move = el("td", "num");
    move.appendChild(moved(row));
    tr.appendChild(move);
    return tr;
  }
  function when(stamp) {
    return stamp ? new Date(stamp * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "not yet";
  }
  function redraw(data) {
    data.pools.forEach(function (pool) {
      const section = holder.querySelector('section[data-pool="' + CSS.escape(pool.pool) + '"]');
      if (!section || !pool.rows.length) return;
      const body = section.querySelector("tbody");
      const fresh = document.createElement("tbody");
      pool.rows.forEach(function (row) { fresh.appendChild(rowOf(row)); });
      body.replaceWith(fresh);
      section.querySelector(".refitted").textContent = when(pool.refitted_at);
      section.dataset.refitted = String(pool.refitted_at || "");
    });
    holder.dataset.updates = String(Number(holder.dataset.updates || "0") + 1);
  }
  // The bots table below the boards: a bot that appears on a board must
  // appear there too, so it is redrawn from /api/v1/bots in the same turn.
  const bots = document.querySelector("table.bots[data-live]");
  function botRow(bot) {
    const tr = el("tr");
    const name = el("td");
    const link = el("a", "", bot.name);
    link.href = "/bots/" + encodeURIComponent(bot.name);
    name.appendChild(link);
    tr.appendChild(name);
    tr.appendChild(el("td", "", bot.owner));
    const playing = el("td");
    playing.appendChild(bot.playing ? document.createTextNode("v" + bot.playing)
                                    : el("span", "muted", "none yet"));
    tr.appendChild(playing);
    const latest = el("td");
    if (bot.latest) {
      latest.appendChild(document.createTextNode("v" + bot.latest + " "));
      latest.appendChild(el("span", "state state-" + bot.state, bot.state));
    }
    tr.appendChild(latest);
    tr.appendChild(el("td", "description", bot.description));
    return tr;
  }
  function redrawBots(data) {
    if (!bots || !data || !data.bots.length) return;
    const fresh = document.createElement("tbody");
    data.bots.forEach(function (bot) { fresh.appendChild(botRow(bot)); });
    bots.querySelector("tbody").replaceWith(fresh);
  }
  function json(url) {
    return fetch(url, { credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.json() : null; });
  }
  function poll() {
    Promise.all([json(holder.dataset.live), bots ? json(bots.dataset.live) : null])
      .then(function (replies) {
        redrawBots(replies[1]);
        if (replies[0]) redraw(replies[0]);
        window.setTimeout(poll, 5000);
      })
      .catch(function () { window.setTimeout(poll, 10000); });
  }
  window.setTimeout(poll, 2000);
})();

// ---- a bot's rating history: the Elo as a line in its 95% band ---------------
(function () {
  const holder = document.getElementById("history");
  const source = document.getElementById("ladder-data");
  if (!holder || !source) return;
  const data = JSON.parse(source.textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const series = [];
  data.versions.forEach(function (v) {
    const byPool = {};
    v.history.forEach(function (h) { (byPool[h.pool] = byPool[h.pool] || []).push(h); });
    Object.keys(byPool).forEach(function (pool) {
      series.push({ label: "v" + v.number + " · " + pool.replace(/^ladder:/, ""), points: byPool[pool] });
    });
  });
  if (!series.length) {
    holder.textContent = "No rating yet: its first groups are being played.";
    return;
  }
  const W = 640, H = 220, L = 48, R = 12, T = 10, B = 28;
  let t0 = Infinity, t1 = -Infinity, lo = Infinity, hi = -Infinity;
  series.forEach(function (s) {
    s.points.forEach(function (p) {
      t0 = Math.min(t0, p.at); t1 = Math.max(t1, p.at);
      lo = Math.min(lo, p.low); hi = Math.max(hi, p.high);
    });
  });
  if (t1 === t0) t1 = t0 + 1;
  if (hi - lo < 50) { lo -= 25; hi += 25; }
  const x = function (t) { return L + (t - t0) / (t1 - t0) * (W - L - R); };
  const y = function (e) { return T + (hi - e) / (hi - lo) * (H - T - B); };
  function node(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (text !== undefined) n.textContent = text;
    return n;
  }
  const svg = node("svg", { viewBox: "0 0 " + W + " " + H, class: "history", role: "img",
                            "aria-label": "rating history" });
  for (let k = 0; k <= 4; k++) {
    const e = lo + (hi - lo) * k / 4;
    svg.appendChild(node("line", { x1: L, x2: W - R, y1: y(e), y2: y(e), class: "grid" }));
    svg.appendChild(node("text", { x: L - 6, y: y(e) + 4, class: "tick", "text-anchor": "end" },
                         String(Math.round(e))));
  }
  const colours = ["#2456c9", "#d9821c", "#2b8f57", "#8a4fc7", "#c8457f"];
  series.forEach(function (s, i) {
    const c = colours[i % colours.length];
    const upper = s.points.map(function (p) { return x(p.at) + "," + y(p.high); });
    const lower = s.points.slice().reverse().map(function (p) { return x(p.at) + "," + y(p.low); });
    svg.appendChild(node("polygon", { points: upper.concat(lower).join(" "), fill: c,
                                      "fill-opacity": "0.15", class: "band" }));
    svg.appendChild(node("polyline", { points: s.points.map(function (p) { return x(p.at) + "," + y(p.elo); }).join(" "),
                                       fill: "none", stroke: c, "stroke-width": "2", class: "line" }));
    // A dot per refit: a first rating (one point) draws no line, only its dot.
    s.points.forEach(function (p) {
      svg.appendChild(node("circle", { cx: x(p.at), cy: y(p.elo), r: "3", fill: c, class: "point" }));
    });
    svg.appendChild(node("text", { x: L + 6, y: T + 14 + 14 * i, fill: c, class: "legend" }, s.label));
  });
  // The time axis: the first and the last refit (UTC), at the ends.
  const clock = function (t) { return new Date(t * 1000).toISOString().slice(11, 16) + " UTC"; };
  svg.appendChild(node("text", { x: L, y: H - 8, class: "tick", "text-anchor": "start" }, clock(t0)));
  if (series.some(function (s) { return s.points.length > 1; })) {
    svg.appendChild(node("text", { x: W - R, y: H - 8, class: "tick", "text-anchor": "end" }, clock(t1)));
  }
  holder.appendChild(svg);
  holder.dataset.series = String(series.length);
})();

// ---- the organiser's figures, refreshed ------------------------------------
(function () {
  const holder = document.getElementById("organiser");
  if (!holder || !holder.dataset.live) return;
  function poll() {
    fetch(holder.dataset.live, { credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (data) {
        if (data) holder.querySelectorAll("[data-key]").forEach(function (cell) {
          cell.textContent = String(data[cell.dataset.key]);
        });
        window.setTimeout(poll, 5000);
      })
      .catch(function () { window.setTimeout(poll, 10000); });
  }
  window.setTimeout(poll, 5000);
})();
