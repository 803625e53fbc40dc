//! What the retry loop tells its caller and its observers: a tile, a give-up with its cause, and
//! the events along the way.

use std::rc::Rc;

use crate::host::breaker::BreakerState;
use crate::host::state::Hold;
use crate::Error;

/// What `onRetry` is told before each sleep.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryInfo {
    /// The attempt that just failed (1 for the first).
    pub attempt: u32,
    /// The sleep before the next attempt, in ms: the backoff delay, or the server's wait if longer.
    pub delay_ms: f64,
    /// The failed attempt's error kind, e.g. `"http"` or `"timeout"`.
    pub reason: &'static str,
    /// The failed attempt's HTTP status, if it got a response.
    pub status: Option<u16>,
    /// The server's Retry-After in ms, unclamped, if it sent one (429 and 503 only) and it was
    /// believed (see "Evidence over a header" in the README).
    pub retry_after_ms: Option<f64>,
}

/// What the loop tells an observer (`onRetry`, `onEvent`).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// An attempt is sent (`probe`: as a half-open breaker's probe).
    Attempt {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
        /// The attempt's number in its call (1 for the first).
        attempt: u32,
        /// Whether it goes as a half-open breaker's probe.
        probe: bool,
    },
    /// A retry is due: the call sleeps `info.delay_ms`, then attempts again.
    Retry {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
        /// What `onRetry` is told.
        info: RetryInfo,
    },
    /// The call waits before it may send: for a slot (`hold` None), a pause, the breaker or the rate.
    Queue {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
        /// What it waits for; `None` for a slot.
        hold: Option<Hold>,
        /// The longest it will wait, in ms: the hold's wait, or what is left of the deadline.
        wait_ms: f64,
    },
    /// The host's breaker moved to a new state.
    Breaker {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
        /// The new state.
        state: BreakerState,
    },
    /// The host is paused (Retry-After) for longer than before.
    Pause {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
        /// When the pause ends (monotonic ms; `onEvent` is given epoch ms).
        until_ms: f64,
    },
    /// The quota the host states now paces its requests.
    Pacing {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
        /// Requests per second the stated quota allows until more comes.
        per_second: f64,
        /// When the statement lapses (monotonic ms; `onEvent` is given epoch ms).
        until_ms: f64,
    },
    /// An attempt had not answered after `after_ms`, so a hedge went beside it (to `host`).
    Hedge {
        /// The host's key (`host[:port]`) the hedge went to.
        host: Rc<str>,
        /// The hedge's number in its call (attempts and hedges count together).
        attempt: u32,
        /// How long the attempt it hedges had gone unanswered, in ms.
        after_ms: f64,
    },
    /// The host was found to answer without CORS headers: said once, until it sends them again.
    CorsRefused {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
    },
    /// A call gave up (not aborted); `host` is its primary host.
    GiveUp {
        /// The host's key (`host[:port]`).
        host: Rc<str>,
        /// The final error's kind.
        kind: &'static str,
        /// How many attempts the call sent.
        attempts: u32,
    },
}

/// A tile.
#[derive(Debug)]
pub struct Delivered<B> {
    /// The tile as the transport read it ([`Transport::Body`]).
    pub body: B,
    /// Whether the status says "no tile here" (one of `emptyOn`).
    pub empty: bool,
    /// How many attempts the call sent.
    pub attempts: u32,
    /// The time from the call to the tile, in ms.
    pub elapsed_ms: f64,
}

/// One failure and what caused it.
#[derive(Debug)]
pub struct Failure<C> {
    /// What went wrong.
    pub error: Error,
    /// What lies behind it, when something does.
    pub cause: Option<Cause<C>>,
}

/// What lies behind a [`Failure`]: the JS `TileError`'s `cause`.
#[derive(Debug)]
pub enum Cause<C> {
    /// The platform's error (a network failure).
    Platform(C),
    /// The last attempt's failure, behind a `deadline`, `rate-limited` or `circuit-open` give-up.
    Attempt(Box<Failure<C>>),
}

impl<C> Failure<C> {
    pub(super) fn of(error: Error) -> Failure<C> {
        Failure { error, cause: None }
    }

    pub(super) fn after(error: Error, last: Option<Failure<C>>) -> Failure<C> {
        Failure { error, cause: last.map(|last| Cause::Attempt(Box::new(last))) }
    }
}

/// The call gave up.
#[derive(Debug)]
pub struct GaveUp<C> {
    /// Why the call gave up.
    pub failure: Failure<C>,
    /// How many attempts the call sent.
    pub attempts: u32,
    /// The time from the call to the give-up, in ms.
    pub elapsed_ms: f64,
}
