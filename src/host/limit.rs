//! How many attempts a host takes at once when `maxConcurrent` is not set: a limit that fits
//! the connection and the server. It starts at `maxConcurrent`'s default and grows while more
//! attempts wait for a slot and more out at once costs the host's answers no time: over HTTP/2,
//! and in a runtime that holds no request back, a view's tiles then go together, as the map's
//! own image loader sends them. While answers slow down it falls back. Two readings of delay:
//! TCP Vegas' as Netflix's concurrency-limits applies it (the fastest recent answer is what an
//! attempt takes when nothing queues; answers well over it are a server queueing them), and,
//! where a browser holds requests back for its few HTTP/1.1 connections to a host, the answers
//! to the attempts past that count against those that had a connection at once: a multiple
//! over HTTP/1.1, where more out only waits in the browser; as fast over HTTP/2, where the
//! browser holds nothing back, and the limit goes to its highest at once (the map's own loader
//! sends a whole view together there).
//!
//! It never goes below the default, and it goes back to it, and stays there for [`CALM_MS`],
//! on a failure or a throttle; the host's owner keeps it there while a quota, a learned rate, a
//! pause or a breaker bounds the host: a server under strain sees no more at once than the
//! fixed default sent it.

/// How far the limit may grow, as a multiple of the default: a full-screen view and the
/// ring of tiles around it.
pub const GROWTH: usize = 4;
/// Answers this many times the fastest recent one (plus [`QUEUEING_SLACK_MS`]) are queueing.
const QUEUEING_FACTOR: f64 = 2.0;
/// What a fast server's answers vary by without any queue (scheduling, a GC pause).
const QUEUEING_SLACK_MS: f64 = 20.0;
/// Answers to attempts held back for a connection this many times those that had one (plus
/// [`HELD_BACK_SLACK_MS`]) waited for it: over HTTP/2 they are as fast; over HTTP/1.1 each
/// waits for one of the attempts before it to end.
const HELD_BACK_FACTOR: f64 = 1.3;
/// What the held-back answers' smoothed time varies by over HTTP/2 beyond the others'.
const HELD_BACK_SLACK_MS: f64 = 5.0;
/// Answers to attempts past a browser's connections, as fast as the others, that show the
/// host's connection holds nothing back (HTTP/2, HTTP/3).
const MULTIPLEXED_EVIDENCE: u32 = 8;
/// How long the limit stays at the default after a failure or a throttle.
pub const CALM_MS: f64 = 10_000.0;
/// The weight of each answer's time in the smoothed times.
const SMOOTHING: f64 = 0.2;
/// The fastest answer is the fastest of the last this many to that many twice: a host that
/// became slower is seen as it is after that many answers. Only answers to attempts that had a
/// connection at once count: a queue that stays is never the host's own time.
const BASE_ANSWERS: u32 = 64;

/// One host's adaptive limit.
#[derive(Debug, Clone)]
pub struct AdaptiveLimit {
    floor: usize,
    limit: usize,
    /// The fastest answer (ms) of the answers since the last [`BASE_ANSWERS`] began, and of
    /// the ones before them.
    fastest_ms: [f64; 2],
    /// Answers counted into `fastest_ms[0]`.
    counted: u32,
    /// Answers to attempts held back for a connection, by the client's count.
    held_answers: u32,
    /// The smoothed time of the answers to attempts that had a connection at once, and of
    /// those held back for one (NaN before the first).
    smoothed_ms: [f64; 2],
    /// Until when (monotonic ms) the limit does not grow.
    calm_until_ms: f64,
}

impl AdaptiveLimit {
    /// A limit at `floor` (the default), that grows up to [`GROWTH`] times it.
    pub fn new(floor: usize) -> AdaptiveLimit {
        let floor = floor.max(1);
        AdaptiveLimit {
            floor,
            limit: floor,
            fastest_ms: [f64::INFINITY; 2],
            counted: 0,
            held_answers: 0,
            smoothed_ms: [f64::NAN; 2],
            calm_until_ms: f64::NEG_INFINITY,
        }
    }

    /// The limit now.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether the answers show that the platform holds back none of the attempts to the host
    /// that the client counts as waiting for a connection (it multiplexes them: HTTP/2).
    pub fn multiplexed(&self) -> bool {
        let [connected_ms, held_ms] = self.smoothed_ms;
        self.held_answers >= MULTIPLEXED_EVIDENCE
            && held_ms <= connected_ms * HELD_BACK_FACTOR + HELD_BACK_SLACK_MS
    }

    /// Takes in a tile answered `answer_ms` after its attempt was sent. `held_back`: whether the
    /// attempt was one a browser holds back for one of its few HTTP/1.1 connections to the host
    /// (by the client's count of those out); `None` where the platform holds none back.
    /// `waiting`: attempts wait for a slot (the limit binds); `may_grow`: nothing else bounds
    /// the host now. Returns the new limit when it changed.
    pub fn on_answer(
        &mut self,
        now_ms: f64,
        answer_ms: f64,
        held_back: Option<bool>,
        waiting: bool,
        may_grow: bool,
    ) -> Option<usize> {
        let answer_ms = answer_ms.max(0.0);
        let held = held_back == Some(true);
        if held {
            self.held_answers = self.held_answers.saturating_add(1);
        } else {
            if self.counted == BASE_ANSWERS {
                self.fastest_ms = [f64::INFINITY, self.fastest_ms[0]];
                self.counted = 0;
            }
            self.counted += 1;
            self.fastest_ms[0] = self.fastest_ms[0].min(answer_ms);
        }
        let smoothed = &mut self.smoothed_ms[usize::from(held)];
        *smoothed =
            if smoothed.is_nan() { answer_ms } else { *smoothed + (answer_ms - *smoothed) * SMOOTHING };
        let [connected_ms, held_ms] = self.smoothed_ms;
        let base = self.fastest_ms[0].min(self.fastest_ms[1]);
        // NaN compares false: no answers of a kind, no queueing seen in them.
        let queueing = connected_ms > base * QUEUEING_FACTOR + QUEUEING_SLACK_MS
            || held_ms > connected_ms * HELD_BACK_FACTOR + HELD_BACK_SLACK_MS;
        // Where a browser holds attempts back, only one past its connections shows whether
        // more out at once are served as fast.
        let telling = held_back != Some(false);
        let next = if queueing || !may_grow {
            self.limit.saturating_sub(1).max(self.floor)
        } else if telling && waiting && now_ms >= self.calm_until_ms {
            let grown = if self.multiplexed() { self.floor * GROWTH } else { self.limit + 1 };
            grown.min(self.floor * GROWTH)
        } else {
            self.limit
        };
        self.set(next)
    }

    /// A failure or a throttle: back to the default, which holds for [`CALM_MS`].
    pub fn on_trouble(&mut self, now_ms: f64) -> Option<usize> {
        self.calm_until_ms = now_ms + CALM_MS;
        self.set(self.floor)
    }

    fn set(&mut self, limit: usize) -> Option<usize> {
        let changed = limit != self.limit;
        self.limit = limit;
        changed.then_some(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers that hold their time while attempts wait: one more slot per answer (a doubling
    /// per round trip), up to four times the default.
    #[test]
    fn it_grows_while_answers_hold_and_attempts_wait() {
        let mut l = AdaptiveLimit::new(16);
        assert_eq!(l.on_answer(0.0, 40.0, None, false, true), None, "nobody waits: nothing to grow for");
        for i in 0..16 {
            l.on_answer(f64::from(i), 30.0 + f64::from(i % 3) * 20.0, None, true, true);
        }
        assert_eq!(l.limit(), 32);
        for i in 0..100 {
            l.on_answer(100.0 + f64::from(i), 50.0, None, true, true);
        }
        assert_eq!(l.limit(), 16 * GROWTH);
    }

    /// Answers that take more than twice the fastest (a server queueing them): back down, never
    /// below the default; a host that stays that slow is seen as it is after a while.
    #[test]
    fn it_falls_back_while_answers_slow_down() {
        let mut l = AdaptiveLimit::new(16);
        for i in 0..20 {
            l.on_answer(f64::from(i), 30.0, None, true, true);
        }
        assert_eq!(l.limit(), 36);
        for i in 0..10 {
            l.on_answer(100.0 + f64::from(i), 200.0, None, true, true);
        }
        assert!(l.limit() < 36, "{}", l.limit());
        for i in 0..30 {
            l.on_answer(200.0 + f64::from(i), 200.0, None, true, true);
        }
        assert_eq!(l.limit(), 16, "not below the default");
        for i in 0..2 * BASE_ANSWERS {
            l.on_answer(300.0 + f64::from(i), 200.0, None, true, true);
        }
        assert!(l.limit() > 16, "200 ms is the host's time now");
    }

    /// Behind a browser's six HTTP/1.1 connections the limit does not grow: the attempts past
    /// six wait there, and take a multiple of the time of the ones that had a connection.
    #[test]
    fn behind_six_connections_it_stays_at_the_default() {
        let mut l = AdaptiveLimit::new(16);
        let serve_ms = 50.0;
        for i in 0..1000 {
            // 16 out over 6 connections: the seventh waits for one of the first six, and so on.
            let ahead = f64::from(i % 16 / 6);
            let connected = i % 16 < 6;
            l.on_answer(f64::from(i), serve_ms * (ahead + 1.0), Some(!connected), true, true);
            assert!(l.limit() <= 17 && !l.multiplexed(), "at answer {i}: {}", l.limit());
        }
        // Over HTTP/2 every one of them is served at once: eight answers past the six show it,
        // and the limit goes to its highest.
        let mut h2 = AdaptiveLimit::new(16);
        for i in 0..6 {
            h2.on_answer(f64::from(i), serve_ms, Some(false), true, true);
        }
        for i in 0..7 {
            h2.on_answer(10.0 + f64::from(i), serve_ms + 5.0, Some(true), true, true);
        }
        assert_eq!((h2.limit(), h2.multiplexed()), (23, false));
        h2.on_answer(20.0, serve_ms, Some(true), true, true);
        assert_eq!((h2.limit(), h2.multiplexed()), (16 * GROWTH, true));
    }

    /// A failure or a throttle: back to the default at once, and no growth for a while; nor
    /// while something else bounds the host.
    #[test]
    fn trouble_or_a_bound_holds_it_at_the_default() {
        let mut l = AdaptiveLimit::new(16);
        for i in 0..30 {
            l.on_answer(f64::from(i), 30.0, None, true, true);
        }
        assert_eq!(l.limit(), 46);
        assert_eq!(l.on_trouble(100.0), Some(16));
        assert_eq!(l.on_answer(200.0, 30.0, None, true, true), None);
        assert_eq!(l.on_answer(100.0 + CALM_MS, 30.0, None, true, true), Some(17), "calm again");
        assert_eq!(
            l.on_answer(101.0 + CALM_MS, 30.0, None, true, false),
            Some(16),
            "a quota, a rate, a breaker"
        );
        assert_eq!(AdaptiveLimit::new(0).limit(), 1);
    }
}
