//! The one declaration of every `fetchTile` option: its name, its TypeScript type, its default
//! per preset and its documentation. Everything else asks this table: the parser
//! ([`super::Options`]) for names and defaults, and `examples/option-registry.rs` prints it as
//! JSON for the build, which writes the `.d.ts` of the options, the adapters' list of option
//! names and the options table of `docs/reference.md` from it (`scripts/options-from-registry.mjs`).
//! A new option is one entry here, its field in [`super::Options`] and what reads it.

/// An option's default, as the parser applies it and the documentation shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// A number per preset: interactive, batch.
    Number(f64, f64),
    /// A string value per preset: interactive, batch.
    Text(&'static str, &'static str),
    /// HTTP statuses, the same in both presets.
    Statuses(&'static [u16]),
    /// Labels, the same in both presets, one per line (the form the URL resolver takes them in).
    Labels(&'static str),
    /// Nothing is set; the text says what happens then (off, or the platform's own default).
    Unset(&'static str),
}

impl DefaultValue {
    /// The number this default takes under `batch` (or not): 0 for a default that is no number.
    pub const fn number(self, batch: bool) -> f64 {
        match self {
            DefaultValue::Number(interactive, batch_value) => {
                if batch {
                    batch_value
                } else {
                    interactive
                }
            }
            _ => 0.0,
        }
    }

    /// The text this default takes under `batch` (or not): "" for a default that is no text.
    pub const fn text(self, batch: bool) -> &'static str {
        match self {
            DefaultValue::Text(interactive, batch_value) => {
                if batch {
                    batch_value
                } else {
                    interactive
                }
            }
            _ => "",
        }
    }

    /// The labels of a label-list default, one per line; "" for any other.
    pub const fn labels(self) -> &'static str {
        match self {
            DefaultValue::Labels(lines) => lines,
            _ => "",
        }
    }

    /// The statuses of a status-list default, none for any other.
    pub const fn statuses(self) -> &'static [u16] {
        match self {
            DefaultValue::Statuses(codes) => codes,
            _ => &[],
        }
    }
}

/// One option as declared here.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The key.
    pub key: Key,
    /// Its name, as JavaScript spells it.
    pub name: &'static str,
    /// Its TypeScript type.
    pub ts_type: &'static str,
    /// Its default.
    pub default: DefaultValue,
    /// What it does, one paragraph (Markdown: the `.d.ts` and the docs table show it as is).
    pub doc: &'static str,
}

/// Declares the options: the [`Key`] enum, its names and [`SPECS`], from one list.
macro_rules! registry {
    ($( $key:ident $name:literal : $ts:literal = $default:expr, $doc:literal; )*) => {
        /// A key of the `fetchTile` options. Fields are bound to keys by name, never by a position
        /// in a list.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Key {
            $( #[doc = $doc] $key, )*
        }

        impl Key {
            /// Every key, in the order the documentation lists them.
            pub const ALL: [Key; COUNT] = [$( Key::$key, )*];

            /// The key as JavaScript spells it.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Key::$key => $name, )*
                }
            }
        }

        /// Every option, in the order the documentation lists them.
        pub const SPECS: [Spec; COUNT] = [$(
            Spec { key: Key::$key, name: $name, ts_type: $ts, default: $default, doc: $doc },
        )*];

        /// How many options there are.
        pub const COUNT: usize = [$( $name, )*].len();
    };
}

use DefaultValue::*;

registry! {
    Preset "preset": r#""interactive" | "batch""# = Text("interactive", "interactive"),
        "The named set of defaults: `\"interactive\"` (a person is looking at the map) or \
         `\"batch\"` (seeding, prefetching, offline packs: nobody is waiting, the server's health \
         matters more). It sets every default that says \"batch\" below; an explicit field wins.";
    BaseDelayMs "baseDelayMs": "number" = Number(100.0, 500.0),
        "The first retry's backoff ceiling; it doubles per retry up to `maxDelayMs`.";
    MaxDelayMs "maxDelayMs": "number" = Number(2000.0, 30_000.0),
        "The cap of every backoff delay.";
    AttemptTimeoutMs "attemptTimeoutMs": "number" = Number(4000.0, 60_000.0),
        "One attempt, body included, is aborted after this.";
    DeadlineMs "deadlineMs": "number" = Number(6000.0, 180_000.0),
        "Bounds the whole call: attempts and sleeps.";
    Jitter "jitter": r#""full" | "equal" | "decorrelated" | "none" | "additive""# = Text("full", "full"),
        "How the ceiling c = min(maxDelayMs, baseDelayMs·2^(n−1)) of retry n is randomised: \
         `\"full\"` U(0, c); `\"equal\"` c/2 + U(0, c/2); `\"decorrelated\"` min(maxDelayMs, \
         U(baseDelayMs, 3·previous)); `\"none\"` c; `\"additive\"` c + U(0, jitterMs).";
    JitterMs "jitterMs": "number" = Number(100.0, 100.0),
        "The random addend of `jitter: \"additive\"`.";
    RetryAfterMaxMs "retryAfterMaxMs": "number" = Number(60_000.0, 60_000.0),
        "A longer `Retry-After` is clamped to this before it is used as the delay's floor.";
    RetryOn "retryOn": "number[]" = Statuses(&[408, 425, 429, 500, 502, 503, 504]),
        "Statuses that are retried.";
    EmptyOn "emptyOn": "number[]" = Statuses(&[204]),
        "Statuses that mean \"no tile here\": the call resolves with `empty: true`.";
    Accept "accept": "string" = Unset("no header, no check"),
        "Sent as the `Accept` header; a response whose `Content-Type` contradicts it is retried.";
    Headers "headers": "HeadersInit" = Unset("none"),
        "Extra request headers; a `User-Agent` here replaces tilefetch's own (sent where a script \
         may set one: Node, Deno, Bun, workerd).";
    Credentials "credentials": "RequestCredentials" =
        Unset("`\"same-origin\"`, the platform's default: not sent, so workerd accepts the request"),
        "The fetch `credentials` mode.";
    Mode "mode": r#""cors" | "no-cors" | "same-origin""# = Unset("`\"cors\"`, the platform's default: not sent"),
        "The fetch request mode.";
    ReferrerPolicy "referrerPolicy": "ReferrerPolicy" = Unset("the platform's: not sent"),
        "The fetch referrer policy.";
    Cache "cache": "RequestCache" = Unset("`\"default\"`, the platform's default: not sent"),
        "The fetch cache mode.";
    Signal "signal": "AbortSignal | null" = Unset("none"),
        "Aborts the request in flight and any backoff sleep at once; the call rejects with kind \
         `\"aborted\"`.";
    OnRetry "onRetry": "(info: RetryInfo) => void" = Unset("none"),
        "Called before each backoff sleep with `{attempt, delayMs, reason, status, retryAfterMs}`; \
         what it throws is ignored.";
    StartJitterMs "startJitterMs": "number" = Number(0.0, 0.0),
        "Delays the first attempt by U(0, startJitterMs), so batch jobs that restart together do \
         not arrive together.";
    Subdomains "subdomains": "string[]" = Labels("a\nb\nc"),
        "What `{s}` in a URL template expands to, one mirror each (a retry goes to the next).";
    MaxAgeS "maxAgeS": "number" = Unset("off"),
        "A tile whose `Age` header says a cache has held it longer than this many seconds is \
         fetched once more, at once, with a cache-busting query parameter (`_tf`).";
    Hedge "hedge": r#""auto" | "off" | number"# = Text("auto", "off"),
        "When an attempt has not answered, one more goes beside it (to the next mirror when there \
         are several) and the first tile wins; the other is aborted. `\"auto\"`: after the host's \
         p95 of answered attempts (at least 50 ms) once it has answered 20, and after 1,000 ms \
         before that; a number: after that many ms. At most one hedge per call; it spends the \
         retry budget, takes over the hedged attempt's slot (or another mirror's next free one), \
         and never goes to a paused, paced or not-closed host.";
    Fetch "fetch": "(input: string | Request, init: RequestInit) => Promise<Response>" =
        Unset("the global `fetch`"),
        "What every attempt (hedges included) calls instead of the global `fetch`, with the same \
         arguments: the URL or `Request`, and an init whose `signal` aborts the attempt. A call \
         that joins an identical one in flight is served by that call's `fetch`. Not per host.";
    MaxBytes "maxBytes": "number" = Number(33_554_432.0, 67_108_864.0),
        "The largest body a tile may have, in bytes, after any `Content-Encoding` is decoded \
         (32 MiB; 64 MiB for preset `\"batch\"`). A larger declared `Content-Length` is refused \
         before the body is read; a body without one is cut as soon as it passes the bound. \
         Either rejects at once with kind `\"too-large\"`: not retried, not held against the host.";
}

impl Key {
    /// The key spelled `name`, if there is one.
    pub fn named(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|key| key.name() == name)
    }

    /// This key's declaration.
    pub const fn spec(self) -> &'static Spec {
        &SPECS[self as usize]
    }

    /// This key's default.
    pub const fn default(self) -> DefaultValue {
        self.spec().default
    }
}

/// Every key `fetchTile` takes, by name (for "did you mean" suggestions and the fuzz targets).
pub const KEYS: [&str; COUNT] = {
    let mut names = [""; COUNT];
    let mut i = 0;
    while i < COUNT {
        names[i] = SPECS[i].name;
        i += 1;
    }
    names
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_named_once_and_each_declaration_is_its_keys() {
        for (i, key) in Key::ALL.into_iter().enumerate() {
            assert_eq!(key as usize, i);
            assert_eq!(key.spec().key, key);
            assert_eq!(Key::named(key.name()), Some(key));
            assert_eq!(KEYS[i], key.name());
            assert_eq!(KEYS.iter().filter(|k| **k == key.name()).count(), 1, "{key:?}");
        }
        assert_eq!(Key::named("deadlinems"), None);
    }

    #[test]
    fn every_declaration_is_documented_and_typed() {
        for spec in SPECS {
            assert!(spec.doc.ends_with('.'), "{}: one paragraph ending with a full stop", spec.name);
            assert!(!spec.doc.contains("  ") && !spec.doc.contains('\n'), "{}: one line", spec.name);
            assert!(!spec.ts_type.is_empty(), "{}", spec.name);
        }
    }
}
