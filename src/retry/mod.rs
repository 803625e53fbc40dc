//! The retry loop: per attempt it picks a mirror, waits until that host admits an attempt (rate
//! pause, breaker, learned rate, a concurrency slot), sends it, classifies the response, tells the
//! host what it learned, and sleeps a backoff delay, all within the deadline and the caller's
//! signal. It runs over the [`platform`] traits, so it is tested natively on a virtual clock.
//! Its parts: `admission` (may an attempt go, and where), `hedge` (a second attempt beside a
//! slow one), `judge` (what an outcome means) and `outcome` (what the caller is told).
//!
//! [`platform`]: crate::retry::platform

mod admission;
mod hedge;
mod judge;
mod outcome;
pub mod platform;
pub(crate) mod race;
pub mod serving;

pub use self::admission::LIFO_URGENT_SHARE;
use self::admission::{is_ready, pick_mirror, report_to_host, wait_for_admission};
use self::hedge::send;
pub use self::hedge::{
    hedge_delay, overtaken_delay, HEDGE_BLIND_SHARE, HEDGE_COLD_FACTOR, HEDGE_COLD_FLOOR_MS,
    HEDGE_COLD_SAMPLES, HEDGE_FLOOR_MS, HEDGE_MIN_SAMPLES, MAX_HEDGES_PER_CALL,
};
use self::judge::{Judged, Sent};
pub use self::outcome::{Cause, Delivered, Event, Failure, GaveUp, RetryInfo};
use crate::host::state::{Report, SharedHost};
use crate::options::Options;
use crate::retry::platform::{Cancel, Clock, Random, Sleep, Transport, Woke};
use crate::timing::backoff::clamp_delay;
use crate::timing::deadline::Deadline;
use crate::Error;

/// The platform a call runs on.
pub struct Runtime<'a, T, K, S, R, C> {
    /// Sends the attempts.
    pub transport: &'a T,
    /// Reads the time.
    pub clock: &'a K,
    /// Sleeps between attempts and while the call waits.
    pub sleeper: &'a S,
    /// The randomness of every jitter.
    pub random: &'a R,
    /// The caller's signal.
    pub cancel: &'a C,
}

/// What every step of one call's loop reads: its mirrors, its options, its deadline, its platform.
pub(super) struct Call<'c, 'a, T, K, S, R, C> {
    route: &'c [SharedHost],
    options: &'c Options,
    deadline: &'c Deadline,
    fx: &'c Runtime<'a, T, K, S, R, C>,
}

// Not derived: a derive would ask the platform types to be Clone too.
impl<T, K, S, R, C> Clone for Call<'_, '_, T, K, S, R, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, K, S, R, C> Copy for Call<'_, '_, T, K, S, R, C> {}

/// Fetches one tile from `route` (one shared host per mirror URL, the first is the primary):
/// attempts until it is delivered, a failure is permanent, the caller aborts, the retry budget
/// refuses, or the deadline would be crossed. Updates the hosts' counters. The deadline counts
/// from `called_ms`, when the caller asked (the loop itself may start a little later).
pub async fn fetch_with_retries<T, K, S, R, C>(
    options: &Options,
    route: &[SharedHost],
    effects: &Runtime<'_, T, K, S, R, C>,
    called_ms: f64,
    mut on_event: impl FnMut(Event),
) -> Result<Delivered<T::Body>, GaveUp<T::Cause>>
where
    T: Transport,
    K: Clock,
    S: Sleep,
    R: Random,
    C: Cancel,
{
    if route.is_empty() {
        let failure = Failure::of(Error::invalid_options("url", "no URL to fetch"));
        return Err(GaveUp { failure, attempts: 0, elapsed_ms: 0.0 });
    }
    let start = effects.clock.now_ms();
    {
        let mut primary = route[0].borrow_mut();
        primary.counters.requests += 1;
        primary.budget.on_call(start);
    }
    let mut stale = None;
    let result = match (attempts(options, route, effects, called_ms, &mut stale, &mut on_event).await, stale)
    {
        // The fresh copy of a stale tile could not be had: the stale one is still a tile.
        (Err(gave_up), Some(tile)) if gave_up.failure.error != Error::Aborted => Ok(tile),
        (result, _) => result,
    };
    let mut primary = route[0].borrow_mut();
    match &result {
        Ok(tile) => {
            primary.counters.successes += 1;
            primary.counters.latency.record(tile.elapsed_ms);
        }
        Err(gave_up) if gave_up.failure.error == Error::Aborted => primary.counters.aborted += 1,
        Err(gave_up) => {
            let kind = gave_up.failure.error.kind();
            primary.counters.give_up(kind);
            let host = primary.name.clone();
            drop(primary);
            on_event(Event::GiveUp { host, kind, attempts: gave_up.attempts });
        }
    }
    result
}

async fn attempts<T, K, S, R, C>(
    options: &Options,
    route: &[SharedHost],
    fx: &Runtime<'_, T, K, S, R, C>,
    called_ms: f64,
    stale: &mut Option<Delivered<T::Body>>,
    on_event: &mut impl FnMut(Event),
) -> Result<Delivered<T::Body>, GaveUp<T::Cause>>
where
    T: Transport,
    K: Clock,
    S: Sleep,
    R: Random,
    C: Cancel,
{
    let deadline = Deadline::starting(called_ms, options.deadline_ms);
    let backoff = options.backoff();
    let give_up =
        |failure, attempts| GaveUp { failure, attempts, elapsed_ms: deadline.elapsed(fx.clock.now_ms()) };
    let out_of_time = || Error::Deadline { deadline_ms: options.deadline_ms };

    if fx.cancel.is_aborted() {
        return Err(give_up(Failure::of(Error::Aborted), 0));
    }
    if options.start_jitter_ms > 0.0 {
        let stagger = clamp_delay(fx.random.unit() * options.start_jitter_ms);
        if !deadline.fits_sleep(fx.clock.now_ms(), stagger) {
            return Err(give_up(Failure::of(out_of_time()), 0));
        }
        if fx.sleeper.backoff(stagger).await == Woke::Aborted {
            return Err(give_up(Failure::of(Error::Aborted), 0));
        }
    }

    let mut attempts = 0u32;
    let mut previous_delay = options.base_delay_ms;
    let mut last: Option<Failure<T::Cause>> = None;
    // `maxAgeS`: a stale tile is fetched once more (once per call), at once, past every cache.
    let mut busted = false;
    let mut bust_now = false;
    let mut mirror = 0;
    let mut hedges = 0u32;
    loop {
        if !bust_now {
            mirror = pick_mirror(route, attempts as usize, fx.clock.now_ms());
        }
        let host = &route[mirror];
        let (permit, probe) = match wait_for_admission(host, &deadline, options, fx, on_event).await {
            Ok(entered) => entered,
            Err(Error::Aborted) => return Err(give_up(Failure::of(Error::Aborted), attempts)),
            Err(error) => return Err(give_up(Failure::after(error, last), attempts)),
        };
        let timeout = serving::attempt_timeout(options, host);
        let budget = deadline.attempt_budget(fx.clock.now_ms(), timeout);
        if budget <= 0.0 {
            host.borrow_mut().report(fx.clock.now_ms(), probe, Report::Abandoned, 0.0);
            return Err(give_up(Failure::after(out_of_time(), last), attempts));
        }
        attempts += 1;
        let (name, seq, limit_at_send) = {
            let mut h = host.borrow_mut();
            h.counters.attempts += 1;
            if attempts > 1 {
                h.counters.retries += 1;
            }
            (h.name.clone(), h.counters.attempts, h.slots.limit())
        };
        on_event(Event::Attempt { host: name.clone(), attempt: attempts, probe });

        let at_ms = fx.clock.now_ms();
        let permit = Some(permit);
        let sent = Sent {
            mirror,
            permit,
            probe,
            name,
            budget,
            timeout,
            at_ms,
            started_ms: at_ms,
            held_back: None,
            overtook: None,
            limit_at_send,
            seq,
        };
        let call = Call { route, options, deadline: &deadline, fx };
        let (landed, judged) = send(sent, bust_now, call, on_event, &mut attempts, &mut hedges).await;
        bust_now = false;
        let Sent { mirror: landed_mirror, permit, probe, name, budget, timeout, .. } = landed;
        mirror = landed_mirror;
        let host = &route[mirror];
        let now = fx.clock.now_ms();
        let (report, verdict) = match judged {
            Judged::Tile { body, empty, stale: is_stale_tile } => {
                report_to_host(host, now, probe, Report::Alive, fx, on_event, &name);
                drop(permit);
                let tile = Delivered { body, empty, attempts, elapsed_ms: deadline.elapsed(now) };
                if !busted && is_stale_tile && deadline.fits_sleep(now, 0.0) {
                    // Once more from the same mirror, past every cache; kept in case that fails.
                    busted = true;
                    bust_now = true;
                    *stale = Some(tile);
                    continue;
                }
                *stale = None;
                return Ok(tile);
            }
            Judged::NotTile { report, verdict } => (report, verdict),
        };
        report_to_host(host, now, probe, report, fx, on_event, &name);
        drop(permit);
        let (failure, retry_after_ms) = match verdict {
            Ok(retryable) => retryable,
            Err(final_failure) => return Err(give_up(final_failure, attempts)),
        };
        if matches!(failure.error, Error::Timeout { .. }) && budget < timeout {
            // The deadline, not the attempt timeout, cut this attempt short: it says nothing of
            // the server, so the cause is the failure before it when there was one (a last
            // attempt sent with little time left would otherwise hide what went wrong).
            return Err(give_up(Failure::after(out_of_time(), last.or(Some(failure))), attempts));
        }
        if fx.cancel.is_aborted() {
            return Err(give_up(Failure::of(Error::Aborted), attempts));
        }

        let jittered = backoff.delay(attempts, previous_delay, fx.random.unit());
        previous_delay = jittered;
        // A Retry-After is about the host that sent it: while another mirror's host can take the
        // next attempt now, that attempt goes there after the backoff alone (pick_mirror skips
        // the paused host), and the header cannot end the call as rate-limited.
        let elsewhere = || (0..route.len()).any(|i| i != mirror && is_ready(&route[i], fx.clock.now_ms()));
        let floor = retry_after_ms.filter(|_| !elsewhere()).map(|wait| wait.min(options.retry_after_max_ms));
        let delay = clamp_delay(floor.map_or(jittered, |floor| jittered.max(floor)));
        let now = fx.clock.now_ms();
        if !deadline.fits_sleep(now, delay) {
            let error = match (floor, retry_after_ms) {
                (Some(floor), Some(wait)) if !deadline.fits_sleep(now, floor) => {
                    Error::RateLimited { status: failure.error.status(), retry_after_ms: wait }
                }
                _ => out_of_time(),
            };
            return Err(give_up(Failure::after(error, Some(failure)), attempts));
        }
        // The budget the call deposited into (its primary host's) may be spent: the retry then
        // waits for its reserve to refill, within the deadline, and the time waited counts
        // toward the backoff. When no token can come in time the call ends as `deadline`, with
        // its last failure as cause: never with that failure's kind, which may read as permanent.
        let mut waited = 0.0;
        while !route[0].borrow_mut().budget.try_retry(fx.clock.now_ms()) {
            let now = fx.clock.now_ms();
            let next = route[0].borrow_mut().budget.next_token_in(now);
            // At least 1 ms: a refill computed to the float's last bit could otherwise ask for a
            // wait that moves no clock.
            let Some(wait) = next
                .map(|ms| clamp_delay(ms.max(1.0)))
                .filter(|wait| deadline.fits_sleep(now, wait.max(delay - waited)))
            else {
                return Err(give_up(Failure::after(out_of_time(), Some(failure)), attempts));
            };
            if fx.sleeper.sleep(wait).await == Woke::Aborted {
                return Err(give_up(Failure::of(Error::Aborted), attempts));
            }
            waited += wait;
        }
        let delay = (delay - waited).max(0.0);
        on_event(Event::Retry {
            host: name,
            info: RetryInfo {
                attempt: attempts,
                delay_ms: delay,
                reason: failure.error.kind(),
                status: failure.error.status(),
                retry_after_ms,
            },
        });
        if fx.sleeper.backoff(delay).await == Woke::Aborted {
            return Err(give_up(Failure::of(Error::Aborted), attempts));
        }
        last = Some(failure);
    }
}
