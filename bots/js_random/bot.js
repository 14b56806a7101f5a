#!/usr/bin/env node
// A bot in JavaScript with no dependencies: protocol v1 (PROTOCOL.md) over
// stdin/stdout, with just enough MessagePack to read any message and write
// its two replies. It picks a uniformly random legal action, seeded per match.
"use strict";

class Incomplete extends Error {}

function decode(buf, pos) {
  // Returns [value, nextPos]; throws Incomplete when buf ends mid-value.
  const need = (n) => { if (pos + n > buf.length) throw new Incomplete(); };
  need(1);
  const b = buf[pos++];
  const str = (n) => { need(n); const s = buf.toString("utf8", pos, pos + n); pos += n; return s; };
  const seq = (n, isMap) => {
    const out = isMap ? {} : [];
    for (let i = 0; i < n; i++) {
      let key, value;
      if (isMap) { [key, pos] = decode(buf, pos); }
      [value, pos] = decode(buf, pos);
      if (isMap) out[key] = value; else out.push(value);
    }
    return out;
  };
  const uint = (n) => { need(n); let v = 0; for (let i = 0; i < n; i++) v = v * 256 + buf[pos++]; return v; };
  const sint = (n) => { const v = uint(n); const top = 2 ** (8 * n); return v >= top / 2 ? v - top : v; };
  if (b <= 0x7f) return [b, pos];
  if (b >= 0xe0) return [b - 0x100, pos];
  if ((b & 0xf0) === 0x80) return [seq(b & 0x0f, true), pos];
  if ((b & 0xf0) === 0x90) return [seq(b & 0x0f, false), pos];
  if ((b & 0xe0) === 0xa0) return [str(b & 0x1f), pos];
  switch (b) {
    case 0xc0: return [null, pos];
    case 0xc2: return [false, pos];
    case 0xc3: return [true, pos];
    case 0xc4: case 0xc5: case 0xc6: { const n = uint(1 << (b - 0xc4)); need(n); pos += n; return [null, pos]; }
    case 0xca: { need(4); const v = buf.readFloatBE(pos); pos += 4; return [v, pos]; }
    case 0xcb: { need(8); const v = buf.readDoubleBE(pos); pos += 8; return [v, pos]; }
    case 0xcc: return [uint(1), pos];
    case 0xcd: return [uint(2), pos];
    case 0xce: return [uint(4), pos];
    case 0xcf: return [uint(8), pos];
    case 0xd0: return [sint(1), pos];
    case 0xd1: return [sint(2), pos];
    case 0xd2: return [sint(4), pos];
    case 0xd3: return [sint(8), pos];
    case 0xd9: return [str(uint(1)), pos];
    case 0xda: return [str(uint(2)), pos];
    case 0xdb: return [str(uint(4)), pos];
    case 0xdc: return [seq(uint(2), false), pos];
    case 0xdd: return [seq(uint(4), false), pos];
    case 0xde: return [seq(uint(2), true), pos];
    case 0xdf: return [seq(uint(4), true), pos];
  }
  throw new Error("unsupported msgpack byte 0x" + b.toString(16));
}

function encode(value) {
  // Only what the replies need: maps of short strings and small ints.
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new Error("int out of range");
    if (value <= 0x7f) return Buffer.from([value]);
    if (value <= 0xff) return Buffer.from([0xcc, value]);
    if (value <= 0xffff) return Buffer.from([0xcd, value >> 8, value & 0xff]);
    const b = Buffer.alloc(5); b[0] = 0xce; b.writeUInt32BE(value, 1); return b;
  }
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8");
    if (bytes.length > 31) throw new Error("string too long");
    return Buffer.concat([Buffer.from([0xa0 | bytes.length]), bytes]);
  }
  const keys = Object.keys(value);
  const parts = [Buffer.from([0x80 | keys.length])];
  for (const k of keys) parts.push(encode(k), encode(value[k]));
  return Buffer.concat(parts);
}

let seed = 1;
function random() {  // a small LCG: reproducible per match
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
}

function handle(msg) {
  switch (msg.type) {
    case "hello": return { type: "hello", protocol: 1, name: "js-random" };
    case "start":
      seed = 7;
      for (const ch of String(msg.match_id) + ":" + msg.seat) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) >>> 0;
      return null;
    // echo the decision, so that a late reply can never answer a later question
    case "act": return { type: "action", index: Math.floor(random() * msg.legal.length), decision: msg.decision };
    case "quit": process.exit(0);
  }
  return null;  // "end" and anything new: no reply
}

let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let pos = 0;
  for (;;) {
    let msg;
    try { [msg, pos] = decode(pending, pos); } catch (e) { if (e instanceof Incomplete) break; throw e; }
    const reply = handle(msg);
    if (reply) process.stdout.write(encode(reply));
    pending = pending.subarray(pos);
    pos = 0;
  }
});
process.stdin.on("end", () => process.exit(0));
