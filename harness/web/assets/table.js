"use strict";
// The table drawn: one observation (a seat's view, or the keys every seat's
// view shares) as cards, dice, piles, grids and a score strip, one renderer
// per game and a generic fallback for any other.
//
//   window.drawTable(game, view, seatNames, seatIndex, colours) -> Element
//
// seatIndex is the seat whose view it is, or null for the public view. Only
// what `view` holds is drawn, so hidden information stays hidden: a hand that
// is not in the view is drawn as backs from its public size. The drawing is
// built with createElement and textContent only (bot names are hostile) and
// styled by classes of table.css; the one style set from script is the
// custom property --c, a seat's colour.
(function () {
  const DEFAULT_COLOURS = ["#3566c8", "#d9821c", "#2b8f57", "#8a4fc7", "#1c93a8", "#c8457f", "#8c6239"];
  const TENNOS_SUITS = [  // games/tennos.py: red = heart, diamond, cross
    ["\u2660", "spade", "black"], ["\u2665", "heart", "red"], ["\u2666", "diamond", "red"],
    ["\u2663", "club", "black"], ["\u2618", "leaf", "black"], ["\u271A", "cross", "red"]];
  const PEAK_SUITS = [  // games/seven_peak.py: spade, diamond, club, heart, joker
    ["\u2660", "spade", "black"], ["\u2666", "diamond", "red"], ["\u2663", "club", "black"],
    ["\u2665", "heart", "red"], ["\u2605", "joker", "joker"]];
  const RANK_NAMES = { 1: "A", 11: "J", 12: "Q", 13: "K" };
  const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8],
    6: [0, 2, 3, 5, 6, 8] };
  const MAX_BACKS = 16;   // an opponent's hand beyond this is drawn as backs and a count

  // ---- primitives --------------------------------------------------------------
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function isList(value) { return Array.isArray(value); }
  function isCode(value) { return Number.isInteger(value) && value >= 0; }

  function faceCard(rank, suitSymbol, tone, name) {
    const card = el("span", "tcard " + tone);
    card.title = name;
    card.appendChild(el("span", "rank", rank));
    card.appendChild(el("span", "suit", suitSymbol));
    return card;
  }
  function tennosCard(code) {
    if (!isCode(code)) return back();
    if (code >= 78) return faceCard("JK", "\u2605", "joker", "joker");
    const [symbol, name, tone] = TENNOS_SUITS[Math.floor(code / 13)];
    const rank = RANK_NAMES[code % 13 + 1] || String(code % 13 + 1);
    return faceCard(rank, symbol, tone, name + " " + rank);
  }
  function peakCard(code) {
    if (!isCode(code) || code >= 30) return back();
    const [symbol, name, tone] = PEAK_SUITS[Math.floor(code / 6)];
    return faceCard(String(code % 6 + 1), symbol, tone, name + " " + (code % 6 + 1));
  }
  // a card of a game's own kind: a number, tinted with a seat's colour if owned
  function numberCard(value, owner, colours) {
    const card = el("span", "tcard plain" + (owner === undefined || owner === null ? "" : " owned"));
    if (owner !== undefined && owner !== null) card.style.setProperty("--c", colours[owner % colours.length]);
    card.appendChild(el("span", "rank big", value));
    card.title = String(value);
    return card;
  }
  function back() { const card = el("span", "tcard back"); card.title = "face down"; return card; }
  function backs(count) {
    const fan = el("span", "t-fan backs");
    for (let k = 0; k < Math.min(count, MAX_BACKS); k++) fan.appendChild(back());
    if (count > MAX_BACKS) fan.appendChild(el("span", "t-more", "+" + (count - MAX_BACKS)));
    if (!count) fan.appendChild(el("span", "t-empty", "none"));
    return fan;
  }
  function fan(cards, draw, cls) {
    const row = el("span", "t-fan" + (cls ? " " + cls : ""));
    for (const card of cards || []) row.appendChild(draw(card));
    if (!cards || !cards.length) row.appendChild(el("span", "t-empty", "none"));
    return row;
  }
  function die(value) {
    const face = el("span", "tdie");
    face.title = "die " + value;
    face.dataset.value = String(value);
    const lit = PIPS[value] || [];
    for (let k = 0; k < 9; k++) face.appendChild(el("span", lit.includes(k) ? "pip on" : "pip"));
    return face;
  }
  function dice(values, cls) {
    const row = el("span", "t-dice" + (cls ? " " + cls : ""));
    for (const value of values || []) row.appendChild(die(value));
    return row;
  }
  function zone(label, content, cls) {
    const box = el("div", "t-zone" + (cls ? " " + cls : ""));
    box.appendChild(el("div", "t-label", label));
    if (content) box.appendChild(content);
    return box;
  }
  function info(text) { return el("span", "t-info", text); }
  // [seat, card] plays in order: each card with its player's colour under it
  function plays(ctx, pairs, draw) {
    const row = el("span", "t-plays");
    for (const [s, card] of pairs || []) {
      const play = el("span", "t-play");
      play.style.setProperty("--c", ctx.colours[s % ctx.colours.length]);
      play.appendChild(draw(card));
      play.appendChild(el("span", "t-who", seatName(ctx, s)));
      row.appendChild(play);
    }
    if (!pairs || !pairs.length) row.appendChild(el("span", "t-empty", "none"));
    return row;
  }

  // ---- the score strip and the hands -----------------------------------------
  // One box per seat: colour, bot name, score and the game's extras; another
  // seat's hidden hand as backs (from hand_sizes), and what `drawSeat` draws
  // for the seat (its public cards: targets won, a row, sets).
  function scoreStrip(ctx, extras, drawSeat) {
    const strip = el("div", "t-scores");
    const view = ctx.view, n = seatCount(ctx);
    for (let s = 0; s < n; s++) {
      const box = el("div", "t-seat" + (s === ctx.seat ? " me" : "") +
        (s === view.current_player ? " acting" : ""));
      box.style.setProperty("--c", ctx.colours[s % ctx.colours.length]);
      const head = el("div", "t-seat-head");
      head.appendChild(el("span", "t-name", seatName(ctx, s)));
      if (isList(view.scores)) head.appendChild(el("span", "t-score", view.scores[s]));
      box.appendChild(head);
      const facts = (extras ? extras(s) : []).filter(f => f !== null && f !== undefined);
      if (facts.length) box.appendChild(el("div", "t-facts", facts.join(" \u00B7 ")));
      if (isList(view.hand_sizes) && s !== ctx.seat) box.appendChild(backs(view.hand_sizes[s]));
      add(box, drawSeat ? drawSeat(s) : null);
      strip.appendChild(box);
    }
    return strip;
  }
  function seatName(ctx, s) { return ctx.names[s] !== undefined ? ctx.names[s] : "seat " + s; }
  function seatCount(ctx) {
    const view = ctx.view;
    if (Number.isInteger(view.num_players)) return view.num_players;
    for (const key of ["scores", "hand_sizes", "hands"]) if (isList(view[key])) return view[key].length;
    return ctx.names.length;
  }
  // the viewing seat's own hand: data-hand="mine", one .tcard per card
  function myHand(ctx, cards, draw, label) {
    if (!isList(cards)) return null;
    const row = fan(cards, draw, "hand");
    row.dataset.hand = "mine";
    return zone(label || "your hand (" + cards.length + ")", row, "mine");
  }
  function add(parent, ...children) {
    for (const child of children) if (child) parent.appendChild(child);
  }
  function perSeat(list, s) { return isList(list) ? list[s] : undefined; }
  function fact(label, value) {
    return value === undefined || value === null ? null : label + " " + value;
  }

  // ---- games ----------------------------------------------------------------------
  const RENDERERS = {
    limit(ctx, root) {
      const v = ctx.view;
      if (isList(v.limit)) {
        const card = el("div", "t-limit");
        card.appendChild(el("span", "t-limit-n", v.limit[0]));
        card.appendChild(el("span", "t-limit-p", "1st " + v.limit[1] + " \u00B7 2nd " + v.limit[2]));
        const total = (v.basket || []).reduce((sum, [, value]) => sum + value, 0);
        const row = el("div", "t-row");
        add(row, zone("limit card", card), zone("basket (" + total + " / " + v.limit[0] + ")",
          ownedRow(ctx, v.basket)));
        root.appendChild(row);
      }
      const hands = v.hands;
      root.appendChild(scoreStrip(ctx, s => [fact("last round", perSeat(v.last_round, s))], s => {
        if (!isList(hands)) return null;
        const box = el("div");
        const row = fan(hands[s], value => numberCard(value, s, ctx.colours), "hand");
        if (s === ctx.seat) row.dataset.hand = "mine";
        box.appendChild(row);
        const blocked = perSeat(v.blocked, s);
        if (blocked && blocked.length) {
          box.appendChild(el("span", "t-info", "blocked "));
          box.appendChild(fan(blocked, value => numberCard(value, s, ctx.colours), "dim small"));
        }
        return box;
      }));
      if (isList(v.unrevealed_limits)) root.appendChild(info("limits still in the deck: " + v.unrevealed_limits.join(", ")));
    },

    cat_in_the_box(ctx, root) {
      const v = ctx.view;
      const rank = value => numberCard(value);
      const row = el("div", "t-row");
      if (isList(v.trick)) {
        const trick = el("span", "t-plays");
        for (const [s, value, colour] of v.trick) {
          const play = el("span", "t-play");
          play.style.setProperty("--c", ctx.colours[s % ctx.colours.length]);
          const card = numberCard(value);
          card.classList.add("cat-" + colour);
          play.appendChild(card);
          play.appendChild(el("span", "t-who", colour + " \u00B7 " + (seatName(ctx, s))));
          trick.appendChild(play);
        }
        if (!v.trick.length) trick.appendChild(el("span", "t-empty", "none"));
        add(row, zone("trick " + ((v.trick_number || 0) + 1) + (v.led_colour ? " (led " + v.led_colour + ")" : ""), trick));
      }
      if (v.my_discard !== undefined && v.my_discard !== null) add(row, zone("your discard", rank(v.my_discard)));
      root.appendChild(row);
      if (v.board && typeof v.board === "object") root.appendChild(zone("board", catBoard(ctx, v.board)));
      root.appendChild(scoreStrip(ctx, s => [fact("bid", perSeat(v.bids, s)),
        fact("tricks", perSeat(v.tricks_won, s)),
        perSeat(v.voids, s) && v.voids[s].length ? "void " + v.voids[s].join(", ") : null]));
      add(root, myHand(ctx, v.hand, rank));
    },

    tile_hunt(ctx, root) {
      const v = ctx.view;
      const row = el("div", "t-row");
      if (isList(v.dice)) {
        const who = Number.isInteger(v.current_player) && v.current_player >= 0
          ? " of " + (seatName(ctx, v.current_player)) : "";
        add(row, zone("dice" + who + (v.rerolls_left !== undefined ? " (" + v.rerolls_left + " rerolls left)" : ""),
          dice(v.dice)));
      }
      if (isList(v.turn_rolls) && v.turn_rolls.length > 1) {
        const rolls = el("span", "t-stack");
        for (const roll of v.turn_rolls) rolls.appendChild(dice(roll, "small"));
        add(row, zone("rolls this turn", rolls));
      }
      root.appendChild(row);
      if (isList(v.tiles)) {
        const tiles = el("div", "t-tiles");
        for (const tile of v.tiles) {
          const box = el("span", "t-tile" + (tile.owner === null ? "" : " owned"));
          if (tile.owner !== null) box.style.setProperty("--c", ctx.colours[tile.owner % ctx.colours.length]);
          box.appendChild(el("span", "t-tile-name", tile.name));
          box.appendChild(el("span", "t-tile-points", tile.points));
          if (tile.owner !== null) box.appendChild(el("span", "t-who", seatName(ctx, tile.owner)));
          tiles.appendChild(box);
        }
        for (let k = 0; k < (v.face_down || 0); k++) tiles.appendChild(el("span", "t-tile back"));
        root.appendChild(zone("tiles (" + (v.face_down || 0) + " face down; reversal " + v.reversal + ")", tiles));
      }
      root.appendChild(scoreStrip(ctx, s => [fact("chips", perSeat(v.chips, s))]));
    },

    grazia(ctx, root) {
      const v = ctx.view;
      if (isList(v.field)) {
        const piles = el("div", "t-row");
        v.field.forEach((pile, suit) => {
          const stack = el("span", "t-pile");
          stack.appendChild(pile.length ? tennosCard(pile[pile.length - 1]) : el("span", "tcard slot", TENNOS_SUITS[suit][0]));
          stack.appendChild(el("span", "t-count", pile.length + (pile.length === 1 ? " card" : " cards")));
          piles.appendChild(zone(TENNOS_SUITS[suit][1], stack, "pile"));
        });
        root.appendChild(zone("field", piles));
      }
      const row = el("div", "t-row");
      if (isList(v.run) && v.run.length) add(row, zone("play being made" + (v.run_penalised ? " (penalty)" : ""), fan(v.run, tennosCard)));
      if (isList(v.out_of_play) && v.out_of_play.length) add(row, zone("out of play", fan(v.out_of_play, tennosCard, "small")));
      root.appendChild(row);
      root.appendChild(scoreStrip(ctx, s => [fact("pile", perSeat(v.pile_sizes, s)), fact("penalties", perSeat(v.penalties, s))]));
      add(root, myHand(ctx, v.hand, tennosCard));
    },

    target(ctx, root) {
      const v = ctx.view;
      const row = el("div", "t-row");
      if (Number.isInteger(v.target)) add(row, zone("target", v.target >= 0 ? tennosCard(v.target) : back(), "big"));
      if (isList(v.revealed) && v.revealed.length) add(row, zone("revealed", fan(v.revealed, tennosCard)));
      if (isList(v.plays)) add(row, zone("plays", plays(ctx, v.plays, tennosCard)));
      if (v.deck_size !== undefined) add(row, zone("deck", pileOf(v.deck_size)));
      root.appendChild(row);
      if (isList(v.discard_face_up)) root.appendChild(zone("discard pile (" + v.discard_size + "; face up:)", fan(v.discard_face_up, tennosCard, "small")));
      if (isList(v.my_face_down) && v.my_face_down.length) root.appendChild(zone("your face-down discards", fan(v.my_face_down, tennosCard, "small")));
      root.appendChild(scoreStrip(ctx, s => [fact("discarded", perSeat(v.discarded, s))], s => {
        const won = perSeat(v.targets, s);
        return won && won.length ? fan(won, tennosCard, "small") : null;
      }));
      add(root, myHand(ctx, v.hand, tennosCard));
    },

    all_aboard(ctx, root) {
      const v = ctx.view;
      const row = el("div", "t-row");
      if (isCode(v.field)) add(row, zone("field" + (v.field_red ? " (red signal)" : ""), tennosCard(v.field), "big"));
      if (isList(v.played)) add(row, zone("played this round (" + v.played.length + ", latest last)", fan(v.played.slice(-12), tennosCard, "small")));
      if (v.deck_size !== undefined) add(row, zone("deck", pileOf(v.deck_size)));
      root.appendChild(row);
      root.appendChild(scoreStrip(ctx, s => [fact("certificates", perSeat(v.certificates, s)), fact("last round", perSeat(v.last_round, s))]));
      add(root, myHand(ctx, v.hand, tennosCard));
    },

    tenos_square(ctx, root) {
      const v = ctx.view;
      const row = el("div", "t-row");
      if (isList(v.centre)) add(row, zone("centre", fan(v.centre, tennosCard)));
      if (v.my_centre_card !== undefined && v.my_centre_card !== null) add(row, zone("your centre card", tennosCard(v.my_centre_card)));
      if (isList(v.exchange_put) && v.exchange_put.length) add(row, zone("exchange", fan(v.exchange_put, tennosCard)));
      if (isCode(v.playing)) add(row, zone("being played", tennosCard(v.playing)));
      if (v.deck_size !== undefined) add(row, zone("deck", pileOf(v.deck_size)));
      root.appendChild(row);
      root.appendChild(scoreStrip(ctx, s => [fact("row", perSeat(v.row_scores, s)), fact("total", perSeat(v.totals, s)),
        s === v.dealer ? "dealer" : null], s => {
        const places = perSeat(v.rows, s);
        if (!places) return null;
        const row = el("div");
        row.appendChild(info("row "));
        row.appendChild(fan(places, card => (card === null ? back() : tennosCard(card)), "small"));
        return row;
      }));
      add(root, myHand(ctx, v.hand, tennosCard));
    },

    twin_shoot(ctx, root) {
      const v = ctx.view;
      const row = el("div", "t-row");
      if (isList(v.trick)) add(row, zone("trick" + (v.follow_mode && v.follow_mode !== "none" ? " (follow " + v.follow_mode + ")" : ""), plays(ctx, v.trick, tennosCard)));
      if (isList(v.bid_cards)) add(row, zone("your bid cards", fan(v.bid_cards, tennosCard)));
      if (isList(v.partner_bid_cards)) add(row, zone("partner's bid cards", fan(v.partner_bid_cards, tennosCard)));
      root.appendChild(row);
      root.appendChild(scoreStrip(ctx, s => ["team " + Math.floor(s / 2), fact("bid", perSeat(v.bids, s)),
        fact("tricks", perSeat(v.tricks_won, s)), fact("bid cards", perSeat(v.bid_card_counts, s))], s => {
        const open = perSeat(v.open_bid_cards, s);
        return open ? fan(open, tennosCard, "small") : null;
      }));
      add(root, myHand(ctx, v.hand, tennosCard));
    },

    tateyoko(ctx, root) {
      const v = ctx.view;
      if (isList(v.grid)) root.appendChild(zone("grid", tateyokoGrid(v.grid, v.turn || [])));
      if (v.deck_size !== undefined) root.appendChild(info("deck " + v.deck_size + " \u00B7 passes " + v.passes));
      root.appendChild(scoreStrip(ctx, s => [fact("last game", perSeat(v.last_game, s))]));
      add(root, myHand(ctx, v.hand, tennosCard));
    },

    kings_order(ctx, root) {
      const v = ctx.view;
      const row = el("div", "t-row");
      if (v.pending && typeof v.pending === "object") {
        const p = v.pending;
        add(row, zone("played by " + (seatName(ctx, p.seat)) + " (" + p.left + " left, " + p.right + " right" +
          (p.discard ? ", discards " + p.discard : "") + ")", tennosCard(p.card), "big"));
      }
      if (isList(v.discard_pile)) add(row, zone("discard pile (" + v.discard_pile.length + ", latest last)", fan(v.discard_pile.slice(-12), tennosCard, "small")));
      root.appendChild(row);
      root.appendChild(scoreStrip(ctx, s => [fact("round", perSeat(v.round_points, s))], s => {
        const won = perSeat(v.score_cards, s);
        return won && won.length ? fan(won, tennosCard, "small") : null;
      }));
      add(root, myHand(ctx, v.hand, tennosCard, isList(v.hand) ? "your hand, left end first (" + v.hand.length + ")" : ""));
    },

    seven_peak(ctx, root) {
      const v = ctx.view;
      if (isList(v.area)) {
        const piles = el("div", "t-row");
        v.area.forEach((pile, k) => {
          const reach = perSeat(v.reach, k);
          piles.appendChild(zone("pile " + (k + 1) + (reach !== undefined ? " (reach " + reach + ")" : ""),
            fan(pile, peakCard, "small"), "pile"));
        });
        root.appendChild(zone("area", piles));
      }
      if (v.selecting && typeof v.selecting === "object") {
        root.appendChild(zone("your play" + (v.selecting.value ? " (N = " + v.selecting.value + ")" : ""), fan(v.selecting.cards, peakCard)));
      }
      root.appendChild(scoreStrip(ctx, s => [fact("VP", perSeat(v.vp, s)), fact("last set", perSeat(v.last_set, s))], s => {
        const box = el("div");
        const known = perSeat(v.known, s);
        if (known && known.length) { box.appendChild(info("known ")); box.appendChild(fan(known, peakCard, "small")); }
        for (const [value, cards] of perSeat(v.sets, s) || []) {
          box.appendChild(info("set " + value + " "));
          box.appendChild(fan(cards, peakCard, "small"));
        }
        return box.childNodes.length ? box : null;
      }));
      add(root, myHand(ctx, v.hand, peakCard));
    },
  };

  function ownedRow(ctx, pairs) {
    const row = el("span", "t-fan");
    for (const [s, value] of pairs || []) row.appendChild(numberCard(value, s, ctx.colours));
    if (!pairs || !pairs.length) row.appendChild(el("span", "t-empty", "empty"));
    return row;
  }
  function pileOf(count) {
    const pile = el("span", "t-pile");
    pile.appendChild(count ? back() : el("span", "tcard slot"));
    pile.appendChild(el("span", "t-count", count + " cards"));
    return pile;
  }
  const CAT_COLOURS = ["red", "blue", "yellow", "green"];
  function catBoard(ctx, board) {
    const grid = el("div", "t-board");
    grid.appendChild(el("span", "t-board-corner"));
    for (let rank = 1; rank <= 8; rank++) grid.appendChild(el("span", "t-board-rank", rank));
    for (const colour of CAT_COLOURS) {
      if (!isList(board[colour])) continue;
      grid.appendChild(el("span", "t-board-colour cat-" + colour, colour));
      board[colour].forEach(owner => {
        const cell = el("span", "t-cell cat-" + colour + (owner === null ? "" : " owned"));
        if (owner !== null) {
          cell.style.setProperty("--c", ctx.colours[owner % ctx.colours.length]);
          cell.title = seatName(ctx, owner);
        }
        grid.appendChild(cell);
      });
    }
    return grid;
  }
  // cards at (x, y), y growing upwards: CSS grid rows counted from the top
  function tateyokoGrid(cells, turn) {
    const grid = el("div", "t-grid");
    if (!cells.length) { grid.appendChild(el("span", "t-empty", "empty")); return grid; }
    const xs = cells.map(c => c[0]), ys = cells.map(c => c[1]);
    const minX = Math.min(...xs), maxY = Math.max(...ys);
    const placed = new Set(turn.map(c => c[2]));
    for (const [x, y, code] of cells) {
      const card = tennosCard(code);
      card.style.gridColumn = String(x - minX + 1);
      card.style.gridRow = String(maxY - y + 1);
      if (placed.has(code)) card.classList.add("fresh");
      grid.appendChild(card);
    }
    return grid;
  }

  function generic(ctx, root) {
    const v = ctx.view;
    root.appendChild(scoreStrip(ctx, null));
    if (isList(v.hand) && v.hand.every(Number.isInteger)) add(root, myHand(ctx, v.hand, value => numberCard(value)));
  }

  function drawTable(game, view, seatNames, seatIndex, colours) {
    const root = el("div", "table-drawing");
    root.dataset.game = String(game);
    root.dataset.view = seatIndex === null || seatIndex === undefined ? "public" : String(seatIndex);
    const ctx = { view: view || {}, names: seatNames || [], seat: seatIndex === undefined ? null : seatIndex,
      colours: colours && colours.length ? colours : DEFAULT_COLOURS };
    const render = Object.prototype.hasOwnProperty.call(RENDERERS, game) ? RENDERERS[game] : generic;
    try {
      render(ctx, root);
    } catch (error) {
      // an observation this renderer does not know (another rules version):
      // say so, loudly in the console; the exact data is still shown below
      console.error("drawTable(" + game + "):", error);
      root.replaceChildren(el("div", "t-info", "this observation cannot be drawn (" + error.message + ")"));
    }
    return root;
  }
  window.drawTable = drawTable;
})();
