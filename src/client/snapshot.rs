//! What `stats()` reports of one host, read from its state at one instant.

use crate::host::HostState;

/// One host's entry of `stats()`. Times are on the clock `to_epoch` maps to (epoch ms in JS);
/// figures are rounded as they are shown.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSnapshot {
    /// Calls made to this host as their primary host, coalesced ones included.
    pub requests: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// Retries sent.
    pub retries: u64,
    /// Calls that got a tile.
    pub successes: u64,
    /// Calls aborted by their caller.
    pub aborted: u64,
    /// Calls that joined another call's flight.
    pub coalesced: u64,
    /// Calls served from the client's recently delivered tiles.
    pub from_memory: u64,
    /// Hedges sent to this host.
    pub hedges: u64,
    /// Hedges whose tile came first.
    pub hedges_won: u64,
    /// Attempts in flight now.
    pub in_flight: usize,
    /// Attempts waiting for a slot now.
    pub queued: usize,
    /// How many attempts may be in flight now (`maxConcurrent`, or the adaptive limit).
    pub max_in_flight: usize,
    /// The breaker's state now, as `TileError` and events name it.
    pub breaker_state: &'static str,
    /// When the breaker last changed state.
    pub breaker_changed_at: f64,
    /// The retry budget's tokens now, to 2 decimals.
    pub retry_tokens: f64,
    /// When a pause (Retry-After) ends, while there is one.
    pub paused_until: Option<f64>,
    /// The learned rate limit, to 1 decimal, once a 429 taught one.
    pub rate_limit_per_second: Option<f64>,
    /// Latency percentiles of successful calls, from call to tile (ms), once there are samples.
    pub p50: Option<f64>,
    /// See [`HostSnapshot::p50`].
    pub p95: Option<f64>,
    /// See [`HostSnapshot::p50`].
    pub p99: Option<f64>,
    /// Calls that gave up, by error kind, in the order first seen.
    pub give_ups: Vec<(&'static str, u64)>,
    /// Whether the host's last answer came without CORS headers (a browser withheld it).
    pub cors_refused: bool,
    /// The rate limit the host last stated, while it is in force.
    pub stated_limit: Option<StatedLimit>,
}

/// A host's stated rate limit as `stats()` shows it (`RateLimit`, `RateLimit-Policy`,
/// `X-RateLimit-*`). The partition key is not shown: it may be derived from a credential.
#[derive(Debug, Clone, PartialEq)]
pub struct StatedLimit {
    /// The policy's name; `None` for the legacy fields.
    pub policy: Option<String>,
    /// The policy's quota and window (seconds), when stated.
    pub quota: Option<f64>,
    /// See [`StatedLimit::quota`].
    pub window_s: Option<f64>,
    /// The quota the host said remains.
    pub remaining: f64,
    /// The seconds it said until more comes.
    pub reset_s: Option<f64>,
    /// The rate (requests per second, to 1 decimal) the statement paces the host at.
    pub paced_per_second: Option<f64>,
    /// When the statement lapses.
    pub until: f64,
}

impl HostSnapshot {
    /// `host` at `now_ms` (the clock of calls), with times mapped by `to_epoch`.
    pub fn of(host: &mut HostState, now_ms: f64, to_epoch: impl Fn(f64) -> f64) -> HostSnapshot {
        let retry_tokens = (host.budget.tokens(now_ms) * 100.0).round() / 100.0;
        let paused_until = host.paused_until(now_ms).map(&to_epoch);
        let rate_limit_per_second = host.rate().map(|r| (r * 10.0).round() / 10.0);
        let c = &host.counters;
        HostSnapshot {
            requests: c.requests,
            attempts: c.attempts,
            retries: c.retries,
            successes: c.successes,
            aborted: c.aborted,
            coalesced: c.coalesced,
            from_memory: c.from_memory,
            hedges: c.hedges,
            hedges_won: c.hedges_won,
            in_flight: host.slots.in_flight(),
            queued: host.slots.queued(),
            max_in_flight: host.slots.limit(),
            breaker_state: host.breaker.state(now_ms).name(),
            breaker_changed_at: to_epoch(host.breaker.changed_at()),
            retry_tokens,
            paused_until,
            rate_limit_per_second,
            p50: c.latency.percentile(0.5),
            p95: c.latency.percentile(0.95),
            p99: c.latency.percentile(0.99),
            give_ups: c.give_ups.clone(),
            cors_refused: host.cors_refused(),
            stated_limit: host.stated(now_ms).map(|(stated, per_second, stated_until)| StatedLimit {
                policy: stated.policy.clone(),
                quota: stated.quota,
                window_s: stated.window_s,
                remaining: stated.remaining,
                reset_s: stated.reset_s,
                paced_per_second: per_second.map(|r| (r * 10.0).round() / 10.0),
                until: to_epoch(stated_until),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostConfig;

    #[test]
    fn a_fresh_host_reports_nothing_learned() {
        let mut host = HostState::new("a.example", &HostConfig::DEFAULT, 1_000.0);
        let s = HostSnapshot::of(&mut host, 1_000.0, |t| t + 1.0e12);
        assert_eq!((s.requests, s.attempts, s.in_flight, s.queued), (0, 0, 0, 0));
        assert_eq!(s.breaker_state, "closed");
        assert_eq!(s.breaker_changed_at, 1.0e12 + 1_000.0, "mapped to the epoch");
        assert_eq!((s.paused_until, s.rate_limit_per_second, s.p50), (None, None, None));
        assert!(s.retry_tokens > 0.0);
        assert!(s.give_ups.is_empty());
        assert!(!s.cors_refused);
    }

    #[test]
    fn counters_slots_and_give_ups_are_read_as_they_stand() {
        let mut host = HostState::new("a.example", &HostConfig::DEFAULT, 0.0);
        host.counters.requests = 3;
        host.counters.attempts = 5;
        host.counters.give_up("deadline");
        host.counters.give_up("deadline");
        let _permit = host.slots.try_acquire().expect("a free slot");
        let s = HostSnapshot::of(&mut host, 0.0, |t| t);
        assert_eq!((s.requests, s.attempts, s.in_flight), (3, 5, 1));
        assert_eq!(s.give_ups, vec![("deadline", 2)]);
    }
}
