//! Deadline arithmetic on a monotonic clock reading in milliseconds.

use core::cell::Cell;

/// The wall-clock budget of one `fetchTile` call. Time the call spends queued behind its own
/// client's other requests (for a concurrency slot, or for a connection to the host) is not
/// time the server failed to answer: the loop adds it back with [`Deadline::extend`].
#[derive(Debug, Clone, PartialEq)]
pub struct Deadline {
    start_ms: f64,
    end_ms: Cell<f64>,
}

impl Deadline {
    /// A deadline `budget_ms` after `now_ms` (a negative budget counts as 0).
    pub fn starting(now_ms: f64, budget_ms: f64) -> Deadline {
        Deadline { start_ms: now_ms, end_ms: Cell::new(now_ms + budget_ms.max(0.0)) }
    }

    /// Moves the end `ms` later: the call spent them queued, not served.
    pub fn extend(&self, ms: f64) {
        self.end_ms.set(self.end_ms.get() + ms.max(0.0));
    }

    /// The time since the start, never negative.
    pub fn elapsed(&self, now_ms: f64) -> f64 {
        (now_ms - self.start_ms).max(0.0)
    }

    /// What is left, never negative.
    pub fn remaining(&self, now_ms: f64) -> f64 {
        (self.end_ms.get() - now_ms).max(0.0)
    }

    /// The whole budget, in ms (queued time given back included).
    pub fn budget(&self) -> f64 {
        self.end_ms.get() - self.start_ms
    }

    /// How long the next attempt may run: its own timeout, cut to what is left.
    pub fn attempt_budget(&self, now_ms: f64, attempt_timeout_ms: f64) -> f64 {
        attempt_timeout_ms.min(self.remaining(now_ms))
    }

    /// Whether an attempt started after sleeping `delay_ms` from now would still have time.
    /// A sleep that ends exactly at the deadline leaves nothing for the attempt, so it does not fit.
    pub fn fits_sleep(&self, now_ms: f64, delay_ms: f64) -> bool {
        now_ms + delay_ms < self.end_ms.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_and_elapsed_never_go_negative() {
        let d = Deadline::starting(1000.0, 6000.0);
        assert_eq!(d.budget(), 6000.0);
        assert_eq!(d.remaining(1000.0), 6000.0);
        assert_eq!(d.remaining(6500.0), 500.0);
        assert_eq!(d.remaining(9000.0), 0.0);
        assert_eq!(d.elapsed(900.0), 0.0);
        assert_eq!(d.elapsed(1250.0), 250.0);
    }

    #[test]
    fn attempts_are_cut_to_the_time_left() {
        let d = Deadline::starting(0.0, 6000.0);
        assert_eq!(d.attempt_budget(0.0, 4000.0), 4000.0);
        assert_eq!(d.attempt_budget(4500.0, 4000.0), 1500.0);
        assert_eq!(d.attempt_budget(7000.0, 4000.0), 0.0);
    }

    #[test]
    fn a_sleep_fits_only_if_it_ends_before_the_deadline() {
        let d = Deadline::starting(0.0, 1000.0);
        assert!(d.fits_sleep(0.0, 999.0));
        assert!(!d.fits_sleep(0.0, 1000.0));
        assert!(!d.fits_sleep(600.0, 400.0));
        assert!(!d.fits_sleep(0.0, f64::INFINITY));
        assert!(!Deadline::starting(0.0, -5.0).fits_sleep(0.0, 0.0));
    }

    #[test]
    fn queued_time_is_given_back() {
        let d = Deadline::starting(0.0, 1000.0);
        d.extend(2500.0);
        d.extend(-10.0);
        assert_eq!(d.budget(), 3500.0);
        assert_eq!(d.remaining(3000.0), 500.0, "served for 500 of its 1000 ms");
        assert!(d.fits_sleep(3000.0, 499.0));
    }
}
