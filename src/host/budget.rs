//! A per-host retry budget, after gRPC's retry throttling and Finagle's RetryBudget: every call
//! deposits `ratio` tokens, every retry withdraws one, and a reserve refilled at `minPerSecond`
//! keeps a trickle of retries possible when traffic is low. First attempts never need a token.

/// `retryBudget` in the client config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetConfig {
    /// `ratio`: retries may add at most this much load on top of first attempts.
    pub ratio: f64,
    /// `minPerSecond`: retries always allowed per second, whatever the traffic.
    pub min_per_second: f64,
}

impl BudgetConfig {
    /// The defaults, as the option registry declares them.
    pub const DEFAULT: BudgetConfig = BudgetConfig {
        ratio: crate::options::registry::RETRY_BUDGET_RATIO.default.number(false),
        min_per_second: crate::options::registry::RETRY_BUDGET_MIN_PER_SECOND.default.number(false),
    };
}

/// Deposits fade with this time constant, so an old burst of traffic does not fund retries
/// during a later outage (Finagle keeps deposits for 10 s).
const FADE_MS: f64 = 10_000.0;

/// One host's retry budget.
#[derive(Debug, Clone)]
pub struct RetryBudget {
    config: BudgetConfig,
    deposits: f64,
    reserve: f64,
    at_ms: f64,
}

impl RetryBudget {
    /// A budget with a full reserve and no deposits.
    pub fn new(config: BudgetConfig, now_ms: f64) -> RetryBudget {
        RetryBudget { config, deposits: 0.0, reserve: config.min_per_second, at_ms: now_ms }
    }

    fn advance(&mut self, now_ms: f64) {
        let dt = (now_ms - self.at_ms).max(0.0);
        if dt > 0.0 {
            // 1 / (1 + t/τ): a monotone fade without pulling libm's exp into the wasm module.
            self.deposits /= 1.0 + dt / FADE_MS;
            self.reserve =
                (self.reserve + dt / 1000.0 * self.config.min_per_second).min(self.config.min_per_second);
            self.at_ms = now_ms;
        }
    }

    /// A call was made (its first attempt).
    pub fn on_call(&mut self, now_ms: f64) {
        self.advance(now_ms);
        self.deposits += self.config.ratio;
    }

    /// How long until a retry could have a token (0 when one is there now), or `None` when the
    /// budget never refills (`minPerSecond` 0) and has none.
    pub fn next_token_in(&mut self, now_ms: f64) -> Option<f64> {
        self.advance(now_ms);
        if self.reserve >= 1.0 || self.deposits >= 1.0 - 1e-9 {
            return Some(0.0);
        }
        (self.config.min_per_second > 0.0).then(|| (1.0 - self.reserve) / self.config.min_per_second * 1000.0)
    }

    /// Takes a token for one retry, if there is one.
    pub fn try_retry(&mut self, now_ms: f64) -> bool {
        self.advance(now_ms);
        if self.reserve >= 1.0 {
            self.reserve -= 1.0;
            true
        } else if self.deposits >= 1.0 - 1e-9 {
            // (the tolerance: five deposits of 0.2 add up to 0.9999…)
            self.deposits -= 1.0;
            true
        } else {
            false
        }
    }

    /// Retries available now (for stats).
    pub fn tokens(&mut self, now_ms: f64) -> f64 {
        self.advance(now_ms);
        self.reserve + self.deposits
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_budget_says_when_the_reserve_refills_a_token() {
        let mut b = RetryBudget::new(BudgetConfig { ratio: 0.0, min_per_second: 10.0 }, 0.0);
        while b.try_retry(0.0) {}
        assert_eq!(b.next_token_in(0.0), Some(100.0), "10 per second: one in 100 ms");
        assert_eq!(b.next_token_in(60.0).map(f64::round), Some(40.0));
        assert_eq!(b.next_token_in(100.0), Some(0.0));
        assert!(b.try_retry(100.0));
        let mut never = RetryBudget::new(BudgetConfig { ratio: 0.0, min_per_second: 0.0 }, 0.0);
        assert_eq!(never.next_token_in(0.0), None);
    }

    use super::*;

    #[test]
    fn retries_are_bounded_by_ratio_plus_the_floor() {
        let mut b = RetryBudget::new(BudgetConfig { ratio: 0.2, min_per_second: 5.0 }, 0.0);
        for _ in 0..100 {
            b.on_call(0.0);
        }
        let granted = (0..1000).filter(|_| b.try_retry(0.0)).count();
        assert_eq!(granted, 5 + 20);
    }

    #[test]
    fn the_reserve_refills_at_min_per_second_and_caps() {
        let mut b = RetryBudget::new(BudgetConfig { ratio: 0.0, min_per_second: 2.0 }, 0.0);
        assert!(b.try_retry(0.0) && b.try_retry(0.0) && !b.try_retry(0.0));
        assert!(!b.try_retry(400.0));
        assert!(b.try_retry(500.0), "1 token after 0.5 s at 2/s");
        assert!(!b.try_retry(500.0));
        assert!((b.tokens(60_000.0) - 2.0).abs() < 1e-9, "the reserve caps at one second's worth");
    }

    #[test]
    fn deposits_fade_over_time() {
        let mut b = RetryBudget::new(BudgetConfig { ratio: 1.0, min_per_second: 0.0 }, 0.0);
        for _ in 0..10 {
            b.on_call(0.0);
        }
        assert!((b.tokens(0.0) - 10.0).abs() < 1e-9);
        assert!((b.tokens(10_000.0) - 5.0).abs() < 1e-9);
        assert!(b.tokens(1_000_000.0) < 0.2);
    }

    #[test]
    fn no_floor_and_no_traffic_means_no_retries() {
        let mut b = RetryBudget::new(BudgetConfig { ratio: 0.5, min_per_second: 0.0 }, 0.0);
        assert!(!b.try_retry(0.0));
        b.on_call(1.0);
        b.on_call(1.0);
        assert!(b.try_retry(1.0));
        assert!(!b.try_retry(1.0));
    }
}
