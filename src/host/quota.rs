//! Pacing by the quota a host states (`RateLimit`, `X-RateLimit-*`: see
//! [`crate::response::rate_limit`]). The quota the host says remains, less the requests already
//! on their way to it, is spread evenly over the time until it says more is made available, so
//! it lasts until then: a token bucket at that rate, holding at most a second's worth, so a
//! view's tiles go at once while the quota allows and a host near the end of its quota is not
//! refused. Every answer restates the quota and replaces what the last one said: the host counts
//! what it served, the requests still on their way are taken off, and what is left is the new
//! budget (a host that refills as it serves restates a full budget on every answer). When
//! the time it stated has passed without a newer statement, the pacing lapses: whatever the host
//! restored by then (a bucket's refill) is unknown, and the next answer says (a host known to
//! count in fixed windows is the exception, below).
//!
//! A host with nothing left is asked at its policy's own rate (`q` per `w`), one request at a
//! time: the stated time is whole seconds, and a token bucket's next token comes long before.
//!
//! A host that refuses a request sent at that rate while it had stated nothing left, whose
//! quota comes back at once (more than its policy's rate refills), or whose answers a second or
//! more apart state the same end with less left, counts in fixed windows, as the draft reads: `r` remain until `t`, then a fresh `q`, and nothing comes
//! back before. From then on its remaining quota is spent at once and, with nothing left, nothing
//! goes until its stated time; then the next window holds its policy's `q` for `w`, before any
//! answer restates it. An answer that states an end half a window before is of the last window,
//! and passed over (one that overtook later answers on its way is passed over by its host, see
//! `HostState::on_stated`).
//!
//! Only the draft's "seconds until more quota" is trusted as far as `retryAfterMaxMs`, the
//! bound every server-stated wait has: a host that states an hour's wait is waited for at most
//! that long, and then asked again.

use crate::response::rate_limit::Stated;

/// How far before the end a window's answers state it may in truth have ended: `t` is whole
/// seconds, rounded up.
pub(crate) const UNCERTAIN_END_MS: f64 = 1000.0;

/// A host's stated quota as its last answer gave it, and the pacing it sets.
#[derive(Debug, Clone, Default)]
pub struct StatedQuota {
    current: Option<Pacing>,
    /// Since when (monotonic ms) the host's statements have said nothing is left, while they do.
    empty_since_ms: Option<f64>,
    /// The host counts in fixed windows: it refused a request sent at its policy's rate while it
    /// had nothing left, its quota came back at once, or its answers counted down to one end.
    windows: bool,
    /// The soonest end (monotonic ms) the answers stated for the window of the latest, when the
    /// host states its policy's window: answers whose ends lie within half a window of each
    /// other are of one window. Kept whatever the host is known to count in, so that a window
    /// learned late starts from every answer it had.
    window_end_ms: Option<f64>,
    /// The time that window's end is known to come after: each answer's `t` is rounded up to
    /// whole seconds and was counted when its request had reached the host, so the end comes
    /// less than a second before the time it states from when the request was sent. What went
    /// before it is that window's for certain. (0 before a window's first answer: no bound, the
    /// monotonic clock being past it.)
    window_ends_after_ms: f64,
    /// What the latest statement said remained, and when (monotonic ms).
    last_said: Option<(f64, f64)>,
    /// The first statement of the window of the latest: what it said remained, and when.
    window_first: Option<(f64, f64)>,
    /// Requests that went in the last part of a window that its rounded ends leave uncertain
    /// (a second, or half a window): the host may have counted them in the next.
    late_taken: f64,
}

#[derive(Debug, Clone)]
struct Pacing {
    /// What the host stated (for `stats()`).
    stated: Stated,
    /// When the statement lapses (monotonic ms): the stated time, clamped.
    until_ms: f64,
    /// Requests per ms the quota allows until then; `None`: the host stated that more is
    /// available now, or nothing to spread it over.
    rate: Option<f64>,
    /// What the statement allows on average until it lapses, in requests per second: its
    /// budget over its time, or the policy's rate when nothing is left.
    per_second: f64,
    tokens: f64,
    burst: f64,
    at_ms: f64,
    /// The statement left nothing: requests go one at a time at the policy's rate.
    empty: bool,
}

impl StatedQuota {
    /// Takes in a statement from an answer that arrived at `now_ms` to a request sent at
    /// `sent_ms`, when `in_flight` other requests were out (the host may not have counted them yet). `max_wait_ms`
    /// bounds the stated time (`retryAfterMaxMs`). Returns whether the host is paced by its
    /// stated quota now and was not before.
    pub fn on_stated(
        &mut self,
        now_ms: f64,
        sent_ms: f64,
        stated: Stated,
        in_flight: usize,
        max_wait_ms: f64,
    ) -> bool {
        if self.current.as_ref().is_some_and(|p| p.stated.policy != stated.policy) {
            // Another policy is now the one that runs out first: what was learned of the last
            // one's windows is not this one's.
            self.windows = false;
            self.window_end_ms = None;
            self.window_ends_after_ms = f64::NEG_INFINITY;
            self.last_said = None;
        }
        self.roll(now_ms);
        let was_pacing = self.pacing(now_ms).is_some();
        // A quota that comes back at once, more than its policy's rate refills and the requests
        // on their way could explain, was reset: the host counts in fixed windows.
        if let (Some((said, at)), Some(q), Some(w)) = (self.last_said, stated.quota, stated.window_s) {
            let gained = stated.remaining - said;
            let refill = (now_ms - at).max(0.0) * q / (w * 1000.0);
            if gained >= q / 2.0 && gained > refill + in_flight as f64 + 1.0 {
                self.windows = true;
            }
        }
        self.last_said = Some((stated.remaining, now_ms));
        let budget = (stated.remaining - in_flight as f64).max(0.0);
        let horizon = stated.reset_s.map_or(0.0, |t| (t * 1000.0).min(max_wait_ms.max(0.0)));
        // Which window the answer is of. A window's `t` is its remaining time rounded up to
        // whole seconds, so each answer says the reset is no later than it states: of one
        // window's answers, the soonest end is the closest. One that ends half a window or more
        // after it is of the next window (or of a host that began one at its first request);
        // one that ends as long before is of the last, and says nothing of this one.
        let end = now_ms + horizon;
        let ends_after = sent_ms.min(now_ms) + horizon - UNCERTAIN_END_MS;
        let window = self.current.as_ref().filter(|p| self.windows && p.until_ms > now_ms);
        let mut same = false;
        // A `t` cut to `retryAfterMaxMs` is not the window's end: the statement lapses then,
        // and no window is begun from it.
        let clamped = stated.reset_s.is_some_and(|t| t * 1000.0 > horizon);
        match (stated.window_s.filter(|_| horizon > 0.0 && !clamped), self.window_end_ms) {
            (Some(w), Some(known)) if end < known - w * 500.0 => {
                if window.is_some() {
                    return false;
                }
                self.window_end_ms = Some(end);
                self.window_ends_after_ms = ends_after;
                self.window_first = Some((stated.remaining, now_ms));
            }
            (Some(w), Some(known)) if end <= known + w * 500.0 => {
                self.window_end_ms = Some(known.min(end));
                // Never past the soonest end (answers whose rounding disagrees, or a late one).
                self.window_ends_after_ms = self.window_ends_after_ms.max(ends_after).min(known.min(end));
                same = true;
                // Answers more than `t`'s rounding apart that state the same end, less left at
                // the later: a window counting down (a bucket's next token moves with the clock).
                if let Some((first_left, first_at)) = self.window_first {
                    let apart = now_ms - first_at > UNCERTAIN_END_MS;
                    if apart && stated.remaining < first_left && end < known + UNCERTAIN_END_MS {
                        self.windows = true;
                    }
                }
            }
            (Some(_), _) => {
                self.window_end_ms = Some(end);
                self.window_ends_after_ms = ends_after;
                self.window_first = Some((stated.remaining, now_ms));
                self.late_taken = 0.0;
            }
            (None, _) => {
                self.window_end_ms = None;
                self.window_ends_after_ms = f64::NEG_INFINITY;
                same = window.is_some_and(|p| stated.remaining <= p.stated.remaining);
            }
        }
        let window_until = window.filter(|_| same).map(|p| p.until_ms);
        // What an empty statement in force had refilled by now: a part of the next request's
        // token (one with quota left held whole tokens, which a statement of none withdraws).
        let held = self.current.as_mut().filter(|p| p.until_ms > now_ms && p.empty).map(|p| {
            p.refill(now_ms);
            p.tokens
        });
        self.empty_since_ms = (horizon > 0.0 && budget < 1.0).then(|| self.empty_since_ms.unwrap_or(now_ms));
        let mut per_second = if horizon > 0.0 { budget / horizon * 1000.0 } else { f64::INFINITY };
        let (rate, tokens) = if horizon <= 0.0 {
            // More is available now (`t=0`), or the host did not say when: nothing to spread.
            (None, 0.0)
        } else if self.windows {
            // A window: what is left now, then nothing until it resets.
            (Some(0.0), budget)
        } else if budget < 1.0 {
            // Nothing left. The stated time is in whole seconds, and a token bucket's next token
            // comes long before it: one request at a time at the policy's own rate (q per w),
            // when the host stated one; a host whose quota is out until its window ends refuses
            // it, and its Retry-After pauses it. Without a policy, wait for the stated time.
            let per_ms = match (stated.quota, stated.window_s) {
                (Some(q), Some(w)) if q >= 1.0 => q / (w * 1000.0),
                _ => 0.0,
            };
            per_second = per_ms * 1000.0;
            // Keeping what was refilled since the last request went: the answers to it come
            // between, and each would otherwise restart the wait.
            (Some(per_ms), held.unwrap_or(0.0).clamp(0.0, 0.999))
        } else {
            // A second's worth at once, the rest spread: never more than the budget by the end.
            let burst = (budget / horizon * 1000.0).min(budget).max(1.0);
            (Some((budget - burst) / horizon), burst)
        };
        let burst = tokens.max(1.0);
        let empty = horizon > 0.0 && budget < 1.0;
        let until_ms = match (self.windows, self.window_end_ms, window_until) {
            (true, Some(known), _) if horizon > 0.0 => known,
            (true, None, Some(until)) if horizon > 0.0 => end.min(until),
            _ => end,
        };
        self.current =
            Some(Pacing { stated, until_ms, rate, per_second, tokens, burst, at_ms: now_ms, empty });
        !was_pacing && self.pacing(now_ms).is_some()
    }

    /// Takes in a refusal (429) of a request sent at `sent_ms`: one sent at the policy's rate
    /// after the host had stated nothing left shows it counts in fixed windows.
    pub fn on_refused(&mut self, sent_ms: f64) {
        if self.windows || !self.empty_since_ms.is_some_and(|since| sent_ms > since) {
            return;
        }
        self.windows = true;
        // Nothing left, until the end its answers stated for this window.
        if let Some(p) = self.current.as_mut().filter(|p| p.empty) {
            p.rate = Some(0.0);
            p.tokens = 0.0;
            if let Some(end) = self.window_end_ms.filter(|end| *end > p.at_ms) {
                p.until_ms = end;
            }
        }
    }

    /// A window whose end has passed, of a host that counts in fixed windows and stated its
    /// policy: the next window, with its whole quota to spend at once, ending a window later. A
    /// host that restarts its window at the first request after one ends says so in that
    /// request's answer.
    pub fn roll(&mut self, now_ms: f64) {
        if !self.windows || self.window_end_ms.is_none() {
            return;
        }
        let Some(p) = self.current.as_mut().filter(|p| p.until_ms <= now_ms) else { return };
        let (Some(q), Some(w)) = (p.stated.quota, p.stated.window_s) else { return };
        let window_ms = w * 1000.0;
        let passed = ((now_ms - p.until_ms) / window_ms).floor() + 1.0;
        p.until_ms += passed * window_ms;
        // What went in the last uncertain part of the window may count in this one.
        let left = if passed > 1.0 { q } else { (q - self.late_taken).max(0.0) };
        self.late_taken = 0.0;
        p.stated.remaining = left;
        p.stated.reset_s = Some(w);
        p.tokens = left;
        p.burst = q.max(1.0);
        p.per_second = q / w;
        p.rate = Some(0.0);
        p.at_ms = now_ms;
        p.empty = left < 1.0;
        self.window_end_ms = Some(p.until_ms);
        self.window_ends_after_ms += passed * window_ms;
        self.window_first = None;
        self.empty_since_ms = None;
    }

    /// Whether the statement in force left nothing and the host is asked one request at a time
    /// at its policy's rate (not yet known to count in windows).
    pub fn one_at_a_time(&self, now_ms: f64) -> bool {
        !self.windows
            && self.current.as_ref().is_some_and(|p| p.until_ms > now_ms && p.empty && p.rate.is_some())
    }

    /// Whether the host has shown that it counts in fixed windows.
    pub fn counts_in_windows(&self) -> bool {
        self.windows
    }

    /// When the statement in force lapses (monotonic ms).
    pub fn until_ms(&self, now_ms: f64) -> Option<f64> {
        self.current.as_ref().map(|p| p.until_ms).filter(|until| *until > now_ms)
    }

    /// The rate (requests per second) the stated quota paces the host at now, on average until
    /// the statement lapses, while one that paces is in force.
    pub fn pacing(&self, now_ms: f64) -> Option<f64> {
        let p = self.current.as_ref().filter(|p| p.until_ms > now_ms)?;
        p.rate.map(|_| p.per_second)
    }

    /// The last statement, while it is in force.
    pub fn stated(&self, now_ms: f64) -> Option<&Stated> {
        self.current.as_ref().filter(|p| p.until_ms > now_ms).map(|p| &p.stated)
    }

    /// When the next request may go by the stated quota: `None` for now, or when no statement
    /// is in force.
    pub fn next_slot(&mut self, now_ms: f64) -> Option<f64> {
        self.roll(now_ms);
        let p = self.current.as_mut().filter(|p| p.until_ms > now_ms)?;
        let rate = p.rate?;
        p.refill(now_ms);
        if p.tokens >= 1.0 - 1e-9 {
            return None;
        }
        // The statement lapses before a token would come: then the host's next answer says.
        let at = now_ms + (1.0 - p.tokens) / rate;
        Some(if rate > 0.0 { at.min(p.until_ms) } else { p.until_ms })
    }

    /// How many requests the stated quota has to spare now: infinite when none paces the host.
    pub fn to_spare(&mut self, now_ms: f64) -> f64 {
        self.roll(now_ms);
        match self.current.as_mut().filter(|p| p.until_ms > now_ms && p.rate.is_some()) {
            Some(p) => {
                p.refill(now_ms);
                p.tokens
            }
            None => f64::INFINITY,
        }
    }

    /// Takes a token for a request that goes now.
    pub fn take(&mut self, now_ms: f64) {
        if let Some(p) = self.current.as_mut().filter(|p| p.until_ms > now_ms && p.rate.is_some()) {
            p.refill(now_ms);
            p.tokens -= 1.0;
            if let (true, Some(w)) = (self.windows, p.stated.window_s) {
                let uncertain_from =
                    (p.until_ms - UNCERTAIN_END_MS.min(w * 500.0)).max(self.window_ends_after_ms);
                if now_ms >= uncertain_from {
                    self.late_taken += 1.0;
                }
            }
        }
    }
}

impl Pacing {
    fn refill(&mut self, now_ms: f64) {
        let dt = (now_ms - self.at_ms).max(0.0);
        self.at_ms = self.at_ms.max(now_ms);
        if let Some(rate) = self.rate {
            self.tokens = (self.tokens + dt * rate).min(self.burst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stated(remaining: f64, reset_s: Option<f64>) -> Stated {
        Stated { policy: Some("p".into()), quota: None, window_s: None, remaining, reset_s }
    }

    /// What a host with the policy `q` per `w` s states: `r` left, `t` s until more.
    fn policy(q: f64, w: f64, remaining: f64, reset_s: f64) -> Stated {
        Stated {
            policy: Some("p".into()),
            quota: Some(q),
            window_s: Some(w),
            remaining,
            reset_s: Some(reset_s),
        }
    }

    /// Requests sent between `from` and `to` (ms) by a caller that always has one waiting and
    /// sends at most one a microsecond.
    fn sent(q: &mut StatedQuota, from: f64, to: f64) -> usize {
        let (mut now, mut n) = (from, 0);
        while now < to {
            match q.next_slot(now) {
                None => {
                    q.take(now);
                    n += 1;
                    now += 0.001;
                }
                Some(at) => now = at.max(now + 1e-6),
            }
        }
        n
    }

    #[test]
    fn the_remaining_quota_is_spread_until_more_comes() {
        let mut q = StatedQuota::default();
        assert!(q.on_stated(0.0, 0.0, stated(10.0, Some(5.0)), 0, 60_000.0), "pacing starts");
        assert_eq!((q.pacing(0.0), q.until_ms(0.0)), (Some(2.0), Some(5_000.0)));
        // Two at once (a second's worth), then the other eight spread, the last as more comes.
        assert_eq!(sent(&mut q, 0.0, 1.0), 2);
        assert_eq!(sent(&mut q, 1.0, 5_000.0), 7);
        assert_eq!(q.pacing(5_000.0), None, "lapsed: the next answer says");
        assert_eq!(q.next_slot(5_000.0), None);
    }

    #[test]
    fn requests_in_flight_count_against_the_quota() {
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, stated(12.0, Some(2.0)), 4, 60_000.0);
        assert_eq!(q.pacing(0.0), Some(4.0), "12 left, 4 on their way: 4 at once, 4 over 2 s");
        assert_eq!(sent(&mut q, 0.0, 1.0), 4);
        // The same statement again (the host had not counted those 4 yet): no new burst.
        assert!(!q.on_stated(10.0, 10.0, stated(12.0, Some(2.0)), 8, 60_000.0), "already pacing");
        assert_eq!(sent(&mut q, 10.0, 11.0), 2, "4 left: a second's worth of them");
        assert!(!q.on_stated(20.0, 20.0, stated(0.0, Some(1.0)), 0, 60_000.0));
        assert_eq!(q.next_slot(20.0), Some(1_020.0), "nothing left: wait for more");
    }

    /// A quota of 60 per 2 s window: nothing left, the host is first asked at its policy's rate
    /// (a bucket would have a token by then); refused, it is known as a window, whose remaining
    /// quota goes at once and whose end is waited for.
    #[test]
    fn a_host_that_refuses_its_policys_rate_when_empty_counts_in_windows() {
        let window = |remaining, reset_s| policy(60.0, 2.0, remaining, reset_s);
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, window(0.0, 2.0), 0, 60_000.0);
        assert_eq!(q.next_slot(0.0), Some(1000.0 / 30.0), "the policy's rate: 30 a second");
        q.on_refused(0.0);
        assert!(!q.counts_in_windows(), "sent before the host said it was empty");
        q.on_stated(40.0, 40.0, window(0.0, 2.0), 0, 60_000.0);
        q.on_refused(35.0);
        assert!(q.counts_in_windows(), "refused at the policy's rate: a window");
        // Its `t` is rounded up: the end an answer states is no later than the window's, and the
        // soonest of its answers', from before it was known as a window too, is the closest.
        assert_eq!(q.next_slot(45.0), Some(2_000.0), "nothing until it resets");
        q.on_stated(50.0, 50.0, window(0.0, 2.0), 0, 60_000.0);
        q.on_stated(1_600.0, 1_600.0, window(0.0, 1.0), 0, 60_000.0);
        assert_eq!(q.next_slot(1_600.0), Some(2_000.0), "the soonest end stated");
        q.on_stated(2_060.0, 2_060.0, window(60.0, 2.0), 0, 60_000.0);
        assert_eq!(sent(&mut q, 2_060.0, 2_061.0), 60, "a fresh window's quota, at once");
        assert_eq!(q.next_slot(2_061.0), Some(4_000.0), "it ends a window after the last");
    }

    /// A window's end begins the next one, with its policy's whole quota, before any answer
    /// says so; an answer from the window before is passed over.
    #[test]
    fn the_next_window_holds_the_policys_quota_and_what_remains_only_goes_down() {
        let window = |remaining, reset_s| policy(60.0, 2.0, remaining, reset_s);
        let mut q = StatedQuota::default();
        q.on_stated(-2_000.0, -2_000.0, window(0.0, 2.0), 0, 60_000.0);
        q.on_refused(-1_990.0);
        q.on_stated(-1_980.0, -1_980.0, window(0.0, 2.0), 0, 60_000.0);
        // The window after: an answer says 10 are left.
        q.on_stated(20.0, 20.0, window(10.0, 2.0), 0, 60_000.0);
        assert_eq!(sent(&mut q, 20.0, 21.0), 10, "what is left, at once");
        assert_eq!(q.next_slot(30.0), Some(2_000.0), "then nothing until it ends");
        // The window ends: the next holds 60, with no answer yet.
        assert_eq!(sent(&mut q, 2_000.0, 2_001.0), 60, "the policy's quota at once");
        assert_eq!(q.next_slot(2_001.0), Some(4_000.0), "then nothing until it ends");
        // A late answer from the window before says nothing of this one.
        assert!(!q.on_stated(1_990.0, 1_990.0, window(3.0, 1.0), 0, 60_000.0));
        assert_eq!(q.next_slot(2_010.0), Some(4_000.0));
        // Its first answer's end, rounded up, does not move the end the clock gave it.
        q.on_stated(2_300.0, 2_300.0, window(0.0, 2.0), 0, 60_000.0);
        assert_eq!(q.next_slot(2_300.0), Some(4_000.0));
        // What went in the window's last second may be counted in the next (its end is known
        // to `t`'s rounding): the next holds that much less until an answer says.
        let mut late = q.clone();
        assert_eq!(sent(&mut late, 3_500.0, 3_500.5), 0, "nothing left in this one");
        late.on_stated(3_600.0, 3_600.0, window(5.0, 1.0), 0, 60_000.0);
        assert_eq!(sent(&mut late, 3_600.0, 3_601.0), 5, "five came back late in the window");
        assert_eq!(sent(&mut late, 4_000.0, 4_001.0), 55, "the next window: 60 less those five");
        // Idle for windows: the one the clock is in now.
        assert_eq!(sent(&mut q, 9_000.0, 9_001.0), 60);
        assert_eq!(q.next_slot(9_001.0), Some(10_000.0));
        // A host that begins its window at its first request says so with an end past the
        // rounding.
        q.on_stated(10_500.0, 10_500.0, window(0.0, 2.0), 0, 60_000.0);
        assert_eq!(q.next_slot(10_500.0), Some(12_000.0), "within the rounding: the clock's end");
        q.on_stated(13_100.0, 13_100.0, window(59.0, 2.0), 0, 60_000.0);
        assert_eq!(q.until_ms(13_100.0), Some(15_100.0), "the host's window began at 13.1 s");
    }

    /// A window's answers bound its end from both sides: each `t`, rounded up, counted when its
    /// request had arrived, says the end comes less than a second before the time it states
    /// from when the request was sent. What went before that is the window's own, and does not
    /// come off the next one.
    #[test]
    fn what_went_before_a_window_can_have_ended_is_its_own() {
        let window = |remaining, reset_s| policy(60.0, 2.0, remaining, reset_s);
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, window(0.0, 2.0), 0, 60_000.0);
        q.on_stated(40.0, 40.0, window(0.0, 2.0), 0, 60_000.0);
        q.on_refused(35.0);
        assert!(q.counts_in_windows());
        // The next window, from 2 s: idle until 3.1 s, then its quota at once.
        let mut unsaid = q.clone();
        assert_eq!(sent(&mut unsaid, 3_100.0, 3_100.1), 60);
        assert_eq!(
            sent(&mut unsaid, 4_000.0, 4_000.1),
            0,
            "sent within its last second: maybe the next window's"
        );
        // An answer to a request sent at 2.95 s that says two seconds remain: the window ends
        // after 3.95 s (the second's rounding), no later than 4 s (the clock's end).
        q.on_stated(2_952.0, 2_950.0, window(60.0, 2.0), 0, 60_000.0);
        let mut some_late = q.clone();
        assert_eq!(sent(&mut q, 3_100.0, 3_100.1), 60);
        assert_eq!(sent(&mut q, 4_000.0, 4_000.1), 60, "the next window holds the policy's quota");
        // Ten sent after that bound may be counted in the next window.
        assert_eq!(sent(&mut some_late, 3_100.0, 3_100.05), 50);
        assert_eq!(sent(&mut some_late, 3_960.0, 3_960.1), 10);
        assert_eq!(sent(&mut some_late, 4_000.0, 4_000.1), 50, "sixty less those ten");
    }

    /// A window's reset shows in its answers: what remains comes back at once, more than the
    /// policy's rate refills (a bucket's comes back at that rate).
    #[test]
    fn a_quota_that_comes_back_at_once_is_a_window() {
        let said = |remaining, reset_s| policy(60.0, 2.0, remaining, reset_s);
        let mut bucket = StatedQuota::default();
        bucket.on_stated(0.0, 0.0, said(0.0, 1.0), 0, 60_000.0);
        bucket.on_stated(1_000.0, 1_000.0, said(30.0, 1.0), 0, 60_000.0);
        assert!(!bucket.counts_in_windows(), "30 in a second: the policy's rate");
        bucket.on_stated(1_100.0, 1_100.0, said(40.0, 1.0), 8, 60_000.0);
        assert!(!bucket.counts_in_windows(), "answers that overtook the 8 on their way");
        let mut window = StatedQuota::default();
        window.on_stated(0.0, 0.0, said(1.0, 1.0), 0, 60_000.0);
        window.on_stated(900.0, 900.0, said(0.0, 1.0), 0, 60_000.0);
        window.on_stated(1_020.0, 1_020.0, said(59.0, 2.0), 0, 60_000.0);
        assert!(window.counts_in_windows(), "59 back in 120 ms");
        assert_eq!(sent(&mut window, 1_020.0, 1_021.0), 59, "spent at once");
        assert_eq!(window.next_slot(1_021.0), Some(3_020.0));
    }

    /// A window counting down shows in answers a second or more apart that state one end with
    /// less left; a bucket's `t` (until its next token) moves with the clock.
    #[test]
    fn answers_that_count_down_to_one_end_are_a_window() {
        let said = |remaining, reset_s| policy(60.0, 2.0, remaining, reset_s);
        let mut bucket = StatedQuota::default();
        for (at, left) in [(0.0, 50.0), (600.0, 40.0), (1_200.0, 30.0), (1_800.0, 20.0)] {
            bucket.on_stated(at, at, said(left, 1.0), 0, 60_000.0);
        }
        assert!(!bucket.counts_in_windows());
        let mut window = StatedQuota::default();
        window.on_stated(0.0, 0.0, said(50.0, 2.0), 0, 60_000.0);
        window.on_stated(900.0, 900.0, said(30.0, 2.0), 0, 60_000.0);
        assert!(!window.counts_in_windows(), "within the rounding of `t`");
        window.on_stated(1_100.0, 1_100.0, said(20.0, 1.0), 0, 60_000.0);
        assert!(window.counts_in_windows(), "1.1 s later, the same end, 30 fewer");
        assert_eq!(window.until_ms(1_100.0), Some(2_000.0));
    }

    /// A window's `t` beyond `retryAfterMaxMs` is cut to it: the statement lapses then, and no
    /// window is begun at the cut (the host has the rest of its window to go).
    #[test]
    fn a_window_longer_than_the_longest_wait_is_not_rolled_at_the_cut() {
        let hour = |remaining, reset_s| policy(1000.0, 3600.0, remaining, reset_s);
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, hour(0.0, 1800.0), 0, 60_000.0);
        q.on_refused(10.0);
        assert!(q.counts_in_windows());
        assert_eq!(q.next_slot(20.0), Some(60_000.0), "nothing until the longest wait");
        assert_eq!(q.next_slot(60_000.0), None, "then asked again");
        assert_eq!(q.until_ms(60_000.0), None, "the statement lapsed: no window of a thousand begun");
    }

    /// Another policy that becomes the tightest starts afresh: the last one's windows and
    /// remainders are not its own.
    #[test]
    fn another_policy_is_not_taken_for_a_window_that_reset() {
        let said = |policy: &str, quota, window_s, remaining, reset_s| Stated {
            policy: Some(policy.into()),
            quota: Some(quota),
            window_s: Some(window_s),
            remaining,
            reset_s: Some(reset_s),
        };
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, said("burst", 100.0, 60.0, 0.0, 50.0), 0, 60_000.0);
        q.on_stated(100.0, 100.0, said("daily", 1000.0, 86_400.0, 880.0, 40_000.0), 0, 60_000.0);
        assert!(!q.counts_in_windows(), "880 of another policy is no reset of the first");
    }

    /// A host whose answers stated its end late (`t` rounded up) resets sooner than the window
    /// in force says: an answer of the new window ends about a window later, and is taken whole.
    #[test]
    fn an_answer_of_the_next_window_is_not_held_to_the_last_ones_remainder() {
        let window = |remaining, reset_s| policy(60.0, 2.0, remaining, reset_s);
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, window(0.0, 2.0), 0, 60_000.0);
        q.on_refused(10.0);
        q.on_stated(1_100.0, 1_100.0, window(0.0, 1.0), 0, 60_000.0);
        assert_eq!(q.next_slot(1_100.0), Some(2_000.0));
        // The host's window ended at 1,950: its next answer states 59 left, 2 s.
        q.on_stated(1_960.0, 1_960.0, window(59.0, 2.0), 0, 60_000.0);
        assert_eq!(sent(&mut q, 1_960.0, 1_961.0), 59);
        assert_eq!(q.next_slot(1_961.0), Some(3_960.0));
    }

    #[test]
    fn absurd_statements_are_bounded_and_never_stop_a_host_for_good() {
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, stated(0.0, Some(1e15)), 0, 60_000.0);
        assert_eq!(q.next_slot(0.0), Some(60_000.0), "an aeon's wait is retryAfterMaxMs");
        assert_eq!(q.next_slot(60_000.0), None);
        let mut q = StatedQuota::default();
        assert!(q.on_stated(0.0, 0.0, stated(1e15, Some(1.0)), 0, 60_000.0));
        assert!(sent(&mut q, 0.0, 10.0) >= 9_999, "a huge quota paces nothing a client sends");
        let mut q = StatedQuota::default();
        assert!(!q.on_stated(0.0, 0.0, stated(0.0, Some(0.0)), 0, 60_000.0), "t=0: more now");
        assert_eq!(q.next_slot(0.0), None);
        let mut q = StatedQuota::default();
        assert!(!q.on_stated(0.0, 0.0, stated(3.0, None), 0, 60_000.0), "no time to spread over");
        assert_eq!(q.next_slot(0.0), None);
        let mut q = StatedQuota::default();
        q.on_stated(0.0, 0.0, stated(5.0, Some(10.0)), 0, -1.0);
        assert_eq!(q.next_slot(0.0), None, "a bound below 0 is no time");
    }

    /// A token bucket that refills 20 a second and states `r` and the whole seconds until its
    /// next token: paced by what it states, a caller with a queue sends close to its rate and is
    /// refused rarely.
    #[test]
    fn a_stated_token_bucket_is_used_to_its_rate() {
        let (rate, capacity, answer_ms) = (20.0 / 1000.0, 20.0_f64, 30.0);
        let mut q = StatedQuota::default();
        let (mut tokens, mut at) = (capacity, 0.0_f64);
        let mut in_flight: Vec<f64> = Vec::new();
        let (mut served, mut refused, mut now) = (0, 0, 0.0_f64);
        while now < 20_000.0 {
            // Answers that are due: the bucket decides when each request arrives.
            in_flight.sort_by(f64::total_cmp);
            while let Some(&sent_at) = in_flight.first().filter(|s| **s + answer_ms <= now) {
                in_flight.remove(0);
                let arrived = sent_at + answer_ms / 2.0;
                tokens = (tokens + (arrived - at) * rate).min(capacity);
                at = arrived;
                if tokens >= 1.0 {
                    tokens -= 1.0;
                    served += 1;
                } else {
                    refused += 1;
                }
                let next = ((1.0 - tokens.fract()) / rate / 1000.0).ceil();
                q.on_stated(now, sent_at, stated(tokens.floor(), Some(next)), in_flight.len(), 60_000.0);
            }
            match q.next_slot(now) {
                None if in_flight.len() < 6 => {
                    q.take(now);
                    in_flight.push(now);
                }
                Some(slot) => now = slot.min(now + 1.0),
                None => now += 1.0,
            }
        }
        let per_second = f64::from(served) / 20.0;
        assert!(per_second >= 18.0, "{per_second}/s of the stated 20/s");
        assert!(refused * 100 <= served, "{refused} refused, {served} served");
    }
}
