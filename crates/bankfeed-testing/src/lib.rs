//! Test support of the bankfeed crates, a dev-dependency only: the fuzz tests' seeded generator and
//! their structure-aware mutator of JSON payloads (the client crate's `tests/it/fuzz_decoders.rs`,
//! the sandbox crate's `tests/it/fuzz_sandbox_requests.rs` and its request-body test).
//!
//! Every decoder must answer any input with `Ok` or a documented error, and never panic or hang
//! (docs/bad-input.md); these make the inputs.

use serde_json::{Map, Value};

/// The number of inputs of a fuzz run: `BANKFEED_FUZZ_ITERATIONS`, or `default` (CONTRIBUTING.md).
pub fn iterations(default: u64) -> u64 {
    std::env::var("BANKFEED_FUZZ_ITERATIONS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// The seed of a fuzz run: `BANKFEED_FUZZ_SEED`, or a fixed one so that the short runs of the
/// test suite are the same every time.
pub fn seed() -> u64 {
    std::env::var("BANKFEED_FUZZ_SEED").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0x00BA_4EFE_ED00)
}

/// A small, fast, seeded generator (xorshift64*): reproducible runs without a dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // splitmix64 of the seed, so that 0 and nearby seeds give unrelated, non-zero states.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        match u64::try_from(n) {
            Ok(0) | Err(_) => 0,
            Ok(n) => usize::try_from(self.next_u64() % n).unwrap_or(0),
        }
    }

    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

/// The largest input the mutator makes: beyond it the decoders' speed, not their safety, is
/// what a test would measure.
const MAX_INPUT: usize = 1 << 20;

/// Raw JSON text the mutator splices in where a value was: what a hostile or broken server can
/// send that a `serde_json::Value` cannot hold.
const RAW_TOKENS: &[&str] = &[
    "NaN",
    "-NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "1e-999",
    "-0",
    "0.0000000000000000000000000000001",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890.5",
    "1e308",
    "-1.7976931348623157e308",
    "\"\\ud800\"",
    "\"\\udfff\\ud800x\"",
    "\"\\ud83d\"",
    "\"a\\u0000b\"",
    "\"\\\\..\\\\..\\\\x\"",
    "\"..\"",
    "\"%2e%2e\"",
    "\"../../../etc/passwd\"",
    "\"a\\r\\nInjected: 1\"",
    "\"https://evil.example/x\"",
    "\"\"",
    "\" \"",
    "\"NONE_DETECTED\"",
    "\"true\"",
    "\"TRUE\"",
    "\"2026-02-30\"",
    "\"9999-99-99T99:99:99.9999999Z\"",
    "\"-271821-04-19\"",
    "\"+275760-09-13T00:00:00Z\"",
    "\"data:image/png;base64,%%%\"",
    "\"====\"",
    "tru",
    "nul",
    "[",
    "{",
    "]",
    "}",
    ",",
    ":",
    "\"",
    "\"\\",
    "\"\\u12\"",
];

/// Raw bytes the byte mutations insert: invalid UTF-8, an encoded surrogate, a BOM, controls.
const RAW_BYTES: &[&[u8]] =
    &[b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\r\n", b"\xf4\x90\x80\x80", b"\\u", b"\""];

/// Whole bodies that replace the input now and then: the empty and the almost empty.
const WHOLE: &[&str] = &[
    "",
    " ",
    "null",
    "[]",
    "{}",
    "\"x\"",
    "0",
    "true",
    "{\"HttpStatusCode\": 500}",
    "{\"FlinksCode\": \"SESSION_NONEXISTENT\", \"Message\": \"gone\"}",
    "<html><body>502 Bad Gateway</body></html>",
    "{\"a\":1}{\"b\":2}",
    "[{\"Accounts\": []}]",
];

/// A mutation of `seed`: one to four rounds of structural edits (on the parsed JSON, with raw
/// text spliced in) and byte edits, each round on the previous one's result.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    if rng.one_in(50) {
        return rng.pick(WHOLE).map_or_else(Vec::new, |body| body.as_bytes().to_vec());
    }
    let mut out = seed.to_vec();
    for _ in 0..=rng.below(4) {
        out = if rng.one_in(3) {
            mutate_bytes(out, rng)
        } else {
            match mutate_json(&out, rng) {
                Some(mutated) => mutated,
                None => mutate_bytes(out, rng),
            }
        };
        out.truncate(MAX_INPUT);
    }
    out
}

/// One byte-level edit: a flipped bit, a byte set, inserted or removed, a cut, a repeated range,
/// or a token spliced in anywhere.
pub fn mutate_bytes(mut bytes: Vec<u8>, rng: &mut Rng) -> Vec<u8> {
    let len = bytes.len();
    let at = rng.below(len + 1);
    match rng.below(8) {
        0 => {
            if let Some(byte) = bytes.get_mut(at) {
                *byte ^= 1 << rng.below(8);
            }
        }
        1 => {
            if let Some(byte) = bytes.get_mut(at) {
                *byte = u8::try_from(rng.below(256)).unwrap_or(0);
            }
        }
        2 => bytes.truncate(at),
        3 => {
            let end = (at + rng.below(64)).min(len);
            bytes.drain(at..end);
        }
        4 => {
            let end = (at + 1 + rng.below(256)).min(len);
            let copy = bytes.get(at..end).map(<[u8]>::to_vec).unwrap_or_default();
            let times = 1 + rng.below(4);
            for _ in 0..times {
                splice(&mut bytes, at, &copy);
            }
        }
        5 => {
            let raw = rng.pick(RAW_BYTES).copied().unwrap_or_default();
            splice(&mut bytes, at, raw);
        }
        6 => {
            let token = rng.pick(RAW_TOKENS).copied().unwrap_or_default();
            splice(&mut bytes, at, token.as_bytes());
        }
        _ => {
            let depth = *rng.pick(&[64, 129, 10_000]).unwrap_or(&129);
            let open = if rng.one_in(2) { "[" } else { "{\"a\":" };
            splice(&mut bytes, at, open.repeat(depth).as_bytes());
        }
    }
    bytes
}

fn splice(bytes: &mut Vec<u8>, at: usize, insert: &[u8]) {
    let at = at.min(bytes.len());
    bytes.splice(at..at, insert.iter().copied());
}

/// One structural edit of `bytes` as JSON, or `None` when they are not JSON.
pub fn mutate_json(bytes: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(bytes).ok()?;
    let count = node_count(&value);
    let donor = nth(&value, rng.below(count)).cloned().unwrap_or(Value::Null);
    let mut raw = Vec::new();
    let node = nth_mut(&mut value, rng.below(count))?;
    edit(node, donor, &mut raw, rng);
    let mut text = serde_json::to_string(&value).ok()?;
    // Markers stand where raw text goes; serde_json writes their \u0001 as an escape.
    for (index, replacement) in raw.iter().enumerate() {
        text = text.replacen(&format!("\"\\u0001{index}\\u0001\""), replacement, 1);
    }
    Some(text.into_bytes())
}

fn marker(raw: &mut Vec<String>, text: String) -> Value {
    raw.push(text);
    Value::String(format!("\u{1}{}\u{1}", raw.len() - 1))
}

fn edit(node: &mut Value, donor: Value, raw: &mut Vec<String>, rng: &mut Rng) {
    match rng.below(12) {
        0 => *node = Value::Null,
        1 => {
            *node = match rng.below(8) {
                0 => Value::Bool(rng.one_in(2)),
                1 => Value::from(0),
                2 => Value::from(-1),
                3 => Value::from(1.5),
                4 => Value::from(u64::MAX),
                5 => Value::from(i64::MIN),
                6 => Value::from("x".repeat(1 + rng.below(10_000))),
                _ => Value::from(""),
            }
        }
        2 => *node = change_type(node.take()),
        3 => {
            let token = rng.pick(RAW_TOKENS).copied().unwrap_or("null").to_owned();
            *node = marker(raw, token);
        }
        4 => {
            let depth = *rng.pick(&[100, 127, 128, 129, 1000, 10_000]).unwrap_or(&128);
            let text = if rng.one_in(2) {
                format!("{}{}", "[".repeat(depth), "]".repeat(depth))
            } else {
                format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
            };
            *node = marker(raw, text);
        }
        5 => {
            // A key twice, the second with another value: which one wins is the decoder's
            // choice, but it must not fail on it.
            if let Value::Object(map) = node {
                if let Some(key) = map.keys().nth(rng.below(map.len())).cloned() {
                    let mut text = String::from("{");
                    text.push_str(&serde_json::to_string(&key).unwrap_or_default());
                    text.push(':');
                    text.push_str(&serde_json::to_string(&donor).unwrap_or_else(|_| "null".into()));
                    for (key, value) in map.iter() {
                        text.push(',');
                        text.push_str(&serde_json::to_string(key).unwrap_or_default());
                        text.push(':');
                        text.push_str(&serde_json::to_string(value).unwrap_or_else(|_| "null".into()));
                    }
                    text.push('}');
                    *node = marker(raw, text);
                }
            }
        }
        6 => {
            if let Value::Object(map) = node {
                let renamed: Map<String, Value> = std::mem::take(map)
                    .into_iter()
                    .map(|(key, value)| match rng.below(4) {
                        0 => (key.to_ascii_lowercase(), value),
                        1 => (key.to_ascii_uppercase(), value),
                        2 => (format!(" {key}"), value),
                        _ => (key, value),
                    })
                    .collect();
                *map = renamed;
            }
        }
        7 => match node {
            Value::Object(map) => {
                if let Some(key) = map.keys().nth(rng.below(map.len())).cloned() {
                    map.shift_remove(&key);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                items.remove(rng.below(items.len()));
            }
            _ => {}
        },
        8 => *node = donor,
        9 => match node {
            Value::Array(items) if !items.is_empty() => {
                let times = 1 + rng.below(50);
                let copy = items.clone();
                for _ in 0..times {
                    items.extend(copy.iter().cloned());
                }
            }
            Value::String(text) => *text = text.repeat(1 + rng.below(200)),
            _ => {}
        },
        10 => {
            let inner = node.take();
            *node = if rng.one_in(2) { Value::Array(vec![inner]) } else { serde_json::json!({ "x": inner }) };
        }
        _ => {
            *node = Value::from(
                *rng.pick(&["..", "a/b", "a\\b", "%2e%2e", "a\r\nb", "", " ", "https://evil.example", "é"])
                    .unwrap_or(&".."),
            );
        }
    }
}

fn change_type(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Array(map.into_iter().map(|(_, v)| v).collect()),
        Value::Array(items) => Value::Object(items.into_iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect()),
        Value::String(text) => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::Bool(text.is_empty()), Value::Number),
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        Value::Null => Value::Object(Map::new()),
    }
}

fn children(value: &Value) -> Box<dyn Iterator<Item = &Value> + '_> {
    match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(map) => Box::new(map.values()),
        _ => Box::new(std::iter::empty()),
    }
}

/// Nodes of `value`, itself included. Parsed JSON is at most 128 deep, so recursion is bounded.
fn node_count(value: &Value) -> usize {
    1 + children(value).map(node_count).sum::<usize>()
}

/// The `n`th node in pre-order.
fn nth(value: &Value, mut n: usize) -> Option<&Value> {
    if n == 0 {
        return Some(value);
    }
    n -= 1;
    for child in children(value) {
        let size = node_count(child);
        if n < size {
            return nth(child, n);
        }
        n -= size;
    }
    None
}

fn nth_mut(value: &mut Value, mut n: usize) -> Option<&mut Value> {
    if n == 0 {
        return Some(value);
    }
    n -= 1;
    let children: Box<dyn Iterator<Item = &mut Value>> = match value {
        Value::Array(items) => Box::new(items.iter_mut()),
        Value::Object(map) => Box::new(map.values_mut()),
        _ => return None,
    };
    for child in children {
        let size = node_count(child);
        if n < size {
            return nth_mut(child, n);
        }
        n -= size;
    }
    None
}
