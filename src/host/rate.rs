//! The request rate a rate-limiting host tolerates, learned from its 429s: off until a 429 comes
//! after the host served at least a few requests in the last second, then 90 % of what it served.
//!
//! What the host served in the second before its first 429 is often what the client happened to
//! ask for (a map opening), or a token bucket's burst, not what the host can serve: taken as the
//! limit it held a map at a fifth of its pace for the rest of the session. So a rate probes
//! upward while no 429 comes, the way TCP finds a path's capacity: after the first 429 it doubles
//! every [`DOUBLING_MS`] (slow start; no bound is known yet); a later 429 refuses the rate in
//! force, which becomes the ceiling, and the rate drops to what the host served (90 % of it, but
//! not below half the refused rate: what was served in a second the client spent waiting says
//! little); from there it closes half its distance to the ceiling every [`DOUBLING_MS`] and grows
//! by 1 request/s each second, so it passes the ceiling slowly (BIC-TCP's binary search). A 429
//! above the host's rate costs only the refused request (its retry waits for its Retry-After):
//! the loop does not pause a host whose 429 taught or lowered the rate (`HostState::report`). A
//! rate that no second 429 ever confirmed is forgotten after
//! [`FORGET_UNCONFIRMED_MS`] of doubling; any rate after [`FORGET_MS`] without a 429.

const WINDOW_MS: f64 = 1000.0;
const BUCKETS: usize = 10;
const BUCKET_MS: f64 = WINDOW_MS / BUCKETS as f64;
/// Fewer successes than this in the last second teach no rate.
const MIN_SAMPLE: u32 = 5;
/// After a 429, how long the rate holds (the other 429s of the same overload arrive within it,
/// or are of requests sent before it: see `on_rate_limited`).
const QUIET_MS: f64 = 250.0;
/// How long the rate takes to double while it probes upward. A 429 answers a probe above the
/// host's rate within one answer's time, and costs only the refused request (its retry waits
/// for its Retry-After; the host is not paused), so probing is fast: from a burst-sized first
/// estimate to a 100/s host's rate in about half a second.
const DOUBLING_MS: f64 = 250.0;
/// Doubling happens in steps of this length: the same growth however often the rate is asked.
const STEP_MS: f64 = DOUBLING_MS / 10.0;
/// 2^(1/10): ten steps double the rate.
const STEP_FACTOR: f64 = 1.071_773_462_536_293_2;
/// Doubling this long past the quiet time without a 429 (32×) forgets a rate no second 429
/// confirmed: the host showed no limit near it.
pub const FORGET_UNCONFIRMED_MS: f64 = 5.0 * DOUBLING_MS;
/// Any learned rate is forgotten after this long without a 429: a new one is learned if the host
/// still limits.
pub const FORGET_MS: f64 = 30_000.0;

/// One host's learned request rate and the token bucket that enforces it.
#[derive(Debug, Clone)]
pub struct AdaptiveRate {
    /// Requests per second, once learned.
    rate: Option<f64>,
    tokens: f64,
    at_ms: f64,
    /// Successes per 100 ms over the last second, as a ring indexed by bucket number.
    successes: [u32; BUCKETS],
    bucket: i64,
    /// When the last 429 that taught or lowered the rate came.
    limited_at: f64,
    /// The rate in force when the host last refused (infinite when none was, and the rate
    /// doubles): the rate closes half its distance to it every doubling time.
    ceiling: f64,
    /// Doubling steps taken since `limited_at`.
    steps: u32,
    /// A rate set by configuration rather than learned: its bucket's size. Such a rate never
    /// probes, is never forgotten, and no 429 changes it.
    fixed_burst: Option<f64>,
}

impl AdaptiveRate {
    /// A rate with nothing learned: every request may go.
    pub fn new(now_ms: f64) -> AdaptiveRate {
        AdaptiveRate {
            rate: None,
            tokens: 0.0,
            at_ms: now_ms,
            successes: [0; BUCKETS],
            bucket: bucket_of(now_ms),
            limited_at: now_ms,
            ceiling: f64::INFINITY,
            steps: 0,
            fixed_burst: None,
        }
    }

    /// A configured rate (a shared gate's `ratePerSecond` and `burst`), its bucket full.
    pub fn fixed(per_second: f64, burst: f64, now_ms: f64) -> AdaptiveRate {
        let burst = burst.max(1.0);
        AdaptiveRate {
            rate: Some(per_second),
            tokens: burst,
            fixed_burst: Some(burst),
            ..AdaptiveRate::new(now_ms)
        }
    }

    /// The learned rate in requests per second, once a 429 taught one.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    fn roll(&mut self, now_ms: f64) {
        let current = bucket_of(now_ms);
        let stale = (current - self.bucket).clamp(0, BUCKETS as i64);
        for step in 1..=stale {
            self.successes[((self.bucket + step).rem_euclid(BUCKETS as i64)) as usize] = 0;
        }
        self.bucket = self.bucket.max(current);
    }

    fn refill(&mut self, now_ms: f64) {
        let dt = (now_ms - self.at_ms).max(0.0);
        self.at_ms = self.at_ms.max(now_ms);
        let Some(mut rate) = self.rate else { return };
        if let Some(burst) = self.fixed_burst {
            self.tokens = (self.tokens + dt / 1000.0 * rate).min(burst);
            return;
        }
        let quiet = self.at_ms - self.limited_at;
        if quiet >= FORGET_MS || (self.ceiling.is_infinite() && quiet >= QUIET_MS + FORGET_UNCONFIRMED_MS) {
            self.rate = None;
            return;
        }
        // Growth steps are due by the clock alone (the same rate however often it is asked), at
        // `next_step_at`, the time `next_slot` waits for at most; after the quiet time.
        while self.at_ms >= self.next_step_at() && rate < self.ceiling {
            rate = self.grown(rate);
            self.steps += 1;
        }
        if self.ceiling.is_finite() {
            rate += dt / 1000.0; // +1 req/s per second: past the ceiling, slowly
        }
        self.rate = Some(rate);
        self.tokens = (self.tokens + dt / 1000.0 * rate).min(burst(rate));
    }

    /// When the next request may go: `None` for now.
    pub fn next_slot(&mut self, now_ms: f64) -> Option<f64> {
        self.refill(now_ms);
        let rate = self.rate?;
        // Within rounding of a whole token: the wait computed last time has passed.
        if self.tokens >= 1.0 - 1e-9 {
            return None;
        }
        let at = now_ms + (1.0 - self.tokens) / rate * 1000.0;
        // Not past the next growth step: the rate may be higher by then.
        let growing = self.fixed_burst.is_none() && rate < self.ceiling;
        Some(if growing { at.min(self.next_step_at()) } else { at })
    }

    /// When the next growth step is due (monotonic ms).
    fn next_step_at(&self) -> f64 {
        self.step_at(self.steps + 1)
    }

    /// When growth step `k` (from 1) since the last refusal is due.
    fn step_at(&self, k: u32) -> f64 {
        self.limited_at + QUIET_MS + STEP_MS * f64::from(k)
    }

    /// `rate` after one growth step: doubling in tenths with no ceiling, else a tenth of the way
    /// to halving its distance to the ceiling.
    fn grown(&self, rate: f64) -> f64 {
        if self.ceiling.is_infinite() {
            rate * STEP_FACTOR
        } else {
            self.ceiling - (self.ceiling - rate) / STEP_FACTOR
        }
    }

    /// `rate` one growth step earlier: the inverse of [`AdaptiveRate::grown`].
    fn ungrown(&self, rate: f64) -> f64 {
        if self.ceiling.is_infinite() {
            rate / STEP_FACTOR
        } else {
            self.ceiling - (self.ceiling - rate) * STEP_FACTOR
        }
    }

    /// Takes a token for a request that goes now.
    pub fn take(&mut self, now_ms: f64) {
        self.refill(now_ms);
        if self.rate.is_some() {
            self.tokens -= 1.0;
        }
    }

    /// The host served a request (what a later 429 learns the rate from).
    pub fn on_success(&mut self, now_ms: f64) {
        self.roll(now_ms);
        self.successes[self.bucket.rem_euclid(BUCKETS as i64) as usize] += 1;
    }

    /// A 429 for a request sent at `sent_ms`: the rate becomes 90 % of what the host served in
    /// the last second, if that is enough to tell, but not below half the rate the request was
    /// refused at (the one in force when it was sent), and never more than that. Returns
    /// whether it did: the host is serving, at a rate that now paces it.
    pub fn on_rate_limited(&mut self, now_ms: f64, sent_ms: f64) -> bool {
        if self.fixed_burst.is_some() {
            return false;
        }
        self.roll(now_ms);
        self.refill(now_ms);
        let served: u32 = self.successes.iter().sum();
        if served < MIN_SAMPLE {
            return false;
        }
        let served = f64::from(served) * 0.9;
        self.tokens = 0.0;
        match self.rate {
            // The 429s of one overload (every request that was in flight) arrive together, or,
            // from a slow host, over more than the quiet time: a request sent before the last
            // refusal, or refused within the quiet time after it, may lower the rate, but it is
            // not a refusal of the rate that refusal taught.
            Some(old) if sent_ms < self.limited_at || now_ms - self.limited_at < QUIET_MS => {
                self.rate = Some(old.min(lowered(self.ceiling, served)));
            }
            old => {
                // The first refusal has no rate in force: no ceiling, and what was served.
                let refused = old.map_or(f64::INFINITY, |_| self.rate_when(sent_ms));
                self.ceiling = refused;
                self.rate = Some(refused.min(lowered(refused, served)));
                self.limited_at = now_ms;
                self.steps = 0;
            }
        }
        true
    }

    /// The rate that was in force at `at_ms` (no later than now): the current one with the
    /// growth steps taken since undone. Every step since the last refusal grew the rate the same
    /// way, toward the same ceiling; the +1/s of the additive growth is not undone (a rate
    /// refused at most a second or two after it was in force).
    fn rate_when(&self, at_ms: f64) -> f64 {
        let Some(now) = self.rate else { return f64::INFINITY };
        let taken_by_then = (1..=self.steps).take_while(|&k| self.step_at(k) <= at_ms).count() as u32;
        let undone = self.steps - taken_by_then;
        // Never above the rate now: growth only ever raised it (past the ceiling the +1/s did,
        // which undoing a step toward the ceiling would not reverse).
        (0..undone).fold(now, |rate, _| self.ungrown(rate)).min(now)
    }
}

/// The rate after the host refused `refused`, having served `served` (already × 0.9) in the last
/// second: what it served, but not below half the refused rate (multiplicative decrease).
fn lowered(refused: f64, served: f64) -> f64 {
    if refused.is_finite() {
        served.max(refused / 2.0)
    } else {
        served
    }
}

fn bucket_of(now_ms: f64) -> i64 {
    (now_ms / BUCKET_MS).floor() as i64
}

/// A tenth of a second's worth: enough to absorb timer jitter, not enough to burst.
fn burst(rate: f64) -> f64 {
    (rate / 10.0).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_rate_spends_its_burst_then_paces_and_never_moves() {
        let mut r = AdaptiveRate::fixed(10.0, 3.0, 0.0);
        for _ in 0..3 {
            assert_eq!(r.next_slot(0.0), None);
            r.take(0.0);
        }
        assert_eq!(r.next_slot(0.0), Some(100.0), "one token per 100 ms at 10/s");
        r.on_rate_limited(50.0, 50.0);
        r.on_success(60.0);
        assert_eq!(r.rate(), Some(10.0), "no 429 changes a configured rate");
        // Long after, no doubling and no forgetting: the bucket is full again, the rate the same.
        assert_eq!(r.next_slot(600_000.0), None);
        assert_eq!(r.rate(), Some(10.0));
        for _ in 0..3 {
            r.take(600_000.0);
        }
        assert_eq!(r.next_slot(600_000.0), Some(600_100.0), "the burst is 3, not more");
    }

    #[test]
    fn unlimited_until_the_first_429() {
        let mut r = AdaptiveRate::new(0.0);
        for i in 0..1000 {
            assert_eq!(r.next_slot(i as f64 * 0.1), None);
            r.take(i as f64 * 0.1);
        }
        assert_eq!(r.rate(), None);
    }

    #[test]
    fn learns_ninety_percent_of_what_the_host_served() {
        let mut r = AdaptiveRate::new(0.0);
        for i in 0..50 {
            r.on_success(500.0 + i as f64);
        }
        r.on_rate_limited(600.0, 600.0);
        assert_eq!(r.rate(), Some(45.0));
        // Right after the 429 there is no token: the next request waits 1/45 s.
        let next = r.next_slot(600.0).unwrap();
        assert!((next - (600.0 + 1000.0 / 45.0)).abs() < 1e-6, "{next}");
    }

    /// How many requests go between `from` and `to` when every free token is taken at once.
    fn sent_between(r: &mut AdaptiveRate, from: f64, to: f64) -> u32 {
        let mut now = from;
        let mut sent = 0;
        while now < to {
            match r.next_slot(now) {
                None => {
                    r.take(now);
                    sent += 1;
                    assert!(sent < 100_000, "unpaced at {now}");
                }
                Some(at) => {
                    assert!(at > now, "{at} ≤ {now}");
                    now = at;
                }
            }
        }
        sent
    }

    fn learned(rate_per_s: u32, at: f64) -> AdaptiveRate {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..rate_per_s {
            r.on_success(at);
        }
        r.on_rate_limited(at, at);
        r
    }

    #[test]
    fn holds_the_rate_for_the_quiet_time_after_the_429() {
        let mut r = learned(100, 0.0); // 90 req/s
        let sent = sent_between(&mut r, 0.0, QUIET_MS);
        assert!((21..=24).contains(&sent), "{sent}: 90/s for {QUIET_MS} ms");
        assert!((r.rate().unwrap() - 90.0).abs() < 1e-9);
    }

    #[test]
    fn then_doubles_every_doubling_time_while_no_429_comes() {
        let mut r = learned(20, 0.0); // 18 req/s
        r.next_slot(QUIET_MS + DOUBLING_MS);
        let after_one = r.rate().unwrap();
        assert!((after_one - 36.0).abs() < 0.01, "{after_one}");
        r.next_slot(QUIET_MS + 2.0 * DOUBLING_MS);
        assert!((r.rate().unwrap() - 72.0).abs() < 0.01);
        // Requests follow: about 18·2^(t/D) integrated over two doubling times, D·18·3/ln 2.
        let mut r = learned(20, 0.0);
        let sent = sent_between(&mut r, QUIET_MS, QUIET_MS + 2.0 * DOUBLING_MS);
        assert!((16..=24).contains(&sent), "{sent}");
    }

    #[test]
    fn growth_is_the_same_however_often_the_rate_is_asked() {
        for (refused, at) in [(None, 1234.0), (Some(500), 2345.0)] {
            let mut often = learned(20, 0.0);
            let mut once = learned(20, 0.0);
            if let Some(n) = refused {
                for r in [&mut often, &mut once] {
                    r.next_slot(1000.0);
                    for _ in 0..n {
                        r.on_success(1000.0);
                    }
                    r.on_rate_limited(1000.0, 1000.0);
                }
            }
            let mut t = 1000.0;
            while t < at {
                often.next_slot(t);
                t += 7.0;
            }
            often.next_slot(at);
            once.next_slot(at);
            let (a, b) = (often.rate().unwrap(), once.rate().unwrap());
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }

    /// 18/s, then no 429 until `at`: the rate in force then, and the rate after the host refuses
    /// it having served `served` in the last second.
    fn refused_after_doubling(at: f64, served: u32) -> (f64, AdaptiveRate) {
        let mut r = learned(20, 0.0);
        r.next_slot(at);
        let refused = r.rate().unwrap();
        for _ in 0..served {
            r.on_success(at);
        }
        r.on_rate_limited(at, at);
        (refused, r)
    }

    #[test]
    fn a_refused_rate_drops_to_what_was_served_but_not_below_half() {
        let at = QUIET_MS + 3.0 * DOUBLING_MS; // doubled three times: 144/s
        let (refused, r) = refused_after_doubling(at, 100);
        assert!((refused - 144.0).abs() < 0.01, "{refused}");
        assert!((r.rate().unwrap() - 90.0).abs() < 0.01, "90 % of the 100 served");
        let (_, r) = refused_after_doubling(at, 20);
        assert!((r.rate().unwrap() - 72.0).abs() < 0.01, "half of 144, not 90 % of 20");
    }

    #[test]
    fn below_a_refused_rate_it_closes_half_the_distance_each_doubling_time_then_passes_slowly() {
        let at = QUIET_MS + 3.0 * DOUBLING_MS;
        let (_, mut r) = refused_after_doubling(at, 100); // 90/s, ceiling 144
        r.next_slot(at + QUIET_MS); // held; +1/s per second all along
        let held = r.rate().unwrap();
        assert!((held - (90.0 + QUIET_MS / 1000.0)).abs() < 0.01, "{held}");
        r.next_slot(at + QUIET_MS + DOUBLING_MS);
        let one = r.rate().unwrap();
        let expected = 144.0 - (144.0 - held) / 2.0 + DOUBLING_MS / 1000.0;
        assert!((one - expected).abs() < 0.05, "{one} vs {expected}");
        // Long after, it is past the ceiling by about 1/s per second, never by doubling.
        r.next_slot(at + 10_000.0);
        let late = r.rate().unwrap();
        assert!((150.0..155.0).contains(&late), "{late}");
    }

    #[test]
    fn the_429s_of_one_overload_are_one_refusal() {
        let mut r = learned(20, 0.0); // 18/s
        for t in 1..12 {
            let at = f64::from(t) * (QUIET_MS / 12.0);
            r.on_rate_limited(at, at); // the rest of what was in flight, within the quiet time
        }
        r.next_slot(QUIET_MS + 2.0 * DOUBLING_MS);
        assert!(r.rate().unwrap() > 70.0, "{:?}: still doubling", r.rate());
    }

    #[test]
    fn an_unconfirmed_rate_is_forgotten_a_confirmed_one_after_thirty_quiet_seconds() {
        let mut r = learned(20, 0.0);
        assert!(r.next_slot(QUIET_MS + FORGET_UNCONFIRMED_MS - 1.0).is_some() || r.rate().is_some());
        assert_eq!(r.next_slot(QUIET_MS + FORGET_UNCONFIRMED_MS), None);
        assert_eq!(r.rate(), None, "no second 429 in 32× of doubling: the host showed no limit near it");
        let (_, mut c) = refused_after_doubling(QUIET_MS + DOUBLING_MS, 40); // confirmed at 36/s
        let at = QUIET_MS + DOUBLING_MS;
        c.next_slot(at + FORGET_MS - 1.0);
        assert!(c.rate().is_some());
        c.next_slot(at + FORGET_MS);
        assert_eq!(c.rate(), None);
    }

    #[test]
    fn a_paced_request_never_waits_past_the_next_growth_step() {
        let mut r = learned(5, 0.0); // 4.5/s: a token every 222 ms
        r.take(QUIET_MS);
        r.take(QUIET_MS);
        let at = r.next_slot(QUIET_MS).unwrap();
        assert!(at <= QUIET_MS + STEP_MS, "{at}");
    }

    #[test]
    fn old_successes_fall_out_of_the_window() {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..100 {
            r.on_success(0.0);
        }
        r.on_rate_limited(5000.0, 5000.0);
        assert_eq!(r.rate(), None, "nothing served in the last second: no rate to learn");
    }

    #[test]
    fn a_429_with_too_few_successes_teaches_nothing() {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..4 {
            r.on_success(0.0);
        }
        r.on_rate_limited(10.0, 10.0);
        assert_eq!(r.rate(), None);
        assert_eq!(r.next_slot(10.0), None);
        r.on_success(20.0);
        r.on_rate_limited(30.0, 30.0);
        assert_eq!(r.rate(), Some(4.5));
    }

    #[test]
    fn a_later_429_never_raises_the_rate() {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..10 {
            r.on_success(0.0);
        }
        r.on_rate_limited(0.0, 0.0);
        for i in 0..100 {
            r.on_success(100.0 + i as f64);
        }
        r.on_rate_limited(QUIET_MS / 2.0, QUIET_MS / 2.0);
        assert!(r.rate().unwrap() <= 9.0 * 1.001, "{:?}", r.rate());
        // A refusal after the quiet time, too: never above the rate it refuses.
        for i in 0..1000 {
            r.on_success(QUIET_MS + f64::from(i) * 0.1);
        }
        let before = {
            r.next_slot(QUIET_MS + 100.0);
            r.rate().unwrap()
        };
        r.on_rate_limited(QUIET_MS + 100.0, QUIET_MS + 100.0);
        // 900 served in the last second: 810/s would be far above; the refused rate caps it.
        assert_eq!(r.rate(), Some(before));
    }

    #[test]
    fn a_refusal_of_a_request_sent_before_the_last_refusal_is_the_same_overload() {
        // A slow host: the 429s of what was in flight come up to 300 ms after the first.
        let mut r = learned(20, 0.0); // 18/s, refused at 0
        r.next_slot(QUIET_MS + DOUBLING_MS); // 36/s
        for _ in 0..40 {
            r.on_success(QUIET_MS + DOUBLING_MS);
        }
        r.on_rate_limited(QUIET_MS + DOUBLING_MS, -10.0); // sent before the first refusal
        r.next_slot(QUIET_MS + 3.0 * DOUBLING_MS);
        assert!(r.rate().unwrap() > 100.0, "{:?}: still doubling, no ceiling", r.rate());
    }

    #[test]
    fn the_ceiling_is_the_rate_in_force_when_the_refused_request_was_sent() {
        let sent = QUIET_MS + 2.0 * DOUBLING_MS; // 72/s then
        let mut r = learned(20, 0.0);
        let answered = sent + DOUBLING_MS; // 144/s by the time its 429 comes
        r.next_slot(answered);
        for _ in 0..20 {
            r.on_success(answered);
        }
        r.on_rate_limited(answered, sent);
        let rate = r.rate().unwrap();
        assert!((rate - 36.0).abs() < 0.01, "{rate}: half of the 72/s it was refused at, not of 144");
        // It closes half the distance to 72 (not 144) per doubling time.
        r.next_slot(answered + QUIET_MS + DOUBLING_MS);
        let one = r.rate().unwrap();
        assert!((53.0..56.0).contains(&one), "{one}");
    }
}
