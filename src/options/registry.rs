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
    /// A boolean, the same in both presets.
    Bool(bool),
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

    /// The boolean of a boolean default, false for any other.
    pub const fn flag(self) -> bool {
        matches!(self, DefaultValue::Bool(true))
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

/// Where an option may be set besides a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Per call only: it means nothing shared by every call of a client.
    Call,
    /// Per call, or client-wide in a `TileClient` config; not per host (a JS value the client
    /// keeps for all its hosts).
    Client,
    /// Per call, client-wide, or for one host in `hosts`.
    Host,
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
    /// Where else it may be set.
    pub scope: Scope,
    /// What it does, one paragraph (Markdown: the `.d.ts` and the docs table show it as is).
    pub doc: &'static str,
}

/// Declares the options: the [`Key`] enum, its names and [`SPECS`], from one list.
macro_rules! registry {
    ($( $key:ident $name:literal : $ts:literal = $default:expr, $scope:ident, $doc:literal; )*) => {
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

            // Asked by the parsers at run time: matches, not a look-up in SPECS, so a module that
            // never asks for the docs does not carry them.
            /// This key's default.
            pub const fn default(self) -> DefaultValue {
                match self {
                    $( Key::$key => $default, )*
                }
            }

            /// Where else this key may be set.
            pub const fn scope(self) -> Scope {
                match self {
                    $( Key::$key => Scope::$scope, )*
                }
            }
        }

        /// Every option, in the order the documentation lists them.
        pub const SPECS: [Spec; COUNT] = [$(
            Spec { key: Key::$key, name: $name, ts_type: $ts, default: $default, scope: Scope::$scope, doc: $doc },
        )*];

        /// How many options there are.
        pub const COUNT: usize = [$( $name, )*].len();
    };
}

use DefaultValue::*;

registry! {
    Preset "preset": r#""interactive" | "batch""# = Text("interactive", "interactive"), Host,
        "The named set of defaults: `\"interactive\"` (a person is looking at the map) or \
         `\"batch\"` (seeding, prefetching, offline packs: nobody is waiting, the server's health \
         matters more). It sets every default that says \"batch\" below; an explicit field wins.";
    BaseDelayMs "baseDelayMs": "number" = Number(100.0, 500.0), Host,
        "The first retry's backoff ceiling; it doubles per retry up to `maxDelayMs`.";
    MaxDelayMs "maxDelayMs": "number" = Number(2000.0, 30_000.0), Host,
        "The cap of every backoff delay.";
    AttemptTimeoutMs "attemptTimeoutMs": "number" = Number(4000.0, 60_000.0), Host,
        "One attempt, body included, is aborted after this. Once its host has answered 20 tiles, \
         an attempt is aborted sooner, at four times the host's p99 answer (at least 1 s). An \
         attempt waiting for a connection behind the client's earlier requests to its host is \
         timed from when it has one.";
    DeadlineMs "deadlineMs": "number" = Number(6000.0, 180_000.0), Host,
        "Bounds the whole call: attempts and sleeps. Time a call waits behind the client's own \
         requests to the host (for a concurrency slot, or a connection) is given back: queued is \
         not failed.";
    Jitter "jitter": r#""full" | "equal" | "decorrelated" | "none" | "additive""# = Text("full", "full"), Host,
        "How the ceiling c = min(maxDelayMs, baseDelayMs·2^(n−1)) of retry n is randomised: \
         `\"full\"` U(0, c); `\"equal\"` c/2 + U(0, c/2); `\"decorrelated\"` min(maxDelayMs, \
         U(baseDelayMs, 3·previous)); `\"none\"` c; `\"additive\"` c + U(0, jitterMs).";
    JitterMs "jitterMs": "number" = Number(100.0, 100.0), Host,
        "The random addend of `jitter: \"additive\"`.";
    RetryAfterMaxMs "retryAfterMaxMs": "number" = Number(60_000.0, 60_000.0), Host,
        "A longer `Retry-After` is clamped to this before it is used as the delay's floor.";
    RetryOn "retryOn": "number[]" = Statuses(&[408, 425, 429, 500, 502, 503, 504]), Host,
        "Statuses that are retried.";
    EmptyOn "emptyOn": "number[]" = Statuses(&[204]), Host,
        "Statuses that mean \"no tile here\": the call resolves with `empty: true`.";
    Accept "accept": "string" = Unset("no header, no check"), Host,
        "Sent as the `Accept` header; a response whose `Content-Type` contradicts it is retried.";
    Headers "headers": "HeadersInit" = Unset("none"), Client,
        "Extra request headers; a `User-Agent` here replaces tilefetch's own (sent where a script \
         may set one: Node, Deno, Bun, workerd).";
    Credentials "credentials": "RequestCredentials" =
        Unset("`\"same-origin\"`, the platform's default: not sent, so workerd accepts the request"), Host,
        "The fetch `credentials` mode.";
    Mode "mode": r#""cors" | "no-cors" | "same-origin""# = Unset("`\"cors\"`, the platform's default: not sent"), Host,
        "The fetch request mode.";
    ReferrerPolicy "referrerPolicy": "ReferrerPolicy" = Unset("the platform's: not sent"), Host,
        "The fetch referrer policy.";
    Cache "cache": "RequestCache" = Unset("`\"default\"`, the platform's default: not sent"), Host,
        "The fetch cache mode.";
    Signal "signal": "AbortSignal | null" = Unset("none"), Call,
        "Aborts the request in flight and any backoff sleep at once; the call rejects with kind \
         `\"aborted\"`.";
    OnRetry "onRetry": "(info: RetryInfo) => void" = Unset("none"), Call,
        "Called before each backoff sleep with `{attempt, delayMs, reason, status, retryAfterMs}`; \
         what it throws is ignored.";
    StartJitterMs "startJitterMs": "number" = Number(0.0, 0.0), Host,
        "Delays the first attempt by U(0, startJitterMs), so batch jobs that restart together do \
         not arrive together.";
    Subdomains "subdomains": "string[]" = Labels("a\nb\nc"), Client,
        "What `{s}` in a URL template expands to, one mirror each (a retry goes to the next).";
    MaxAgeS "maxAgeS": "number" = Unset("off"), Host,
        "A tile whose `Age` header says a cache has held it longer than this many seconds is \
         fetched once more, at once, with a cache-busting query parameter (`_tf`).";
    Hedge "hedge": r#""auto" | "off" | number"# = Text("auto", "off"), Host,
        "When an attempt has not answered, one more goes beside it (to the next mirror when there \
         are several) and the first tile wins; the others are aborted. `\"auto\"`: after the \
         host's p95 of answered attempts (at least 50 ms) once it has answered 20; before that, \
         once it has answered any, after four times its median answer and at least a quarter of \
         `attemptTimeoutMs`, or at four times the median (at least 400 ms) for an attempt that \
         later ones overtook or one of few out to its host; never while the host has answered \
         nothing, nor when four times its median is past `attemptTimeoutMs` (a host slow for \
         everyone); a number: after that many ms. At most two hedges per call, the second when \
         the first has not answered after the same delay; each spends the retry budget, takes \
         over the hedged attempt's slot (or another mirror's next free one), and never goes to a \
         paused, paced or not-closed host.";
    Fetch "fetch": "(input: string | Request, init: RequestInit) => Promise<Response>" =
        Unset("the global `fetch`"), Client,
        "What every attempt (hedges included) calls instead of the global `fetch`, with the same \
         arguments: the URL or `Request`, and an init whose `signal` aborts the attempt. A call \
         that joins an identical one in flight is served by that call's `fetch`. Not per host. \
         A response whose body is no web `ReadableStream` (node-fetch's carries a Node stream) \
         is read whole with `arrayBuffer()`, then held to `maxBytes`.";
    MaxBytes "maxBytes": "number" = Number(33_554_432.0, 67_108_864.0), Host,
        "The largest body a tile may have, in bytes, after any `Content-Encoding` is decoded \
         (32 MiB; 64 MiB for preset `\"batch\"`). A larger declared `Content-Length` is refused \
         before the body is read; a body without one is cut as soon as it passes the bound. \
         Either rejects at once with kind `\"too-large\"`: not retried, not held against the host.";
    WhenAbandoned "whenAbandoned": r#""abort" | "land" | "yield""# = Text("abort", "abort"), Host,
        "What a request in flight becomes once every caller of its tile has gone (its signal \
         aborted, its deadline passed): `\"abort\"` aborts it; `\"land\"`, in a page or a \
         worker (where the browser holds requests per host), lets it \
         finish when it has a connection (the server has it already), its host's answers say \
         it is due within half a second, and keeps its tile for the next identical call \
         (`memoryCacheBytes`), which joins it while it is out; nothing more is started for it \
         (no retry, no hedge). A map that pans faster than its server answers then spends no \
         request twice. `\"yield\"` lets it land as `\"land\"` does only while no other \
         request to its host waits for a connection (or for a slot: `maxConcurrent`), and \
         aborts it when one does, which then has the connection at once. The OpenLayers adapter \
         asks for `\"land\"` in its calls (OpenLayers' own loader never abandons an image it \
         started), the Leaflet and MapLibre adapters for `\"yield\"` (their own loaders abort \
         a tile of a view gone), unless their options say otherwise (a `TileClient`'s own \
         setting does not: a call's option wins); in Node it aborts.";
    Range "range": "ByteRange" = Unset("none: the whole resource"), Call,
        "Asks for `length` bytes from `offset` (a `Range` header), as a cloud-optimised archive \
         (PMTiles) is read. The answer is held to the range, not judged as an image: a 206 must \
         carry those bytes (its `Content-Range`, when readable, must match; a cut body is retried); \
         a 200 from a server that ignores `Range` has the range cut out of it when the whole body \
         is within `maxBytes`, else the call rejects at once with kind `\"range-unsupported\"`; a \
         416 is not retried; `emptyOn` and `accept` do not apply. Two ranges of one URL are two \
         requests. `length` may not exceed `maxBytes`.";
}

/// One setting of a `TileClient` config, declared like an option.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The object it sits in (`breaker` for `breaker.openMs`), or "" at the top level.
    pub object: &'static str,
    /// Its name within that object.
    pub key: &'static str,
    /// Its TypeScript type.
    pub ts_type: &'static str,
    /// Its default; the core's settings types take theirs from here.
    pub default: DefaultValue,
    /// What it does, one paragraph.
    pub doc: &'static str,
}

impl Setting {
    /// Its name, dotted when it sits in an object (`breaker.openMs`).
    pub fn name(&self) -> String {
        if self.object.is_empty() {
            self.key.to_string()
        } else {
            [self.object, ".", self.key].concat()
        }
    }
}

/// `maxConcurrent`.
pub const MAX_CONCURRENT: Setting = Setting {
    object: "",
    key: "maxConcurrent",
    ts_type: "number",
    default: Number(16.0, 16.0),
    doc: "Attempts in flight at once to one host; the rest wait in a queue. Unset, the limit starts \
          here and grows, up to four times, while the host answers as fast with more out (HTTP/2, \
          a runtime that holds no request back), and falls back on a failure, a throttle or slower \
          answers; in a page or a worker a host starts at four times, as the map's own loader sends \
          a whole view (the browser holds back what an HTTP/1.1 host cannot take; a server under \
          strain meets a first view as the own loader sends it), and comes down here when its \
          first answers show the browser holding requests back, on a failure or a throttle, or \
          while a quota, a learned rate, a pause or a breaker bounds the host; set, \
          it is fixed. Aborting a queued call removes it at once; time queued counts against the \
          deadline.",
};
/// `queueOrder`.
pub const QUEUE_ORDER: Setting = Setting {
    object: "",
    key: "queueOrder",
    ts_type: r#""fifo" | "lifo""#,
    default: Text("fifo", "fifo"),
    doc: "Which queued call goes next. With `\"lifo\"` the newest (the tiles a panning map shows \
          now), except that a call with half its deadline or less left goes ahead of newer ones \
          (oldest first), so newest-first never lets an old tile miss its deadline.",
};
// 10 in a row: at a 30 % failure rate that happens once in ~170 000 attempts, while an outage
// produces it in milliseconds.
/// `breaker.failureThreshold`.
pub const BREAKER_FAILURE_THRESHOLD: Setting = Setting {
    object: "breaker",
    key: "failureThreshold",
    ts_type: "number",
    default: Number(10.0, 10.0),
    doc: "Consecutive transient attempt failures (not calls; aborts do not count) that open the \
          breaker.",
};
/// `breaker.openMs`.
pub const BREAKER_OPEN_MS: Setting = Setting {
    object: "breaker",
    key: "openMs",
    ts_type: "number",
    default: Number(500.0, 2000.0),
    doc: "The first open time (±20 % jitter); then half-open.",
};
/// `breaker.halfOpenProbes`.
pub const BREAKER_HALF_OPEN_PROBES: Setting = Setting {
    object: "breaker",
    key: "halfOpenProbes",
    ts_type: "number",
    default: Number(1.0, 1.0),
    doc: "Requests let through while half-open: a success closes the breaker, a failure opens it \
          again ×1.5 longer.",
};
// A map should see a recovered host within about a second, and one probe a second is nothing to
// a host.
/// `breaker.maxOpenMs`.
pub const BREAKER_MAX_OPEN_MS: Setting = Setting {
    object: "breaker",
    key: "maxOpenMs",
    ts_type: "number",
    default: Number(1000.0, 60_000.0),
    doc: "The longest open time.",
};
// A host failing 30 % of attempts needs ~0.43 retries per call, and an outage is then held to
// 1.5 requests per call before the breaker takes over.
/// `retryBudget.ratio`.
pub const RETRY_BUDGET_RATIO: Setting = Setting {
    object: "retryBudget",
    key: "ratio",
    ts_type: "number",
    default: Number(0.5, 0.5),
    doc: "Retries may add at most this share of load on top of first attempts.",
};
/// `retryBudget.minPerSecond`.
pub const RETRY_BUDGET_MIN_PER_SECOND: Setting = Setting {
    object: "retryBudget",
    key: "minPerSecond",
    ts_type: "number",
    default: Number(10.0, 10.0),
    doc: "Retries always allowed per second, whatever the traffic.",
};
/// `learnRate`.
pub const LEARN_RATE: Setting = Setting {
    object: "",
    key: "learnRate",
    ts_type: "boolean",
    default: Bool(true),
    doc: "After a 429 from a host that served 5 or more requests in the last second, space \
          attempts at 90 % of what it served, instead of pausing the host for the 429's \
          `Retry-After` (which still floors the refused call's retry). Off: every 429 with \
          `Retry-After` pauses the host.",
};

/// The settings a client applies per host, as defaults for every host or in `hosts` for one.
pub const HOST_SETTINGS: [Setting; 9] = [
    MAX_CONCURRENT,
    QUEUE_ORDER,
    BREAKER_FAILURE_THRESHOLD,
    BREAKER_OPEN_MS,
    BREAKER_HALF_OPEN_PROBES,
    BREAKER_MAX_OPEN_MS,
    RETRY_BUDGET_RATIO,
    RETRY_BUDGET_MIN_PER_SECOND,
    LEARN_RATE,
];

/// `memoryCacheBytes`.
pub const MEMORY_CACHE_BYTES: Setting = Setting {
    object: "",
    key: "memoryCacheBytes",
    ts_type: "number",
    default: Number(16_777_216.0, 0.0),
    doc: "Bytes of recently delivered tiles the client keeps in memory and hands out again, \
          without a request, to an identical call (16 MiB; 0, off, for preset `\"batch\"`): a \
          map panned back shows its tiles at once, as a page's `<img>` loader reuses the images \
          it has shown. A response with `Cache-Control: no-store` is not kept, one with \
          `no-cache` not reused; `max-age` (less `Age`) or `Expires` bounds the reuse, and 5 \
          minutes bound it whatever they say. Such a tile comes with `attempts: 0`; a call whose \
          `cache` option is `\"no-store\"`, `\"reload\"` or `\"no-cache\"` is not served from \
          it, nor a call with a `fetch` of its own (what it gets is kept), nor a call with \
          `maxAgeS` (nor is its tile kept). At most 2048 tiles, none larger than a quarter of the \
          bound, least recently used out first; each caller gets a copy of the bytes. Up to \
          1 GiB.",
};

/// The settings only a client takes, not a `hosts` entry.
pub const CLIENT_SETTINGS: [Setting; 3] = [
    MEMORY_CACHE_BYTES,
    Setting {
        object: "",
        key: "hosts",
        ts_type: "Record<string, HostOptions>",
        default: Unset("none"),
        doc: "Per-host overrides, keyed by `host[:port]` (lowercase): the settings above and the \
              fetchTile options that may be set per host.",
    },
    Setting {
        object: "",
        key: "onEvent",
        ts_type: "(event: TileEvent) => void",
        default: Unset("none"),
        doc: "Called for each attempt, hedge, retry, queue wait, breaker change, pause and give-up. \
              What it throws is ignored.",
    },
];

/// The names of the edge gate's settings, as pkg/worker/gate.js sends them (it asks the names
/// from the registry's JSON; the worker's `gate` config documents and checks their values).
pub const GATE_KEYS: [&str; 6] =
    ["failureThreshold", "openMs", "maxOpenMs", "ratePerSecond", "burst", "probeLeaseMs"];

/// The keys of the settings in `object`, or the top-level keys (objects once) for "": the key
/// lists the parsers check against.
const fn keys_in<const N: usize, const M: usize>(settings: &[Setting; M], object: &str) -> [&'static str; N] {
    let mut keys = [""; N];
    let mut n = 0;
    let mut i = 0;
    while i < M {
        let setting = settings[i];
        let key = if object.is_empty() && !setting.object.is_empty() {
            setting.object
        } else if const_eq(setting.object, object) {
            setting.key
        } else {
            ""
        };
        let mut seen = key.is_empty();
        let mut k = 0;
        while k < n {
            seen = seen || const_eq(keys[k], key);
            k += 1;
        }
        if !seen {
            keys[n] = key;
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "the key count declared for the list");
    keys
}

const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The keys of the host settings (`breaker` and `retryBudget` being objects).
pub const HOST_KEYS: [&str; 5] = keys_in(&HOST_SETTINGS, "");
/// The keys of `breaker`.
pub const BREAKER_KEYS: [&str; 4] = keys_in(&HOST_SETTINGS, "breaker");
/// The keys of `retryBudget`.
pub const BUDGET_KEYS: [&str; 2] = keys_in(&HOST_SETTINGS, "retryBudget");
/// The keys only a client takes.
pub const CLIENT_KEYS: [&str; 3] = keys_in(&CLIENT_SETTINGS, "");

impl Key {
    /// The key spelled `name`, if there is one.
    pub fn named(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|key| key.name() == name)
    }

    /// This key's declaration (its docs included: for the build's generator and tests).
    pub const fn spec(self) -> &'static Spec {
        &SPECS[self as usize]
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
    fn the_settings_key_lists_are_the_declared_names() {
        assert_eq!(HOST_KEYS, ["maxConcurrent", "queueOrder", "breaker", "retryBudget", "learnRate"]);
        assert_eq!(BREAKER_KEYS, ["failureThreshold", "openMs", "halfOpenProbes", "maxOpenMs"]);
        assert_eq!(BUDGET_KEYS, ["ratio", "minPerSecond"]);
        assert_eq!(CLIENT_KEYS, ["memoryCacheBytes", "hosts", "onEvent"]);
        assert_eq!(BREAKER_OPEN_MS.name(), "breaker.openMs");
        assert_eq!(MAX_CONCURRENT.name(), "maxConcurrent");
    }

    #[test]
    fn every_declaration_is_documented_and_typed() {
        let options = SPECS.iter().map(|spec| (spec.name, spec.doc, spec.ts_type));
        let settings = HOST_SETTINGS.iter().chain(&CLIENT_SETTINGS).map(|s| (s.key, s.doc, s.ts_type));
        for (name, doc, ts_type) in options.chain(settings) {
            assert!(doc.ends_with('.'), "{name}: one paragraph ending with a full stop");
            assert!(!doc.contains("  ") && !doc.contains('\n'), "{name}: one line");
            assert!(!ts_type.is_empty(), "{name}");
        }
    }
}
