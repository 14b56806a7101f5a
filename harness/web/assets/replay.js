"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const steps = data.steps, strings = data.strings, seats = data.seats;
  const colours = data.colours, last = steps.length - 1;
  const game = data.match.game, names = seats.map(seat => seat.bot);
  const scores = [];
  let current = 0;
  let viewer = null;   // the seat whose view the Table card draws; null: what all share
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
    if (i < last && st.se) addStderr(box, st.se);
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
  // each decision's stderr, by seat (text only: never parsed as markup)
  function addStderr(box, said) {
    box.appendChild(el("h3", null, "stderr"));
    for (const [s, text] of said) {
      const who = el("div", "stderr-who", "seat " + s + " \u00B7 " + seatName(s));
      who.style.color = colour(s);
      box.appendChild(who);
      box.appendChild(el("pre", "stderr", text));
    }
  }
  function addEvents(box, title, events) {
    box.appendChild(el("h3", null, title));
    const list = el("ul", "events");
    for (const text of events) list.appendChild(el("li", null, text));
    box.appendChild(list);
  }

  // The drawn table (assets/table.js) of the Table card: the public view (the
  // keys every seat's view shares: no hand), or one seat's, as picked.
  function drawPublic(views, common) {
    const shared = {};
    for (const key of common) shared[key] = views[0][key];
    return viewer === null || !views[viewer]
      ? window.drawTable(game, shared, names, null, colours)
      : window.drawTable(game, views[viewer], names, viewer, colours);
  }
  function viewerButtons() {
    const bar = el("div", "viewer");
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "whose view to draw");
    [null, ...seats.map(seat => seat.seat)].forEach(s => {
      const button = el("button", null, s === null ? "what everyone sees" : "seat " + s + " \u00B7 " + seatName(s));
      button.type = "button";
      button.dataset.seat = s === null ? "" : String(s);
      button.setAttribute("aria-pressed", String(s === viewer));
      button.addEventListener("click", () => { viewer = s; go(current); });
      bar.appendChild(button);
    });
    return bar;
  }

  function renderPublic(views, common, i) {
    const box = document.getElementById("public");
    box.replaceChildren();
    box.appendChild(viewerButtons());
    box.appendChild(drawPublic(views, common));
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
      card.appendChild(window.drawTable(game, view, names, s, colours));
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
