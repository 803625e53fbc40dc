//! Backoff delays. Pure functions of the retry number, the previous delay and one uniform random
//! number in `[0, 1)`: the caller owns the randomness, so every strategy is testable exactly.

use crate::MAX_DELAY_MS;

/// How the exponential ceiling is randomised. See the crate README for the formulas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jitter {
    /// U(0, ceiling): the least total work under contention (AWS, 2015).
    Full,
    /// ceiling/2 + U(0, ceiling/2): never retries "immediately".
    Equal,
    /// min(cap, U(base, 3 · previous)): grows from the previous delay, not the retry number.
    Decorrelated,
    /// Exactly the ceiling. Synchronised clients stay synchronised: for tests and single users.
    None,
    /// ceiling + U(0, jitterMs): the classic "truncated exponential backoff" form.
    Additive,
}

impl Jitter {
    /// The values `jitter` takes, as JavaScript spells them.
    pub const NAMES: [&'static str; 5] = ["full", "equal", "decorrelated", "none", "additive"];
    /// In the order of `NAMES`.
    pub const ALL: [Jitter; 5] =
        [Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::None, Jitter::Additive];

    /// The strategy spelled `name`, if there is one.
    pub fn parse(name: &str) -> Option<Jitter> {
        Some(match name {
            "full" => Jitter::Full,
            "equal" => Jitter::Equal,
            "decorrelated" => Jitter::Decorrelated,
            "none" => Jitter::None,
            "additive" => Jitter::Additive,
            _ => return None,
        })
    }
}

/// The parameters of one backoff schedule, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first retry's ceiling (`baseDelayMs`).
    pub base_ms: f64,
    /// The most any delay may be (`maxDelayMs`).
    pub cap_ms: f64,
    /// How the ceiling is randomised.
    pub jitter: Jitter,
    /// Only used by [`Jitter::Additive`].
    pub jitter_ms: f64,
}

impl Backoff {
    /// min(cap, base · 2^(retry − 1)) for retry ≥ 1, without overflow or NaN for any input.
    pub fn ceiling(&self, retry: u32) -> f64 {
        let exponent = retry.saturating_sub(1).min(1023) as i32;
        let grown = if self.base_ms > 0.0 { self.base_ms * 2f64.powi(exponent) } else { 0.0 };
        clamp_delay(grown.min(self.cap_ms))
    }

    /// The delay before retry number `retry` (1 for the first retry). `previous_ms` is the last
    /// delay returned (only decorrelated jitter uses it; pass `base_ms` before the first retry).
    /// `unit` is a uniform random number in `[0, 1)`; values outside are clamped into it.
    pub fn delay(&self, retry: u32, previous_ms: f64, unit: f64) -> f64 {
        let r = if unit.is_finite() { unit.clamp(0.0, 1.0) } else { 0.0 };
        let ceiling = self.ceiling(retry);
        let delay = match self.jitter {
            Jitter::Full => r * ceiling,
            Jitter::Equal => ceiling / 2.0 + r * (ceiling / 2.0),
            Jitter::None => ceiling,
            Jitter::Additive => ceiling + r * clamp_delay(self.jitter_ms),
            Jitter::Decorrelated => {
                let low = clamp_delay(self.base_ms);
                let high = clamp_delay(previous_ms).max(low) * 3.0;
                (low + r * (high - low)).min(self.cap_ms)
            }
        };
        clamp_delay(delay)
    }
}

/// Clamps a delay into `[0, 2^31 − 1]` ms; NaN becomes 0.
pub fn clamp_delay(ms: f64) -> f64 {
    if ms.is_nan() {
        0.0
    } else {
        ms.clamp(0.0, MAX_DELAY_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator so the property tests need no dependency.
    pub(crate) struct SplitMix(u64);
    impl SplitMix {
        pub(crate) fn unit(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as f64 / (u64::MAX as f64 + 1.0)
        }
    }

    const ALL: [Jitter; 5] =
        [Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::None, Jitter::Additive];

    #[test]
    fn no_delay_exceeds_its_cap_for_any_seed_or_retry() {
        let shapes = [(200.0, 2000.0, 100.0), (500.0, 30000.0, 0.0), (0.0, 1000.0, 50.0), (5.0, 2000.0, 7.0)];
        for jitter in ALL {
            for &(base, cap, jitter_ms) in &shapes {
                let b = Backoff { base_ms: base, cap_ms: cap, jitter, jitter_ms };
                for seed in 0..200u64 {
                    let mut rng = SplitMix(seed);
                    let mut previous = base;
                    for retry in 1..=80 {
                        let d = b.delay(retry, previous, rng.unit());
                        let limit = if jitter == Jitter::Additive { cap + jitter_ms } else { cap };
                        assert!(d >= 0.0 && d <= limit, "{jitter:?} {base} {cap} retry {retry}: {d}");
                        previous = d;
                    }
                }
            }
        }
    }

    #[test]
    fn full_jitter_spans_zero_to_the_exponential_ceiling() {
        let b = Backoff { base_ms: 200.0, cap_ms: 2000.0, jitter: Jitter::Full, jitter_ms: 0.0 };
        assert_eq!(b.ceiling(1), 200.0);
        assert_eq!(b.ceiling(2), 400.0);
        assert_eq!(b.ceiling(4), 1600.0);
        assert_eq!(b.ceiling(5), 2000.0);
        assert_eq!(b.ceiling(4000), 2000.0);
        assert_eq!(b.delay(3, 0.0, 0.0), 0.0);
        assert_eq!(b.delay(3, 0.0, 0.5), 400.0);
        let mut rng = SplitMix(7);
        let samples: Vec<f64> = (0..10_000).map(|_| b.delay(3, 0.0, rng.unit())).collect();
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((mean - 400.0).abs() < 15.0, "mean {mean}");
        assert!(samples.iter().any(|d| *d < 40.0) && samples.iter().any(|d| *d > 760.0));
    }

    #[test]
    fn equal_none_and_additive_follow_their_formulas() {
        let mk = |jitter| Backoff { base_ms: 100.0, cap_ms: 1000.0, jitter, jitter_ms: 50.0 };
        assert_eq!(mk(Jitter::Equal).delay(2, 0.0, 0.0), 100.0);
        assert_eq!(mk(Jitter::Equal).delay(2, 0.0, 0.5), 150.0);
        assert_eq!(mk(Jitter::None).delay(3, 0.0, 0.9), 400.0);
        assert_eq!(mk(Jitter::None).delay(30, 0.0, 0.9), 1000.0);
        assert_eq!(mk(Jitter::Additive).delay(1, 0.0, 0.5), 125.0);
        assert_eq!(mk(Jitter::Additive).delay(30, 0.0, 0.999_999), 1000.0 + 0.999_999 * 50.0);
    }

    #[test]
    fn decorrelated_grows_from_the_previous_delay() {
        let b = Backoff { base_ms: 100.0, cap_ms: 10_000.0, jitter: Jitter::Decorrelated, jitter_ms: 0.0 };
        assert_eq!(b.delay(1, 100.0, 0.0), 100.0);
        assert_eq!(b.delay(1, 100.0, 0.5), 200.0);
        assert_eq!(b.delay(9, 1000.0, 0.5), 100.0 + 0.5 * 2900.0);
        assert_eq!(b.delay(9, 9000.0, 0.99), 10_000.0);
    }

    #[test]
    fn hostile_inputs_stay_within_timer_range() {
        for jitter in ALL {
            let b = Backoff { base_ms: 1e300, cap_ms: f64::MAX, jitter, jitter_ms: 1e300 };
            for unit in [f64::NAN, -1.0, 0.0, 0.5, 2.0, f64::INFINITY] {
                for retry in [0, 1, 2, 1100, u32::MAX] {
                    let d = b.delay(retry, f64::NAN, unit);
                    assert!((0.0..=MAX_DELAY_MS).contains(&d), "{jitter:?} {unit} {retry} {d}");
                }
            }
        }
        assert_eq!(clamp_delay(f64::NAN), 0.0);
        assert_eq!(clamp_delay(-5.0), 0.0);
        assert_eq!(clamp_delay(1e20), MAX_DELAY_MS);
    }

    #[test]
    fn names_round_trip() {
        for name in Jitter::NAMES {
            assert!(Jitter::parse(name).is_some());
        }
        assert_eq!(Jitter::parse("Full"), None);
    }
}
