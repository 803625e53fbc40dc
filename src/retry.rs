//! The retry loop: attempts, classification, backoff and the deadline, over the [`platform`]
//! traits. It holds no state between calls.
//!
//! [`platform`]: crate::platform

use crate::backoff::clamp_delay;
use crate::classify::{classify, Verdict};
use crate::deadline::Deadline;
use crate::options::Options;
use crate::platform::{Attempt, Clock, Random, Sleep, Transport, Woke};
use crate::Error;

/// What `onRetry` is told before each sleep.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryInfo {
    /// The attempt that just failed (1 for the first).
    pub attempt: u32,
    pub delay_ms: f64,
    /// The failed attempt's error kind, e.g. `"http"` or `"timeout"`.
    pub reason: &'static str,
    pub status: Option<u16>,
    pub retry_after_ms: Option<f64>,
}

/// A tile.
#[derive(Debug)]
pub struct Delivered<B> {
    pub body: B,
    pub empty: bool,
    pub attempts: u32,
    pub elapsed_ms: f64,
}

/// One failure and what caused it.
#[derive(Debug)]
pub struct Failure<C> {
    pub error: Error,
    pub cause: Option<Cause<C>>,
}

#[derive(Debug)]
pub enum Cause<C> {
    /// The platform's error (a network failure).
    Platform(C),
    /// The last attempt's failure, behind a `deadline` or `rate-limited` give-up.
    Attempt(Box<Failure<C>>),
}

impl<C> Failure<C> {
    fn of(error: Error) -> Failure<C> {
        Failure { error, cause: None }
    }

    fn caused_by(error: Error, last: Failure<C>) -> Failure<C> {
        Failure {
            error,
            cause: Some(Cause::Attempt(Box::new(last))),
        }
    }
}

/// The call gave up.
#[derive(Debug)]
pub struct GaveUp<C> {
    pub failure: Failure<C>,
    pub attempts: u32,
    pub elapsed_ms: f64,
}

/// Fetches one tile: attempts until it is delivered, a failure is permanent, the caller aborts,
/// or the deadline would be crossed.
pub async fn fetch_with_retries<T, K, S, R>(
    options: &Options,
    transport: &T,
    clock: &K,
    sleeper: &S,
    random: &R,
    mut on_retry: impl FnMut(&RetryInfo),
) -> Result<Delivered<T::Body>, GaveUp<T::Cause>>
where
    T: Transport,
    K: Clock,
    S: Sleep,
    R: Random,
{
    let deadline = Deadline::starting(clock.now_ms(), options.deadline_ms);
    let backoff = options.backoff();
    let give_up = |failure, attempts| GaveUp {
        failure,
        attempts,
        elapsed_ms: deadline.elapsed(clock.now_ms()),
    };
    let out_of_time = || Error::Deadline {
        deadline_ms: options.deadline_ms,
    };

    if transport.is_aborted() {
        return Err(give_up(Failure::of(Error::Aborted), 0));
    }
    let mut attempts = 0u32;
    let mut previous_delay = options.base_delay_ms;
    let mut last: Option<Failure<T::Cause>> = None;
    loop {
        let budget = deadline.attempt_budget(clock.now_ms(), options.attempt_timeout_ms);
        if budget <= 0.0 {
            // A timer fired late, past the deadline: no time for another attempt.
            let failure = match last {
                Some(last) => Failure::caused_by(out_of_time(), last),
                None => Failure::of(out_of_time()),
            };
            return Err(give_up(failure, attempts));
        }
        attempts += 1;
        let (failure, retry_after_ms) = match transport.attempt(budget).await {
            Attempt::Aborted => return Err(give_up(Failure::of(Error::Aborted), attempts)),
            Attempt::TimedOut => {
                let timeout = Failure::of(Error::Timeout { after_ms: budget });
                if budget < options.attempt_timeout_ms {
                    return Err(give_up(
                        Failure::caused_by(out_of_time(), timeout),
                        attempts,
                    ));
                }
                (timeout, None)
            }
            Attempt::Failed { message, cause } => (
                Failure {
                    error: Error::Network { message },
                    cause: Some(Cause::Platform(cause)),
                },
                None,
            ),
            Attempt::Response(facts, body) => match classify(&facts, options, clock.epoch_ms()) {
                Verdict::Deliver { empty } => {
                    let elapsed_ms = deadline.elapsed(clock.now_ms());
                    return Ok(Delivered {
                        body,
                        empty,
                        attempts,
                        elapsed_ms,
                    });
                }
                Verdict::Reject(error) => return Err(give_up(Failure::of(error), attempts)),
                Verdict::Retry {
                    error,
                    retry_after_ms,
                } => (Failure::of(error), retry_after_ms),
            },
        };
        if transport.is_aborted() {
            return Err(give_up(Failure::of(Error::Aborted), attempts));
        }

        let jittered = backoff.delay(attempts, previous_delay, random.unit());
        previous_delay = jittered;
        let floor = retry_after_ms.map(|wait| wait.min(options.retry_after_max_ms));
        let delay = clamp_delay(floor.map_or(jittered, |floor| jittered.max(floor)));
        let now = clock.now_ms();
        if !deadline.fits_sleep(now, delay) {
            let error = match (floor, retry_after_ms, failure.error.status()) {
                (Some(floor), Some(wait), Some(status)) if !deadline.fits_sleep(now, floor) => {
                    Error::RateLimited {
                        status,
                        retry_after_ms: wait,
                    }
                }
                _ => out_of_time(),
            };
            return Err(give_up(Failure::caused_by(error, failure), attempts));
        }
        on_retry(&RetryInfo {
            attempt: attempts,
            delay_ms: delay,
            reason: failure.error.kind(),
            status: failure.error.status(),
            retry_after_ms,
        });
        if sleeper.sleep(delay).await == Woke::Aborted {
            return Err(give_up(Failure::of(Error::Aborted), attempts));
        }
        last = Some(failure);
    }
}
