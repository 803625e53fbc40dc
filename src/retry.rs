//! The retry loop: per attempt it picks a mirror, waits until that host admits an attempt (rate
//! pause, breaker, learned rate, a concurrency slot), sends it, classifies the response, tells the
//! host what it learned, and sleeps a backoff delay, all within the deadline and the caller's
//! signal. It runs over the [`platform`] traits, so it is tested natively on a virtual clock.
//!
//! [`platform`]: crate::platform

use std::pin::pin;
use std::rc::Rc;

use crate::backoff::clamp_delay;
use crate::classify::{classify, is_stale, Verdict};
use crate::deadline::Deadline;
use crate::host::breaker::BreakerState;
use crate::host::slots::{Permit, QueueOrder};
use crate::host::state::{next_change, Change, Decision, Hold, Report, SharedHost};
use crate::options::{Hedge, Options};
use crate::platform::{Attempt, Cancel, Clock, Random, Sleep, Transport, Woke};
use crate::race::{race, Either};
use crate::Error;

/// The most a call adds to a host's pause so that paused calls do not all wake together.
const PAUSE_JITTER_MS: f64 = 250.0;

/// How often a call waiting on a doubtful pause looks again whether anything is still in flight.
const DOUBT_RECHECK_MS: f64 = 250.0;
/// In a LIFO queue, a call with this share of its deadline left (or less) waits ahead of newer
/// ones: enough left for an attempt and a retry, which newest-first would never give it.
pub const LIFO_URGENT_SHARE: f64 = 0.5;

/// Hedges one call may send: one covers a hung attempt, more would multiply a slow host's load.
pub const MAX_HEDGES_PER_CALL: u32 = 1;
/// Successful attempts a host must have answered before `hedge: "auto"` trusts their p95.
pub const HEDGE_MIN_SAMPLES: u64 = 20;
/// Until then, `hedge: "auto"` hedges an attempt unanswered this long: a map opens with a view's
/// worth of tiles at once, before any host has a p95, and a hung one among them would otherwise
/// cost the whole attempt timeout. A tile server that answers at all answers tiles within a second.
pub const HEDGE_COLD_MS: f64 = 1000.0;
/// The earliest `hedge: "auto"` sends a hedge, however fast the host has been: below this a
/// hedge races the network's own jitter, not a stalled request.
pub const HEDGE_FLOOR_MS: f64 = 50.0;

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
    fn of(error: Error) -> Failure<C> {
        Failure { error, cause: None }
    }

    fn after(error: Error, last: Option<Failure<C>>) -> Failure<C> {
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
        if fx.sleeper.sleep(stagger).await == Woke::Aborted {
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
        let budget = deadline.attempt_budget(fx.clock.now_ms(), options.attempt_timeout_ms);
        if budget <= 0.0 {
            host.borrow_mut().report(fx.clock.now_ms(), probe, Report::Abandoned, 0.0);
            return Err(give_up(Failure::after(out_of_time(), last), attempts));
        }
        attempts += 1;
        let name = {
            let mut h = host.borrow_mut();
            h.counters.attempts += 1;
            if attempts > 1 {
                h.counters.retries += 1;
            }
            h.name.clone()
        };
        on_event(Event::Attempt { host: name.clone(), attempt: attempts, probe });

        let sent = Sent { mirror, permit: Some(permit), probe, name, budget, at_ms: fx.clock.now_ms() };
        // A probe decides the breaker by itself, and a cache-busting refetch has a tile already.
        let may_hedge = hedges < MAX_HEDGES_PER_CALL && !probe && !bust_now;
        let (landed, judged) = send(
            sent,
            may_hedge,
            bust_now,
            route,
            options,
            &deadline,
            fx,
            on_event,
            &mut attempts,
            &mut hedges,
        )
        .await;
        bust_now = false;
        let Sent { mirror: landed_mirror, permit, probe, name, budget, .. } = landed;
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
        if matches!(failure.error, Error::Timeout { .. }) && budget < options.attempt_timeout_ms {
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
        if fx.sleeper.sleep(delay).await == Woke::Aborted {
            return Err(give_up(Failure::of(Error::Aborted), attempts));
        }
        last = Some(failure);
    }
}

/// An attempt on its way: where it went, what it holds, and when it left.
struct Sent {
    mirror: usize,
    /// The host slot it holds; `None` once a hedge to the same host has taken it over.
    permit: Option<Permit>,
    probe: bool,
    name: Rc<str>,
    budget: f64,
    at_ms: f64,
}

/// What an attempt's outcome means, before its host learns from it.
enum Judged<B, C> {
    /// A tile (`stale`: a cache has held it longer than `maxAgeS`).
    Tile { body: B, empty: bool, stale: bool },
    /// No tile: what the host learns, and the failure (retryable with the server's wait, or final).
    NotTile { report: Report, verdict: Result<(Failure<C>, Option<f64>), Failure<C>> },
}

fn judge<B, C>(outcome: Attempt<B, C>, options: &Options, sent: &Sent, epoch_ms: f64) -> Judged<B, C> {
    let budget = sent.budget;
    let (report, verdict) = match outcome {
        Attempt::Aborted => (Report::Abandoned, Err(Failure::of(Error::Aborted))),
        Attempt::TimedOut => {
            // Cut short by this call's deadline, the attempt says nothing about the host.
            let report =
                if budget < options.attempt_timeout_ms { Report::Abandoned } else { Report::Transient };
            (report, Ok((Failure::of(Error::Timeout { after_ms: budget }), None)))
        }
        // The same answer on every attempt: final, and the host is alive.
        Attempt::CorsRefused => (Report::CorsRefused, Err(Failure::of(Error::Cors))),
        // The host is serving; the URL is wrong. Final, and nothing held against the host.
        Attempt::TooLarge { bytes, declared } => (
            Report::Alive,
            Err(Failure::of(Error::TooLarge { bytes, max_bytes: options.max_bytes, declared })),
        ),
        Attempt::Failed { message, cause } => (
            Report::Transient,
            Ok((Failure { error: Error::Network { message }, cause: Some(Cause::Platform(cause)) }, None)),
        ),
        Attempt::Response(facts, body) => match classify(&facts, options, epoch_ms) {
            Verdict::Deliver { empty } => {
                return Judged::Tile { body, empty, stale: is_stale(&facts, options) }
            }
            Verdict::Reject(error) => (Report::Alive, Err(Failure::of(error))),
            Verdict::Retry { error, retry_after_ms } => {
                let throttled = facts.status == 429 || (facts.status == 503 && retry_after_ms.is_some());
                let report = if throttled {
                    Report::Throttled {
                        wait_ms: retry_after_ms.map(|w| w.min(options.retry_after_max_ms)),
                        too_many: facts.status == 429,
                        sent_ms: sent.at_ms,
                    }
                } else {
                    Report::Transient
                };
                (report, Ok((Failure::of(error), retry_after_ms)))
            }
        },
    };
    Judged::NotTile { report, verdict }
}

impl<B, C> Judged<B, C> {
    /// A tile, or the caller's abort: either ends the race of an attempt and its hedge.
    fn ends_race(&self) -> bool {
        match self {
            Judged::Tile { .. } => true,
            Judged::NotTile { verdict, .. } => matches!(verdict, Err(f) if f.error == Error::Aborted),
        }
    }
}

/// When a host's attempt, unanswered, gets a hedge (`options.hedge`); `None`: never.
pub fn hedge_delay(options: &Options, host: &SharedHost) -> Option<f64> {
    match options.hedge {
        Hedge::Off => None,
        Hedge::AfterMs(ms) => Some(ms),
        Hedge::Auto => {
            let host = host.borrow();
            let answered = &host.counters.attempt_latency;
            if answered.count() < HEDGE_MIN_SAMPLES {
                return Some(HEDGE_COLD_MS);
            }
            answered.percentile(0.95).map(|p95| p95.max(HEDGE_FLOOR_MS))
        }
    }
}

/// Sends `first`, and, when it may and `first` has not answered by the host's hedge delay, one
/// hedge beside it (to the next mirror, or the same host when there is one). The first tile wins
/// and the other attempt is aborted (its future dropped); a failure that lands first is learned
/// from at once and the other awaited. Returns the attempt whose outcome the loop goes on with.
#[allow(clippy::too_many_arguments)]
async fn send<T, K, S, R, C>(
    first: Sent,
    may_hedge: bool,
    bust: bool,
    route: &[SharedHost],
    options: &Options,
    deadline: &Deadline,
    fx: &Runtime<'_, T, K, S, R, C>,
    on_event: &mut impl FnMut(Event),
    attempts: &mut u32,
    hedges: &mut u32,
) -> (Sent, Judged<T::Body, T::Cause>)
where
    T: Transport,
    K: Clock,
    S: Sleep,
    R: Random,
    C: Cancel,
{
    let mut request = pin!(fx.transport.attempt(first.mirror, first.budget, bust, false));
    let after = if may_hedge { hedge_delay(options, &route[first.mirror]) } else { None };
    let Some(after) = after.filter(|after| *after < first.budget) else {
        let outcome = request.await;
        return landed(first, outcome, route, options, fx.clock);
    };
    // Whether the delay is the host's learned p95 (not the cold default or the caller's number):
    // only then is a lost attempt learned as taking it (see below).
    let learned = matches!(options.hedge, Hedge::Auto)
        && route[first.mirror].borrow().counters.attempt_latency.count() >= HEDGE_MIN_SAMPLES;
    match race(request.as_mut(), fx.sleeper.sleep(after)).await {
        Either::Left(outcome) => return landed(first, outcome, route, options, fx.clock),
        Either::Right(Woke::Aborted) => {
            let aborted =
                Judged::NotTile { report: Report::Abandoned, verdict: Err(Failure::of(Error::Aborted)) };
            return (first, aborted);
        }
        Either::Right(Woke::Elapsed) => {}
    }
    // The hedge's slot. To the same host it takes over the slot of the attempt it hedges: it
    // stands in for that request, and under hangs every slot is held by a hung one, so a hedge
    // that waited for a slot would wait for the hangs to time out. To another mirror it takes
    // that host's next freed slot, ahead of its queue, while the hedged attempt is still out.
    let mut first = first;
    let hedge_mirror = (first.mirror + 1) % route.len();
    if !may_hedge_to(&route[hedge_mirror], options, deadline, fx.clock.now_ms()) {
        let outcome = request.await;
        return landed(first, outcome, route, options, fx.clock);
    }
    let permit = if hedge_mirror == first.mirror {
        first.permit.take()
    } else {
        let slots = route[hedge_mirror].borrow().slots.clone();
        match race(request.as_mut(), slots.acquire_next()).await {
            Either::Left(outcome) => return landed(first, outcome, route, options, fx.clock),
            Either::Right(permit) => Some(permit),
        }
    };
    let hedge = match admit_hedge(route, hedge_mirror, permit, options, deadline, fx.clock.now_ms()) {
        Ok(hedge) => hedge,
        Err(permit) => {
            if hedge_mirror == first.mirror {
                // A taken-over slot goes back to the attempt still holding the request.
                first.permit = permit;
            }
            let outcome = request.await;
            return landed(first, outcome, route, options, fx.clock);
        }
    };
    *attempts += 1;
    *hedges += 1;
    on_event(Event::Hedge { host: hedge.name.clone(), attempt: *attempts, after_ms: after });
    let hedge_mirror = hedge.mirror;
    let mut second = pin!(fx.transport.attempt(hedge.mirror, hedge.budget, false, true));
    let won = |judged: &Judged<T::Body, T::Cause>| {
        if matches!(judged, Judged::Tile { .. }) {
            route[hedge_mirror].borrow_mut().counters.hedges_won += 1;
        }
    };
    // The first to land with a tile (or the caller's abort) ends the race: the other attempt is
    // aborted as its future drops here. One that lands with no tile is learned from at once and
    // the other awaited.
    match race(request.as_mut(), second.as_mut()).await {
        Either::Left(outcome) => {
            let (first, judged) = landed(first, outcome, route, options, fx.clock);
            if judged.ends_race() {
                return (first, judged);
            }
            learn_from_loser(first, &judged, route, fx, on_event);
            let outcome = second.await;
            let (hedge, judged) = landed(hedge, outcome, route, options, fx.clock);
            won(&judged);
            (hedge, judged)
        }
        Either::Right(outcome) => {
            let (hedge, judged) = landed(hedge, outcome, route, options, fx.clock);
            if judged.ends_race() {
                // A hedged attempt that lost is learned as taking the hedge delay: recording only
                // winners would pull the host's p95 (and with it the delay) down to the fastest
                // answers, and recording how long it had been out (a hang) would push it up. Not
                // the cold delay: with a few hangs among a host's first answers, those samples
                // would make the cold second the host's p95, and every later hang cost a second.
                if learned && matches!(judged, Judged::Tile { .. }) {
                    route[first.mirror].borrow_mut().counters.attempt_latency.record(after);
                }
                won(&judged);
                return (hedge, judged);
            }
            learn_from_loser(hedge, &judged, route, fx, on_event);
            let outcome = request.await;
            landed(first, outcome, route, options, fx.clock)
        }
    }
}

/// An attempt of a hedge race that landed first with no tile: its host learns that now, and its
/// slot is freed while the other attempt is still out.
fn learn_from_loser<B, C, T, K, S, R: Random, X: Cancel>(
    sent: Sent,
    judged: &Judged<B, C>,
    route: &[SharedHost],
    fx: &Runtime<'_, T, K, S, R, X>,
    on_event: &mut impl FnMut(Event),
) where
    K: Clock,
{
    if let Judged::NotTile { report, .. } = judged {
        report_to_host(&route[sent.mirror], fx.clock.now_ms(), sent.probe, *report, fx, on_event, &sent.name);
    }
}

/// Judges an attempt that landed; a tile's time teaches its host what a healthy answer takes.
fn landed<B, C>(
    sent: Sent,
    outcome: Attempt<B, C>,
    route: &[SharedHost],
    options: &Options,
    clock: &impl Clock,
) -> (Sent, Judged<B, C>) {
    let now = clock.now_ms();
    let mut judged = judge(outcome, options, &sent, clock.epoch_ms());
    let host = &route[sent.mirror];
    match &mut judged {
        Judged::Tile { .. } => host.borrow_mut().counters.attempt_latency.record(now - sent.at_ms),
        Judged::NotTile { report, verdict: Ok((_, retry_after_ms @ Some(_))) } => {
            weigh_retry_after(report, retry_after_ms, host, options, now);
        }
        Judged::NotTile { .. } => {}
    }
    (sent, judged)
}

/// Evidence over a header. A Retry-After that this call's deadline could never wait for (an hour,
/// a day) from a host that is answering other requests right now is not believed: the response
/// is retried like one without the header, and the host is not paused (one bad header would
/// otherwise fail every tile of a healthy host). From a host that answers nothing else it is
/// believed (a real quota): the call rejects `rate-limited` and the host pauses, until an answer
/// in flight contradicts it.
fn weigh_retry_after(
    report: &mut Report,
    retry_after_ms: &mut Option<f64>,
    host: &SharedHost,
    options: &Options,
    now: f64,
) {
    let Some(wait) = *retry_after_ms else { return };
    // Implausible for any call of these options, whenever it lands: not just for what is left of
    // this one (late in a call even a 1 s header would not fit, and is still honest).
    if wait.min(options.retry_after_max_ms) < options.deadline_ms {
        return;
    }
    if host.borrow().is_answering(now) {
        *retry_after_ms = None;
        *report = match *report {
            Report::Throttled { too_many: true, sent_ms, .. } => {
                Report::Throttled { wait_ms: None, too_many: true, sent_ms }
            }
            _ => Report::Transient,
        };
    } else {
        host.borrow_mut().doubt_pause();
    }
}

/// Whether a hedge may go to `host` now: time left, no pause, no learned rate, a closed breaker.
fn may_hedge_to(host: &SharedHost, options: &Options, deadline: &Deadline, now: f64) -> bool {
    deadline.attempt_budget(now, options.attempt_timeout_ms) > 0.0 && host.borrow_mut().admit_hedge(now)
}

/// The hedge to `route[mirror]` in the slot `permit`, if it may still go (the host may have
/// changed while it waited for the slot) and the call's retry budget has a token for it: hedges
/// spend the budget like retries. Without one the slot comes back (`Err`).
fn admit_hedge(
    route: &[SharedHost],
    mirror: usize,
    permit: Option<Permit>,
    options: &Options,
    deadline: &Deadline,
    now: f64,
) -> Result<Sent, Option<Permit>> {
    let host = &route[mirror];
    if !may_hedge_to(host, options, deadline, now) || !route[0].borrow_mut().budget.try_retry(now) {
        return Err(permit);
    }
    let budget = deadline.attempt_budget(now, options.attempt_timeout_ms);
    let mut h = host.borrow_mut();
    h.counters.attempts += 1;
    h.counters.hedges += 1;
    Ok(Sent { mirror, permit, probe: false, name: h.name.clone(), budget, at_ms: now })
}

/// Reports an attempt's outcome to its host and announces what changed.
fn report_to_host<T, K, S, R, C: Cancel>(
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
        None => {}
    }
}

/// Attempt n goes to mirror n mod len, skipping mirrors whose host is paused or whose breaker is
/// open (when none is ready, a paused one before an open one).
fn pick_mirror(route: &[SharedHost], attempt_index: usize, now_ms: f64) -> usize {
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
fn is_ready(host: &SharedHost, now_ms: f64) -> bool {
    let host = host.borrow();
    host.paused_until(now_ms).is_none() && host.breaker.state(now_ms) != BreakerState::Open
}

/// Waits until `host` lets an attempt go: a concurrency slot, then no pause, no open breaker and
/// a rate token. Returns the slot and whether the attempt is a half-open probe.
async fn wait_for_admission<T, K, S, R, C>(
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
    loop {
        if fx.cancel.is_aborted() {
            return Err(Error::Aborted);
        }
        let slots = host.borrow().slots.clone();
        let permit = match slots.try_acquire() {
            Some(permit) => permit,
            None => {
                let now = fx.clock.now_ms();
                let left = deadline.remaining(now);
                let name = host.borrow().name.clone();
                on_event(Event::Queue { host: name, hold: None, wait_ms: left });
                // Newest first, until the call has half its deadline left: then ahead of every
                // newer waiter, so that LIFO never lets an old tile miss its deadline while newer
                // ones are served.
                let patience = match slots.order() {
                    QueueOrder::Lifo => (left - options.deadline_ms * LIFO_URGENT_SHARE).max(0.0),
                    QueueOrder::Fifo => left,
                };
                let mut urgent = patience <= 0.0;
                loop {
                    let (acquire, wait) = if urgent {
                        (slots.acquire_next(), deadline.remaining(fx.clock.now_ms()))
                    } else {
                        (slots.acquire(), patience)
                    };
                    match race(acquire, race(fx.sleeper.sleep(wait), fx.cancel.fired())).await {
                        Either::Left(permit) => break permit,
                        Either::Right(Either::Left(Woke::Elapsed)) if !urgent => urgent = true,
                        Either::Right(Either::Left(Woke::Elapsed)) => return Err(out_of_time()),
                        Either::Right(_) => return Err(Error::Aborted),
                    }
                }
            }
        };
        let now = fx.clock.now_ms();
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
                        Hold::Pause => Error::RateLimited { status: None, retry_after_ms: at - now },
                        Hold::Breaker => Error::CircuitOpen { retry_after_ms: Some(at - now) },
                        Hold::Rate => out_of_time(),
                    });
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
