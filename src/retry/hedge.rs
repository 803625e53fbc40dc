//! Hedged attempts: when an attempt has not answered by its host's hedge delay, one more goes
//! beside it (to the next mirror, or the same host), the first tile wins and the other is aborted.

use std::pin::pin;

use super::admission::report_to_host;
use super::judge::{landed, Judged, Sent};
use super::outcome::{Event, Failure};
use super::{Call, Runtime};
use crate::host::slots::Permit;
use crate::host::state::{Report, SharedHost};
use crate::options::{Hedge, Options};
use crate::retry::platform::{Cancel, Clock, Random, Sleep, Transport, Woke};
use crate::retry::race::{race, Either};
use crate::timing::deadline::Deadline;
use crate::Error;

/// Hedges one call may send: one covers a hung attempt, more would multiply a slow host's load.
pub const MAX_HEDGES_PER_CALL: u32 = 1;
/// Successful attempts a host must have answered before `hedge: "auto"` trusts their p95.
pub const HEDGE_MIN_SAMPLES: u64 = 20;
/// Until then (cold), `hedge: "auto"` still hedges: a map opens with a view's worth of tiles at
/// once, before any host has a p95, and a hung one among them would otherwise cost the whole
/// attempt timeout, on the view every user sees. An attempt unanswered for [`HEDGE_BLIND_SHARE`]
/// of the attempt timeout gets its hedge. Once its host has given this many tiles, one gets it
/// sooner, at [`HEDGE_COLD_FACTOR`] times their median (within [`HEDGE_COLD_FLOOR_MS`] and
/// the blind delay), when this many tiles of attempts sent after it have overtaken it, or when no
/// more attempts are out to its host than a browser opens connections to one: then it is stuck,
/// not queued. A view's tiles wait for the browser's few connections to a host (answered in about
/// the order they went), and none gets a hedge sooner.
pub const HEDGE_COLD_SAMPLES: u64 = 4;
/// The connections a browser opens to one host over HTTP/1.1 (Chromium's and Firefox's limit):
/// with no more attempts than this out, none waits for a connection.
const CONNECTIONS_PER_HOST: usize = 6;
/// The share of the attempt timeout a cold attempt waits before its hedge when the host has
/// answered too few to say (a tile server that answers at all answers tiles well within it).
pub const HEDGE_BLIND_SHARE: f64 = 0.25;
/// How many times its host's median answer a cold attempt waits before its hedge. Not the
/// slowest: a page's first answers wait for its connections and its start-up.
pub const HEDGE_COLD_FACTOR: f64 = 4.0;
/// The earliest a cold attempt gets its hedge: a host's first answers may come from a cache.
pub const HEDGE_COLD_FLOOR_MS: f64 = 400.0;
/// How often an attempt waiting for its cold hedge delay derives it again from its host's answers.
const COLD_RECHECK_MS: f64 = 50.0;
/// The earliest `hedge: "auto"` sends a hedge, however fast the host has been: below this a
/// hedge races the network's own jitter, not a stalled request.
pub const HEDGE_FLOOR_MS: f64 = 50.0;

/// When a cold attempt that later ones have overtaken gets its hedge (see [`HEDGE_COLD_SAMPLES`]):
/// `None` until its host has answered enough to say.
pub fn overtaken_delay(options: &Options, host: &SharedHost) -> Option<f64> {
    let host = host.borrow();
    let answered = &host.counters.attempt_latency;
    if answered.count() < HEDGE_COLD_SAMPLES {
        return None;
    }
    let blind = options.attempt_timeout_ms * HEDGE_BLIND_SHARE;
    Some((answered.percentile(0.5)? * HEDGE_COLD_FACTOR).max(HEDGE_COLD_FLOOR_MS).min(blind))
}

/// When attempt `seq` of a cold host gets its hedge early, if it looks stuck now: overtaken by
/// later attempts' tiles, or one of few out to its host (see [`HEDGE_COLD_SAMPLES`]).
fn stuck_delay(options: &Options, host: &SharedHost, seq: u64) -> Option<f64> {
    let stuck = {
        let h = host.borrow();
        h.tiles_sent_after(seq) >= HEDGE_COLD_SAMPLES as usize || h.slots.in_flight() <= CONNECTIONS_PER_HOST
    };
    if stuck {
        overtaken_delay(options, host)
    } else {
        None
    }
}

/// When a host's attempt, unanswered, gets a hedge (`options.hedge`); `None`: never. Cold (see
/// [`HEDGE_MIN_SAMPLES`]), the latest it does: an overtaken attempt's comes sooner.
pub fn hedge_delay(options: &Options, host: &SharedHost) -> Option<f64> {
    match options.hedge {
        Hedge::Off => None,
        Hedge::AfterMs(ms) => Some(ms),
        Hedge::Auto => {
            let host = host.borrow();
            let answered = &host.counters.attempt_latency;
            let timeout = options.attempt_timeout_ms;
            if answered.count() < HEDGE_MIN_SAMPLES {
                return Some(timeout * HEDGE_BLIND_SHARE);
            }
            answered.percentile(0.95).map(|p95| p95.max(HEDGE_FLOOR_MS))
        }
    }
}

/// Sends `first`, and, when it may (one hedge per call, not for a probe or a cache-busting
/// refetch) and `first` has not answered by the host's hedge delay, one
/// hedge beside it (to the next mirror, or the same host when there is one). The first tile wins
/// and the other attempt is aborted (its future dropped); a failure that lands first is learned
/// from at once and the other awaited. Returns the attempt whose outcome the loop goes on with.
pub(super) async fn send<T, K, S, R, C>(
    first: Sent,
    bust: bool,
    call: Call<'_, '_, T, K, S, R, C>,
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
    let Call { route, options, deadline, fx } = call;
    // A probe decides the breaker by itself, and a cache-busting refetch has a tile already.
    let may_hedge = *hedges < MAX_HEDGES_PER_CALL && !first.probe && !bust;
    let mut request = pin!(fx.transport.attempt(first.mirror, first.budget, bust, false));
    let after = if may_hedge { hedge_delay(options, &route[first.mirror]) } else { None };
    let Some(after) = after.filter(|after| *after < first.budget) else {
        let outcome = request.await;
        return landed(first, outcome, route, options, fx.clock, on_event);
    };
    // Whether the delay is the host's learned p95 (not the cold delay or the caller's number):
    // only then is a lost attempt learned as taking it (see below).
    let learned = matches!(options.hedge, Hedge::Auto)
        && route[first.mirror].borrow().counters.attempt_latency.count() >= HEDGE_MIN_SAMPLES;
    // Cold, whether later attempts overtake this one is looked at every COLD_RECHECK_MS as the
    // host's answers come in (a map's first view sends its tiles before any has answered).
    let cold = matches!(options.hedge, Hedge::Auto) && !learned;
    // The delay the hedge goes after: the one it waited for (for `onEvent`, and learned when it
    // is the host's p95).
    let after = loop {
        let waited = fx.clock.now_ms() - first.at_ms;
        if waited >= after - 1e-9 {
            break after;
        }
        let stuck_at = if cold { stuck_delay(options, &route[first.mirror], first.seq) } else { None };
        if let Some(at) = stuck_at.filter(|at| waited >= at - 1e-9) {
            break at;
        }
        let nap = match (cold, stuck_at) {
            (false, _) => after - waited,
            (true, Some(at)) => (at - waited).min(COLD_RECHECK_MS),
            (true, None) => (after - waited).min(COLD_RECHECK_MS),
        };
        match race(request.as_mut(), fx.sleeper.sleep(nap.max(0.0))).await {
            Either::Left(outcome) => return landed(first, outcome, route, options, fx.clock, on_event),
            Either::Right(Woke::Aborted) => {
                let aborted =
                    Judged::NotTile { report: Report::Abandoned, verdict: Err(Failure::of(Error::Aborted)) };
                return (first, aborted);
            }
            Either::Right(Woke::Elapsed) => {}
        }
    };
    // The hedge's slot. To the same host it takes over the slot of the attempt it hedges: it
    // stands in for that request, and under hangs every slot is held by a hung one, so a hedge
    // that waited for a slot would wait for the hangs to time out. To another mirror it takes
    // that host's next freed slot, ahead of its queue, while the hedged attempt is still out.
    let mut first = first;
    let hedge_mirror = (first.mirror + 1) % route.len();
    if !may_hedge_to(&route[hedge_mirror], options, deadline, fx.clock.now_ms()) {
        let outcome = request.await;
        return landed(first, outcome, route, options, fx.clock, on_event);
    }
    let permit = if hedge_mirror == first.mirror {
        first.permit.take()
    } else {
        let slots = route[hedge_mirror].borrow().slots.clone();
        match race(request.as_mut(), slots.acquire_next()).await {
            Either::Left(outcome) => return landed(first, outcome, route, options, fx.clock, on_event),
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
            return landed(first, outcome, route, options, fx.clock, on_event);
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
            let (first, judged) = landed(first, outcome, route, options, fx.clock, on_event);
            if judged.ends_race() {
                return (first, judged);
            }
            learn_from_loser(first, &judged, route, fx, on_event);
            let outcome = second.await;
            let (hedge, judged) = landed(hedge, outcome, route, options, fx.clock, on_event);
            won(&judged);
            (hedge, judged)
        }
        Either::Right(outcome) => {
            let (hedge, judged) = landed(hedge, outcome, route, options, fx.clock, on_event);
            if judged.ends_race() {
                // A hedged attempt that lost is learned as taking the hedge delay: recording only
                // winners would pull the host's p95 (and with it the delay) down to the fastest
                // answers, and recording how long it had been out (a hang) would push it up. Not
                // the cold delay: with a few hangs among a host's first answers, those samples
                // would make the cold delay the host's p95, and every later hang cost as much.
                if learned && matches!(judged, Judged::Tile { .. }) {
                    route[first.mirror].borrow_mut().counters.attempt_latency.record(after);
                }
                won(&judged);
                return (hedge, judged);
            }
            learn_from_loser(hedge, &judged, route, fx, on_event);
            let outcome = request.await;
            landed(first, outcome, route, options, fx.clock, on_event)
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
    let seq = h.counters.attempts;
    Ok(Sent { mirror, permit, probe: false, name: h.name.clone(), budget, at_ms: now, seq })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::state::HostState;
    use crate::host::HostConfig;
    use crate::options::Value;

    fn options(hedge: Value) -> Options {
        Options::parse(&[("hedge", hedge)]).unwrap()
    }

    #[test]
    fn the_hedge_delay_is_off_a_number_or_the_hosts_p95_once_it_has_enough_answers() {
        let host = HostState::new("h.example", &HostConfig::DEFAULT, 0.0).shared();
        assert_eq!(hedge_delay(&options(Value::Text("off".into())), &host), None);
        assert_eq!(hedge_delay(&options(Value::Number(300.0)), &host), Some(300.0));
        let auto = options(Value::Text("auto".into()));
        assert_eq!(hedge_delay(&auto, &host), Some(1000.0), "cold: a quarter of the attempt timeout");
        assert_eq!(overtaken_delay(&auto, &host), None, "no answer to go by");
        for _ in 1..HEDGE_COLD_SAMPLES {
            host.borrow_mut().counters.attempt_latency.record(200.0);
        }
        assert_eq!(overtaken_delay(&auto, &host), None, "one answer short");
        host.borrow_mut().counters.attempt_latency.record(900.0);
        let overtaken = overtaken_delay(&auto, &host).unwrap();
        assert!((800.0..=960.0).contains(&overtaken), "four times the median of 200 ms: {overtaken}");
        for _ in HEDGE_COLD_SAMPLES..HEDGE_MIN_SAMPLES - 1 {
            host.borrow_mut().counters.attempt_latency.record(200.0);
        }
        assert_eq!(hedge_delay(&auto, &host), Some(1000.0), "one answer short of a p95");
        host.borrow_mut().counters.attempt_latency.record(200.0);
        let warm = hedge_delay(&auto, &host).unwrap();
        assert!((200.0..=240.0).contains(&warm), "the p95 of 200 ms answers: {warm}");
        let fast = HostState::new("fast.example", &HostConfig::DEFAULT, 0.0).shared();
        for _ in 0..HEDGE_MIN_SAMPLES {
            fast.borrow_mut().counters.attempt_latency.record(2.0);
        }
        assert_eq!(hedge_delay(&auto, &fast), Some(HEDGE_FLOOR_MS), "never below the floor");
        let cached = HostState::new("cached.example", &HostConfig::DEFAULT, 0.0).shared();
        let slow = HostState::new("slow.example", &HostConfig::DEFAULT, 0.0).shared();
        for _ in 0..HEDGE_COLD_SAMPLES {
            cached.borrow_mut().counters.attempt_latency.record(2.0);
            slow.borrow_mut().counters.attempt_latency.record(1_500.0);
        }
        assert_eq!(overtaken_delay(&auto, &cached), Some(HEDGE_COLD_FLOOR_MS), "cache hits: the cold floor");
        assert_eq!(overtaken_delay(&auto, &slow), Some(1_000.0), "a slow host: the blind delay");
        let batch =
            Options::parse(&[("preset", Value::Text("batch".into())), ("hedge", Value::Text("auto".into()))])
                .unwrap();
        let cold = HostState::new("b.example", &HostConfig::DEFAULT, 0.0).shared();
        assert_eq!(hedge_delay(&batch, &cold), Some(batch.attempt_timeout_ms * HEDGE_BLIND_SHARE));
    }
}
