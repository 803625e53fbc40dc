//! An upstream host's shared gate: the state a fleet of edge isolates shares about one upstream
//! (the `UpstreamGate` Durable Object of tilefetch/worker holds one per host). It is the core's
//! own [`HostState`] (the same breaker, Retry-After pause and rate as every client's), asked
//! before each attempt and told each attempt's outcome, so that one isolate's discovery of an
//! outage is every isolate's before their own breakers have seen anything.
//!
//! Two things a gate needs that a client's host does not: a probe admitted to an isolate that
//! then vanishes (evicted mid-attempt) must not hold the breaker half-open forever, so each probe
//! place is a lease; and outcomes arrive as an attempt's status, not a classified response (the
//! isolate reports what its `fetch` saw), so [`Outcome::of_status`] turns a status into a report
//! by the client's default `retryOn`. Times are epoch ms (the object's `Date.now()`).

use crate::host::breaker::{BreakerConfig, BreakerState};
use crate::host::quota::UNCERTAIN_END_MS;
use crate::host::state::{Change, Decision, Hold, Report, StatedBy};
use crate::host::turns::{Turns, TURN_GRACE_MS};
use crate::host::{HostConfig, HostState};
use crate::options::value::{Entry, Value};
use crate::options::{Options, Preset};
use crate::response::rate_limit::Stated;
use crate::timing::retry_after::parse_retry_after;
use crate::Error;
use std::collections::VecDeque;

pub use crate::options::registry::GATE_KEYS;

/// A gate's settings (tilefetch/worker's `gate` config; its defaults are documented there).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateConfig {
    /// `failureThreshold`, `openMs`, `maxOpenMs`: the breaker; one probe at a time.
    pub breaker: BreakerConfig,
    /// `ratePerSecond` and `burst`: a configured rate for the whole fleet, if any.
    pub rate: Option<(f64, f64)>,
    /// How long a probe place stays taken without a report (the isolate's deadline and then
    /// some): then the probe counts as abandoned and another may go.
    pub probe_lease_ms: f64,
}

impl GateConfig {
    /// The settings from the worker's resolved `gate` config, by name. The worker validated
    /// them against its documented ranges; here every key must be there, known, and a finite
    /// number ≥ 0 (`ratePerSecond` may be absent: no rate), or the error names it.
    pub fn from_entries(entries: &[Entry]) -> Result<GateConfig, Error> {
        let mut values = [None; GATE_KEYS.len()];
        for (key, value) in entries {
            let Some(i) = GATE_KEYS.iter().position(|k| k == key) else {
                return Err(crate::options::validate::unknown_among(key, &[&GATE_KEYS]));
            };
            values[i] = match value {
                Value::Absent => None,
                Value::Number(n) if n.is_finite() && *n >= 0.0 => Some(*n),
                _ => return Err(Error::invalid_options(key, "must be a finite number ≥ 0")),
            };
        }
        let field = |i: usize| values[i].ok_or_else(|| Error::invalid_options(GATE_KEYS[i], "is missing"));
        let breaker = BreakerConfig {
            failure_threshold: field(0)?.clamp(1.0, f64::from(u32::MAX)) as u32,
            open_ms: field(1)?,
            half_open_probes: 1,
            max_open_ms: field(2)?,
        };
        let rate = match values[3] {
            Some(per_second) if per_second > 0.0 => Some((per_second, field(4)?)),
            _ => None,
        };
        Ok(GateConfig { breaker, rate, probe_lease_ms: field(5)? })
    }
}

/// How soon an attempt refused while the one request a host with nothing left is asked is out
/// asks again: about the time an answer takes to come back and be reported.
const ONE_AT_A_TIME_RECHECK_MS: f64 = 50.0;

/// How soon an attempt refused because what the quota has left is the waiting attempts' asks
/// again: they ask as their waits end, and take it or lose their turn.
const TURN_RECHECK_MS: f64 = 100.0;

/// How long before an attempt another may have been admitted and still reach the upstream after
/// it: each goes from its own isolate.
const ARRIVAL_SPREAD_MS: f64 = 50.0;

/// How many admission times a gate keeps, to date the attempt a statement answered.
const RECENT_ADMITS: usize = 1024;

/// Why a gate refuses an attempt, as the worker's answers and errors spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The upstream asked for a pause (Retry-After).
    Pause,
    /// The breaker is open.
    Open,
    /// Half-open, and the probe is out.
    Probe,
    /// The configured rate.
    Rate,
    /// The quota the upstream states, spread until more comes.
    Quota,
}

impl Refusal {
    /// The reason's name on the wire (`reason` of an admit answer).
    pub fn name(self) -> &'static str {
        match self {
            Refusal::Pause => "pause",
            Refusal::Open => "open",
            Refusal::Probe => "probe",
            Refusal::Rate => "rate",
            Refusal::Quota => "quota",
        }
    }
}

/// What the gate says to one attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Send it; as a probe when `probe` (its report must say so).
    Allow {
        /// Whether it goes as the half-open probe.
        probe: bool,
    },
    /// Do not send it; ask again in `wait_ms` at the earliest.
    Refuse {
        /// Why.
        reason: Refusal,
        /// From now, at least 1 ms.
        wait_ms: f64,
        /// Its turn for the quota (see [`crate::host::turns`]), to show when it asks again.
        turn: Option<u64>,
    },
}

/// What an isolate's attempt met, at the level its `fetch` sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome<'a> {
    /// A response with this status and, for 429 and 503, its `Retry-After` and `Date`.
    Status {
        /// The HTTP status.
        status: u16,
        /// The `Retry-After` header as received.
        retry_after: Option<&'a str>,
        /// The `Date` header as received.
        date: Option<&'a str>,
    },
    /// The request failed without a response (network error, the attempt's timeout).
    Failed,
    /// The isolate aborted it (its caller left, a hedge lost): nothing learned.
    Abandoned,
}

/// Counts of what the gate did, for its `state` answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateCounts {
    /// Attempts allowed.
    pub admitted: u64,
    /// Attempts refused.
    pub denied: u64,
    /// Reports of an upstream that answered.
    pub ok: u64,
    /// Reports of a failure or a throttle.
    pub failed: u64,
    /// Times the breaker opened.
    pub opened: u64,
}

/// One upstream host's gate.
pub struct Gate {
    host: HostState,
    probe_lease_ms: f64,
    /// When each probe place now taken is given up on.
    leases: Vec<f64>,
    /// Each admitted attempt not yet heard of, oldest first: its number (`counts.admitted`
    /// when it was) and when it is given up on. The upstream may not have counted them when it
    /// stated its quota.
    outstanding: VecDeque<(u64, f64)>,
    /// When the latest admitted attempts were admitted, the newest last (at most
    /// [`RECENT_ADMITS`]).
    admit_times: VecDeque<f64>,
    /// Attempts refused for the quota, in line for it.
    turns: Turns,
    /// When the latest failure or throttle was reported.
    failed_at: f64,
    /// The client's default `retryOn` and `retryAfterMaxMs`, by which statuses are judged.
    defaults: Options,
    /// What is counted, for `state`.
    pub counts: GateCounts,
}

impl Gate {
    /// A gate with its breaker closed and no pause.
    pub fn new(name: &str, config: &GateConfig, now_ms: f64) -> Gate {
        let mut breaker = config.breaker;
        breaker.half_open_probes = 1;
        // The gate is told outcomes, it does not send: its host's slots are never taken, and it
        // learns no rate of its own (a 429 pauses it by its Retry-After).
        let host_config = HostConfig { breaker, learn_rate: false, ..HostConfig::DEFAULT };
        let mut host = HostState::new(name, &host_config, now_ms);
        if let Some((per_second, burst)) = config.rate {
            host.fix_rate(per_second, burst, now_ms);
        }
        Gate {
            host,
            probe_lease_ms: config.probe_lease_ms,
            leases: Vec::new(),
            outstanding: VecDeque::new(),
            admit_times: VecDeque::new(),
            turns: Turns::default(),
            failed_at: f64::NEG_INFINITY,
            defaults: Options::preset(Preset::Interactive),
            counts: GateCounts::default(),
        }
    }

    /// May an attempt go now? An allowed probe holds the probe place until its report or the end
    /// of its lease.
    #[cfg(test)]
    pub fn admit(&mut self, now_ms: f64) -> Verdict {
        self.admit_in_turn(now_ms, None)
    }

    /// May an attempt go now, that holds `turn` (the gate gave it with its last refusal for the
    /// quota)? Waiting attempts go first: while the quota has no more to spare than they need,
    /// others are refused, and get their own turn. An allowed probe holds the probe place until
    /// its report or the end of its lease.
    pub fn admit_in_turn(&mut self, now_ms: f64, turn: Option<u64>) -> Verdict {
        self.expire_leases(now_ms);
        self.turns.expire(now_ms);
        let verdict = self.verdict(now_ms, turn);
        match verdict {
            Verdict::Allow { .. } => {
                self.counts.admitted += 1;
                self.turns.taken(turn);
            }
            Verdict::Refuse { .. } => self.counts.denied += 1,
        }
        verdict
    }

    fn verdict(&mut self, now_ms: f64, turn: Option<u64>) -> Verdict {
        // Nothing left, and the one request its policy's rate allows has gone since: its answer
        // tells whether the host counts in windows (a 429) or refills (a tile), before another.
        let asking = self.host.asked_one_at_a_time(now_ms);
        if asking.is_some_and(|stated| self.outstanding.iter().any(|(n, _)| *n > stated)) {
            return Verdict::Refuse { reason: Refusal::Quota, wait_ms: ONE_AT_A_TIME_RECHECK_MS, turn };
        }
        let ahead = self.turns.ahead_of(turn);
        let spare = self.host.quota_to_spare(now_ms);
        if ahead > 0 && spare >= 1.0 && spare < ahead as f64 + 1.0 {
            // What is left is the waiting attempts': ask again soon, when they have had their
            // turn or lost it (with nothing left at all, the quota's own wait, below).
            let kept = self.turns.head_kept_until(ahead).unwrap_or(now_ms);
            let wait_ms = (kept - now_ms).clamp(1.0, TURN_RECHECK_MS);
            let turn = self.turns.wait(turn, now_ms + wait_ms + TURN_GRACE_MS);
            return Verdict::Refuse { reason: Refusal::Quota, wait_ms, turn };
        }
        match self.host.decide(now_ms) {
            Decision::Go { probe } => {
                if probe {
                    self.leases.push(now_ms + self.probe_lease_ms);
                }
                self.outstanding.push_back((self.counts.admitted + 1, now_ms + self.probe_lease_ms));
                if self.admit_times.len() == RECENT_ADMITS {
                    self.admit_times.pop_front();
                }
                self.admit_times.push_back(now_ms);
                Verdict::Allow { probe }
            }
            Decision::WaitUntil(at, Hold::Quota) if self.host.counts_in_windows() => {
                // A window's end: what comes then goes to the attempts that waited for it first.
                let turn = self.turns.wait(turn, at + TURN_GRACE_MS);
                Verdict::Refuse { reason: Refusal::Quota, wait_ms: (at - now_ms).max(1.0), turn }
            }
            Decision::WaitUntil(at, hold) => {
                let reason = match hold {
                    Hold::Pause => Refusal::Pause,
                    Hold::Breaker => Refusal::Open,
                    Hold::Rate => Refusal::Rate,
                    Hold::Quota => Refusal::Quota,
                };
                Verdict::Refuse { reason, wait_ms: (at - now_ms).max(1.0), turn }
            }
            Decision::WaitForProbe => {
                // The probe's answer usually comes within an attempt; ask again within a second.
                let lease_end = self.leases.iter().copied().fold(f64::INFINITY, f64::min);
                let wait_ms = (lease_end - now_ms).clamp(1.0, 1000.0);
                Verdict::Refuse { reason: Refusal::Probe, wait_ms, turn }
            }
        }
    }

    /// Learns that `count` attempts (none a probe) got a tile, the latest `age_ms` ago: what an
    /// isolate tells the gate with its next admit, instead of one report per success (at most
    /// 1000 at a time). Successes older than the latest failure reported since do not break that
    /// failure's run (an isolate's tiles from before an outage must not delay the breaker): they
    /// are counted, and change nothing else.
    pub fn answered(&mut self, now_ms: f64, count: u32, age_ms: f64) {
        let count = count.min(1000);
        if count == 0 {
            return;
        }
        self.heard_of(count as usize);
        self.counts.ok += u64::from(count);
        if now_ms - age_ms.max(0.0) > self.failed_at {
            // One report stands for them all: an answer resets the failure run and closes a
            // breaker whoever tells it, and the gate learns no rate from successes.
            self.host.report(now_ms, false, Report::Alive, 0.0);
        }
    }

    /// Takes in the rate limit an upstream stated to an isolate `age_ms` ago (its rate-limit
    /// fields as `name: value` lines, see [`crate::response::rate_limit::stated`]) in the
    /// answer to its attempt number `seq` (see [`Gate::admitted`]): while it is in force the gate
    /// paces every isolate by it (refusing with [`Refusal::Quota`]). As the core takes a
    /// client's: an answer to an attempt older than the one that set the statement in force is
    /// passed over, and the attempts admitted after it and not heard of since come off what it
    /// states, with those admitted within [`ARRIVAL_SPREAD_MS`] before it (another isolate's
    /// attempt may reach the upstream after it). Without `seq`, the statement is taken as the
    /// latest, less every attempt not heard of.
    pub fn stated(&mut self, now_ms: f64, lines: &str, age_ms: f64, seq: Option<u64>) {
        let at = now_ms - age_ms.clamp(0.0, self.probe_lease_ms);
        let Some(stated) = crate::response::rate_limit::stated(lines, at) else { return };
        self.expire_leases(now_ms);
        let (seq, after) = match seq.filter(|n| *n <= self.counts.admitted) {
            Some(n) => (n, n),
            None => (self.counts.admitted, 0),
        };
        let lease = self.probe_lease_ms;
        let close = self.admitted_at(after).map_or(f64::INFINITY, |at| at - ARRIVAL_SPREAD_MS);
        let later = |&&(n, until): &&(u64, f64)| n > after || (n < after && until - lease >= close);
        // A host that counts in windows counts every request of the window: of those the gate
        // admitted in it, the ones it has not counted yet are the others, whatever the order
        // they reach it in (isolates tell answers late and out of order: a statement of an
        // earlier attempt may come after a later one's, and one from a burst admitted at once
        // has most of the burst counted).
        let window = self.host.counts_in_windows().then(|| self.admitted_in_window(&stated, at)).flatten();
        let others = match (window, stated.quota) {
            (Some(admitted), Some(q)) => (admitted as f64 - (q - stated.remaining)).max(0.0) as usize,
            _ => self.outstanding.iter().filter(later).count(),
        };
        // Sent after it was admitted, or (sent before the gate answered, see gated-fetch.js)
        // within a gate round trip before; an attempt no longer in the record, at no known time.
        let sent_ms = self.admitted_at(after).map_or(f64::NEG_INFINITY, |at| at - ARRIVAL_SPREAD_MS);
        let by = StatedBy { seq, sent_ms };
        self.host.on_stated(at, stated, by, others, self.defaults.retry_after_max_ms);
    }

    /// Whether a rate paces the upstream now (a stated quota that sets the pace, or the
    /// configured rate): an attempt sent before its admit is answered would spend what the
    /// gate has not given, and a hedge a waiting tile's request.
    pub fn paced(&mut self, now_ms: f64) -> bool {
        self.host.rate().is_some() || self.host.quota_binds(now_ms)
    }

    /// When the attempt number `seq` was admitted, if it is one of the latest.
    fn admitted_at(&self, seq: u64) -> Option<f64> {
        let first = (self.counts.admitted + 1).checked_sub(self.admit_times.len() as u64)?;
        let index = usize::try_from(seq.checked_sub(first)?).ok()?;
        self.admit_times.get(index).copied()
    }

    /// How many attempts the gate admitted in the window a statement answered at `at_ms` is
    /// of: since the earliest it may have begun (its `t` is rounded up to whole seconds).
    /// `None` without a window, or when the gate's record of admissions reaches no further back.
    fn admitted_in_window(&self, stated: &Stated, at_ms: f64) -> Option<u64> {
        let (Some(w), Some(t)) = (stated.window_s, stated.reset_s) else { return None };
        let began_after = at_ms + (t - w) * 1000.0 - UNCERTAIN_END_MS;
        let full = self.admit_times.len() == RECENT_ADMITS;
        if full && self.admit_times.front().is_some_and(|first| *first >= began_after) {
            return None;
        }
        Some(self.admit_times.iter().rev().take_while(|admitted| **admitted >= began_after).count() as u64)
    }

    /// The number of the latest attempt admitted: an isolate tells it with what the attempt's
    /// answer stated.
    pub fn admitted(&self) -> u64 {
        self.counts.admitted
    }

    /// Forgets the `count` oldest admitted attempts: reported, or told as answered.
    fn heard_of(&mut self, count: usize) {
        self.outstanding.drain(..count.min(self.outstanding.len()));
    }

    /// Learns from one attempt's outcome. `now_ms` (epoch ms) also dates an HTTP-date
    /// Retry-After; `unit` ∈ [0, 1) jitters a new open time.
    pub fn report(&mut self, now_ms: f64, probe: bool, outcome: Outcome, unit: f64) {
        self.report_attempt(now_ms, probe, outcome, unit, None);
    }

    /// [`Gate::report`] of the admitted attempt number `seq`, when the isolate tells it.
    pub fn report_attempt(
        &mut self,
        now_ms: f64,
        probe: bool,
        outcome: Outcome,
        unit: f64,
        seq: Option<u64>,
    ) {
        if probe && !self.leases.is_empty() {
            // Any one of them: leases are alike, and the earliest ends first.
            let earliest = (0..self.leases.len())
                .min_by(|&a, &b| self.leases[a].total_cmp(&self.leases[b]))
                .unwrap_or(0);
            self.leases.swap_remove(earliest);
        }
        match seq {
            // That one (gone already if its lease ended, or if told with an admit before).
            Some(n) => {
                if let Some(i) = self.outstanding.iter().position(|(m, _)| *m == n) {
                    self.outstanding.remove(i);
                }
            }
            None => self.heard_of(1),
        }
        let report = self.report_of(outcome, now_ms);
        match report {
            Report::Alive | Report::CorsRefused => self.counts.ok += 1,
            Report::Transient | Report::Throttled { .. } => {
                self.counts.failed += 1;
                self.failed_at = now_ms;
            }
            Report::Abandoned => {}
        }
        if let Some(Change::Breaker(BreakerState::Open)) = self.host.report(now_ms, probe, report, unit) {
            self.counts.opened += 1;
        }
    }

    /// The host's report for an outcome: a status the client's default `retryOn` retries is a
    /// failure (a 429, or a 503 with Retry-After, a throttle that pauses the gate), any other an
    /// answer. A Retry-After longer than any call could wait, from a host that has answered within
    /// the last seconds, is the core's case of an implausible header: it pauses nothing (see
    /// `weigh_retry_after` in retry.rs); clamped to the client's default `retryAfterMaxMs`.
    fn report_of(&mut self, outcome: Outcome, now_ms: f64) -> Report {
        let (status, retry_after, date) = match outcome {
            Outcome::Failed => return Report::Transient,
            Outcome::Abandoned => return Report::Abandoned,
            Outcome::Status { status, retry_after, date } => (status, retry_after, date),
        };
        if !self.defaults.retry_on.contains(status) {
            return Report::Alive;
        }
        let wait = if status == 429 || status == 503 {
            let server_now = date.and_then(crate::timing::http_date::parse_http_date);
            retry_after.and_then(|v| parse_retry_after(v, server_now, now_ms))
        } else {
            None
        };
        match wait {
            Some(wait) if wait >= self.probe_lease_ms && self.host.is_answering(now_ms) => {
                if status == 429 {
                    Report::Throttled { wait_ms: None, too_many: true, sent_ms: now_ms }
                } else {
                    Report::Transient
                }
            }
            Some(wait) => {
                if wait >= self.probe_lease_ms {
                    self.host.doubt_pause();
                }
                Report::Throttled {
                    wait_ms: Some(wait.min(self.defaults.retry_after_max_ms)),
                    too_many: status == 429,
                    sent_ms: now_ms,
                }
            }
            None if status == 429 => Report::Throttled { wait_ms: None, too_many: true, sent_ms: now_ms },
            None => Report::Transient,
        }
    }

    fn expire_leases(&mut self, now_ms: f64) {
        while self.outstanding.front().is_some_and(|&(_, until)| until <= now_ms) {
            self.outstanding.pop_front();
        }
        while let Some(i) = self.leases.iter().position(|&until| until <= now_ms) {
            self.leases.swap_remove(i);
            self.host.report(now_ms, true, Report::Abandoned, 0.0);
        }
    }

    /// The breaker's state as of now (an open breaker whose time is up reads as half-open).
    pub fn state(&self, now_ms: f64) -> BreakerState {
        self.host.breaker.state(now_ms)
    }

    /// When the open time ends, while the breaker is open.
    pub fn open_until(&self, now_ms: f64) -> Option<f64> {
        self.host.breaker.open_until().filter(|&until| until > now_ms)
    }

    /// When the upstream's pause ends, while it lasts.
    pub fn paused_until(&self, now_ms: f64) -> Option<f64> {
        self.host.paused_until(now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: GateConfig = GateConfig {
        breaker: BreakerConfig {
            failure_threshold: 3,
            open_ms: 1000.0,
            half_open_probes: 1,
            max_open_ms: 1500.0,
        },
        rate: None,
        probe_lease_ms: 2500.0,
    };
    const T0: f64 = 1_700_000_000_000.0;

    fn status(status: u16) -> Outcome<'static> {
        Outcome::Status { status, retry_after: None, date: None }
    }

    #[test]
    fn failed_attempts_open_it_at_the_threshold_and_a_probe_closes_it() {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        for i in 0..3 {
            assert_eq!(g.admit(T0 + i as f64), Verdict::Allow { probe: false });
            g.report(T0 + i as f64, false, if i == 1 { Outcome::Failed } else { status(503) }, 0.5);
        }
        assert_eq!(g.state(T0 + 3.0), BreakerState::Open);
        assert_eq!(g.counts.opened, 1);
        match g.admit(T0 + 10.0) {
            Verdict::Refuse { reason: Refusal::Open, wait_ms, .. } => assert!((wait_ms - 992.0).abs() < 1e-6),
            other => panic!("{other:?}"),
        }
        // After the open time: one probe; the others wait for it.
        assert_eq!(g.admit(T0 + 1003.0), Verdict::Allow { probe: true });
        assert!(matches!(g.admit(T0 + 1004.0), Verdict::Refuse { reason: Refusal::Probe, .. }));
        g.report(T0 + 1050.0, true, status(200), 0.5);
        assert_eq!(g.state(T0 + 1050.0), BreakerState::Closed);
        assert_eq!(g.admit(T0 + 1051.0), Verdict::Allow { probe: false });
    }

    /// A gate that threshold-many answers of `code` at `T0` opened.
    fn opened_by(code: u16) -> Gate {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        for _ in 0..CONFIG.breaker.failure_threshold {
            g.report(T0, false, status(code), 0.5);
        }
        g
    }

    /// What one isolate was told is every isolate's pace: a statement of 4 left in 2 s lets 4 go
    /// (a second's worth at once, the rest spread), then refuses with `quota` until more comes;
    /// one of nothing left refuses until its time; garbage changes nothing.
    #[test]
    fn a_stated_quota_paces_every_isolate() {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        g.stated(T0, "ratelimit: \"tiles\";r=4;t=2\n", 0.0, None);
        let allowed =
            (0..10).filter(|i| matches!(g.admit(T0 + f64::from(*i)), Verdict::Allow { .. })).count();
        assert_eq!(allowed, 2, "a second's worth at once");
        assert!(g.paced(T0 + 10.0) && !Gate::new("up.example", &CONFIG, T0).paced(T0));
        match g.admit(T0 + 10.0) {
            Verdict::Refuse { reason: Refusal::Quota, wait_ms, .. } => {
                assert!(wait_ms > 900.0 && wait_ms <= 1000.0, "{wait_ms}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(Refusal::Quota.name(), "quota");
        g.stated(
            T0 + 20.0,
            "ratelimit-policy: \"tiles\";q=10;w=60\nratelimit: \"tiles\";r=0;t=30\n",
            0.0,
            None,
        );
        assert!(matches!(g.admit(T0 + 25.0), Verdict::Refuse { reason: Refusal::Quota, .. }));
        let mut fresh = Gate::new("up.example", &CONFIG, T0);
        fresh.stated(T0, "ratelimit: nonsense((\n", 0.0, None);
        assert_eq!(fresh.admit(T0), Verdict::Allow { probe: false });
    }

    /// A fixed window of 60 per 2 s, stated in the draft's fields, 429 + Retry-After past it;
    /// 200 tiles, 32 at a time, from 4 isolates that tell the gate their tiles with their next
    /// admit (so it hears of them late, and out of order) and their failures at once. The gate
    /// learns the window from its one refusal, then spends each window's quota and waits for
    /// its end: every tile within a few ms of the windows' floor (6 s), a 429 or two in all.
    #[test]
    fn isolates_sharing_a_gate_spend_a_fixed_window_without_overrunning_it() {
        const Q: u32 = 60;
        const W: f64 = 2000.0;
        let config = GateConfig { probe_lease_ms: 7000.0, ..CONFIG };
        let mut g = Gate::new("up.example", &config, T0);
        // The upstream: windows from its first request.
        let (mut start, mut window, mut used) = (None::<f64>, -1.0, 0);
        let mut arrive = |at: f64| {
            let start = *start.get_or_insert(at);
            let index = ((at - start) / W).floor();
            if index != window {
                (window, used) = (index, 0);
            }
            let ends_in = start + (index + 1.0) * W - at;
            let t = (ends_in / 1000.0).ceil();
            let ok = used < Q;
            used += u32::from(ok);
            let lines =
                format!("ratelimit-policy: \"tiles\";q={Q};w=2\nratelimit: \"tiles\";r={};t={t}\n", Q - used);
            (ok, lines, t)
        };
        // Per isolate: tiles not yet told, the latest when, and the newest statement with its
        // attempt's number.
        type Untold = (u32, f64, Option<(String, u64)>);
        let mut untold: [Untold; 4] = Default::default();
        // Per call: its tile, when it next asks the gate, or its answer and when it comes.
        struct Call {
            tile: usize,
            ask_at: f64,
            /// When it comes, whether a tile, what it states, its Retry-After, the attempt's number.
            answer: Option<(f64, bool, String, f64, u64)>,
            /// Its turn for the quota, shown when it asks again.
            turn: Option<u64>,
        }
        let mut calls: Vec<Call> =
            (0..32).map(|tile| Call { tile, ask_at: T0, answer: None, turn: None }).collect();
        let (mut next_tile, mut done, mut sent, mut refused, mut last_done) = (32, 0, 0, 0, T0);
        let mut now = T0;
        while done < 200 && now < T0 + 20_000.0 {
            for call in calls.iter_mut() {
                let isolate = call.tile % 4;
                if let Some((at, ok, lines, t, seq)) = call.answer.clone().filter(|a| a.0 <= now) {
                    call.answer = None;
                    if ok {
                        let told = &mut untold[isolate];
                        let newer = told.2.as_ref().is_none_or(|(_, told_seq)| *told_seq < seq);
                        let lines = if newer { Some((lines, seq)) } else { told.2.take() };
                        *told = (told.0 + 1, at, lines);
                        (done, last_done) = (done + 1, now);
                        call.tile = next_tile;
                        next_tile += 1;
                        call.ask_at = if next_tile <= 200 { now } else { f64::INFINITY };
                    } else {
                        refused += 1;

                        g.stated(now, &lines, 0.0, Some(seq));
                        let retry_after = format!("{t}");
                        let outcome =
                            Outcome::Status { status: 429, retry_after: Some(&retry_after), date: None };
                        g.report(now, false, outcome, 0.5);
                        call.ask_at = now + t * 1000.0;
                    }
                } else if call.answer.is_none() && call.ask_at <= now {
                    let (count, at, lines) = std::mem::take(&mut untold[call.tile % 4]);
                    g.answered(now, count, now - at);
                    if let Some((lines, seq)) = lines {
                        g.stated(now, &lines, now - at, Some(seq));
                    }
                    match g.admit_in_turn(now, call.turn) {
                        Verdict::Allow { .. } => {
                            sent += 1;
                            call.turn = None;

                            let (ok, lines, t) = arrive(now + 5.0);
                            call.answer = Some((now + 10.0, ok, lines, t, g.admitted()));
                        }
                        Verdict::Refuse { wait_ms, turn, .. } => {
                            (call.ask_at, call.turn) = (now + wait_ms, turn)
                        }
                    }
                }
            }
            now += 1.0;
        }
        let wall = last_done - T0;
        assert_eq!(done, 200, "{done} tiles in 20 s");
        assert!(refused * 100 <= sent, "{refused} × 429 of {sent} requests");
        assert!(wall <= 6_600.0, "the last tile after {wall} ms (the floor: 6,000)");
    }

    /// A window of 60 per 2 s, stated in the draft's fields, with `r` left.
    fn window_of_60(r: u32) -> String {
        format!("ratelimit-policy: \"tiles\";q=60;w=2\nratelimit: \"tiles\";r={r};t=2\n")
    }

    /// A gate that has learned its host counts in windows of 60 per 2 s: 60 answered, the 61st
    /// (asked while none was left) refused with a 429. Returns it and when that was.
    fn gate_that_learned_a_window() -> (Gate, f64) {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        for i in 0..60 {
            assert!(matches!(g.admit(T0 + f64::from(i)), Verdict::Allow { .. }));
        }
        g.answered(T0 + 100.0, 59, 10.0);
        g.stated(T0 + 100.0, &window_of_60(0), 10.0, Some(60));
        let t0 = T0 + 2_010.0;
        assert!(matches!(g.admit(t0), Verdict::Allow { .. }), "one at a time at the policy's rate");
        g.stated(t0 + 20.0, &window_of_60(0), 0.0, Some(61));
        let retry_after = Outcome::Status { status: 429, retry_after: Some("2"), date: None };
        g.report_attempt(t0 + 20.0, false, retry_after, 0.5, Some(61));
        assert!(g.host.counts_in_windows());
        (g, t0)
    }

    /// A window's burst, admitted at once and told late and out of order: what the window's
    /// statement says the host counted of it is not taken off again as "perhaps not counted yet"
    /// (it was: the gate sent the rest of the window away until its end).
    #[test]
    fn a_burst_the_window_counted_is_not_taken_off_again() {
        let (mut g, t0) = gate_that_learned_a_window();
        // The next window: 32 at once; 9 told with a statement of the latest (28 left), the rest
        // not yet heard of.
        let t1 = t0 + 2_100.0;
        for i in 0..32 {
            assert!(matches!(g.admit(t1 + f64::from(i) / 4.0), Verdict::Allow { .. }), "attempt {i}");
        }
        let last = g.admitted();
        g.answered(t1 + 90.0, 9, 5.0);
        g.stated(t1 + 90.0, &window_of_60(28), 5.0, Some(last));
        let more =
            (0..40).filter(|i| matches!(g.admit(t1 + 91.0 + f64::from(*i)), Verdict::Allow { .. })).count();
        assert_eq!(more, 28, "the window's 28 left");
    }

    /// Attempts refused for a window's quota keep their turn: in the next window, what is left
    /// after the attempts that came since is theirs, whenever in it they ask again.
    #[test]
    fn attempts_that_waited_for_a_window_go_before_ones_that_came_since() {
        let (mut g, t0) = gate_that_learned_a_window();
        // The next window (after the 429's pause), spent at once; two attempts refused until its
        // end, each with its turn.
        let t1 = t0 + 2_100.0;
        for i in 0..60 {
            assert!(matches!(g.admit(t1 + f64::from(i) / 8.0), Verdict::Allow { .. }), "{i}");
        }
        let turn = |v: Verdict| match v {
            Verdict::Refuse { reason: Refusal::Quota, turn: Some(t), .. } => t,
            other => panic!("{other:?}"),
        };
        let first = turn(g.admit_in_turn(t1 + 30.0, None));
        let second = turn(g.admit_in_turn(t1 + 40.0, None));
        assert_eq!(turn(g.admit_in_turn(t1 + 50.0, Some(first))), first, "asked again: the same turn");
        // The next window: 58 that came since go; the 59th would take a waiting attempt's place.
        let t1 = t1 + 2_000.0;
        for i in 0..58 {
            assert!(matches!(g.admit_in_turn(t1 + f64::from(i), None), Verdict::Allow { .. }), "{i}");
        }
        match g.admit_in_turn(t1 + 60.0, None) {
            Verdict::Refuse { reason: Refusal::Quota, wait_ms, turn: Some(_) } => {
                assert!(wait_ms <= TURN_RECHECK_MS)
            }
            other => panic!("the 59th: {other:?}"),
        }
        assert!(
            matches!(g.admit_in_turn(t1 + 300.0, Some(second)), Verdict::Allow { .. }),
            "the second, in its turn"
        );
        assert!(
            matches!(g.admit_in_turn(t1 + 400.0, Some(first)), Verdict::Allow { .. }),
            "the first, in its turn"
        );
        assert!(matches!(g.admit_in_turn(t1 + 401.0, None), Verdict::Refuse { .. }), "the window spent");
    }

    /// Statements told out of the order their attempts reached the host: a later attempt that
    /// arrived first states more left than an earlier one that arrived after it. What the window
    /// has left is what the gate has not admitted in it, whichever is told last.
    #[test]
    fn a_window_statement_told_out_of_order_gives_nothing_back() {
        let (mut g, t0) = gate_that_learned_a_window();
        // The next window: 44 over 60 ms; attempt 40 (counted 44th) is told before attempt 44
        // (counted 32nd: 12 of the window's still on their way to the host when it arrived).
        let t1 = t0 + 2_100.0;
        for i in 0..44 {
            assert!(matches!(g.admit(t1 + f64::from(i) * 1.5), Verdict::Allow { .. }), "attempt {i}");
        }
        let first = g.admitted() - 43;
        g.answered(t1 + 90.0, 20, 5.0);
        g.stated(t1 + 90.0, &window_of_60(16), 5.0, Some(first + 39));
        g.answered(t1 + 95.0, 5, 1.0);
        g.stated(t1 + 95.0, &window_of_60(28), 1.0, Some(first + 43));
        let more =
            (0..40).filter(|i| matches!(g.admit(t1 + 96.0 + f64::from(*i)), Verdict::Allow { .. })).count();
        assert_eq!(more, 16, "the window's 16 left");
    }

    /// An attempt admitted just before the one a statement answered may reach the upstream after
    /// it, from another isolate: it comes off what the statement says is left; one admitted
    /// well before does not.
    #[test]
    fn an_attempt_admitted_just_before_the_stating_one_may_not_be_counted_yet() {
        let left = |gap: f64| {
            let mut g = Gate::new("up.example", &CONFIG, T0);
            assert!(matches!(g.admit(T0), Verdict::Allow { .. }));
            assert!(matches!(g.admit(T0 + gap), Verdict::Allow { .. }));
            // The answer to attempt 2: 4 left of a quota spread over 2 s.
            g.stated(T0 + gap + 20.0, "ratelimit: \"tiles\";r=4;t=2\n", 0.0, Some(2));
            (0..10)
                .filter(|i| matches!(g.admit(T0 + gap + 21.0 + f64::from(*i)), Verdict::Allow { .. }))
                .count()
        };
        assert_eq!(left(100.0), 2, "4 left: a second's worth");
        assert_eq!(left(10.0), 1, "3 left, attempt 1 perhaps not counted: a second's worth");
    }

    /// A statement of nothing left, with a policy: one attempt at the policy's rate, and no
    /// other until that one is heard of, however many statements come between.
    #[test]
    fn with_nothing_left_one_attempt_at_a_time_asks() {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        let empty = "ratelimit-policy: \"tiles\";q=60;w=2\nratelimit: \"tiles\";r=0;t=2\n";
        for _ in 0..3 {
            assert!(matches!(g.admit(T0), Verdict::Allow { .. }));
        }
        g.stated(T0 + 10.0, empty, 0.0, Some(3));
        let first = (0..100)
            .map(|i| T0 + 10.0 + f64::from(i))
            .find(|at| matches!(g.admit(*at), Verdict::Allow { .. }));
        let first = first.expect("one attempt at the policy's rate");
        // Answers to attempts sent before say nothing new.
        g.answered(first + 5.0, 2, 0.0);
        g.stated(first + 6.0, empty, 0.0, Some(3));
        let before_its_answer = (0..200)
            .filter(|i| matches!(g.admit(first + 7.0 + f64::from(*i)), Verdict::Allow { .. }))
            .count();
        assert_eq!(before_its_answer, 0, "none while the one asked is out");
        let retry_after = "2";
        let refused = Outcome::Status { status: 429, retry_after: Some(retry_after), date: None };
        g.report_attempt(first + 210.0, false, refused, 0.5, Some(4));
        assert!(matches!(g.admit(first + 211.0), Verdict::Refuse { reason: Refusal::Pause, .. }));
    }

    #[test]
    fn a_failed_probe_reopens_it_longer_up_to_the_cap() {
        let mut g = opened_by(502);
        assert_eq!(g.admit(T0 + 1000.0), Verdict::Allow { probe: true });
        g.report(T0 + 1000.0, true, status(500), 0.5);
        assert_eq!(g.open_until(T0 + 1000.0), Some(T0 + 2500.0), "1.5 × 1000");
        assert_eq!(g.admit(T0 + 2500.0), Verdict::Allow { probe: true });
        g.report(T0 + 2500.0, true, Outcome::Failed, 0.5);
        assert_eq!(g.open_until(T0 + 2500.0), Some(T0 + 4000.0), "capped at maxOpenMs 1500");
    }

    #[test]
    fn a_probe_that_never_reports_frees_its_place_when_its_lease_ends() {
        let mut g = opened_by(503);
        assert_eq!(g.admit(T0 + 1000.0), Verdict::Allow { probe: true });
        match g.admit(T0 + 1100.0) {
            Verdict::Refuse { reason: Refusal::Probe, wait_ms, .. } => assert_eq!(wait_ms, 1000.0),
            other => panic!("{other:?}"),
        }
        // The isolate holding it vanished: 2.5 s on, another probe goes.
        assert_eq!(g.admit(T0 + 3500.0), Verdict::Allow { probe: true });
    }

    #[test]
    fn successes_told_with_an_admit_reset_the_failure_count() {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        g.report(T0, false, status(503), 0.5);
        g.report(T0, false, status(503), 0.5);
        g.answered(T0 + 2.0, 2, 1.0);
        g.report(T0 + 2.0, false, status(503), 0.5);
        g.report(T0 + 2.0, false, status(503), 0.5);
        assert_eq!(g.state(T0 + 2.0), BreakerState::Closed, "the successes between broke the run");
        assert_eq!(g.counts.ok, 2);
        // Successes from before the latest failure (an isolate's tiles from before the outage,
        // told with its first admit in it) are counted but do not break the run.
        g.answered(T0 + 3.0, 5, 500.0);
        assert_eq!(g.counts.ok, 7);
        g.report(T0 + 3.0, false, status(503), 0.5);
        assert_eq!(g.state(T0 + 3.0), BreakerState::Open);
    }

    #[test]
    fn answers_are_not_failures_and_reset_the_count() {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        for s in [503, 503, 404, 503, 503, 200, 503, 503, 403] {
            g.report(T0, false, status(s), 0.5);
        }
        assert_eq!(g.state(T0), BreakerState::Closed, "never 3 failures in a row");
        assert_eq!((g.counts.ok, g.counts.failed), (3, 6));
        g.report(T0, false, Outcome::Abandoned, 0.5);
        assert_eq!((g.counts.ok, g.counts.failed), (3, 6), "an abandoned attempt tells nothing");
    }

    #[test]
    fn a_retry_after_pauses_the_fleet_unless_answers_contradict_an_implausible_one() {
        let mut g = Gate::new("up.example", &CONFIG, T0);
        g.report(T0, false, Outcome::Status { status: 429, retry_after: Some("2"), date: None }, 0.5);
        assert_eq!(g.paused_until(T0), Some(T0 + 2000.0));
        match g.admit(T0 + 500.0) {
            Verdict::Refuse { reason: Refusal::Pause, wait_ms, .. } => assert_eq!(wait_ms, 1500.0),
            other => panic!("{other:?}"),
        }
        // A host answering tiles with one response saying "come back tomorrow": not believed.
        let mut g = Gate::new("up.example", &CONFIG, T0);
        g.report(T0, false, status(200), 0.5);
        g.report(
            T0 + 10.0,
            false,
            Outcome::Status { status: 503, retry_after: Some("86400"), date: None },
            0.5,
        );
        assert_eq!(g.paused_until(T0 + 10.0), None);
        assert_eq!(g.admit(T0 + 20.0), Verdict::Allow { probe: false });
        // From a host that answers nothing else it is believed, clamped to a minute.
        let mut g = Gate::new("up.example", &CONFIG, T0);
        g.report(T0, false, Outcome::Status { status: 429, retry_after: Some("3600"), date: None }, 0.5);
        assert_eq!(g.paused_until(T0), Some(T0 + 60_000.0));
    }

    #[test]
    fn its_config_is_read_by_name_and_a_bad_one_names_the_field() {
        let n = Value::Number;
        let owned = [
            ("probeLeaseMs", n(2500.0)),
            ("maxOpenMs", n(1500.0)),
            ("openMs", n(1000.0)),
            ("failureThreshold", n(3.0)),
            ("ratePerSecond", Value::Absent),
            ("burst", n(1.0)),
        ];
        let entries = crate::options::value::entries_of(&owned);
        assert_eq!(GateConfig::from_entries(&entries), Ok(CONFIG), "order does not matter, names do");
        let field = |owned: &[(&str, Value)]| match GateConfig::from_entries(
            &crate::options::value::entries_of(owned),
        ) {
            Err(Error::InvalidOptions { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(&[("openMs", n(f64::NAN))]), "openMs");
        assert_eq!(field(&[("opnMs", n(1.0))]), "opnMs");
        assert_eq!(field(&owned[..3]), "failureThreshold", "a missing key is named");
    }

    #[test]
    fn a_configured_rate_paces_every_isolate_together() {
        let config = GateConfig { rate: Some((10.0, 2.0)), ..CONFIG };
        let mut g = Gate::new("up.example", &config, T0);
        assert_eq!(g.admit(T0), Verdict::Allow { probe: false });
        assert_eq!(g.admit(T0), Verdict::Allow { probe: false });
        match g.admit(T0) {
            Verdict::Refuse { reason: Refusal::Rate, wait_ms, .. } => assert!((wait_ms - 100.0).abs() < 1e-6),
            other => panic!("{other:?}"),
        }
        assert_eq!(g.admit(T0 + 100.0), Verdict::Allow { probe: false });
        assert_eq!((g.counts.admitted, g.counts.denied), (3, 1));
    }
}
