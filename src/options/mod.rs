//! The options object of `fetchTile`, validated into an [`Options`] value.
//!
//! The wasm layer reads the JS object into `(key, Value)` pairs and hands them to
//! [`Options::parse`]; all rules live here so they are tested natively. Every field is optional;
//! `undefined` and `null` mean "not given". Each option is declared once, with its default
//! and documentation, in `registry.rs`.

pub mod client_config;
pub mod registry;
pub(crate) mod status_set;
pub(crate) mod validate;
pub mod value;

pub use registry::{DefaultValue, Key, Spec, KEYS, SPECS};
pub use value::{entries_of, Entry, Value};

use crate::options::status_set::StatusSet;
use crate::options::validate::{describe, millis, one_of, unknown_among, wrong_type};
use crate::response::byte_range::ByteRange;
use crate::text::format::{concat, decimal_text};
use crate::timing::backoff::{Backoff, Jitter};
use crate::Error;

/// Named sets of defaults; explicit fields override them. Each option's default per preset is
/// declared in the registry ([`Key::spec`]), with the reasons for it beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// A person is looking at the map: a tile that is not there within a few seconds is a tile
    /// nobody waits for.
    Interactive,
    /// Seeding, prefetching, offline packs: nobody is waiting, the server's health matters more.
    Batch,
}

/// Validated options of one `fetchTile` call: one field per option of the registry
/// ([`SPECS`], which says what each does and its default), in the form the core uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `preset`.
    pub preset: Preset,
    /// `baseDelayMs`.
    pub base_delay_ms: f64,
    /// `maxDelayMs`.
    pub max_delay_ms: f64,
    /// `attemptTimeoutMs`.
    pub attempt_timeout_ms: f64,
    /// `deadlineMs`.
    pub deadline_ms: f64,
    /// `jitter`.
    pub jitter: Jitter,
    /// `jitterMs`.
    pub jitter_ms: f64,
    /// `retryAfterMaxMs`.
    pub retry_after_max_ms: f64,
    /// `retryOn`.
    pub retry_on: StatusSet,
    /// `emptyOn`.
    pub empty_on: StatusSet,
    /// `accept`; `None`: no header, no check.
    pub accept: Option<String>,
    /// `credentials`; `None`: not sent (the platform's default).
    pub credentials: Option<&'static str>,
    /// `mode`; `None`: not sent.
    pub mode: Option<&'static str>,
    /// `referrerPolicy`; `None`: not sent.
    pub referrer_policy: Option<&'static str>,
    /// `cache`; `None`: not sent.
    pub cache: Option<&'static str>,
    /// `whenAbandoned`.
    pub when_abandoned: WhenAbandoned,
    /// `startJitterMs`.
    pub start_jitter_ms: f64,
    /// `maxAgeS`; `None`: off.
    pub max_age_s: Option<f64>,
    /// `maxBytes`.
    pub max_bytes: f64,
    /// `hedge`.
    pub hedge: Hedge,
    /// `range`; `None`: the whole resource.
    pub range: Option<ByteRange>,
    /// `subdomains`, one label per line (the form the URL resolver takes them in); `None`: the
    /// registry's default, applied by the resolver only when the URL has `{s}`.
    pub subdomains: Option<String>,
    /// `headers`, `signal`, `onRetry` and `fetch` are JS objects the wasm layer keeps; here only
    /// whether they were given (and of the right type). `fetch` is not part of what makes two
    /// calls identical: a call that joins another is served by the first one's `fetch`.
    pub has_headers: bool,
    /// Whether `signal` was given.
    pub has_signal: bool,
    /// Whether `onRetry` was given.
    pub has_on_retry: bool,
    /// Whether `fetch` was given.
    pub has_fetch: bool,
    /// The fields given explicitly (one [`Key::bit`] each), which a later `preset` leaves alone.
    explicit: u32,
}

/// A numeric option's default under each preset: interactive, batch.
const fn per_preset(key: Key) -> [f64; 2] {
    [key.default().number(false), key.default().number(true)]
}

const DEFAULT_RETRY_ON: StatusSet = StatusSet::of(Key::RetryOn.default().statuses());
const DEFAULT_EMPTY_ON: StatusSet = StatusSet::of(Key::EmptyOn.default().statuses());

/// `hedge`: whether and when an attempt that has not answered gets one more beside it (to the
/// next mirror when there are several); the first tile wins and the other is aborted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hedge {
    /// Never.
    Off,
    /// After the host's learned p95 of answered attempts (see `crate::retry::hedge_delay`), once
    /// it has enough samples.
    Auto,
    /// After this many ms.
    AfterMs(f64),
}

/// `whenAbandoned`: what a request in flight becomes once every caller of its tile has gone
/// (the rule of landing: `crate::retry::serving::lets_land`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenAbandoned {
    /// Aborted.
    Abort,
    /// Left to land, when it has a connection and is due soon.
    Land,
    /// Left to land as with `Land` while no other request to its host waits behind it.
    Yield,
}

impl WhenAbandoned {
    /// The values `whenAbandoned` takes, as JavaScript spells them.
    pub const NAMES: [&'static str; 3] = ["abort", "land", "yield"];
    /// In the order of `NAMES`.
    pub const ALL: [WhenAbandoned; 3] = [WhenAbandoned::Abort, WhenAbandoned::Land, WhenAbandoned::Yield];
}

impl Key {
    /// This key's bit in [`Options`]' record of the fields given explicitly.
    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

const CREDENTIALS: [&str; 3] = ["omit", "same-origin", "include"];
const MODES: [&str; 3] = ["cors", "no-cors", "same-origin"];
const CACHES: [&str; 6] = ["default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached"];
const REFERRER_POLICIES: [&str; 9] = [
    "",
    "no-referrer",
    "no-referrer-when-downgrade",
    "same-origin",
    "origin",
    "strict-origin",
    "origin-when-cross-origin",
    "strict-origin-when-cross-origin",
    "unsafe-url",
];

impl Options {
    /// The defaults of `preset`, with nothing given explicitly.
    pub fn preset(preset: Preset) -> Options {
        let batch = preset == Preset::Batch;
        // The registry's numbers for both presets, evaluated at compile time.
        let number = |[interactive, batch_value]: [f64; 2]| if batch { batch_value } else { interactive };
        Options {
            preset,
            base_delay_ms: number(const { per_preset(Key::BaseDelayMs) }),
            max_delay_ms: number(const { per_preset(Key::MaxDelayMs) }),
            attempt_timeout_ms: number(const { per_preset(Key::AttemptTimeoutMs) }),
            deadline_ms: number(const { per_preset(Key::DeadlineMs) }),
            jitter: Jitter::parse(Key::Jitter.default().text(batch)).unwrap_or(Jitter::Full),
            jitter_ms: number(const { per_preset(Key::JitterMs) }),
            retry_after_max_ms: number(const { per_preset(Key::RetryAfterMaxMs) }),
            retry_on: DEFAULT_RETRY_ON,
            empty_on: DEFAULT_EMPTY_ON,
            accept: None,
            credentials: None,
            mode: None,
            referrer_policy: None,
            cache: None,
            when_abandoned: {
                let default = Key::WhenAbandoned.default().text(batch);
                let chosen = WhenAbandoned::NAMES.iter().position(|n| *n == default);
                WhenAbandoned::ALL[chosen.unwrap_or(0)]
            },
            start_jitter_ms: number(const { per_preset(Key::StartJitterMs) }),
            max_age_s: None,
            max_bytes: number(const { per_preset(Key::MaxBytes) }),
            hedge: if Key::Hedge.default().text(batch) == "off" { Hedge::Off } else { Hedge::Auto },
            range: None,
            subdomains: None,
            has_headers: false,
            has_signal: false,
            has_on_retry: false,
            has_fetch: false,
            explicit: 0,
        }
    }

    /// Validates the entries of an options object. The first problem found is returned as
    /// [`Error::InvalidOptions`] naming the field.
    pub fn parse(entries: &[(&str, Value)]) -> Result<Options, Error> {
        Options::preset(Preset::Interactive).with(&entries_of(entries))
    }

    /// These options with `entries` applied over them, as if the entries came after the ones
    /// these were parsed from: a client's options, then a host's, then a call's. A `preset` among
    /// them (the last wins) changes the fields that no entry so far has set.
    pub fn with(&self, entries: &[Entry]) -> Result<Options, Error> {
        let mut options = self.clone();
        let preset = entries.iter().rev().find(|(k, v)| *k == "preset" && !matches!(v, Value::Absent));
        match preset {
            None => {}
            Some((_, Value::Text(name))) if name == "interactive" || name == "batch" => {
                let preset = if name == "batch" { Preset::Batch } else { Preset::Interactive };
                let fresh = Options::preset(preset);
                options.preset = preset;
                for (key, field, value) in [
                    (Key::BaseDelayMs, &mut options.base_delay_ms, fresh.base_delay_ms),
                    (Key::MaxDelayMs, &mut options.max_delay_ms, fresh.max_delay_ms),
                    (Key::AttemptTimeoutMs, &mut options.attempt_timeout_ms, fresh.attempt_timeout_ms),
                    (Key::DeadlineMs, &mut options.deadline_ms, fresh.deadline_ms),
                ] {
                    if self.explicit & key.bit() == 0 {
                        *field = value;
                    }
                }
                if self.explicit & Key::Hedge.bit() == 0 {
                    options.hedge = fresh.hedge;
                }
                if self.explicit & Key::MaxBytes.bit() == 0 {
                    options.max_bytes = fresh.max_bytes;
                }
            }
            Some((_, other)) => {
                return Err(Error::invalid_options(
                    "preset",
                    concat(&["must be \"interactive\" or \"batch\", got ", &describe(other)]),
                ))
            }
        }
        for (key, value) in entries {
            options.apply(key, value)?;
        }
        Ok(options)
    }

    fn apply(&mut self, key: &str, value: &Value) -> Result<(), Error> {
        let Some(field) = Key::named(key) else { return Err(unknown_key(key)) };
        if matches!(value, Value::Absent) {
            return Ok(());
        }
        self.explicit |= field.bit();
        use Key::*;
        // Grouped by checker: one call of each, whatever the number of fields it serves.
        match field {
            // Read by `with`.
            Preset => {}
            BaseDelayMs | MaxDelayMs | AttemptTimeoutMs | DeadlineMs | JitterMs | RetryAfterMaxMs
            | StartJitterMs | MaxAgeS => {
                let ms = millis(key, value, matches!(field, AttemptTimeoutMs | DeadlineMs))?;
                match field {
                    BaseDelayMs => self.base_delay_ms = ms,
                    MaxDelayMs => self.max_delay_ms = ms,
                    AttemptTimeoutMs => self.attempt_timeout_ms = ms,
                    DeadlineMs => self.deadline_ms = ms,
                    JitterMs => self.jitter_ms = ms,
                    RetryAfterMaxMs => self.retry_after_max_ms = ms,
                    StartJitterMs => self.start_jitter_ms = ms,
                    _ => self.max_age_s = Some(ms),
                }
            }
            Jitter | Credentials | Mode | ReferrerPolicy | Cache | WhenAbandoned => {
                let allowed: &[&'static str] = match field {
                    Jitter => &crate::timing::backoff::Jitter::NAMES,
                    Credentials => &CREDENTIALS,
                    Mode => &MODES,
                    ReferrerPolicy => &REFERRER_POLICIES,
                    WhenAbandoned => &self::WhenAbandoned::NAMES,
                    _ => &CACHES,
                };
                let chosen = text(key, value)
                    .and_then(|s| allowed.iter().position(|a| *a == s))
                    .ok_or_else(|| one_of(key, allowed, value))?;
                let name = Some(allowed[chosen]);
                match field {
                    Jitter => self.jitter = crate::timing::backoff::Jitter::ALL[chosen],
                    Credentials => self.credentials = name,
                    Mode => self.mode = name,
                    ReferrerPolicy => self.referrer_policy = name,
                    WhenAbandoned => self.when_abandoned = self::WhenAbandoned::ALL[chosen],
                    _ => self.cache = name,
                }
            }
            RetryOn | EmptyOn => {
                let set = statuses(key, value)?;
                if field == RetryOn {
                    self.retry_on = set;
                } else {
                    self.empty_on = set;
                }
            }
            Accept => {
                let accept = text(key, value).ok_or_else(|| wrong_type(key, "a string", value))?;
                // Visible ASCII, spaces and tabs only: anything else is no media range, and a value
                // that matches nothing would make every response look like the wrong type.
                let printable = accept.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
                if accept.trim_ascii().is_empty() || !printable {
                    return Err(Error::invalid_options(
                        key,
                        "must be a non-empty media range list such as \"image/*\"",
                    ));
                }
                self.accept = Some(accept.to_string());
            }
            Headers | Signal | OnRetry | Fetch => {
                let (fits, expected, flag) = match field {
                    Headers => (
                        matches!(value, Value::Object | Value::Record(_) | Value::List(_)),
                        "an object, a Headers or an array of pairs",
                        &mut self.has_headers,
                    ),
                    Signal => (matches!(value, Value::AbortSignal), "an AbortSignal", &mut self.has_signal),
                    OnRetry => (matches!(value, Value::Function), "a function", &mut self.has_on_retry),
                    _ => (matches!(value, Value::Function), "a function", &mut self.has_fetch),
                };
                if !fits {
                    return Err(wrong_type(key, expected, value));
                }
                *flag = true;
            }
            Subdomains => self.subdomains = Some(subdomains(key, value)?),
            MaxBytes => self.max_bytes = byte_count(key, value)?,
            Range => self.range = Some(byte_range(value)?),
            Hedge => {
                self.hedge = match value {
                    Value::Text(name) if name == "auto" => self::Hedge::Auto,
                    Value::Text(name) if name == "off" => self::Hedge::Off,
                    Value::Number(_) => self::Hedge::AfterMs(millis(key, value, true)?),
                    other => {
                        return Err(Error::invalid_options(
                            key,
                            concat(&[
                                "must be \"auto\", \"off\" or a number of milliseconds, got ",
                                &describe(other),
                            ]),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the range fits in `maxBytes`: asked of a call's final options (its host's rule
    /// may raise `maxBytes`), since a longer range could only end as a body too large.
    pub fn check_range(&self) -> Result<(), Error> {
        match self.range {
            Some(range) if range.length as f64 > self.max_bytes => Err(Error::invalid_options(
                "range.length",
                concat(&["must not exceed maxBytes (", &decimal_text(self.max_bytes as u64), ")"]),
            )),
            _ => Ok(()),
        }
    }

    /// The options that decide what a response means (for coalescing identical calls).
    pub fn verdict_key(&self) -> String {
        let mut key = String::new();
        // The sets' bitmap words rather than their codes: they tell sets apart just as well and
        // take less code to write on every call.
        for word in self.retry_on.words().into_iter().chain(self.empty_on.words()) {
            key.push_str(&decimal_text(word));
            key.push(',');
        }
        key.push_str(self.accept.as_deref().unwrap_or(""));
        key.push(';');
        key.push_str(&decimal_text(self.max_bytes as u64));
        key.push(';');
        if let Some(age) = self.max_age_s {
            key.push_str(&decimal_text(age as u64));
        }
        key
    }

    /// The backoff schedule these options set.
    pub fn backoff(&self) -> Backoff {
        Backoff {
            base_ms: self.base_delay_ms,
            cap_ms: self.max_delay_ms,
            jitter: self.jitter,
            jitter_ms: self.jitter_ms,
        }
    }
}

fn unknown_key(key: &str) -> Error {
    unknown_among(key, &[&KEYS])
}

fn text<'v>(_key: &str, value: &'v Value) -> Option<&'v str> {
    match value {
        Value::Text(s) => Some(s),
        _ => None,
    }
}

/// The labels one per line.
fn subdomains(key: &str, value: &Value) -> Result<String, Error> {
    let Value::List(items) = value else {
        return Err(wrong_type(key, "an array of strings", value));
    };
    let mut lines = String::new();
    for item in items {
        let label = match item {
            Value::Text(s) if s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') => s,
            _ => "",
        };
        // An empty label (or a wrong item) empties the lines, which the check below refuses.
        if label.is_empty() {
            lines.clear();
            break;
        }
        if !lines.is_empty() {
            lines.push('\n');
        }
        lines.push_str(label);
    }
    if lines.is_empty() || items.len() > 16 {
        return Err(Error::invalid_options(
            key,
            "must be an array of 1 to 16 host names or labels such as [\"a\", \"b\"]",
        ));
    }
    Ok(lines)
}

/// A number of bytes: an integer from 1 to 2^53 − 1 (JavaScript's safe integers).
fn byte_count(key: &str, value: &Value) -> Result<f64, Error> {
    match value {
        Value::Number(n) if n.fract() == 0.0 && *n >= 1.0 && *n <= 9_007_199_254_740_991.0 => Ok(*n),
        other => Err(wrong_type(key, "a whole number of bytes, 1 or more", other)),
    }
}

/// `range`: `{ offset, length }`, whole numbers of bytes, `length` at least 1.
fn byte_range(value: &Value) -> Result<ByteRange, Error> {
    let Value::Record(fields) = value else {
        return Err(wrong_type("range", "an object { offset, length }", value));
    };
    let mut range = [None, None];
    for (name, field) in fields {
        let at = match name.as_str() {
            "offset" => 0,
            "length" => 1,
            _ => 2,
        };
        let name = concat(&["range.", crate::text::first_chars(name, 60)]);
        match field {
            Value::Number(n)
                if at < 2 && n.fract() == 0.0 && *n >= at as f64 && *n <= 9_007_199_254_740_991.0 =>
            {
                range[at] = Some(*n as u64)
            }
            other if at < 2 => return Err(wrong_type(&name, "a whole number of bytes", other)),
            _ => {
                return Err(Error::invalid_options(&name, "unknown field: a range has `offset` and `length`"))
            }
        }
    }
    match range {
        [Some(offset), Some(length)] => Ok(ByteRange { offset, length }),
        [None, _] => Err(Error::invalid_options("range.offset", "is required")),
        _ => Err(Error::invalid_options("range.length", "is required")),
    }
}

fn statuses(key: &str, value: &Value) -> Result<StatusSet, Error> {
    let Value::List(items) = value else {
        return Err(wrong_type(key, "an array of HTTP status codes", value));
    };
    let mut set = StatusSet::EMPTY;
    for item in items {
        match item {
            Value::Number(n) if n.fract() == 0.0 && (100.0..=599.0).contains(n) => set = set.with(*n as u16),
            other => {
                return Err(Error::invalid_options(
                    key,
                    concat(&["must hold integer HTTP statuses 100–599, got ", &describe(other)]),
                ))
            }
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(entries: &[(&str, Value)]) -> Result<Options, Error> {
        Options::parse(entries)
    }

    fn field_of(result: Result<Options, Error>) -> String {
        match result {
            Err(Error::InvalidOptions { field, .. }) => field,
            other => panic!("expected invalid-options, got {other:?}"),
        }
    }

    fn range_of(fields: &[(&str, Value)]) -> Value {
        Value::Record(fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    /// An option typed as a union of strings (`"abort" | "land" | "yield"`) takes each of them, as
    /// the TypeScript type and the documentation say, and names itself for any other.
    #[test]
    fn every_string_a_union_type_lists_is_taken_and_no_other() {
        let mut unions = 0;
        for spec in crate::options::registry::SPECS {
            let literals: Vec<&str> = spec.ts_type.split(" | ").map(|t| t.trim_matches('"')).collect();
            let all_strings =
                spec.ts_type.split(" | ").all(|t| t.len() > 2 && t.starts_with('"') && t.ends_with('"'));
            if !all_strings {
                continue;
            }
            unions += 1;
            for literal in literals {
                let taken = parse(&[(spec.name, Value::Text(literal.to_string()))]);
                assert!(taken.is_ok(), "{}: {literal}: {taken:?}", spec.name);
            }
            assert_eq!(field_of(parse(&[(spec.name, Value::Text("finish".into()))])), spec.name);
        }
        assert!(unions >= 4, "{unions}");
    }

    #[test]
    fn a_range_takes_whole_byte_counts_and_each_wrong_field_is_named() {
        let range = range_of(&[("offset", Value::Number(0.0)), ("length", Value::Number(16384.0))]);
        assert_eq!(parse(&[("range", range)]).unwrap().range, Some(ByteRange { offset: 0, length: 16384 }));
        assert_eq!(parse(&[]).unwrap().range, None);
        let length = |n| ("length", Value::Number(n));
        let cases: [(Value, &str); 8] = [
            (Value::Number(3.0), "range"),
            (range_of(&[length(1.0)]), "range.offset"),
            (range_of(&[("offset", Value::Number(1.0))]), "range.length"),
            (range_of(&[("offset", Value::Number(-1.0)), length(1.0)]), "range.offset"),
            (range_of(&[("offset", Value::Number(0.5)), length(1.0)]), "range.offset"),
            (range_of(&[("offset", Value::Number(0.0)), length(0.0)]), "range.length"),
            (range_of(&[("offset", Value::Text("0".into())), length(1.0)]), "range.offset"),
            (
                range_of(&[("offset", Value::Number(0.0)), length(1.0), ("end", Value::Number(9.0))]),
                "range.end",
            ),
        ];
        for (value, field) in cases {
            assert_eq!(field_of(parse(&[("range", value.clone())])), field, "{value:?}");
        }
        // No range longer than the largest body the call accepts, whichever field comes first.
        let long = range_of(&[("offset", Value::Number(0.0)), length(2048.0)]);
        let bounded = parse(&[("range", long.clone()), ("maxBytes", Value::Number(1024.0))]).unwrap();
        assert_eq!(field_of(bounded.check_range().map(|()| bounded.clone())), "range.length");
        assert!(parse(&[("maxBytes", Value::Number(2048.0)), ("range", long)])
            .unwrap()
            .check_range()
            .is_ok());
    }

    #[test]
    fn max_bytes_has_a_default_per_preset_and_takes_whole_positive_numbers() {
        assert_eq!(parse(&[]).unwrap().max_bytes, 33_554_432.0);
        assert_eq!(parse(&[("preset", Value::Text("batch".into()))]).unwrap().max_bytes, 67_108_864.0);
        assert_eq!(parse(&[("maxBytes", Value::Number(1.0))]).unwrap().max_bytes, 1.0);
        for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, 9_007_199_254_740_992.0] {
            assert_eq!(field_of(parse(&[("maxBytes", Value::Number(bad))])), "maxBytes", "{bad}");
        }
        assert_eq!(field_of(parse(&[("maxBytes", Value::Text("32MB".into()))])), "maxBytes");
    }

    #[test]
    fn no_options_means_the_interactive_preset() {
        let o = parse(&[]).unwrap();
        assert_eq!(o, Options::preset(Preset::Interactive));
        assert_eq!(
            (o.base_delay_ms, o.max_delay_ms, o.attempt_timeout_ms, o.deadline_ms),
            (100.0, 2000.0, 4000.0, 6000.0)
        );
        assert_eq!(o.retry_on.iter().collect::<Vec<_>>(), vec![408, 425, 429, 500, 502, 503, 504]);
        assert_eq!(o.empty_on.iter().collect::<Vec<_>>(), vec![204]);
        assert_eq!(o.jitter, Jitter::Full);
    }

    #[test]
    fn explicit_fields_override_the_preset() {
        let o =
            parse(&[("deadlineMs", Value::Number(900.0)), ("preset", Value::Text("batch".into()))]).unwrap();
        assert_eq!(o.preset, Preset::Batch);
        assert_eq!(o.deadline_ms, 900.0);
        assert_eq!(o.base_delay_ms, 500.0);
        assert_eq!(o.max_delay_ms, 30_000.0);
        assert_eq!(o.attempt_timeout_ms, 60_000.0);
    }

    #[test]
    fn every_field_is_accepted_with_a_good_value() {
        let o = parse(&[
            ("baseDelayMs", Value::Number(10.0)),
            ("maxDelayMs", Value::Number(100.0)),
            ("attemptTimeoutMs", Value::Number(50.0)),
            ("jitter", Value::Text("decorrelated".into())),
            ("jitterMs", Value::Number(0.0)),
            ("retryAfterMaxMs", Value::Number(0.0)),
            ("retryOn", Value::List(vec![Value::Number(503.0)])),
            ("emptyOn", Value::List(vec![])),
            ("accept", Value::Text("image/png, image/*;q=0.8".into())),
            ("headers", Value::Object),
            ("credentials", Value::Text("include".into())),
            ("mode", Value::Text("cors".into())),
            ("referrerPolicy", Value::Text("no-referrer".into())),
            ("cache", Value::Text("no-store".into())),
            ("signal", Value::AbortSignal),
            ("onRetry", Value::Function),
            ("fetch", Value::Function),
            ("preset", Value::Absent),
        ])
        .unwrap();
        assert!(o.retry_on.contains(503) && !o.retry_on.contains(429));
        assert!(!o.empty_on.contains(204));
        assert_eq!((o.credentials, o.mode, o.cache), (Some("include"), Some("cors"), Some("no-store")));
        assert!(o.has_headers && o.has_signal && o.has_on_retry && o.has_fetch);
    }

    /// `apply` dispatches by position in KEYS: each key must land in its own field.
    #[test]
    fn every_key_sets_its_own_field() {
        let n = Value::Number;
        let t = |s: &str| Value::Text(s.into());
        let o = parse(&[
            ("baseDelayMs", n(1.0)),
            ("maxDelayMs", n(2.0)),
            ("attemptTimeoutMs", n(3.0)),
            ("deadlineMs", n(4.0)),
            ("jitterMs", n(6.0)),
            ("retryAfterMaxMs", n(7.0)),
            ("startJitterMs", n(18.0)),
            ("maxAgeS", n(20.0)),
            ("jitter", t("additive")),
            ("credentials", t("omit")),
            ("mode", t("no-cors")),
            ("referrerPolicy", t("origin")),
            ("cache", t("reload")),
            ("subdomains", Value::List(vec![t("x")])),
            ("accept", t("image/png")),
            ("retryOn", Value::List(vec![n(500.0)])),
            ("emptyOn", Value::List(vec![n(404.0)])),
        ])
        .unwrap();
        assert_eq!(
            [o.base_delay_ms, o.max_delay_ms, o.attempt_timeout_ms, o.deadline_ms],
            [1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!([o.jitter_ms, o.retry_after_max_ms, o.start_jitter_ms], [6.0, 7.0, 18.0]);
        assert_eq!(o.max_age_s, Some(20.0));
        assert_eq!(o.jitter, Jitter::Additive);
        assert_eq!(
            (o.credentials, o.mode, o.referrer_policy, o.cache),
            (Some("omit"), Some("no-cors"), Some("origin"), Some("reload"))
        );
        assert_eq!(o.subdomains.as_deref(), Some("x"));
        assert_eq!(o.accept.as_deref(), Some("image/png"));
        assert_eq!(
            (o.retry_on.iter().collect::<Vec<_>>(), o.empty_on.iter().collect::<Vec<_>>()),
            (vec![500], vec![404])
        );
        for (i, name) in Jitter::NAMES.iter().enumerate() {
            assert_eq!(Jitter::parse(name), Some(Jitter::ALL[i]));
        }
        let three = ["a", "b-1", "c.d"].map(|s| Value::Text(s.into())).to_vec();
        let labels = parse(&[("subdomains", Value::List(three))]).unwrap();
        assert_eq!(labels.subdomains.as_deref(), Some("a\nb-1\nc.d"));
    }

    #[test]
    fn bad_values_name_their_field() {
        let cases: Vec<(&str, Value)> = vec![
            ("deadlineMs", Value::Number(-1.0)),
            ("deadlineMs", Value::Number(0.0)),
            ("deadlineMs", Value::Number(f64::NAN)),
            ("deadlineMs", Value::Number(f64::INFINITY)),
            ("deadlineMs", Value::Text("6000".into())),
            ("baseDelayMs", Value::Number(f64::NEG_INFINITY)),
            ("attemptTimeoutMs", Value::Bool(true)),
            ("jitter", Value::Text("fancy".into())),
            ("jitter", Value::Number(1.0)),
            ("retryOn", Value::List(vec![Value::Number(99.0)])),
            ("retryOn", Value::List(vec![Value::Number(503.5)])),
            ("retryOn", Value::Number(503.0)),
            ("emptyOn", Value::List(vec![Value::Text("204".into())])),
            ("accept", Value::Text("  ".into())),
            ("accept", Value::Text("image/png\r\nX-Evil: 1".into())),
            ("accept", Value::Text("\u{a0}".into())),
            ("accept", Value::Text("image/\u{fc}".into())),
            ("credentials", Value::Text("always".into())),
            ("mode", Value::Text("navigate".into())),
            ("signal", Value::Number(5.0)),
            ("signal", Value::Object),
            ("fetch", Value::Text("fetch".into())),
            ("onRetry", Value::Number(3.0)),
            ("headers", Value::Text("a: b".into())),
            ("preset", Value::Text("fast".into())),
            ("subdomains", Value::List(vec![])),
            ("subdomains", Value::List(vec![Value::Text("a".into()), Value::Number(1.0)])),
            ("subdomains", Value::List(vec![Value::Text("a b".into())])),
            ("subdomains", Value::List(vec![Value::Text("".into())])),
            ("subdomains", Value::List(vec![Value::Text("a\nb".into())])),
            ("subdomains", Value::List(vec![Value::Text("a".into()); 17])),
            ("subdomains", Value::Text("abc".into())),
        ];
        for (key, value) in cases {
            let shown = format!("{key} = {value:?}");
            let result = parse(&[(key, value)]);
            let message = result.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
            assert_eq!(field_of(result), key, "{shown}");
            assert!(message.contains(key), "{shown}: {message}");
        }
    }

    #[test]
    fn unknown_keys_are_rejected_with_a_suggestion() {
        let err = parse(&[("deadlinems", Value::Number(1.0))]).unwrap_err();
        assert_eq!(err.to_string(), "invalid `deadlinems`: unknown option (did you mean `deadlineMs`?)");
        let err = parse(&[("retryOnn", Value::Absent)]).unwrap_err();
        assert!(err.to_string().contains("did you mean `retryOn`"));
        let err = parse(&[("colour", Value::Number(1.0))]).unwrap_err();
        assert_eq!(err.to_string(), "invalid `colour`: unknown option");
        assert_eq!(field_of(parse(&[("url", Value::Text("x".into()))])), "url");
        assert_eq!(field_of(parse(&[("maxConcurrent", Value::Number(3.0))])), "maxConcurrent");
    }

    #[test]
    fn long_unknown_keys_are_cut_in_the_message() {
        let key = "k".repeat(10_000);
        let Error::InvalidOptions { field, .. } = parse(&[(key.as_str(), Value::Number(1.0))]).unwrap_err()
        else {
            unreachable!()
        };
        assert_eq!(field.len(), 60);
    }

    #[test]
    fn the_verdict_key_tells_apart_options_that_judge_responses_differently() {
        let base = parse(&[]).unwrap().verdict_key();
        assert_eq!(base, parse(&[("deadlineMs", Value::Number(1.0))]).unwrap().verdict_key());
        for entries in [
            vec![("emptyOn", Value::List(vec![Value::Number(404.0)]))],
            vec![("retryOn", Value::List(vec![]))],
            vec![("accept", Value::Text("image/*".into()))],
            vec![("maxAgeS", Value::Number(60.0))],
        ] {
            assert_ne!(parse(&entries).unwrap().verdict_key(), base);
        }
    }

    /// The registry's defaults are what the parser starts from: given explicitly, each one
    /// changes nothing.
    #[test]
    fn each_declared_default_is_what_the_preset_holds() {
        for preset in ["interactive", "batch"] {
            let batch = preset == "batch";
            let chosen = ("preset", Value::Text(preset.into()));
            let base = parse(std::slice::from_ref(&chosen)).unwrap();
            let mut checked = 0;
            for spec in SPECS {
                let value = match spec.default {
                    _ if spec.key == Key::Preset => continue,
                    DefaultValue::Number(..) => Value::Number(spec.default.number(batch)),
                    DefaultValue::Text(..) => Value::Text(spec.default.text(batch).into()),
                    DefaultValue::Statuses(codes) => {
                        Value::List(codes.iter().map(|code| Value::Number(f64::from(*code))).collect())
                    }
                    DefaultValue::Bool(_) | DefaultValue::Labels(_) | DefaultValue::Unset(_) => continue,
                };
                let mut explicit = parse(&[chosen.clone(), (spec.name, value)]).unwrap();
                explicit.explicit = base.explicit;
                assert_eq!(explicit, base, "{} under {preset}", spec.name);
                checked += 1;
            }
            assert!(checked >= 12, "{checked}");
        }
    }

    #[test]
    fn each_duration_key_sets_its_own_field() {
        let o = parse(&[
            ("baseDelayMs", Value::Number(1.0)),
            ("maxDelayMs", Value::Number(2.0)),
            ("attemptTimeoutMs", Value::Number(3.0)),
            ("deadlineMs", Value::Number(4.0)),
            ("jitterMs", Value::Number(5.0)),
            ("retryAfterMaxMs", Value::Number(6.0)),
            ("startJitterMs", Value::Number(7.0)),
            ("maxAgeS", Value::Number(8.0)),
        ])
        .unwrap();
        let fields = (
            o.base_delay_ms,
            o.max_delay_ms,
            o.attempt_timeout_ms,
            o.deadline_ms,
            o.jitter_ms,
            o.retry_after_max_ms,
            o.start_jitter_ms,
            o.max_age_s,
        );
        assert_eq!(fields, (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, Some(8.0)));
    }

    #[test]
    fn a_later_preset_changes_only_the_fields_nobody_set() {
        let batch = || ("preset", Value::Text("batch".into()));
        let interactive = || ("preset", Value::Text("interactive".into()));
        let timing = |o: &Options| (o.base_delay_ms, o.max_delay_ms, o.attempt_timeout_ms, o.deadline_ms);
        let client = parse(&[("deadlineMs", Value::Number(900.0))]).unwrap();
        let call = client.with(&entries_of(&[batch()])).unwrap();
        assert_eq!(timing(&call), (500.0, 30_000.0, 60_000.0, 900.0));
        assert_eq!(call.preset, Preset::Batch);
        let client = parse(&[batch(), ("baseDelayMs", Value::Number(50.0))]).unwrap();
        let host = client.with(&entries_of(&[("maxDelayMs", Value::Number(100.0))])).unwrap();
        assert_eq!(timing(&host.with(&entries_of(&[interactive()])).unwrap()), (50.0, 100.0, 4000.0, 6000.0));
        assert_eq!(timing(&host.with(&[]).unwrap()), (50.0, 100.0, 60_000.0, 180_000.0));
    }

    /// Options parsed in layers (client, host, call) are the options of all entries at once.
    #[test]
    fn layers_of_entries_mean_what_the_entries_mean_together() {
        let layers: Vec<Vec<(&str, Value)>> = vec![
            vec![],
            vec![("preset", Value::Text("batch".into()))],
            vec![("preset", Value::Text("interactive".into())), ("jitter", Value::Text("none".into()))],
            vec![("deadlineMs", Value::Number(700.0)), ("preset", Value::Absent)],
            vec![("maxDelayMs", Value::Number(90.0)), ("preset", Value::Text("batch".into()))],
            vec![("baseDelayMs", Value::Absent), ("attemptTimeoutMs", Value::Number(10.0))],
        ];
        for a in &layers {
            for b in &layers {
                for c in &layers {
                    let all: Vec<(&str, Value)> = a.iter().chain(b).chain(c).cloned().collect();
                    let layered =
                        parse(a).unwrap().with(&entries_of(b)).unwrap().with(&entries_of(c)).unwrap();
                    assert_eq!(layered, parse(&all).unwrap(), "{a:?} / {b:?} / {c:?}");
                }
            }
        }
    }

    #[test]
    fn absent_values_keep_the_default() {
        let o = parse(&[("deadlineMs", Value::Absent), ("signal", Value::Absent)]).unwrap();
        assert_eq!(o.deadline_ms, 6000.0);
        assert!(!o.has_signal);
    }

    /// Found by `fuzz/fuzz_targets/options.rs` (its first invariant was too strict): a huge but
    /// finite delay is accepted as given, and every wait derived from it still fits a timer.
    #[test]
    fn huge_delays_are_kept_and_every_derived_wait_fits_a_timer() {
        let o =
            parse(&[("maxDelayMs", Value::Number(232.0)), ("maxDelayMs", Value::Number(2.774e180))]).unwrap();
        assert_eq!(o.max_delay_ms, 2.774e180);
        let backoff = o.backoff();
        let mut previous = o.base_delay_ms;
        for retry in 1..=64 {
            let wait = backoff.delay(retry, previous, 0.999_999);
            assert!((0.0..=crate::MAX_DELAY_MS).contains(&wait), "retry {retry}: {wait}");
            previous = wait;
        }
    }
}
