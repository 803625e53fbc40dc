//! Latency percentiles from a fixed-size histogram: memory stays constant however many calls.

/// Bucket upper bounds grow by 2^(1/4) ≈ 19 % from 1 ms to ~15 min; the last bucket takes the
/// rest. A percentile is reported as its bucket's upper bound (≤ 19 % high).
const BUCKETS: usize = 80;
const GROWTH: f64 = 1.189_207_115_002_721; // 2^(1/4)

/// A histogram of latencies in ms.
#[derive(Debug, Clone)]
pub struct Latency {
    counts: [u32; BUCKETS],
    total: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency { counts: [0; BUCKETS], total: 0 }
    }
}

fn upper_bound(bucket: usize) -> f64 {
    GROWTH.powi(bucket as i32)
}

impl Latency {
    /// Adds one latency, in ms.
    pub fn record(&mut self, ms: f64) {
        let mut bucket = 0;
        while bucket + 1 < BUCKETS && ms > upper_bound(bucket) {
            bucket += 1;
        }
        self.counts[bucket] = self.counts[bucket].saturating_add(1);
        self.total += 1;
    }

    /// How many latencies have been recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `p`-th percentile (0 < p ≤ 1), or `None` before the first sample.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((self.total as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (bucket, count) in self.counts.iter().enumerate() {
            seen += u64::from(*count);
            if seen >= rank {
                return Some(upper_bound(bucket).round());
            }
        }
        Some(upper_bound(BUCKETS - 1).round())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_one_bucket() {
        let mut l = Latency::default();
        for ms in 1..=1000 {
            l.record(ms as f64);
        }
        for (p, exact) in [(0.5, 500.0), (0.95, 950.0), (0.99, 990.0)] {
            let got = l.percentile(p).unwrap();
            assert!(got >= exact && got <= exact * 1.2, "p{p}: {got}");
        }
        assert_eq!(l.count(), 1000);
    }

    #[test]
    fn empty_and_extreme_samples() {
        let mut l = Latency::default();
        assert_eq!(l.percentile(0.5), None);
        l.record(0.0);
        assert_eq!(l.percentile(0.5), Some(1.0));
        l.record(1e12);
        assert!(l.percentile(1.0).unwrap() > 200_000.0);
    }
}
