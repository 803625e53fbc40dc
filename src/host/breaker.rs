//! A per-host circuit breaker: closed → open after `failure_threshold` consecutive transient
//! failures → half-open after a jittered open time → closed on a probe's success, or open again
//! for a longer (capped) time on its failure.

/// `breaker` in the client config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerConfig {
    /// `failureThreshold`: consecutive transient attempt failures that open the breaker.
    pub failure_threshold: u32,
    /// `openMs`: the first open time (±20 % jitter).
    pub open_ms: f64,
    /// `halfOpenProbes`: requests let through while half-open.
    pub half_open_probes: u32,
    /// `maxOpenMs`: open times grow ×1.5 per failed probe up to this.
    pub max_open_ms: f64,
}

impl BreakerConfig {
    /// The interactive preset's breaker (the default), as the option registry declares it.
    pub const INTERACTIVE: BreakerConfig = BreakerConfig::declared(false);
    /// The batch preset's breaker: longer open times.
    pub const BATCH: BreakerConfig = BreakerConfig::declared(true);

    const fn declared(batch: bool) -> BreakerConfig {
        use crate::options::registry::{
            BREAKER_FAILURE_THRESHOLD, BREAKER_HALF_OPEN_PROBES, BREAKER_MAX_OPEN_MS, BREAKER_OPEN_MS,
        };
        BreakerConfig {
            failure_threshold: BREAKER_FAILURE_THRESHOLD.default.number(batch) as u32,
            open_ms: BREAKER_OPEN_MS.default.number(batch),
            half_open_probes: BREAKER_HALF_OPEN_PROBES.default.number(batch) as u32,
            max_open_ms: BREAKER_MAX_OPEN_MS.default.number(batch),
        }
    }
}

const GROWTH: f64 = 1.5;

/// Where a breaker is in its cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Every attempt goes.
    Closed,
    /// Attempts wait until the open time ends.
    Open,
    /// Only probes go: a success closes the breaker, a failure opens it again.
    HalfOpen,
}

impl BreakerState {
    /// The state as `stats()` and `onEvent` spell it.
    pub fn name(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half-open",
        }
    }
}

/// What the breaker says to a call that wants to send an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admission {
    /// Go: the breaker is closed.
    Pass,
    /// Pass as one of the half-open probes: report its outcome with `probe = true`.
    Probe,
    /// Open until this time.
    WaitUntil(f64),
    /// Half-open with every probe in flight: wait for a probe's outcome.
    WaitForProbe,
}

/// One host's circuit breaker.
#[derive(Debug, Clone)]
pub struct Breaker {
    config: BreakerConfig,
    state: BreakerState,
    consecutive_failures: u32,
    open_until: f64,
    open_ms: f64,
    probes_in_flight: u32,
    changed_at: f64,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(config: BreakerConfig, now_ms: f64) -> Breaker {
        Breaker {
            config,
            state: BreakerState::Closed,
            consecutive_failures: 0,
            open_until: 0.0,
            open_ms: config.open_ms,
            probes_in_flight: 0,
            changed_at: now_ms,
        }
    }

    /// The state as of `now_ms` (an open breaker whose time is up reads as half-open).
    pub fn state(&self, now_ms: f64) -> BreakerState {
        match self.state {
            BreakerState::Open if now_ms >= self.open_until => BreakerState::HalfOpen,
            state => state,
        }
    }

    /// When the state last changed (monotonic ms).
    pub fn changed_at(&self) -> f64 {
        self.changed_at
    }

    /// When the open time ends (monotonic ms); `None` unless the breaker was last set open.
    pub fn open_until(&self) -> Option<f64> {
        (self.state == BreakerState::Open).then_some(self.open_until)
    }

    /// Whether an attempt may go now. A [`Admission::Probe`] takes a probe place, which the
    /// attempt's outcome frees.
    pub fn admit(&mut self, now_ms: f64) -> Admission {
        if self.state == BreakerState::Open {
            if now_ms < self.open_until {
                return Admission::WaitUntil(self.open_until);
            }
            self.set(BreakerState::HalfOpen, self.open_until);
        }
        match self.state {
            BreakerState::Closed => Admission::Pass,
            _ if self.probes_in_flight < self.config.half_open_probes.max(1) => {
                self.probes_in_flight += 1;
                Admission::Probe
            }
            _ => Admission::WaitForProbe,
        }
    }

    /// The host answered (a tile, or a permanent answer such as 404): it is alive.
    /// Returns whether the state changed.
    pub fn on_success(&mut self, now_ms: f64, probe: bool) -> bool {
        self.consecutive_failures = 0;
        if probe {
            self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
        }
        if self.state == BreakerState::Closed {
            return false;
        }
        self.open_ms = self.config.open_ms;
        self.probes_in_flight = 0;
        self.set(BreakerState::Closed, now_ms);
        true
    }

    /// A transient failure (network, timeout, 5xx, an error body). `unit` ∈ [0, 1) jitters the
    /// open time. Returns whether the state changed.
    pub fn on_failure(&mut self, now_ms: f64, probe: bool, unit: f64) -> bool {
        if probe {
            // Whatever else happened meanwhile, this probe's place is free again.
            self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
        }
        match self.state {
            BreakerState::Closed => {
                self.consecutive_failures += 1;
                if self.consecutive_failures < self.config.failure_threshold.max(1) {
                    return false;
                }
                self.open_ms = self.config.open_ms;
            }
            BreakerState::HalfOpen if probe => {
                self.open_ms = (self.open_ms * GROWTH).min(self.config.max_open_ms.max(self.config.open_ms));
            }
            // Attempts sent before the breaker opened still report; they change nothing.
            _ => return false,
        }
        let jittered = self.open_ms * (0.8 + 0.4 * unit.clamp(0.0, 1.0));
        self.open_until = now_ms + jittered;
        self.consecutive_failures = 0;
        self.set(BreakerState::Open, now_ms);
        true
    }

    /// A probe ended without telling anything (the caller aborted): let another one through.
    pub fn on_abandoned(&mut self, probe: bool) {
        if probe {
            self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
        }
    }

    fn set(&mut self, state: BreakerState, now_ms: f64) {
        self.state = state;
        self.changed_at = now_ms;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: BreakerConfig =
        BreakerConfig { failure_threshold: 3, open_ms: 1000.0, half_open_probes: 1, max_open_ms: 3000.0 };

    #[test]
    fn opens_after_consecutive_failures_only() {
        let mut b = Breaker::new(CONFIG, 0.0);
        assert!(!b.on_failure(1.0, false, 0.5));
        assert!(!b.on_failure(2.0, false, 0.5));
        assert!(!b.on_success(3.0, false), "a success resets the count");
        assert!(!b.on_failure(4.0, false, 0.5));
        assert!(!b.on_failure(5.0, false, 0.5));
        assert_eq!(b.admit(5.0), Admission::Pass);
        assert!(b.on_failure(6.0, false, 0.5));
        assert_eq!(b.state(6.0), BreakerState::Open);
        assert_eq!(b.changed_at(), 6.0);
        assert_eq!(b.admit(7.0), Admission::WaitUntil(1006.0));
    }

    #[test]
    fn open_time_is_jittered_within_twenty_percent() {
        for (unit, until) in [(0.0, 800.0), (0.5, 1000.0), (0.999_999, 1199.9996)] {
            let mut b = Breaker::new(CONFIG, 0.0);
            for _ in 0..3 {
                b.on_failure(0.0, false, unit);
            }
            let Admission::WaitUntil(t) = b.admit(0.0) else { panic!("not open") };
            assert!((t - until).abs() < 1e-3, "{unit}: {t}");
        }
    }

    #[test]
    fn half_open_lets_probes_through_and_a_success_closes() {
        let mut b = Breaker::new(CONFIG, 0.0);
        for _ in 0..3 {
            b.on_failure(0.0, false, 0.5);
        }
        assert_eq!(b.state(999.0), BreakerState::Open);
        assert_eq!(b.state(1000.0), BreakerState::HalfOpen);
        assert_eq!(b.admit(1000.0), Admission::Probe);
        assert_eq!(b.admit(1001.0), Admission::WaitForProbe);
        assert!(b.on_success(1050.0, true));
        assert_eq!(b.state(1050.0), BreakerState::Closed);
        assert_eq!(b.admit(1051.0), Admission::Pass);
    }

    #[test]
    fn a_failed_probe_reopens_for_longer_up_to_the_cap() {
        let mut b = Breaker::new(CONFIG, 0.0);
        for _ in 0..3 {
            b.on_failure(0.0, false, 0.5);
        }
        let mut now = 0.0;
        let mut opens = Vec::new();
        for _ in 0..6 {
            let Admission::WaitUntil(until) = b.admit(now) else { panic!("not open") };
            opens.push(until - now);
            now = until;
            assert_eq!(b.admit(now), Admission::Probe);
            assert!(b.on_failure(now + 10.0, true, 0.5));
            now += 10.0;
        }
        assert_eq!(opens, vec![1000.0, 1500.0, 2250.0, 3000.0, 3000.0, 3000.0]);
        assert!(b.on_success(now + 5000.0, false) || b.state(now + 5000.0) == BreakerState::Closed);
    }

    #[test]
    fn closing_resets_the_open_time() {
        let mut b = Breaker::new(CONFIG, 0.0);
        for _ in 0..3 {
            b.on_failure(0.0, false, 0.5);
        }
        b.admit(1000.0);
        b.on_failure(1000.0, true, 0.5); // reopen for 1500
        b.admit(2500.0);
        b.on_success(2500.0, true);
        for _ in 0..3 {
            b.on_failure(3000.0, false, 0.5);
        }
        assert_eq!(b.admit(3000.0), Admission::WaitUntil(4000.0));
    }

    #[test]
    fn an_abandoned_probe_frees_its_place() {
        let mut b = Breaker::new(CONFIG, 0.0);
        for _ in 0..3 {
            b.on_failure(0.0, false, 0.5);
        }
        assert_eq!(b.admit(1000.0), Admission::Probe);
        assert_eq!(b.admit(1000.0), Admission::WaitForProbe);
        b.on_abandoned(true);
        assert_eq!(b.admit(1000.0), Admission::Probe);
    }

    #[test]
    fn a_probe_failing_after_another_reopened_the_breaker_frees_its_place() {
        let config = BreakerConfig { half_open_probes: 2, ..CONFIG };
        let mut b = Breaker::new(config, 0.0);
        for _ in 0..3 {
            b.on_failure(0.0, false, 0.5);
        }
        assert_eq!(b.admit(1000.0), Admission::Probe);
        assert_eq!(b.admit(1000.0), Admission::Probe);
        assert!(b.on_failure(1001.0, true, 0.5), "the first probe reopens");
        assert!(!b.on_failure(1002.0, true, 0.5), "the second changes nothing more");
        let Admission::WaitUntil(until) = b.admit(1003.0) else { panic!("not open") };
        assert_eq!(b.admit(until), Admission::Probe);
        assert_eq!(b.admit(until), Admission::Probe, "both places are free again");
    }

    #[test]
    fn late_reports_from_before_the_opening_change_nothing() {
        let mut b = Breaker::new(CONFIG, 0.0);
        for _ in 0..3 {
            b.on_failure(0.0, false, 0.5);
        }
        assert!(!b.on_failure(10.0, false, 0.5));
        assert_eq!(b.admit(20.0), Admission::WaitUntil(1000.0));
    }
}
