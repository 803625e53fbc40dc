//! Checks shared by the `fetchTile` options and the `TileClient` config, and the errors they
//! give: each names the field, says what it must be and what it got, and suggests the key meant
//! when an unknown one looks like a typo ("did you mean").

use crate::options::value::Value;
use crate::text::format::{concat, number_text};
use crate::Error;

/// A value as a message shows it: short strings quoted, numbers as JS prints them, else its type.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Text(s) if s.len() <= 40 => concat(&["\"", s, "\""]),
        Value::Number(n) => number_text(*n),
        other => other.type_name().to_string(),
    }
}

pub(crate) fn wrong_type(key: &str, expected: &str, value: &Value) -> Error {
    Error::invalid_options(key, concat(&["must be ", expected, ", got ", &describe(value)]))
}

pub(crate) fn one_of(key: &str, allowed: &[&str], value: &Value) -> Error {
    let mut message = String::from("must be one of");
    for (i, name) in allowed.iter().enumerate() {
        message.push_str(if i == 0 { " \"" } else { ", \"" });
        message.push_str(name);
        message.push('"');
    }
    message.push_str(", got ");
    message.push_str(&describe(value));
    Error::invalid_options(key, message)
}

/// "unknown option", with a suggestion from the `known` lists when `key` looks like a typo of
/// one of their keys.
pub(crate) fn unknown_among(key: &str, known: &[&[&str]]) -> Error {
    let shown = crate::text::first_chars(key, 60).to_string();
    let message = match suggestion(key, known) {
        Some(known) => concat(&["unknown option (did you mean `", known, "`?)"]),
        None => "unknown option".to_string(),
    };
    Error::InvalidOptions { field: shown, message }
}

/// The first known key `typed` is near. Loops, not `flat_map().find()`: the flattening
/// adapter costs more wasm than the loops (ARCHITECTURE.md's ledger).
fn suggestion<'k>(typed: &str, known: &[&[&'k str]]) -> Option<&'k str> {
    for list in known {
        for key in *list {
            if near(key, typed) {
                return Some(key);
            }
        }
    }
    None
}

/// A likely typo: same letters ignoring case, or at most two edits apart.
fn near(known: &str, typed: &str) -> bool {
    if known.eq_ignore_ascii_case(typed) {
        return true;
    }
    // Bytes, not characters: every known key is ASCII, and a non-ASCII one is no typo of them.
    let a = known.to_ascii_lowercase().into_bytes();
    let b = typed.to_ascii_lowercase().into_bytes();
    if b.len() > a.len() + 2 || a.len() > b.len() + 2 {
        return false;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()] <= 2
}

/// A duration in milliseconds: a finite number ≥ 0 (> 0 when `positive`). Values above the
/// timer limit are kept; every delay derived from them is clamped later.
pub(crate) fn millis(key: &str, value: &Value, positive: bool) -> Result<f64, Error> {
    let Value::Number(n) = value else {
        return Err(wrong_type(key, "a number of milliseconds", value));
    };
    if !n.is_finite() {
        return Err(Error::invalid_options(
            key,
            concat(&["must be a finite number of milliseconds, got ", &number_text(*n)]),
        ));
    }
    if *n < 0.0 || (positive && *n == 0.0) {
        let bound = if positive { "greater than 0" } else { "0 or more" };
        return Err(Error::invalid_options(key, concat(&["must be ", bound, ", got ", &number_text(*n)])));
    }
    Ok(*n)
}
