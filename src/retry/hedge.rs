//! Hedged attempts: when an attempt has not answered by its host's hedge delay, one more goes
//! beside it (to the next mirror, or the same host), the first tile wins and the other is aborted.

use core::future::{poll_fn, Future};
use core::pin::{pin, Pin};
use core::task::Poll;

use super::admission::report_to_host;
use super::judge::{landed, Judged, Sent};
use super::outcome::{Event, Failure};
use super::serving::{attempt_timeout, ConnectionQueue, CONNECTIONS_PER_HOST};
use super::{Call, Runtime};
use crate::host::slots::{Acquire, Permit};
use crate::host::state::{Report, SharedHost};
use crate::options::{Hedge, Options};
use crate::retry::platform::{Attempt, Cancel, Clock, Random, Sleep, Transport, Woke};
use crate::timing::backoff::clamp_delay;
use crate::timing::deadline::Deadline;
use crate::Error;

/// Hedges one call may send: the first covers a hung attempt, the second the hedge that landed
/// on a hung request too (gRPC's hedging policy sends several, each after the hedging delay);
/// more would multiply a slow host's load.
pub const MAX_HEDGES_PER_CALL: u32 = 2;
/// Successful attempts a host must have answered before `hedge: "auto"` trusts their p95.
pub const HEDGE_MIN_SAMPLES: u64 = 20;
/// Until then (cold), `hedge: "auto"` hedges on the host's first answers: a map opens with a
/// view's worth of tiles at once, before any host has a p95, and a hung one among them would
/// otherwise cost the whole attempt timeout, on the view every user sees. While the host has
/// answered nothing, nothing tells a hung attempt from a host that is slow for everyone, and no
/// hedge goes. Once it has answered, an attempt gets its hedge when it has waited
/// [`HEDGE_COLD_FACTOR`] times the host's median answer, and at least [`HEDGE_BLIND_SHARE`] of
/// the attempt timeout; sooner (at least [`HEDGE_COLD_FLOOR_MS`]) once the host has given this
/// many tiles and this many tiles of attempts sent after it have overtaken it, or no more
/// attempts are out to its host than a browser opens connections to one: then it is stuck, not
/// queued. A host whose every answer is slow alike never sees a hedge: the factor of its median
/// is past the attempt timeout.
pub const HEDGE_COLD_SAMPLES: u64 = 4;
/// The share of the attempt timeout a cold attempt waits before its hedge while its host has
/// answered too few to say (a tile server that answers at all answers tiles well within it).
pub const HEDGE_BLIND_SHARE: f64 = 0.25;
/// How many times its host's median answer a cold attempt waits before its hedge. Not the
/// slowest: a page's first answers wait for its connections and its start-up.
pub const HEDGE_COLD_FACTOR: f64 = 4.0;
/// The earliest a cold attempt gets its hedge: a host's first answers may come from a cache.
pub const HEDGE_COLD_FLOOR_MS: f64 = 400.0;
/// How often an attempt whose clocks depend on its host's other attempts (a cold hedge delay,
/// a wait for a connection) looks at them again.
const RECHECK_MS: f64 = 50.0;
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
    let delay = (answered.percentile(0.5)? * HEDGE_COLD_FACTOR).max(HEDGE_COLD_FLOOR_MS);
    Some(delay).filter(|delay| *delay < options.attempt_timeout_ms)
}

/// When a cold attempt number `seq` gets its hedge, as its host's answers say now: `None` while
/// they say nothing (no answer yet), or say the host is slow for everyone.
fn cold_delay(options: &Options, host: &SharedHost, seq: u64) -> Option<f64> {
    let stuck = {
        let h = host.borrow();
        h.tiles_sent_after(seq) >= HEDGE_COLD_SAMPLES as usize || h.slots.in_flight() <= CONNECTIONS_PER_HOST
    };
    if stuck {
        if let Some(delay) = overtaken_delay(options, host) {
            return Some(delay);
        }
    }
    let median = host.borrow().counters.attempt_latency.percentile(0.5)?;
    let delay = (median * HEDGE_COLD_FACTOR).max(options.attempt_timeout_ms * HEDGE_BLIND_SHARE);
    Some(delay).filter(|delay| *delay < options.attempt_timeout_ms)
}

/// When a host's attempt, unanswered, gets a hedge (`options.hedge`): `None`, never; cold (see
/// [`HEDGE_MIN_SAMPLES`]), `Some(None)`: as its host's answers will say, looked at again as they
/// come in.
fn delay_for(options: &Options, host: &SharedHost) -> Option<Option<f64>> {
    match options.hedge {
        Hedge::Off => None,
        Hedge::AfterMs(ms) => Some(Some(ms)),
        Hedge::Auto => {
            let host = host.borrow();
            let answered = &host.counters.attempt_latency;
            if answered.count() < HEDGE_MIN_SAMPLES {
                return Some(None);
            }
            answered.percentile(0.95).map(|p95| Some(p95.max(HEDGE_FLOOR_MS)))
        }
    }
}

/// When a host's attempt, unanswered, gets a hedge once the host is warm (`options.hedge`);
/// `None`: never, or not before the host's answers say when (cold: see [`HEDGE_MIN_SAMPLES`]).
pub fn hedge_delay(options: &Options, host: &SharedHost) -> Option<f64> {
    delay_for(options, host).flatten()
}

/// What ended one wait of a call's racing attempts.
enum Landed<O> {
    /// The first attempt's outcome.
    First(O),
    /// Hedge number `i`'s outcome.
    Hedge(usize, O),
    /// The slot a hedge to another mirror waited for.
    Slot(Permit),
    /// The nap: time to look again.
    Woke(Woke),
}

/// Sends `first`, and, when it may (not for a probe or a cache-busting refetch), a hedge beside
/// it when it has not answered by the host's hedge delay, and one more beside that when the hedge
/// has not either (at most [`MAX_HEDGES_PER_CALL`] a call, each to the next mirror, or the same
/// host when there is one). The first tile wins and the others are aborted (their futures
/// dropped); a failure that lands first is learned from at once and the others awaited. An
/// attempt that waits for a connection behind the client's earlier requests (see
/// [`ConnectionQueue`]) starts its timeout and hedge clocks when it has one, and the call's
/// deadline gets the wait back. Returns the attempt whose outcome the loop goes on with.
pub(super) async fn send<T, K, S, R, C>(
    mut first: Sent,
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
    let may_hedge = !first.probe && !bust;
    let connections = fx.transport.connections_per_host();
    let mut queue = ConnectionQueue::at_send(&route[first.mirror], connections);
    first.held_back = connections.map(|_| queue.is_some());
    // Queued for a connection, the attempt is timed out by this loop from when it has one; the
    // transport's own timer is then only the backstop.
    let timed_here = queue.is_some();
    let backstop = if timed_here { clamp_delay(first.budget + options.deadline_ms) } else { first.budget };
    let after = if may_hedge && *hedges < MAX_HEDGES_PER_CALL {
        delay_for(options, &route[first.mirror])
    } else {
        None
    };
    let never_hedged = match after {
        None => true,
        Some(None) => false,
        Some(Some(after)) => after >= first.budget,
    };
    let mut request = pin!(Some(fx.transport.attempt(first.mirror, backstop, bust, false)));
    if let Some(plain) = request.as_mut().as_pin_mut().filter(|_| !timed_here && never_hedged) {
        let outcome = plain.await;
        return landed(first, outcome, route, options, fx.clock, on_event);
    }
    // Whether the first hedge's delay is the host's learned p95 (not the cold delay or the
    // caller's number): only then is a lost attempt learned as taking it (see below).
    let learned = matches!(options.hedge, Hedge::Auto)
        && route[first.mirror].borrow().counters.attempt_latency.count() >= HEDGE_MIN_SAMPLES;
    let mut first = Some(first);
    let mut racing: Vec<(Sent, Pin<Box<_>>)> = Vec::new();
    // The delay the first hedge went after, and a slot a hedge to another mirror waits for.
    let mut first_hedge_after = None;
    let mut slot_wait: Option<(usize, Acquire)> = None;
    // A hedge that may go, with its slot: it goes at the top of the loop.
    let mut admitted: Option<Sent> = None;
    // The delay the next hedge waited for (for `onEvent`).
    let mut hedge_after = 0.0;
    loop {
        if let Some(mut hedge) = admitted.take() {
            // Held back by the same count as any attempt (a hedge to another mirror's idle host
            // has a connection at once).
            hedge.held_back =
                connections.map(|_| ConnectionQueue::at_send(&route[hedge.mirror], connections).is_some());
            *attempts += 1;
            *hedges += 1;
            on_event(Event::Hedge { host: hedge.name.clone(), attempt: *attempts, after_ms: hedge_after });
            let future = fx.transport.attempt(hedge.mirror, hedge.budget, false, true);
            racing.push((hedge, Box::pin(future)));
        }
        let now = fx.clock.now_ms();
        if let (Some(sent), Some(waiting)) = (first.as_mut(), queue) {
            if waiting.is_served(&route[sent.mirror]) {
                queue = None;
                sent.started_ms = now;
                deadline.extend(now - sent.at_ms);
            }
        }
        // The first attempt's own timeout, when this loop keeps it.
        let timed_out = first.as_ref().is_some_and(|sent| now >= sent.started_ms + sent.budget - 1e-9);
        if let Some(sent) = first.take_if(|_| timed_here && queue.is_none() && timed_out) {
            request.set(None);
            let (sent, judged) = landed(sent, Attempt::TimedOut, route, options, fx.clock, on_event);
            if racing.is_empty() {
                return (sent, judged);
            }
            learn_from_loser(sent, &judged, route, fx, on_event);
            continue;
        }
        // The newest attempt out, which the next hedge would stand beside.
        let newest = racing.last().map(|(sent, _)| sent).or(first.as_ref().filter(|_| queue.is_none()));
        let mut due = f64::INFINITY;
        let mut recheck = queue.is_some();
        if let Some(newest) =
            // A call given up by its callers (`Cancel`) starts nothing more: the attempts out
            // may still land, where the platform lets an abandoned request finish.
            newest.filter(|_| {
                may_hedge && *hedges < MAX_HEDGES_PER_CALL && slot_wait.is_none() && !fx.cancel.is_aborted()
            })
        {
            let waited = now - newest.started_ms;
            let host = &route[newest.mirror];
            let at = match delay_for(options, host) {
                None => None,
                Some(Some(after)) => Some(after),
                Some(None) => {
                    recheck = true;
                    cold_delay(options, host, newest.seq)
                }
            };
            match at {
                Some(after) if waited >= after - 1e-9 => {
                    let hedge_mirror = (newest.mirror + 1) % route.len();
                    if may_hedge_to(&route[hedge_mirror], options, deadline, now) {
                        if hedge_mirror == newest.mirror {
                            // To the same host it takes over the slot of the attempt it hedges: it
                            // stands in for that request, and under hangs every slot is held by a
                            // hung one, so a hedge that waited for a slot would wait for the hangs.
                            match admit_hedge(route, hedge_mirror, options, deadline, now) {
                                Some(mut hedge) => {
                                    first_hedge_after.get_or_insert(after);
                                    hedge_after = after;
                                    hedge.permit = take_permit(&mut first, &mut racing);
                                    admitted = Some(hedge);
                                }
                                None => *hedges = MAX_HEDGES_PER_CALL,
                            }
                            continue;
                        }
                        // To another mirror it takes that host's next freed slot, ahead of its
                        // queue, while the attempts it hedges are still out.
                        let slots = route[hedge_mirror].borrow().slots.clone();
                        first_hedge_after.get_or_insert(after);
                        hedge_after = after;
                        slot_wait = Some((hedge_mirror, slots.acquire_next()));
                        continue;
                    }
                    // No hedge may go there now: the attempts out are awaited.
                    *hedges = MAX_HEDGES_PER_CALL;
                    continue;
                }
                Some(after) => due = after - waited,
                None => {}
            }
        }
        if let Some(sent) = first.as_ref().filter(|_| timed_here && queue.is_none()) {
            due = due.min(sent.started_ms + sent.budget - now);
        }
        if recheck {
            due = due.min(RECHECK_MS);
        }
        let nap = (due < f64::INFINITY).then(|| clamp_delay(due));
        let landing = {
            let mut sleep = pin!(nap.map(|ms| fx.sleeper.sleep(ms)));
            poll_fn(|cx| {
                if let Some(request) = request.as_mut().as_pin_mut() {
                    if let Poll::Ready(outcome) = request.poll(cx) {
                        return Poll::Ready(Landed::First(outcome));
                    }
                }
                for (i, (_, hedge)) in racing.iter_mut().enumerate() {
                    if let Poll::Ready(outcome) = hedge.as_mut().poll(cx) {
                        return Poll::Ready(Landed::Hedge(i, outcome));
                    }
                }
                if let Some((_, acquire)) = slot_wait.as_mut() {
                    if let Poll::Ready(permit) = Pin::new(acquire).poll(cx) {
                        return Poll::Ready(Landed::Slot(permit));
                    }
                }
                if let Some(sleep) = sleep.as_mut().as_pin_mut() {
                    if let Poll::Ready(woke) = sleep.poll(cx) {
                        return Poll::Ready(Landed::Woke(woke));
                    }
                }
                Poll::Pending
            })
            .await
        };
        let (sent, outcome, was_first) = match landing {
            Landed::Woke(Woke::Elapsed) => continue,
            Landed::Woke(Woke::Aborted) => {
                let aborted =
                    Judged::NotTile { report: Report::Abandoned, verdict: Err(Failure::of(Error::Aborted)) };
                let Some(sent) = first.take().or_else(|| racing.pop().map(|(sent, _)| sent)) else {
                    continue;
                };
                return (sent, aborted);
            }
            Landed::Slot(permit) => {
                let Some((mirror, _)) = slot_wait.take() else { continue };
                if fx.cancel.is_aborted() {
                    *hedges = MAX_HEDGES_PER_CALL;
                    continue;
                }
                admitted = admit_hedge(route, mirror, options, deadline, fx.clock.now_ms());
                match admitted.as_mut() {
                    Some(hedge) => hedge.permit = Some(permit),
                    None => *hedges = MAX_HEDGES_PER_CALL,
                }
                continue;
            }
            Landed::First(outcome) => {
                request.set(None);
                let Some(mut sent) = first.take() else { continue };
                sent.overtook = fx
                    .transport
                    .tells_connections()
                    .then(|| queue.is_some_and(|waiting| !waiting.is_served(&route[sent.mirror])));
                (sent, outcome, true)
            }
            Landed::Hedge(i, outcome) => (racing.remove(i).0, outcome, false),
        };
        let mirror = sent.mirror;
        let (sent, judged) = landed(sent, outcome, route, options, fx.clock, on_event);
        if judged.ends_race() {
            if !was_first && matches!(judged, Judged::Tile { .. }) {
                route[mirror].borrow_mut().counters.hedges_won += 1;
                // A hedged first attempt that lost is learned as taking the hedge delay:
                // recording only winners would pull the host's p95 (and with it the delay) down
                // to the fastest answers, and recording how long it had been out (a hang) would
                // push it up. Not the cold delay: with a few hangs among a host's first answers,
                // those samples would make the cold delay the host's p95, and every later hang
                // cost as much.
                if let (true, Some(lost), Some(after)) = (learned, first.as_ref(), first_hedge_after) {
                    route[lost.mirror].borrow_mut().counters.attempt_latency.record(after);
                }
            }
            return (sent, judged);
        }
        if request.is_none() && racing.is_empty() {
            // Nothing else is out (a hedge still waiting for another mirror's slot would stand
            // in for nothing): the loop goes on with this failure.
            return (sent, judged);
        }
        learn_from_loser(sent, &judged, route, fx, on_event);
    }
}

/// The slot of the newest attempt out that holds one (a hedge to the same host takes it over).
fn take_permit<F>(first: &mut Option<Sent>, racing: &mut [(Sent, F)]) -> Option<Permit> {
    racing.iter_mut().rev().map(|(sent, _)| sent).chain(first.as_mut()).find_map(|sent| sent.permit.take())
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
    deadline.attempt_budget(now, attempt_timeout(options, host)) > 0.0 && host.borrow_mut().admit_hedge(now)
}

/// The hedge to `route[mirror]`, if it may still go (the host may have changed while it waited
/// for a slot) and the call's retry budget has a token for it: hedges spend the budget like
/// retries. Its slot is the caller's to give it.
fn admit_hedge(
    route: &[SharedHost],
    mirror: usize,
    options: &Options,
    deadline: &Deadline,
    now: f64,
) -> Option<Sent> {
    let host = &route[mirror];
    if !may_hedge_to(host, options, deadline, now) || !route[0].borrow_mut().budget.try_retry(now) {
        return None;
    }
    let timeout = attempt_timeout(options, host);
    let budget = deadline.attempt_budget(now, timeout);
    let mut h = host.borrow_mut();
    h.counters.attempts += 1;
    h.counters.hedges += 1;
    let seq = h.counters.attempts;
    let name = h.name.clone();
    let limit_at_send = h.slots.limit();
    Some(Sent {
        mirror,
        permit: None,
        probe: false,
        name,
        budget,
        timeout,
        at_ms: now,
        started_ms: now,
        held_back: None,
        overtook: None,
        limit_at_send,
        seq,
    })
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
        assert_eq!(delay_for(&auto, &host), Some(None), "cold: as the host's answers will say");
        assert_eq!(cold_delay(&auto, &host, 1), None, "no answer to go by: no hedge");
        assert_eq!(overtaken_delay(&auto, &host), None, "no answer to go by");
        host.borrow_mut().counters.attempt_latency.record(200.0);
        assert_eq!(cold_delay(&auto, &host, 1), Some(1000.0), "one answer: a quarter of the attempt timeout");
        for _ in 2..HEDGE_COLD_SAMPLES {
            host.borrow_mut().counters.attempt_latency.record(200.0);
        }
        assert_eq!(overtaken_delay(&auto, &host), None, "one answer short");
        host.borrow_mut().counters.attempt_latency.record(900.0);
        let overtaken = overtaken_delay(&auto, &host).unwrap();
        assert!((800.0..=960.0).contains(&overtaken), "four times the median of 200 ms: {overtaken}");
        assert_eq!(cold_delay(&auto, &host, 1), Some(overtaken), "few out: stuck, not queued");
        for _ in HEDGE_COLD_SAMPLES..HEDGE_MIN_SAMPLES - 1 {
            host.borrow_mut().counters.attempt_latency.record(200.0);
        }
        assert_eq!(hedge_delay(&auto, &host), None, "one answer short of a p95");
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
            slow.borrow_mut().counters.attempt_latency.record(2_500.0);
        }
        assert_eq!(overtaken_delay(&auto, &cached), Some(HEDGE_COLD_FLOOR_MS), "cache hits: the cold floor");
        // Every answer slow alike: four times the median is past the attempt timeout.
        assert_eq!(overtaken_delay(&auto, &slow), None, "a slow host: no hedge");
        assert_eq!(cold_delay(&auto, &slow, 1), None, "a slow host: no hedge");
        let batch =
            Options::parse(&[("preset", Value::Text("batch".into())), ("hedge", Value::Text("auto".into()))])
                .unwrap();
        let cold = HostState::new("b.example", &HostConfig::DEFAULT, 0.0).shared();
        cold.borrow_mut().counters.attempt_latency.record(200.0);
        assert_eq!(cold_delay(&batch, &cold, 1), Some(batch.attempt_timeout_ms * HEDGE_BLIND_SHARE));
    }
}
