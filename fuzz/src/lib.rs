//! Turns the fuzzer's bytes into the inputs the targets need: a reader that never fails (it
//! yields zeros once the bytes run out) and a decoder of JSON-like option values biased towards
//! the names the parsers know, so the fuzzer reaches their deep branches, not only "unknown key".
#![forbid(unsafe_code)]

use tilefetch::options::client_config::{BREAKER_KEYS, BUDGET_KEYS, CLIENT_KEYS, HOST_KEYS};
use tilefetch::options::{Value, KEYS};

/// Names worth trying besides the keys the parsers define: host patterns and preset names.
const MORE_NAMES: [&str; 4] = ["tiles.example.com", "*.example.com", "interactive", "batch"];

/// Every key the option and config parsers know, as they define them, then [`MORE_NAMES`].
fn known_names() -> impl Iterator<Item = &'static str> {
    [&KEYS[..], &HOST_KEYS, &CLIENT_KEYS, &BREAKER_KEYS, &BUDGET_KEYS, &MORE_NAMES]
        .into_iter()
        .flatten()
        .copied()
}

pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }

    pub fn rest(&mut self) -> &'a [u8] {
        self.take(self.data.len())
    }

    pub fn f64(&mut self) -> f64 {
        let mut raw = [0u8; 8];
        let got = self.take(8);
        raw[..got.len()].copy_from_slice(got);
        f64::from_le_bytes(raw)
    }

    /// A number that is often ordinary (small, whole) and sometimes anything at all.
    pub fn number(&mut self) -> f64 {
        match self.byte() % 4 {
            0 => self.byte() as f64,
            1 => (self.byte() as f64) * 1000.0,
            2 => -(self.byte() as f64) / 7.0,
            _ => self.f64(),
        }
    }

    /// A short string: sometimes a known name, sometimes raw (lossy UTF-8) bytes.
    pub fn text(&mut self) -> String {
        let pick = self.byte() as usize;
        if pick.is_multiple_of(2) {
            let names: Vec<&str> = known_names().collect();
            names[(pick / 2) % names.len()].to_string()
        } else {
            let len = (self.byte() % 24) as usize;
            String::from_utf8_lossy(self.take(len)).into_owned()
        }
    }

    pub fn value(&mut self, depth: u8) -> Value {
        let nested = depth < 4;
        match self.byte() % 10 {
            0 => Value::Absent,
            1 => Value::Bool(self.byte().is_multiple_of(2)),
            2 | 3 => Value::Number(self.number()),
            4 => Value::Text(self.text()),
            5 if nested => Value::List((0..self.byte() % 5).map(|_| self.value(depth + 1)).collect()),
            6 if nested => Value::Record(self.entries(depth + 1)),
            7 => Value::Function,
            8 => Value::AbortSignal,
            _ => Value::Object,
        }
    }

    pub fn entries(&mut self, depth: u8) -> Vec<(String, Value)> {
        (0..self.byte() % 6).map(|_| (self.text(), self.value(depth))).collect()
    }
}
