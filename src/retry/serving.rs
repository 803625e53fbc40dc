//! When a host is serving an attempt, and how long it may take: the attempt timeout a host's
//! answers have earned, and the wait for a connection behind the client's own earlier requests,
//! which is queueing, not a server failing to answer.

use crate::host::state::SharedHost;
use crate::options::{Options, WhenAbandoned};

/// The connections a browser opens to one host over HTTP/1.1 (Chromium's and Firefox's limit):
/// past this many attempts out to a host, the next waits in the browser for one of them to end.
pub const CONNECTIONS_PER_HOST: usize = 6;
/// Answered attempts a host must have given before its attempt timeout follows them.
pub const LEARNED_TIMEOUT_SAMPLES: u64 = 20;
/// How many times a host's p99 answer an attempt may take before it counts as hung.
pub const TIMEOUT_P99_FACTOR: f64 = 4.0;
/// The shortest learned attempt timeout: below this a fast host's hiccup (a cold cache, a GC
/// pause) would be retried as a hang.
pub const TIMEOUT_FLOOR_MS: f64 = 1_000.0;

/// The attempt timeout for `host`: `attemptTimeoutMs` until the host has answered enough to say,
/// then a multiple of its p99 answer within [`TIMEOUT_FLOOR_MS`] and `attemptTimeoutMs`, so a
/// hung attempt to a host that answers in tens of milliseconds is given up in about a second.
pub fn attempt_timeout(options: &Options, host: &SharedHost) -> f64 {
    let cap = options.attempt_timeout_ms;
    let host = host.borrow();
    let answered = &host.counters.attempt_latency;
    if answered.count() < LEARNED_TIMEOUT_SAMPLES {
        return cap;
    }
    answered.percentile(0.99).map_or(cap, |p99| (p99 * TIMEOUT_P99_FACTOR).max(TIMEOUT_FLOOR_MS).min(cap))
}

/// How soon an attempt that every caller gave up must be due to land, by its host's p95 answer,
/// to be left to land rather than aborted (see [`lets_land`]).
pub const LAND_WITHIN_MS: f64 = 500.0;
/// Answered attempts a host must have given before its p95 says an attempt is due soon: a map's
/// first view (the first contact loads most of it as images, which the host's answers do not
/// count).
pub const LAND_MIN_ANSWERS: u64 = 8;

/// Whether an attempt out to `host` since `sent_ms`, whose callers have all gone, is left to
/// land (its tile kept for the next identical call: a map panned back, a tile asked again) rather
/// than aborted, as `when` (`whenAbandoned`) asks. Only one that has a connection (`queue` served
/// or none): the server has the request already, and aborting it spares the server nothing,
/// where finishing it spares the next ask a request; and only one due within [`LAND_WITHIN_MS`]
/// by the host's p95 answer once it has answered [`LAND_MIN_ANSWERS`]: a slow or hung one would
/// hold a connection the next view needs. With [`WhenAbandoned::Yield`], only while no other
/// attempt to the host waits for a slot, or for one of the platform's `connections` to it (more
/// out than those, on a host not seen to multiplex): one waiting gets the connection an abort
/// frees at once, as a map library's own loader that aborts a tile of a view gone gives it.
pub fn lets_land(
    when: WhenAbandoned,
    host: &SharedHost,
    queue: Option<&ConnectionQueue>,
    connections: Option<usize>,
    sent_ms: f64,
    now_ms: f64,
) -> bool {
    if when == WhenAbandoned::Abort || queue.is_some_and(|q| !q.is_served(host)) {
        return false;
    }
    let host = host.borrow();
    if when == WhenAbandoned::Yield {
        let held_back = connections.is_some_and(|c| host.slots.in_flight() > c) && !host.multiplexed();
        if held_back || host.slots.queued() > 0 {
            return false;
        }
    }
    let answered = &host.counters.attempt_latency;
    answered.count() >= LAND_MIN_ANSWERS
        && answered.percentile(0.95).is_some_and(|p95| sent_ms + p95 - now_ms <= LAND_WITHIN_MS)
}

/// Where an attempt stands in the queue for a connection to its host, from the client's side: a
/// browser sends at most [`CONNECTIONS_PER_HOST`] requests to an HTTP/1.1 host at once and holds
/// the rest until one ends, and the client's concurrency allows more than that out (the
/// platform says how many: `Transport::connections_per_host`). The host's slots count the
/// attempts that ended; an attempt sent with `ahead` others out is served once
/// `ahead - connections + 1` of them have ended. Over HTTP/2 nothing waits, and the
/// estimate only starts the clocks of the attempts past the first few a little late, which the
/// hedges cover.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConnectionQueue {
    /// The host's count of freed slots at which the attempt has a connection.
    served_at_release: u64,
}

impl ConnectionQueue {
    /// `None` when the attempt (holding its slot already) has a connection at once, or the
    /// platform holds no request back (`connections`: `None`).
    pub fn at_send(host: &SharedHost, connections: Option<usize>) -> Option<ConnectionQueue> {
        let slots = host.borrow().slots.clone();
        let ahead = slots.in_flight().saturating_sub(1);
        let behind = (ahead + 1).checked_sub(connections?).filter(|n| *n > 0)?;
        Some(ConnectionQueue { served_at_release: slots.released() + behind as u64 })
    }

    /// Whether enough attempts sent before it have ended for it to have a connection now.
    pub fn is_served(&self, host: &SharedHost) -> bool {
        host.borrow().slots.released() >= self.served_at_release
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::limit::{Answer, WARM_UP_MS};
    use crate::host::state::HostState;
    use crate::host::HostConfig;
    use crate::options::Value;
    use std::future::Future;
    use std::task::{Context, Waker};

    #[test]
    fn an_abandoned_attempt_lands_only_with_a_connection_and_soon() {
        let host = HostState::new("h.example", &HostConfig::DEFAULT, 0.0).shared();
        assert!(
            !lets_land(WhenAbandoned::Land, &host, None, None, 0.0, 10.0),
            "no answers yet: nothing says it is soon"
        );
        for _ in 1..LAND_MIN_ANSWERS {
            host.borrow_mut().counters.attempt_latency.record(300.0);
        }
        assert!(!lets_land(WhenAbandoned::Land, &host, None, None, 0.0, 10.0), "one answer short");
        host.borrow_mut().counters.attempt_latency.record(300.0);
        assert!(lets_land(WhenAbandoned::Land, &host, None, None, 0.0, 10.0), "due in about 300 ms");
        // A p95 of about 2.5 s (a rendering WMS): due in more than half a second until it is
        // near its end.
        for _ in 0..LEARNED_TIMEOUT_SAMPLES * 4 {
            host.borrow_mut().counters.attempt_latency.record(2_500.0);
        }
        assert!(!lets_land(WhenAbandoned::Land, &host, None, None, 0.0, 10.0));
        assert!(lets_land(WhenAbandoned::Land, &host, None, None, 0.0, 2_400.0));
        // Held back for a connection: the server has not got it.
        let browser = Some(CONNECTIONS_PER_HOST);
        let slots = host.borrow().slots.clone();
        let mut held: Vec<_> = (0..=CONNECTIONS_PER_HOST).map(|_| slots.try_acquire().unwrap()).collect();
        let queue = ConnectionQueue::at_send(&host, Some(CONNECTIONS_PER_HOST)).expect("held back");
        assert!(!lets_land(WhenAbandoned::Land, &host, Some(&queue), browser, 0.0, 2_400.0));
        held.remove(0);
        assert!(
            lets_land(WhenAbandoned::Land, &host, Some(&queue), browser, 0.0, 2_400.0),
            "one ahead ended: it has one now"
        );
    }

    #[test]
    fn a_yielding_attempt_lands_only_while_no_other_waits_behind_it() {
        let host = HostState::new("h.example", &HostConfig::DEFAULT, 0.0).shared();
        for _ in 0..LAND_MIN_ANSWERS {
            host.borrow_mut().counters.attempt_latency.record(300.0);
        }
        let browser = Some(CONNECTIONS_PER_HOST);
        let (land, yields) = (WhenAbandoned::Land, WhenAbandoned::Yield);
        let slots = host.borrow().slots.clone();
        let mut out: Vec<_> = (0..CONNECTIONS_PER_HOST).map(|_| slots.try_acquire().unwrap()).collect();
        assert!(lets_land(yields, &host, None, browser, 0.0, 10.0), "as many out as connections: none waits");
        assert!(!lets_land(WhenAbandoned::Abort, &host, None, browser, 0.0, 10.0));
        out.push(slots.try_acquire().unwrap());
        assert!(!lets_land(yields, &host, None, browser, 0.0, 10.0), "the seventh waits for a connection");
        assert!(lets_land(land, &host, None, browser, 0.0, 10.0), "landing whoever waits");
        assert!(lets_land(yields, &host, None, None, 0.0, 10.0), "a platform that holds none back");

        // Answers to the attempts past the connections as quick as the others, after the host's
        // first second: the browser multiplexes them (HTTP/2), and none waits.
        let answer = |at_ms: f64, held_back: bool| Answer {
            at_ms,
            took_ms: 50.0,
            held_back: Some(held_back),
            overtook: Some(held_back),
            limit_at_send: 16,
        };
        for i in 0..CONNECTIONS_PER_HOST as u64 {
            host.borrow_mut().tile_answered(i, answer(i as f64, false));
        }
        for i in 0..16 {
            host.borrow_mut().tile_answered(100 + i, answer(WARM_UP_MS + i as f64, true));
        }
        assert!(host.borrow().multiplexed());
        assert!(
            lets_land(yields, &host, None, browser, 0.0, 10.0),
            "over HTTP/2 the seventh has a connection"
        );

        // An attempt waiting for a slot.
        slots.set_limit(out.len());
        let mut waiter = Box::pin(slots.acquire());
        assert!(waiter.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        assert_eq!(slots.queued(), 1);
        assert!(!lets_land(yields, &host, None, None, 0.0, 10.0), "one waits for a slot");
        assert!(lets_land(land, &host, None, None, 0.0, 10.0));
        drop(waiter);
        assert!(lets_land(yields, &host, None, None, 0.0, 10.0));
    }

    #[test]
    fn the_timeout_follows_the_hosts_p99_within_the_floor_and_the_option() {
        let options = Options::parse(&[("attemptTimeoutMs", Value::Number(4_000.0))]).unwrap();
        let host = HostState::new("h.example", &HostConfig::DEFAULT, 0.0).shared();
        for _ in 1..LEARNED_TIMEOUT_SAMPLES {
            host.borrow_mut().counters.attempt_latency.record(60.0);
        }
        assert_eq!(attempt_timeout(&options, &host), 4_000.0, "one answer short");
        host.borrow_mut().counters.attempt_latency.record(60.0);
        assert_eq!(attempt_timeout(&options, &host), TIMEOUT_FLOOR_MS, "4 × 60 ms is under the floor");
        for _ in 0..LEARNED_TIMEOUT_SAMPLES * 2 {
            host.borrow_mut().counters.attempt_latency.record(400.0);
        }
        let learned = attempt_timeout(&options, &host);
        assert!((1_600.0..=1_920.0).contains(&learned), "4 × a p99 of 400 ms: {learned}");
        for _ in 0..LEARNED_TIMEOUT_SAMPLES * 10 {
            host.borrow_mut().counters.attempt_latency.record(2_500.0);
        }
        assert_eq!(attempt_timeout(&options, &host), 4_000.0, "never above attemptTimeoutMs");
    }

    #[test]
    fn an_attempt_past_the_connections_waits_for_the_earlier_ones_to_end() {
        let host = HostState::new("h.example", &HostConfig::DEFAULT, 0.0).shared();
        let slots = host.borrow().slots.clone();
        let mut held: Vec<_> = (0..CONNECTIONS_PER_HOST).map(|_| slots.try_acquire().unwrap()).collect();
        let browser = Some(CONNECTIONS_PER_HOST);
        assert_eq!(ConnectionQueue::at_send(&host, browser), None, "the sixth has a connection");
        held.push(slots.try_acquire().unwrap());
        assert_eq!(ConnectionQueue::at_send(&host, None), None, "a platform that queues nothing");
        let seventh = ConnectionQueue::at_send(&host, browser).expect("the seventh waits");
        held.push(slots.try_acquire().unwrap());
        let eighth = ConnectionQueue::at_send(&host, browser).expect("the eighth waits");
        assert!(!seventh.is_served(&host));
        held.remove(0);
        assert!(seventh.is_served(&host), "one of the first six ended");
        assert!(!eighth.is_served(&host), "the eighth waits for a second one");
        held.remove(0);
        assert!(eighth.is_served(&host));
    }
}
