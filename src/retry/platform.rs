//! The effects the retry loop needs, as small traits. The wasm layer implements them with the
//! global `fetch`, `AbortController`, `setTimeout`, `performance.now()` and a generator seeded by
//! getrandom; the native tests implement them with a virtual clock and scripted responses.

use core::future::Future;

use crate::response::classify::ResponseFacts;

/// The clocks: monotonic and wall-clock time, in ms.
pub trait Clock {
    /// A monotonic reading in milliseconds (deadlines, elapsed time).
    fn now_ms(&self) -> f64;
    /// Milliseconds since the Unix epoch (HTTP-date Retry-After values).
    fn epoch_ms(&self) -> f64;
}

/// Randomness, for jitter.
pub trait Random {
    /// A uniform number in `[0, 1)`.
    fn unit(&self) -> f64;
}

/// How a sleep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// The whole time passed.
    Elapsed,
    /// The caller's signal fired first; the timer is already cancelled.
    Aborted,
}

/// A timer the caller's signal can cut short.
pub trait Sleep {
    /// Waits `ms` milliseconds (already clamped to the timer range), or until the caller aborts.
    fn sleep(&self, ms: f64) -> impl Future<Output = Woke>;

    /// [`Sleep::sleep`] for a retry's backoff and a start jitter, which only a failing or
    /// restarting call waits: a platform may serve them with a timer that costs more per wait.
    fn backoff(&self, ms: f64) -> impl Future<Output = Woke> {
        self.sleep(ms)
    }
}

/// The result of one request, body read included.
// One per request, moved once from the transport to the judge: boxing the facts would cost an
// allocation per request to save a copy of a few words.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Attempt<B, C> {
    /// A whole response: its facts for classification and the body the caller will receive.
    Response(ResponseFacts, B),
    /// The attempt ran past its time budget and was aborted.
    TimedOut,
    /// The caller's signal fired; nothing is in flight any more.
    Aborted,
    /// The server answered, but a browser withheld the response: it sent no
    /// `Access-Control-Allow-Origin` header for this cross-origin request (the platform checked
    /// that the server answers). Nothing a retry can change.
    CorsRefused,
    /// The body is larger than the call's `maxBytes`: declared so (`Content-Length`, refused
    /// before it was read) or counted while reading (the read was cut). The request is aborted.
    TooLarge {
        /// The declared length, or the bytes read when the bound was passed.
        bytes: f64,
        /// Whether `bytes` is a declared `Content-Length`.
        declared: bool,
        /// The response's status.
        status: u16,
    },
    /// The request or the body read failed; `cause` is the platform's own error.
    Failed {
        /// What the platform said (the JS error's message).
        message: String,
        /// The platform's error value, kept as the `cause` of a give-up.
        cause: C,
    },
}

/// The caller's signal.
pub trait Cancel {
    /// Whether the signal has fired.
    fn is_aborted(&self) -> bool;
    /// Resolves when the signal fires (never, without a signal).
    fn fired(&self) -> impl Future<Output = ()>;
}

/// Sends one call's requests, to any of its mirrors.
pub trait Transport {
    /// What a delivered tile carries (in wasm: the body and headers, left in the JS heap).
    type Body;
    /// The platform's error value (in wasm: the `TypeError` from `fetch`).
    type Cause;
    /// How many requests to one host the platform sends at once before it holds the rest until
    /// one ends (a browser's connections per HTTP/1.1 host); `None`: it holds none back.
    fn connections_per_host(&self) -> Option<usize> {
        Some(crate::retry::serving::CONNECTIONS_PER_HOST)
    }
    /// Whether its answers' order tells how the platform holds requests for its connections:
    /// not through a caller's own `fetch` (an image load in its stead, a cache of its own).
    fn tells_connections(&self) -> bool {
        true
    }
    /// Sends one request to mirror number `mirror` and reads its whole body within `timeout_ms`;
    /// `cache_bust` adds a query parameter no cache has seen. A `hedge` must not wait for the
    /// attempt it hedges: a browser's HTTP cache holds a second request for a URL behind the
    /// first until that one's headers arrive (its cache lock), so a hedge goes past that cache.
    /// Dropping the future before it completes must abort the request: the loop drops the loser
    /// of a hedge race.
    fn attempt(
        &self,
        mirror: usize,
        timeout_ms: f64,
        cache_bust: bool,
        hedge: bool,
    ) -> impl Future<Output = Attempt<Self::Body, Self::Cause>>;
}
