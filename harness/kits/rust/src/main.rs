//! {{name}}: a card-league bot in Rust, std only (written by `league new`).
//!
//! It speaks the protocol in JSON lines (`protocol = "json"` in bot.toml): the
//! harness writes one JSON object a line and reads one back. stdout carries
//! replies only; stderr is your debug log. It plays every game legally with
//! the simplest rule that is not always the same move: a random legal action,
//! from a generator seeded per match (the same match, the same moves). Make it
//! play well in `choose`; `Json` below is a whole parsed message.
//!
//! Build: `league build bot.toml` (it runs the manifest's build step, `cargo
//! build --release --offline`); `league check bot.toml` builds, then checks.

use std::io::{self, BufRead, Write};

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// The value of `key` in an object.
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Num(n) => Some(*n as i64),
            _ => None,
        }
    }
    fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
    fn as_array(&self) -> &[Json] {
        match self {
            Json::Arr(items) => items,
            _ => &[],
        }
    }
}

/// Parses one JSON text; None if it is not one.
fn parse(text: &str) -> Option<Json> {
    let mut parser = Parser { bytes: text.as_bytes(), pos: 0 };
    let value = parser.value()?;
    parser.space();
    (parser.pos == parser.bytes.len()).then_some(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.space();
        (self.bytes.get(self.pos) == Some(&byte)).then(|| self.pos += 1)
    }
    fn value(&mut self) -> Option<Json> {
        self.space();
        match *self.bytes.get(self.pos)? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string().map(Json::Str),
            b't' => self.word("true", Json::Bool(true)),
            b'f' => self.word("false", Json::Bool(false)),
            b'n' => self.word("null", Json::Null),
            _ => self.number(),
        }
    }
    fn word(&mut self, word: &str, value: Json) -> Option<Json> {
        let end = self.pos + word.len();
        (self.bytes.get(self.pos..end)? == word.as_bytes()).then(|| {
            self.pos = end;
            value
        })
    }
    fn number(&mut self) -> Option<Json> {
        let start = self.pos;
        while self.pos < self.bytes.len() && b"+-.eE0123456789".contains(&self.bytes[self.pos]) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.bytes[start..self.pos]).ok()?.parse().ok().map(Json::Num)
    }
    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let mut out = String::new();
        loop {
            let byte = *self.bytes.get(self.pos)?;
            self.pos += 1;
            match byte {
                b'"' => return Some(out),
                b'\\' => {
                    let escape = *self.bytes.get(self.pos)?;
                    self.pos += 1;
                    out.push(match escape {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let hex = std::str::from_utf8(self.bytes.get(self.pos..self.pos + 4)?).ok()?;
                            self.pos += 4;
                            char::from_u32(u32::from_str_radix(hex, 16).ok()?).unwrap_or('\u{fffd}')
                        }
                        other => other as char, // \" \\ \/
                    });
                }
                _ => {
                    // a UTF-8 sequence: copy it whole
                    let start = self.pos - 1;
                    while self.pos < self.bytes.len() && (self.bytes[self.pos] & 0xc0) == 0x80 {
                        self.pos += 1;
                    }
                    out.push_str(std::str::from_utf8(&self.bytes[start..self.pos]).ok()?);
                }
            }
        }
    }
    fn array(&mut self) -> Option<Json> {
        self.eat(b'[')?;
        let mut items = Vec::new();
        if self.eat(b']').is_some() {
            return Some(Json::Arr(items));
        }
        loop {
            items.push(self.value()?);
            if self.eat(b']').is_some() {
                return Some(Json::Arr(items));
            }
            self.eat(b',')?;
        }
    }
    fn object(&mut self) -> Option<Json> {
        self.eat(b'{')?;
        let mut pairs = Vec::new();
        if self.eat(b'}').is_some() {
            return Some(Json::Obj(pairs));
        }
        loop {
            self.space();
            let key = self.string()?;
            self.eat(b':')?;
            pairs.push((key, self.value()?));
            if self.eat(b'}').is_some() {
                return Some(Json::Obj(pairs));
            }
            self.eat(b',')?;
        }
    }
}

/// xorshift64, reseeded at each match's start.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

struct MyBot {
    rng: Rng,
    game: String,
}

impl MyBot {
    fn start(&mut self, message: &Json) {
        self.game = message.get("game").and_then(Json::as_str).unwrap_or("").to_string();
        let id = message.get("match_id").and_then(Json::as_str).unwrap_or("");
        let seat = message.get("seat").and_then(Json::as_i64).unwrap_or(0) as u64;
        let mut hash = 0xcbf29ce484222325u64 ^ seat; // FNV-1a over the match's id
        for byte in id.bytes() {
            hash = (hash ^ byte as u64).wrapping_mul(0x100000001b3);
        }
        self.rng = Rng(hash.max(1));
    }

    /// The index of the chosen action in `legal` (never empty). `obs` is what
    /// this seat may know now; the game pages in games/ say what each holds.
    fn choose(&mut self, _obs: &Json, legal: &[Json], _time_left_ms: i64) -> usize {
        if legal.len() <= 1 {
            return 0; // a forced move
        }
        (self.rng.next() % legal.len() as u64) as usize
    }
}

fn main() {
    let mut bot = MyBot { rng: Rng(1), game: String::new() };
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Some(message) = parse(&line) else {
            eprintln!("not JSON: {line}");
            continue;
        };
        let reply = match message.get("type").and_then(Json::as_str) {
            Some("hello") => r#"{"type":"hello","protocol":1,"name":"{{name}}"}"#.to_string(),
            Some("act") => {
                let null = Json::Null;
                let index = bot.choose(
                    message.get("obs").unwrap_or(&null),
                    message.get("legal").map(Json::as_array).unwrap_or(&[]),
                    message.get("time_left_ms").and_then(Json::as_i64).unwrap_or(0),
                );
                // echo the decision: a late reply can never answer a later question
                let decision = message.get("decision").and_then(Json::as_i64).unwrap_or(0);
                format!(r#"{{"type":"action","index":{index},"decision":{decision}}}"#)
            }
            Some("start") => {
                bot.start(&message);
                continue;
            }
            Some("end") => {
                let ranks = message.get("ranks").map(Json::as_array).unwrap_or(&[]);
                eprintln!("{}: ranks {:?}", bot.game, ranks.iter().filter_map(Json::as_i64).collect::<Vec<_>>());
                continue;
            }
            Some("quit") => break,
            _ => continue, // anything new: no reply
        };
        // a reply must leave at once
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
}
