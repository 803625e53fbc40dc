//! One host's shared state and the decision "may an attempt go now?".

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::breaker::{Admission, Breaker, BreakerConfig, BreakerState};
use super::budget::{BudgetConfig, RetryBudget};
use super::latency::Latency;
use super::limit::{AdaptiveLimit, Answer};
use super::quota::StatedQuota;
use super::rate::AdaptiveRate;
use super::slots::{QueueOrder, Slots};
use crate::response::rate_limit::Stated;

/// Per-host settings of a client (the defaults, overridden per host by `hosts`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostConfig {
    /// `maxConcurrent`: attempts in flight at once to this host; without `fixed_concurrency`,
    /// where the adaptive limit starts and the least it goes to (see `limit`).
    pub max_concurrent: usize,
    /// `maxConcurrent` was set: the limit does not adapt.
    pub fixed_concurrency: bool,
    /// `queueOrder`.
    pub queue_order: QueueOrder,
    /// `breaker`: the circuit breaker's settings.
    pub breaker: BreakerConfig,
    /// `retryBudget`: the retry budget's settings.
    pub budget: BudgetConfig,
    /// `learnRate`: after a 429 from a host that is serving, space attempts at the rate it was
    /// seen to serve instead of pausing it (see `rate`).
    pub learn_rate: bool,
}

impl HostConfig {
    /// The defaults (with the interactive preset's breaker), as the option registry declares them.
    pub const DEFAULT: HostConfig = {
        use crate::options::registry::{LEARN_RATE, MAX_CONCURRENT};
        HostConfig {
            max_concurrent: MAX_CONCURRENT.default.number(false) as usize,
            fixed_concurrency: false,
            // The registry's text; `client_config`'s tests check that the two agree.
            queue_order: QueueOrder::Fifo,
            breaker: BreakerConfig::INTERACTIVE,
            budget: BudgetConfig::DEFAULT,
            learn_rate: LEARN_RATE.default.flag(),
        }
    };
}

/// Why an attempt has to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The host asked for a pause (Retry-After).
    Pause,
    /// The breaker is open.
    Breaker,
    /// The learned request rate.
    Rate,
    /// The quota the host states (`RateLimit`), spread until more comes.
    Quota,
}

/// What [`HostState::decide`] tells a call that wants to send an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Send it now.
    Go {
        /// Whether it goes as a half-open probe (its outcome must be reported as one).
        probe: bool,
    },
    /// Wait until this time (monotonic ms), for this reason, then ask again.
    WaitUntil(f64, Hold),
    /// Half-open and every probe is out: wait for a change.
    WaitForProbe,
}

/// What an attempt told about the host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Report {
    /// A tile, or a permanent answer (404…): the host is alive.
    Alive,
    /// Network error, timeout, 5xx, an error body.
    Transient,
    /// 429, or 503 with Retry-After: alive but asking for less; `wait_ms` already clamped.
    Throttled {
        /// The server's Retry-After in ms, clamped to `retryAfterMaxMs`; `None` without one.
        wait_ms: Option<f64>,
        /// A 429 (a rate limit), not a 503 (unavailable): only a rate limit teaches a rate, and
        /// only its Retry-After gives way to one.
        too_many: bool,
        /// When the refused request was sent (monotonic ms): the rate it was refused at is the
        /// one in force then, and a refusal of a request sent before the last one is part of
        /// the same overload.
        sent_ms: f64,
    },
    /// The host answered, but without the CORS headers a browser needs to hand the answer over:
    /// alive (the breaker hears a success), and marked as such until an answer is read again.
    CorsRefused,
    /// The caller aborted: nothing learned.
    Abandoned,
}

/// A change other calls (and `onEvent`) should hear of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// The breaker moved to this state.
    Breaker(BreakerState),
    /// The host is paused for longer than before.
    Pause {
        /// When the pause ends (monotonic ms).
        until_ms: f64,
    },
    /// The host was found to answer without CORS headers (said once, until it sends them).
    CorsRefused,
    /// The quota the host states now paces its requests (it did not before).
    Pacing {
        /// Requests per second the quota allows until more comes.
        per_second: f64,
        /// When the statement lapses (monotonic ms).
        until_ms: f64,
    },
}

/// The attempt whose answer stated a rate limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatedBy {
    /// Its number among the host's attempts (`counters.attempts` when it was sent; the gate's
    /// admit count): an answer to an older one than the statement in force says less.
    pub seq: u64,
    /// When it was sent (monotonic ms): the host counted it, and stated its quota, after.
    pub sent_ms: f64,
}

/// Per-host counters for `stats()`.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Calls made to this host (as their primary host), coalesced ones included.
    pub requests: u64,
    /// Attempts sent to this host.
    pub attempts: u64,
    /// Attempts sent to this host that were not their call's first.
    pub retries: u64,
    /// Calls that got a tile.
    pub successes: u64,
    /// Calls the caller aborted.
    pub aborted: u64,
    /// Calls that joined an identical call's request instead of sending their own.
    pub coalesced: u64,
    /// Calls served from the client's recently delivered tiles, with no request.
    pub from_memory: u64,
    /// Hedges sent to this host: a second attempt beside one that had not answered.
    pub hedges: u64,
    /// Of those, the ones whose tile came first.
    pub hedges_won: u64,
    /// Give-ups by error kind.
    pub give_ups: Vec<(&'static str, u64)>,
    /// Of successful calls, from call to tile.
    pub latency: Latency,
    /// Of attempts that delivered a tile, from sending to the tile: what `hedge: "auto"` waits.
    pub attempt_latency: Latency,
}

impl Counters {
    /// Counts one give-up of error kind `kind`.
    pub fn give_up(&mut self, kind: &'static str) {
        match self.give_ups.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => self.give_ups.push((kind, 1)),
        }
    }
}

/// One host's state, shared by every call to it.
pub struct HostState {
    /// The host's key: `host[:port]`, as [`crate::host::host_key`] gives it.
    pub name: Rc<str>,
    /// The concurrency limit and its queue.
    pub slots: Slots,
    /// The circuit breaker.
    pub breaker: Breaker,
    /// The retry budget of the calls whose primary host this is.
    pub budget: RetryBudget,
    /// The statistics of `stats()`.
    pub counters: Counters,
    rate: AdaptiveRate,
    /// The concurrency limit that fits the connection and the server; `None`: `maxConcurrent`.
    limit: Option<AdaptiveLimit>,
    quota: StatedQuota,
    /// The attempt whose answer set the stated quota in force (see [`HostState::on_stated`]).
    stated_seq: u64,
    /// The highest numbers (`counters.attempts` when sent) of the attempts that delivered a tile.
    recent_tiles: [u64; RECENT_TILES],
    learn_rate: bool,
    paused_until: f64,
    /// When the last of the calls waiting out the pause wakes (each adds its own jitter): a call
    /// that comes to the host before then waits behind them, so that a pause's waiters are not
    /// overtaken by newer calls while they wake (a quota's next window would go to those).
    pause_wakes_until: f64,
    /// The pause comes from a Retry-After no call could have waited for, which nothing the host
    /// had said contradicted yet: the next answer that is not a throttle lifts it.
    doubtful_pause: bool,
    /// Set by [`HostState::doubt_pause`] for the throttle about to be reported.
    doubt_next: bool,
    /// When the host last answered with something other than a throttle or an error.
    answered_at: f64,
    /// The host's last answer came without CORS headers (see [`Report::CorsRefused`]).
    cors_refused: bool,
    version: u64,
    watchers: Vec<Waker>,
}

/// How many of a host's last tiles [`HostState::tiles_sent_after`] looks at.
const RECENT_TILES: usize = 32;

/// How recent an answer must be to contradict a throttle (see [`HostState::is_answering`]).
pub const EVIDENCE_WINDOW_MS: f64 = 2_000.0;

/// A host's state as the calls to it share it.
pub type SharedHost = Rc<RefCell<HostState>>;

impl HostState {
    /// A fresh host: breaker closed, no pause, nothing learned, counters at 0.
    pub fn new(name: &str, config: &HostConfig, now_ms: f64) -> HostState {
        HostState {
            name: Rc::from(name),
            slots: Slots::new(config.max_concurrent, config.queue_order),
            breaker: Breaker::new(config.breaker, now_ms),
            budget: RetryBudget::new(config.budget, now_ms),
            counters: Counters::default(),
            rate: AdaptiveRate::new(now_ms),
            limit: (!config.fixed_concurrency).then(|| AdaptiveLimit::new(config.max_concurrent)),
            quota: StatedQuota::default(),
            stated_seq: 0,
            recent_tiles: [0; RECENT_TILES],
            learn_rate: config.learn_rate,
            paused_until: f64::NEG_INFINITY,
            pause_wakes_until: f64::NEG_INFINITY,
            doubtful_pause: false,
            doubt_next: false,
            answered_at: f64::NEG_INFINITY,
            cors_refused: false,
            version: 0,
            watchers: Vec::new(),
        }
    }

    /// Paces this host at a configured rate instead of a learned one (a shared gate's
    /// `ratePerSecond`, `burst`).
    pub fn fix_rate(&mut self, per_second: f64, burst: f64, now_ms: f64) {
        self.rate = AdaptiveRate::fixed(per_second, burst, now_ms);
    }

    /// This state, ready to be shared by calls.
    pub fn shared(self) -> SharedHost {
        Rc::new(RefCell::new(self))
    }

    /// When the host's pause ends (monotonic ms), while it lasts.
    pub fn paused_until(&self, now_ms: f64) -> Option<f64> {
        (self.paused_until > now_ms).then_some(self.paused_until)
    }

    /// Notes that a call waiting out the pause wakes at `at_ms`.
    pub fn note_pause_wake(&mut self, at_ms: f64) {
        self.pause_wakes_until = self.pause_wakes_until.max(at_ms);
    }

    /// Until when a call that comes to the host now waits behind the calls still waking from
    /// its pause, if any are.
    pub fn behind_pause_waiters(&self, now_ms: f64) -> Option<f64> {
        (now_ms >= self.paused_until && now_ms < self.pause_wakes_until).then_some(self.pause_wakes_until)
    }

    /// The learned rate in requests per second, once a 429 taught one.
    pub fn rate(&self) -> Option<f64> {
        self.rate.rate()
    }

    /// The rate limit the host last stated, while it is in force: what it stated, the rate
    /// (requests per second) it paces the host at, and when it lapses (monotonic ms).
    pub fn stated(&self, now_ms: f64) -> Option<(&Stated, Option<f64>, f64)> {
        let stated = self.quota.stated(now_ms)?;
        Some((stated, self.quota.pacing(now_ms), self.quota.until_ms(now_ms)?))
    }

    /// Takes in the rate limit an answer stated (any answer: a tile, an error, a 429) to the
    /// host's attempt `by` (see [`StatedBy`]), when `others`
    /// other attempts were in flight; `max_wait_ms` bounds the time it states
    /// (`retryAfterMaxMs`). The other attempts in flight come off the stated quota: the host may
    /// not have counted them (over parallel connections, one sent earlier may arrive later). An
    /// answer to an attempt older than the one that set the statement in force says less than
    /// it, and is passed over. While a statement is in force it paces the host instead of a
    /// learned rate: the host knows its quota better than the client's guess from its 429s.
    pub fn on_stated(
        &mut self,
        now_ms: f64,
        stated: Stated,
        by: StatedBy,
        others: usize,
        max_wait_ms: f64,
    ) -> Option<Change> {
        let StatedBy { seq, sent_ms } = by;
        if seq <= self.stated_seq && self.quota.stated(now_ms).is_some() {
            return None;
        }
        self.stated_seq = seq;
        if !self.quota.on_stated(now_ms, sent_ms, stated, others, max_wait_ms) {
            return None;
        }
        let per_second = self.quota.pacing(now_ms)?;
        Some(Change::Pacing { per_second, until_ms: self.quota.until_ms(now_ms)? })
    }

    /// How many requests the quota the host states has to spare now: infinite when none
    /// paces it.
    pub fn quota_to_spare(&mut self, now_ms: f64) -> f64 {
        self.quota.to_spare(now_ms)
    }

    /// Whether the host has shown that it counts its quota in fixed windows.
    pub fn counts_in_windows(&self) -> bool {
        self.quota.counts_in_windows()
    }

    /// Whether the host's statement in force left nothing, and it is asked one request at a
    /// time at its policy's rate, and which attempt's answer stated it (see `on_stated`).
    pub fn asked_one_at_a_time(&self, now_ms: f64) -> Option<u64> {
        self.quota.one_at_a_time(now_ms).then_some(self.stated_seq)
    }

    /// May an attempt go now? A `Go` has taken its rate token and, when `probe`, a probe place:
    /// its outcome must be reported.
    pub fn decide(&mut self, now_ms: f64) -> Decision {
        if now_ms < self.paused_until {
            return Decision::WaitUntil(self.paused_until, Hold::Pause);
        }
        self.quota.roll(now_ms);
        let stated = self.quota.stated(now_ms).is_some();
        if stated {
            if let Some(at) = self.quota.next_slot(now_ms) {
                return Decision::WaitUntil(at, Hold::Quota);
            }
        } else if let Some(at) = self.rate.next_slot(now_ms) {
            return Decision::WaitUntil(at, Hold::Rate);
        }
        let probe = match self.breaker.admit(now_ms) {
            Admission::Pass => false,
            Admission::Probe => true,
            Admission::WaitUntil(at) => return Decision::WaitUntil(at, Hold::Breaker),
            Admission::WaitForProbe => return Decision::WaitForProbe,
        };
        if stated {
            self.quota.take(now_ms);
        } else {
            self.rate.take(now_ms);
        }
        Decision::Go { probe }
    }

    /// Whether the host's answers show that the platform holds back none of its attempts for a
    /// connection (HTTP/2: see [`AdaptiveLimit::multiplexed`]); false with a fixed
    /// `maxConcurrent`, whose limit reads no answers.
    pub fn multiplexed(&self) -> bool {
        self.limit.as_ref().is_some_and(AdaptiveLimit::multiplexed)
    }

    /// The host as a browser meets it: an adaptive limit opens wide (see
    /// [`AdaptiveLimit::opened_wide`]); a fixed `maxConcurrent` stays as set.
    pub fn in_a_browser(mut self) -> HostState {
        if let Some(limit) = self.limit.as_mut() {
            *limit = AdaptiveLimit::opened_wide(self.slots.limit());
            self.slots.set_limit(limit.limit());
        }
        self
    }

    /// A failure or a throttle: the concurrency limit goes back to its default for a while.
    fn calm_limit(&mut self, now_ms: f64) {
        if let Some(limit) = self.limit.as_mut().and_then(|l| l.on_trouble(now_ms)) {
            self.slots.set_limit(limit);
        }
    }

    /// Whether a hedge may go to this host now, without waiting: never while it is paused, a
    /// learned rate paces it, its stated quota has less to spare now than a burst of the host's
    /// slots would take (the quota, not the host, then sets the pace, and the hedge would take a
    /// waiting tile's request), or its breaker is not closed. A hedge that may go takes its slot
    /// (the caller does) and, from a stated quota, the request it spends: the host counts it
    /// like any other, and before its next statement says so the attempts waiting for the quota
    /// would spend it again.
    pub fn admit_hedge(&mut self, now_ms: f64) -> bool {
        let admitted = now_ms >= self.paused_until
            && self.rate.rate().is_none()
            && !self.quota_binds(now_ms)
            && self.breaker.state(now_ms) == BreakerState::Closed;
        if admitted {
            self.quota.take(now_ms);
        }
        admitted
    }

    /// Whether the host's stated quota, not the host, sets the pace now: it has less to spare
    /// than a burst of the host's slots would take. (A generous quota does not.)
    pub fn quota_binds(&mut self, now_ms: f64) -> bool {
        self.quota.to_spare(now_ms) < self.slots.limit() as f64
    }

    /// Whether the host has answered (a tile, or a permanent answer) within the last
    /// [`EVIDENCE_WINDOW_MS`]: evidence against a Retry-After that says it cannot serve for hours.
    pub fn is_answering(&self, now_ms: f64) -> bool {
        now_ms - self.answered_at <= EVIDENCE_WINDOW_MS
    }

    /// Marks the pause the next throttle report sets as set by an implausible Retry-After: the
    /// host's next answer that is not a throttle lifts it.
    pub fn doubt_pause(&mut self) {
        self.doubt_next = true;
    }

    /// Whether the pause now in force may be lifted by the host's next answer.
    pub fn pause_is_doubtful(&self) -> bool {
        self.doubtful_pause
    }

    /// Notes that the host's attempt number `seq` delivered a tile (`answer`, see
    /// [`AdaptiveLimit::on_answer`]): the concurrency limit grows while such answers hold, and
    /// is the default while a quota, a learned rate, a pause or a breaker bounds the host.
    pub fn tile_answered(&mut self, seq: u64, answer: Answer) {
        let now_ms = answer.at_ms;
        let bounded = self.quota.stated(now_ms).is_some()
            || self.rate.rate().is_some()
            || now_ms < self.paused_until
            || self.breaker.state(now_ms) != BreakerState::Closed;
        let waiting = self.slots.queued() > 0;
        if let Some(limit) = self.limit.as_mut().and_then(|l| l.on_answer(answer, waiting, !bounded)) {
            self.slots.set_limit(limit);
        }
        let oldest = self.recent_tiles.iter_mut().min_by_key(|s| **s);
        if let Some(slot) = oldest {
            *slot = (*slot).max(seq);
        }
    }

    /// How many tiles came from attempts sent after attempt `seq` (of the last few: up to
    /// [`RECENT_TILES`]): requests that overtook it. Requests queued (behind the browser's connections to the host, behind a
    /// slow server) are answered in about the order they went; one that later ones overtake is
    /// stuck.
    pub fn tiles_sent_after(&self, seq: u64) -> usize {
        self.recent_tiles.iter().filter(|s| **s > seq).count()
    }

    /// Whether the host's last answer came without the CORS headers a browser needs.
    pub fn cors_refused(&self) -> bool {
        self.cors_refused
    }

    /// Learns from one attempt. `unit` ∈ [0, 1) jitters a new open time.
    pub fn report(&mut self, now_ms: f64, probe: bool, report: Report, unit: f64) -> Option<Change> {
        let before = self.breaker.state(now_ms);
        let mut change = None;
        match report {
            Report::CorsRefused => {
                // It answered: not a failure of the host, so the breaker, budget and pause
                // hear nothing against it.
                self.breaker.on_success(now_ms, probe);
                if !self.cors_refused {
                    self.cors_refused = true;
                    change = Some(Change::CorsRefused);
                }
            }
            Report::Alive => {
                self.cors_refused = false;
                self.breaker.on_success(now_ms, probe);
                self.rate.on_success(now_ms);
                self.answered_at = now_ms;
                if self.doubtful_pause && self.paused_until > now_ms {
                    // The host answers: the header that paused it was wrong about it.
                    self.paused_until = now_ms;
                    self.pause_wakes_until = now_ms;
                }
                self.doubtful_pause = false;
            }
            Report::Transient => {
                self.calm_limit(now_ms);
                self.breaker.on_failure(now_ms, probe, unit);
            }
            Report::Throttled { wait_ms, too_many, sent_ms } => {
                self.calm_limit(now_ms);
                self.breaker.on_success(now_ms, probe);
                if too_many {
                    self.quota.on_refused(sent_ms);
                }
                // A rate is learned from any throttle of a host that served a few requests in the
                // last second (what it served is the first estimate); one learned from a burst
                // allowance (a map's view overflowing it) probes upward within a second and is
                // forgotten unless the host refuses again (see `rate`).
                let paced = self.learn_rate && too_many && self.rate.on_rate_limited(now_ms, sent_ms);
                // Only the throttle the loop has just doubted sets a doubtful pause; a pause set by
                // a believed header is not lifted by an answer.
                let doubted = std::mem::take(&mut self.doubt_next);
                // A 429 that taught or lowered the rate came from a host that is serving
                // (what it served in the last second is the rate): the rate spaces every call's
                // attempts, and the Retry-After floors only the refused call's retry. A host-wide
                // pause on top would stop a host that serves 100 requests/s for a second at each
                // refusal of a probe above its rate.
                if let Some(wait) = wait_ms.filter(|_| !paced) {
                    let until = now_ms + wait;
                    if until > self.paused_until {
                        self.paused_until = until;
                        self.doubtful_pause = doubted;
                        change = Some(Change::Pause { until_ms: until });
                    }
                }
            }
            Report::Abandoned => self.breaker.on_abandoned(probe),
        }
        let after = self.breaker.state(now_ms);
        if after != before {
            change = Some(Change::Breaker(after));
        }
        // Probe places may have been freed even without a state change: wake the waiters.
        self.bump();
        change
    }

    fn bump(&mut self) {
        self.version = self.version.wrapping_add(1);
        for waker in self.watchers.drain(..) {
            waker.wake();
        }
    }
}

/// Resolves at the host's next change (a report); used while every half-open probe is out.
pub fn next_change(host: &SharedHost) -> NextChange {
    NextChange { host: host.clone(), seen: host.borrow().version }
}

/// The future of [`next_change`].
pub struct NextChange {
    host: SharedHost,
    seen: u64,
}

impl Future for NextChange {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut host = self.host.borrow_mut();
        if host.version != self.seen {
            return Poll::Ready(());
        }
        host.watchers.push(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> HostState {
        let config = HostConfig {
            breaker: BreakerConfig {
                failure_threshold: 2,
                open_ms: 1000.0,
                half_open_probes: 1,
                max_open_ms: 4000.0,
            },
            ..HostConfig::DEFAULT
        };
        HostState::new("h", &config, 0.0)
    }

    /// A host that served `n` requests, one a millisecond from 0.
    fn serving(n: u32) -> HostState {
        let mut h = host();
        for i in 0..n {
            h.report(f64::from(i), false, Report::Alive, 0.5);
        }
        h
    }

    /// A 429 (with `wait_ms` as its Retry-After) answering a request sent at `at`.
    fn throttle(h: &mut HostState, at: f64, wait_ms: Option<f64>) -> Option<Change> {
        h.report(at, false, Report::Throttled { wait_ms, too_many: true, sent_ms: at }, 0.5)
    }

    /// The same for a 503 with Retry-After.
    fn unavailable(h: &mut HostState, at: f64, wait_ms: Option<f64>) -> Option<Change> {
        h.report(at, false, Report::Throttled { wait_ms, too_many: false, sent_ms: at }, 0.5)
    }

    #[test]
    fn a_healthy_host_lets_every_attempt_go() {
        let mut h = host();
        for t in 0..100 {
            assert_eq!(h.decide(t as f64), Decision::Go { probe: false });
            assert_eq!(h.report(t as f64, false, Report::Alive, 0.5), None);
        }
    }

    #[test]
    fn retry_after_pauses_the_host_and_keeps_the_latest_end() {
        let mut h = host();
        let change = throttle(&mut h, 100.0, Some(1000.0));
        assert_eq!(change, Some(Change::Pause { until_ms: 1100.0 }));
        assert_eq!(h.decide(500.0), Decision::WaitUntil(1100.0, Hold::Pause));
        assert_eq!(throttle(&mut h, 200.0, Some(100.0)), None, "a shorter pause does not shorten it");
        assert_eq!(h.paused_until(1000.0), Some(1100.0));
        assert_eq!(h.paused_until(1100.0), None);
    }

    #[test]
    fn a_429_from_a_serving_host_teaches_a_rate_instead_of_a_pause() {
        let mut h = serving(20);
        let change = throttle(&mut h, 50.0, Some(1000.0));
        assert_eq!(h.rate(), Some(18.0), "90 % of the 20 served in the last second");
        assert_eq!((change, h.paused_until(50.0)), (None, None), "the rate spaces attempts; no pause");
        assert!(matches!(h.decide(50.0), Decision::WaitUntil(_, Hold::Rate)), "no token right after the 429");
        // Paced, the rate has grown when the host refuses again: that 429 lowers it to what was
        // served, not below half the refused rate.
        for i in 0..30 {
            h.report(500.0 + f64::from(i) * 15.0, false, Report::Alive, 0.5);
        }
        h.decide(1_000.0);
        let refused = h.rate().unwrap();
        throttle(&mut h, 1_000.0, Some(1000.0));
        assert_eq!(h.rate(), Some(27.0_f64.max(refused / 2.0)));
        assert!(h.paused_until(1_000.0).is_none());
    }

    #[test]
    fn a_429_from_a_host_that_serves_nothing_pauses_it() {
        let mut h = serving(4);
        let change = throttle(&mut h, 50.0, Some(1000.0));
        assert_eq!(h.rate(), None, "4 served: too few to tell a rate (a quota, an outage)");
        assert_eq!(change, Some(Change::Pause { until_ms: 1050.0 }));
        assert!(matches!(h.decide(60.0), Decision::WaitUntil(1050.0, Hold::Pause)));
        let mut off =
            HostState::new("a.example", &HostConfig { learn_rate: false, ..HostConfig::DEFAULT }, 0.0);
        for i in 0..20 {
            off.report(f64::from(i), false, Report::Alive, 0.5);
        }
        throttle(&mut off, 50.0, Some(1000.0));
        assert_eq!((off.rate(), off.paused_until(50.0)), (None, Some(1050.0)), "learnRate: false pauses");
        let mut down = serving(20);
        unavailable(&mut down, 50.0, Some(1000.0));
        assert_eq!(down.paused_until(50.0), Some(1050.0), "a 503's Retry-After still pauses");
    }

    #[test]
    fn after_a_429_the_learned_rate_spaces_attempts_and_doubles() {
        let mut h = serving(20);
        throttle(&mut h, 50.0, Some(1000.0));
        assert_eq!(h.rate(), Some(18.0));
        let mut went = 0;
        let mut now = 50.0;
        while now < 1050.0 {
            match h.decide(now) {
                Decision::Go { .. } => went += 1,
                Decision::WaitUntil(at, Hold::Rate) => now = at,
                other => panic!("{other:?}"),
            }
        }
        // Held at 18/s for 250 ms, then doubling every 250 ms: 18 → 144 (∫ ≈ 4.5 + 45).
        assert!((42..=56).contains(&went), "{went} in the second after the 429");
    }

    #[test]
    fn the_breaker_opens_and_half_opens_with_one_probe() {
        let mut h = host();
        assert_eq!(h.report(0.0, false, Report::Transient, 0.5), None);
        assert_eq!(h.report(1.0, false, Report::Transient, 0.5), Some(Change::Breaker(BreakerState::Open)));
        assert_eq!(h.decide(2.0), Decision::WaitUntil(1001.0, Hold::Breaker));
        assert_eq!(h.decide(1001.0), Decision::Go { probe: true });
        assert_eq!(h.decide(1002.0), Decision::WaitForProbe);
        assert_eq!(h.report(1100.0, true, Report::Alive, 0.5), Some(Change::Breaker(BreakerState::Closed)));
        assert_eq!(h.decide(1101.0), Decision::Go { probe: false });
    }

    #[test]
    fn reports_wake_calls_waiting_for_a_probe() {
        use std::pin::pin;
        let shared = host().shared();
        let mut waiting = pin!(next_change(&shared));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        shared.borrow_mut().report(0.0, true, Report::Abandoned, 0.5);
        assert!(waiting.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn a_doubtful_pause_is_lifted_by_the_next_answer_and_a_believed_one_is_not() {
        let mut h = HostState::new("a.example", &HostConfig::DEFAULT, 0.0);
        throttle(&mut h, 0.0, Some(60_000.0));
        h.report(100.0, false, Report::Alive, 0.5);
        assert_eq!(h.paused_until(100.0), Some(60_000.0), "a plausible pause stays");
        h.doubt_pause();
        throttle(&mut h, 200.0, Some(60_000.0));
        assert!(h.paused_until(300.0).is_some());
        h.report(300.0, false, Report::Alive, 0.5);
        assert_eq!(h.paused_until(300.0), None, "the answer contradicts the header");
        assert!(!h.pause_is_doubtful());
        assert!(h.is_answering(300.0 + EVIDENCE_WINDOW_MS) && !h.is_answering(301.0 + EVIDENCE_WINDOW_MS));
    }

    #[test]
    fn a_hedge_goes_only_to_a_closed_unpaused_unpaced_host() {
        let mut h = HostState::new("a.example", &HostConfig::DEFAULT, 0.0);
        assert!(h.admit_hedge(0.0));
        throttle(&mut h, 0.0, Some(1_000.0));
        assert!(!h.admit_hedge(500.0), "paused");
        let mut h = HostState::new("a.example", &HostConfig::DEFAULT, 0.0);
        for t in 0..40 {
            h.report(f64::from(t), false, Report::Transient, 0.5);
        }
        assert_ne!(h.breaker.state(40.0), BreakerState::Closed);
        assert!(!h.admit_hedge(40.0), "the breaker is not closed");
        let mut h = HostState::new("a.example", &HostConfig::DEFAULT, 0.0);
        for t in 0..40 {
            h.report(f64::from(t) * 25.0, false, Report::Alive, 0.5);
        }
        throttle(&mut h, 1_000.0, None);
        assert!(h.rate().is_some(), "a 429 taught a rate");
        assert!(!h.admit_hedge(1_001.0), "paced by a learned rate");
    }

    #[test]
    fn a_hedge_goes_to_a_host_whose_stated_quota_has_a_request_to_spare() {
        let stated = |remaining: f64| Stated {
            policy: Some("p".into()),
            quota: None,
            window_s: None,
            remaining,
            reset_s: Some(60.0),
        };
        let mut h = HostState::new("a.example", &HostConfig::DEFAULT, 0.0);
        h.on_stated(0.0, stated(1_000.0), StatedBy { seq: 1, sent_ms: 0.0 }, 0, 60_000.0);
        assert!(h.admit_hedge(1.0), "a thousand left in a minute: a hang still gets its hedge");
        h.on_stated(1.5, stated(1_000.0), StatedBy { seq: 2, sent_ms: 1.5 }, 0, 60_000.0);
        h.on_stated(2.0, stated(0.0), StatedBy { seq: 3, sent_ms: 2.0 }, 0, 60_000.0);
        assert!(!h.admit_hedge(3.0), "nothing left");
        // Two requests to spare now: the quota sets the pace, and they are the waiting tiles'.
        h.on_stated(4.0, stated(120.0), StatedBy { seq: 4, sent_ms: 4.0 }, 0, 60_000.0);
        assert!(!h.admit_hedge(5.0), "less to spare than a burst of the host's slots");
        // A burst's worth and a half: the hedge spends one of them, like any attempt.
        h.on_stated(6.0, stated(990.0), StatedBy { seq: 5, sent_ms: 6.0 }, 0, 60_000.0);
        assert!(h.admit_hedge(7.0));
        assert!(!h.admit_hedge(7.0), "it took one");
    }

    /// The adaptive limit, as the host's calls meet it: it grows while tiles come fast and
    /// attempts wait; a throttle takes it back to the default at once; a stated quota holds it
    /// there; an explicit `maxConcurrent` never moves.
    #[test]
    fn the_concurrency_limit_grows_and_falls_back_on_a_throttle_or_a_quota() {
        use crate::host::limit::{WARM_UP_ANSWERS, WARM_UP_MS};
        use std::task::{Context, Waker};
        // A host with 16 out and 20 waiting answers a tile at 0, then from a second on the
        // warm-up's and eight more, each in 40 ms; `before` may state a quota first.
        let grown = |config: &HostConfig, before: &dyn Fn(&mut HostState)| {
            let mut h = HostState::new("a.example", config, 0.0);
            before(&mut h);
            let held: Vec<_> = (0..16).filter_map(|_| h.slots.try_acquire()).collect();
            let mut waiters: Vec<_> = (0..20).map(|_| Box::pin(h.slots.acquire())).collect();
            for w in &mut waiters {
                assert!(w.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
            }
            for i in 0..WARM_UP_ANSWERS + 8 {
                let at_ms = if i == 0 { 0.0 } else { WARM_UP_MS + f64::from(i) };
                let answer = Answer {
                    at_ms,
                    took_ms: 40.0,
                    held_back: None,
                    overtook: None,
                    limit_at_send: h.slots.limit(),
                };
                h.tile_answered(u64::from(i) + 1, answer);
            }
            drop((held, waiters));
            h
        };
        let nothing = |_: &mut HostState| {};
        let mut h = grown(&HostConfig::DEFAULT, &nothing);
        assert_eq!(h.slots.limit(), 24, "one more for each fast tile while an attempt waits");
        throttle(&mut h, 9.0, None);
        assert_eq!(h.slots.limit(), 16, "a 429: the default");
        let mut h = grown(&HostConfig::DEFAULT, &nothing);
        h.report(9.0, false, Report::Transient, 0.5);
        assert_eq!(h.slots.limit(), 16, "a failure: the default");
        let fixed = grown(&HostConfig { fixed_concurrency: true, ..HostConfig::DEFAULT }, &nothing);
        assert_eq!(fixed.slots.limit(), 16, "maxConcurrent set: fixed");
        let stated = |h: &mut HostState| {
            let five_thousand =
                Stated { policy: None, quota: None, window_s: None, remaining: 5_000.0, reset_s: Some(60.0) };
            h.on_stated(0.0, five_thousand, StatedBy { seq: 1, sent_ms: 0.0 }, 0, 60_000.0);
        };
        assert_eq!(grown(&HostConfig::DEFAULT, &stated).slots.limit(), 16, "a stated quota bounds the host");
    }

    #[test]
    fn give_ups_are_counted_by_kind() {
        let mut c = Counters::default();
        c.give_up("http");
        c.give_up("deadline");
        c.give_up("http");
        assert_eq!(c.give_ups, vec![("http", 2), ("deadline", 1)]);
    }
}
