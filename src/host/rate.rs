//! The request rate a rate-limiting host tolerates, learned from its 429s: off until a 429 comes
//! after the host served at least a few requests in the last second, then 90 % of what it served,
//! growing by one request per second per second until the next such 429 (additive increase,
//! multiplicative decrease). A 429 with nothing served tells nothing about a rate (a quota, or
//! a host that throttles first requests): the pause alone handles it.

const WINDOW_MS: f64 = 1000.0;
const BUCKETS: usize = 10;
const BUCKET_MS: f64 = WINDOW_MS / BUCKETS as f64;
/// Fewer successes than this in the last second teach no rate.
const MIN_SAMPLE: u32 = 5;

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
        if let Some(rate) = self.rate {
            let grown = rate + dt / 1000.0; // +1 req/s per second without a 429
            self.rate = Some(grown);
            self.tokens = (self.tokens + dt / 1000.0 * grown).min(burst(grown));
        }
    }

    /// When the next request may go: `None` for now.
    pub fn next_slot(&mut self, now_ms: f64) -> Option<f64> {
        self.refill(now_ms);
        let rate = self.rate?;
        (self.tokens < 1.0).then(|| now_ms + (1.0 - self.tokens) / rate * 1000.0)
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

    /// A 429: the rate becomes 90 % of what the host served in the last second, if that is
    /// enough to tell.
    pub fn on_rate_limited(&mut self, now_ms: f64) {
        self.roll(now_ms);
        self.refill(now_ms);
        let served: u32 = self.successes.iter().sum();
        if served < MIN_SAMPLE {
            return;
        }
        let rate = f64::from(served) * 0.9;
        self.rate = Some(self.rate.map_or(rate, |old| old.min(rate)));
        self.tokens = 0.0;
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
        r.on_rate_limited(600.0);
        assert_eq!(r.rate(), Some(45.0));
        // Right after the 429 there is no token: the next request waits 1/45 s.
        let next = r.next_slot(600.0).unwrap();
        assert!((next - (600.0 + 1000.0 / 45.0)).abs() < 1e-6, "{next}");
    }

    #[test]
    fn spaces_requests_at_the_rate() {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..10 {
            r.on_success(0.0);
        }
        r.on_rate_limited(0.0); // 9 req/s
        let mut now = 0.0;
        let mut sent = 0;
        while now < 10_000.0 {
            match r.next_slot(now) {
                None => {
                    r.take(now);
                    sent += 1;
                }
                Some(at) => now = at,
            }
        }
        // 9/s growing by 1/s each second: about 9·10 + 10²/2 = 140 in 10 s.
        assert!((130..=150).contains(&sent), "{sent}");
    }

    #[test]
    fn old_successes_fall_out_of_the_window() {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..100 {
            r.on_success(0.0);
        }
        r.on_rate_limited(5000.0);
        assert_eq!(r.rate(), None, "nothing served in the last second: no rate to learn");
    }

    #[test]
    fn a_429_with_too_few_successes_teaches_nothing() {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..4 {
            r.on_success(0.0);
        }
        r.on_rate_limited(10.0);
        assert_eq!(r.rate(), None);
        assert_eq!(r.next_slot(10.0), None);
        r.on_success(20.0);
        r.on_rate_limited(30.0);
        assert_eq!(r.rate(), Some(4.5));
    }

    #[test]
    fn a_later_429_never_raises_the_rate() {
        let mut r = AdaptiveRate::new(0.0);
        for _ in 0..10 {
            r.on_success(0.0);
        }
        r.on_rate_limited(0.0);
        for i in 0..100 {
            r.on_success(100.0 + i as f64);
        }
        r.on_rate_limited(300.0);
        assert!(r.rate().unwrap() <= 9.3);
    }
}
