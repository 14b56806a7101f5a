// {{name}}: a card-league bot in JavaScript for Node.js, no packages
// (written by `league new`).
//
// It speaks the protocol in JSON lines (`protocol = "json"` in bot.toml): one
// JSON object a line each way; stdout carries replies only, stderr is your
// debug log. It plays every game legally with the simplest rule that is not
// always the same move: a random legal action, from a generator seeded per
// match (the same match, the same moves). Make it play well in choose().
"use strict";
const readline = require("readline");

let seed = 1;
function random() { // a small LCG, reseeded at each match's start
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
}

// obs: what this seat may know now; legal: the actions it may take (never
// empty). The game pages in games/ say what each holds. Returns an index.
function choose(obs, legal, timeLeftMs) {
  if (legal.length === 1) return 0; // a forced move
  return Math.floor(random() * legal.length);
}

let game = "";
function handle(msg) {
  switch (msg.type) {
    case "hello": return { type: "hello", protocol: 1, name: "{{name}}" };
    case "start":
      game = msg.game;
      seed = 7;
      for (const ch of `${msg.match_id}:${msg.seat}`) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) >>> 0;
      return null;
    // echo the decision, so that a late reply can never answer a later question
    case "act": return { type: "action", index: choose(msg.obs, msg.legal, msg.time_left_ms), decision: msg.decision };
    case "end": console.error(`${game}: ranks ${JSON.stringify(msg.ranks)}`); return null;
    case "quit": process.exit(0);
  }
  return null; // anything new: no reply
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  const reply = handle(JSON.parse(line));
  if (reply) process.stdout.write(JSON.stringify(reply) + "\n");
}).on("close", () => process.exit(0));
