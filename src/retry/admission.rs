//! Whether an attempt may go now, and to which mirror: a host's concurrency slot, its pause, its
//! breaker and its learned rate, waited for within the call's deadline.

use std::rc::Rc;

use super::outcome::Event;
use super::Runtime;
use crate::host::breaker::BreakerState;
use crate::host::slots::{Permit, QueueOrder};
use crate::host::state::{next_change, Change, Decision, Hold, Report, SharedHost};
use crate::options::Options;
use crate::retry::platform::{Cancel, Clock, Random, Sleep, Woke};
use crate::retry::race::{race, Either};
use crate::timing::deadline::Deadline;
use crate::Error;

/// The most a call adds to a host's pause so that paused calls do not all wake together.
const PAUSE_JITTER_MS: f64 = 250.0;

/// How often a call waiting on a doubtful pause looks again whether anything is still in flight.
const DOUBT_RECHECK_MS: f64 = 250.0;
/// In a LIFO queue, a call with this share of its deadline left (or less) waits ahead of newer
/// ones: enough left for an attempt and a retry, which newest-first would never give it.
pub const LIFO_URGENT_SHARE: f64 = 0.5;
/// The longest single timer a call waiting for a slot sets (it sets another after it).
const MAX_SLOT_NAP_MS: f64 = 60_000.0;

/// Reports an attempt's outcome to its host and announces what changed.
pub(super) fn report_to_host<T, K, S, R, C: Cancel>(
    host: &SharedHost,
    now: f64,
    probe: bool,
    report: Report,
    fx: &Runtime<'_, T, K, S, R, C>,
    on_event: &mut impl FnMut(Event),
    name: &Rc<str>,
) where
    R: Random,
{
    let change = host.borrow_mut().report(now, probe, report, fx.random.unit());
    match change {
        Some(Change::Breaker(state)) => on_event(Event::Breaker { host: name.clone(), state }),
        Some(Change::Pause { until_ms }) => on_event(Event::Pause { host: name.clone(), until_ms }),
        Some(Change::CorsRefused) => on_event(Event::CorsRefused { host: name.clone() }),
        Some(Change::Pacing { per_second, until_ms }) => {
            on_event(Event::Pacing { host: name.clone(), per_second, until_ms })
        }
        None => {}
    }
}

/// Attempt n goes to mirror n mod len, skipping mirrors whose host is paused or whose breaker is
/// open (when none is ready, a paused one before an open one).
pub(super) fn pick_mirror(route: &[SharedHost], attempt_index: usize, now_ms: f64) -> usize {
    let n = route.len();
    let first = attempt_index % n;
    let order = (0..n).map(|k| (first + k) % n);
    order
        .clone()
        .find(|&i| is_ready(&route[i], now_ms))
        .or_else(|| order.clone().find(|&i| route[i].borrow().breaker.state(now_ms) != BreakerState::Open))
        .unwrap_or(first)
}

/// Whether `host` could take an attempt now: no Retry-After pause and a breaker that is not open.
pub(super) fn is_ready(host: &SharedHost, now_ms: f64) -> bool {
    let host = host.borrow();
    host.paused_until(now_ms).is_none() && host.breaker.state(now_ms) != BreakerState::Open
}

/// Waits until `host` lets an attempt go: a concurrency slot, then no pause, no open breaker and
/// a rate token. Returns the slot and whether the attempt is a half-open probe.
pub(super) async fn wait_for_admission<T, K, S, R, C>(
    host: &SharedHost,
    deadline: &Deadline,
    options: &Options,
    fx: &Runtime<'_, T, K, S, R, C>,
    on_event: &mut impl FnMut(Event),
) -> Result<(Permit, bool), Error>
where
    K: Clock,
    S: Sleep,
    R: Random,
    C: Cancel,
{
    let out_of_time = || Error::Deadline { deadline_ms: options.deadline_ms };
    // A call that comes to the host while its paused calls wake waits behind them, once.
    let mut behind_waiters = true;
    loop {
        if fx.cancel.is_aborted() {
            return Err(Error::Aborted);
        }
        let slots = host.borrow().slots.clone();
        let permit = match slots.try_acquire() {
            Some(permit) => permit,
            None => {
                let queued_at = fx.clock.now_ms();
                let left = deadline.remaining(queued_at);
                let name = host.borrow().name.clone();
                on_event(Event::Queue { host: name, hold: None, wait_ms: left });
                // Newest first, until the call has waited what would leave half its deadline:
                // then ahead of every newer waiter, so that LIFO never starves an old tile while
                // newer ones are served.
                let patience = match slots.order() {
                    QueueOrder::Lifo => (left - options.deadline_ms * LIFO_URGENT_SHARE).max(0.0),
                    QueueOrder::Fifo => f64::INFINITY,
                };
                let mut urgent = patience <= 0.0;
                let permit = loop {
                    // A slot is freed by an attempt that ends, and every attempt ends within its
                    // timeout: the wait is bounded without a deadline of its own.
                    let (acquire, wait) = if urgent {
                        (slots.acquire_next(), MAX_SLOT_NAP_MS)
                    } else {
                        (slots.acquire(), patience.min(MAX_SLOT_NAP_MS))
                    };
                    match race(acquire, race(fx.sleeper.sleep(wait), fx.cancel.fired())).await {
                        Either::Left(permit) => break permit,
                        Either::Right(Either::Left(Woke::Elapsed)) => {
                            urgent = urgent || fx.clock.now_ms() - queued_at >= patience;
                        }
                        Either::Right(_) => return Err(Error::Aborted),
                    }
                };
                // Queued behind the client's own requests to the host: time the server was not
                // asked, so not time it failed to answer in.
                deadline.extend(fx.clock.now_ms() - queued_at);
                permit
            }
        };
        let now = fx.clock.now_ms();
        let behind = host.borrow().behind_pause_waiters(now).filter(|_| behind_waiters);
        behind_waiters = false;
        if let Some(until) = behind.filter(|until| deadline.fits_sleep(now, until - now)) {
            drop(permit);
            let name = host.borrow().name.clone();
            on_event(Event::Queue { host: name, hold: Some(Hold::Pause), wait_ms: until - now });
            if fx.sleeper.sleep(until - now).await == Woke::Aborted {
                return Err(Error::Aborted);
            }
            continue;
        }
        let decision = host.borrow_mut().decide(now);
        match decision {
            Decision::Go { probe } => {
                if probe {
                    let name = host.borrow().name.clone();
                    on_event(Event::Breaker { host: name, state: BreakerState::HalfOpen });
                }
                return Ok((permit, probe));
            }
            Decision::WaitUntil(at, hold) => {
                drop(permit);
                let mut wait = at - now;
                if hold == Hold::Pause {
                    wait += fx.random.unit() * PAUSE_JITTER_MS.min(wait * 0.2);
                }
                let doubtful = {
                    let h = host.borrow();
                    h.pause_is_doubtful() && h.slots.in_flight() > 0
                };
                if hold == Hold::Pause && doubtful {
                    // An implausible Retry-After paused the host, and answers are still in flight
                    // that may lift the pause: wait for them within the deadline, not for the
                    // header. (With nothing in flight, nothing can: the call ends at once.)
                    // Looked at again every DOUBT_RECHECK_MS: a slot in flight may be released
                    // without a report (a queued call that gave up, a dropped hedge), and with
                    // nothing left in flight the call should end rather than wait.
                    let left = deadline.remaining(now);
                    let name = host.borrow().name.clone();
                    on_event(Event::Queue { host: name, hold: Some(hold), wait_ms: wait.min(left) });
                    let nap = wait.min(left).min(DOUBT_RECHECK_MS);
                    match race(next_change(host), fx.sleeper.sleep(nap)).await {
                        Either::Left(()) => continue,
                        Either::Right(Woke::Aborted) => return Err(Error::Aborted),
                        Either::Right(Woke::Elapsed) if nap < left || wait <= left => continue,
                        Either::Right(Woke::Elapsed) => {
                            return Err(Error::RateLimited {
                                status: None,
                                retry_after_ms: at - fx.clock.now_ms(),
                            })
                        }
                    }
                }
                if !deadline.fits_sleep(now, wait) {
                    return Err(match hold {
                        Hold::Pause | Hold::Quota => {
                            Error::RateLimited { status: None, retry_after_ms: at - now }
                        }
                        Hold::Breaker => Error::CircuitOpen { retry_after_ms: Some(at - now) },
                        Hold::Rate => out_of_time(),
                    });
                }
                if hold == Hold::Pause {
                    host.borrow_mut().note_pause_wake(now + wait);
                }
                let name = host.borrow().name.clone();
                on_event(Event::Queue { host: name, hold: Some(hold), wait_ms: wait });
                if fx.sleeper.sleep(wait).await == Woke::Aborted {
                    return Err(Error::Aborted);
                }
            }
            Decision::WaitForProbe => {
                drop(permit);
                let left = deadline.remaining(now);
                match race(next_change(host), fx.sleeper.sleep(left)).await {
                    Either::Left(()) => {}
                    Either::Right(Woke::Elapsed) => return Err(Error::CircuitOpen { retry_after_ms: None }),
                    Either::Right(Woke::Aborted) => return Err(Error::Aborted),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::state::HostState;
    use crate::host::HostConfig;

    fn route(n: usize) -> Vec<SharedHost> {
        (0..n).map(|i| HostState::new(&format!("m{i}.example"), &HostConfig::DEFAULT, 0.0).shared()).collect()
    }

    fn pause(host: &SharedHost, ms: f64) {
        let report = Report::Throttled { wait_ms: Some(ms), too_many: false, sent_ms: 0.0 };
        host.borrow_mut().report(0.0, false, report, 0.5);
    }

    fn open(host: &SharedHost) {
        for _ in 0..HostConfig::DEFAULT.breaker.failure_threshold {
            host.borrow_mut().report(0.0, false, Report::Transient, 0.5);
        }
    }

    #[test]
    fn attempts_rotate_over_the_mirrors_and_skip_those_not_ready() {
        let hosts = route(3);
        assert_eq!((0..4).map(|n| pick_mirror(&hosts, n, 1.0)).collect::<Vec<_>>(), [0, 1, 2, 0]);
        pause(&hosts[1], 10_000.0);
        assert!(!is_ready(&hosts[1], 1.0));
        assert_eq!(pick_mirror(&hosts, 1, 1.0), 2, "past the paused one");
        open(&hosts[2]);
        assert!(!is_ready(&hosts[2], 1.0));
        assert_eq!(pick_mirror(&hosts, 1, 1.0), 0, "past the paused and the open one");
        open(&hosts[0]);
        assert_eq!(pick_mirror(&hosts, 0, 1.0), 1, "none ready: a paused one before an open one");
        assert_eq!(pick_mirror(&route(1), 7, 1.0), 0);
    }
}
