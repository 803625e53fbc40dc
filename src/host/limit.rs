//! How many attempts a host takes at once when `maxConcurrent` is not set: a limit that fits
//! the connection and the server. It starts at `maxConcurrent`'s default and grows while more
//! attempts wait for a slot and more out at once costs the host's answers no time: over HTTP/2,
//! and in a runtime that holds no request back, a view's tiles then go together, as the map's
//! own image loader sends them. While answers slow down it falls back. Two readings of delay,
//! after the gradient limiters of Netflix's concurrency-limits: the host's answers against what
//! they took while the limit was at its default (a server, or the client's own CPU, queueing
//! more work grows them), and, where a browser holds requests back for its few HTTP/1.1
//! connections to a host, the answers to the attempts past those against the ones that had a
//! connection at once: a multiple over HTTP/1.1, where more out only waits in the browser; as
//! fast over HTTP/2, where the browser holds nothing back, and the limit goes to its highest at
//! once (the map's own loader sends a whole view together there).
//!
//! In a browser (a page, a worker) a host not met before opens wide, at its highest: there the
//! browser holds back what an HTTP/1.1 host cannot take at once (its few connections), and over
//! HTTP/2 the map's own image loader sends a whole view together, so the first view goes as the
//! map asks, as with the own loader (a server under strain meets that first view as the own
//! loader sends it). It reads the answers to the attempts past the browser's connections: only
//! once an answer with a connection has come (which tells a cache's quick copy, not counted),
//! and only those whose order tells (not through a caller's own `fetch`, whose answer may be an
//! image load's). Of each [`OPENING_EVIDENCE`] of them: where [`OVERTAKING_EVIDENCE`] overtook
//! the attempts before them, the browser holds none back (HTTP/2) and the limit stays, as the
//! own loader goes on sending whole views, until a failure, a throttle or a bound; else the
//! browser held them (HTTP/1.1: past its connections, the browser's queue, not the client's,
//! would order them), or the map asks for too few at once for the limit to bind, and the limit
//! goes to the default. A host whose answers never tell moves on the delay readings below.
//!
//! Otherwise (and in a browser once the opening is over) it grows a step at a time only after the host has answered [`WARM_UP_ANSWERS`] tiles at the
//! default over [`WARM_UP_MS`] at least, and jumps only on a browser's multiplexing read from
//! [`MULTIPLEXED_EVIDENCE`] answers after that first second; it never goes below the default,
//! and goes back to it on a failure or a throttle (and stays there for [`CALM_MS`]), and while
//! a quota, a learned rate, a pause or a breaker bounds the host: outside a browser, a server
//! under strain sees no more at once than the fixed default sent it.

/// How far the limit may grow, as a multiple of the default: a full-screen view and the
/// ring of tiles around it.
pub const GROWTH: usize = 4;
/// Answers at the default that tell what the host's answers take then, before it grows.
pub const WARM_UP_ANSWERS: u32 = 16;
/// How long after its first answer a host may grow past the default: a record of its answers,
/// not one burst of them, earns it (outside a browser, a server that fails soon after a
/// client's first tiles meets no more at once than the default sent it).
pub const WARM_UP_MS: f64 = 1_000.0;
/// Answers within this many times their time at the default (plus [`SLACK_MS`]) hold: more
/// out costs them nothing.
const HOLDS_FACTOR: f64 = 1.25;
/// Answers past this many times their time at the default (plus [`SLACK_MS`]) are queueing.
const SLOWER_FACTOR: f64 = 1.5;
/// Answers to attempts held back for a connection this many times those that had one (plus
/// [`SLACK_MS`]) waited for it: over HTTP/2 they are as fast; over HTTP/1.1 each waits for
/// one of the attempts before it to end.
const HELD_BACK_FACTOR: f64 = 1.3;
/// What smoothed answer times vary by without any queue (scheduling, a timer's tick).
const SLACK_MS: f64 = 5.0;
/// Answers to attempts past a browser's connections, whose order tells, that a limit opened
/// wide reads at a time (see the module's notes).
const OPENING_EVIDENCE: u32 = 16;
/// Of those, how many must have overtaken the attempts before them to show the browser held
/// none back: more than one, as one may be a cache's copy a little slower than half a served
/// answer (a cache's quicker copies are not counted at all).
const OVERTAKING_EVIDENCE: u32 = 2;
/// Answers to attempts past a browser's connections, as fast as the others, that show the
/// host's connection holds nothing back (HTTP/2, HTTP/3).
const MULTIPLEXED_EVIDENCE: u32 = 8;
/// How long the limit stays at the default after a failure or a throttle.
pub const CALM_MS: f64 = 10_000.0;
/// The weight of each answer's time in the smoothed times.
const SMOOTHING: f64 = 0.2;
/// The weight of each answer at the default in what they take then: slower, so that a limit
/// that fell back takes a while to read its host's slower answers as its new normal.
const DEFAULT_SMOOTHING: f64 = 0.05;

/// One tile's answer, as the limit reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    /// When it came (monotonic ms).
    pub at_ms: f64,
    /// How long after its attempt was sent (ms).
    pub took_ms: f64,
    /// Whether its attempt was one a browser holds back for one of its few HTTP/1.1
    /// connections to the host (by the client's count of those out); `None` where the platform
    /// holds none back.
    pub held_back: Option<bool>,
    /// Held back, and answered before as many attempts ahead of it had ended as a browser
    /// holding it for a connection would have waited for: the browser did not hold it
    /// (HTTP/2), or a cache answered it. `None`: not read (a hedge), or its order does not tell
    /// (a caller's own `fetch` sent it).
    pub overtook: Option<bool>,
    /// The limit when its attempt was sent: an answer tells what the host takes at the
    /// default only when it went at the default.
    pub limit_at_send: usize,
}

/// Where a limit opened wide stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// Not opened wide, or no longer: the delay readings move it, as any limit.
    Closed,
    /// At its highest, reading the answers to attempts held back for a connection: those whose
    /// order tells (see the module's notes), how many of them overtook the attempts before
    /// them, and those whose order does not (a caller's own `fetch` sent them).
    Deciding { held: u32, overtaking: u32, unknown: u32 },
    /// At its highest, attempts past the connections seen overtaking: the browser holds none
    /// back.
    Multiplexed,
}

/// One host's adaptive limit.
#[derive(Debug, Clone)]
pub struct AdaptiveLimit {
    floor: usize,
    limit: usize,
    /// Answers to attempts sent while the limit was at the default.
    answers_at_default: u32,
    /// When (monotonic ms) the host first answered.
    first_answer_ms: f64,
    /// Answers to attempts held back for a connection, after the host's first second.
    held_answers: u32,
    /// The smoothed time (ms) of the answers to attempts that had a connection at once (NaN
    /// before the first).
    connected_ms: f64,
    /// The same of the answers to attempts held back for one.
    held_ms: f64,
    /// The same of the answers to attempts sent at the default, smoothed slower.
    default_ms: f64,
    /// The limit went to its highest at once, on a browser seen to multiplex (once until the
    /// next failure or throttle: a server that queues later gets its steps).
    jumped: bool,
    /// Where a limit opened wide stands (see [`AdaptiveLimit::opened_wide`]).
    opening: Opening,
    /// Until when (monotonic ms) the limit does not grow.
    calm_until_ms: f64,
}

/// `smoothed`, moved toward `answer_ms` by `weight` (or `answer_ms` itself, the first time).
fn smooth(smoothed: f64, answer_ms: f64, weight: f64) -> f64 {
    if smoothed.is_nan() {
        answer_ms
    } else {
        smoothed + (answer_ms - smoothed) * weight
    }
}

impl AdaptiveLimit {
    /// A limit at `floor` (the default), that grows up to [`GROWTH`] times it.
    pub fn new(floor: usize) -> AdaptiveLimit {
        let floor = floor.max(1);
        AdaptiveLimit {
            floor,
            limit: floor,
            answers_at_default: 0,
            first_answer_ms: f64::NAN,
            held_answers: 0,
            connected_ms: f64::NAN,
            held_ms: f64::NAN,
            default_ms: f64::NAN,
            jumped: false,
            opening: Opening::Closed,
            calm_until_ms: f64::NEG_INFINITY,
        }
    }

    /// A limit at its highest, [`GROWTH`] times `floor`, for a host not met before in a
    /// browser: how long it stays there is in the module's notes.
    pub fn opened_wide(floor: usize) -> AdaptiveLimit {
        let mut limit = AdaptiveLimit::new(floor);
        limit.limit = limit.floor * GROWTH;
        limit.opening = Opening::Deciding { held: 0, overtaking: 0, unknown: 0 };
        limit
    }

    /// The limit now.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether the answers show that the platform holds back none of the attempts to the host
    /// that the client counts as waiting for a connection (it multiplexes them: HTTP/2).
    pub fn multiplexed(&self) -> bool {
        self.held_answers >= MULTIPLEXED_EVIDENCE
            && self.held_ms <= self.connected_ms * HELD_BACK_FACTOR + SLACK_MS
    }

    /// Takes in a tile's `answer`. `waiting`: attempts wait for a slot (the limit binds);
    /// `may_grow`: nothing else bounds the host now (when something does, the limit is the
    /// default). Returns the new limit when it changed.
    pub fn on_answer(&mut self, answer: Answer, waiting: bool, may_grow: bool) -> Option<usize> {
        let Answer { at_ms: now_ms, took_ms, held_back, overtook, limit_at_send } = answer;
        let took_ms = took_ms.max(0.0);
        if self.first_answer_ms.is_nan() {
            self.first_answer_ms = now_ms;
        }
        let held = held_back == Some(true);
        let sent_at_default = limit_at_send <= self.floor;
        if sent_at_default {
            self.answers_at_default = self.answers_at_default.saturating_add(1);
        }
        let seasoned = now_ms - self.first_answer_ms >= WARM_UP_MS;
        if held {
            // Not a cache's copy (far quicker than any answer with a connection), which says
            // nothing of the connection.
            let cached = took_ms < self.connected_ms / 2.0; // NaN (no answer with one yet): false
            if !cached {
                // Not in the host's first second: a page's start-up delays every answer alike.
                if seasoned {
                    self.held_answers = self.held_answers.saturating_add(1);
                }
                // Only once an answer with a connection says what a cache's copy is not.
                let reading = !self.connected_ms.is_nan();
                match (&mut self.opening, overtook) {
                    (Opening::Deciding { held, overtaking, .. }, Some(overtook)) if reading => {
                        *held += 1;
                        *overtaking += u32::from(overtook);
                    }
                    (Opening::Deciding { unknown, .. }, None) if reading => *unknown += 1,
                    _ => {}
                }
                self.held_ms = smooth(self.held_ms, took_ms, SMOOTHING);
            }
        } else {
            self.connected_ms = smooth(self.connected_ms, took_ms, SMOOTHING);
            if sent_at_default {
                self.default_ms = smooth(self.default_ms, took_ms, DEFAULT_SMOOTHING);
            }
        }
        // NaN compares false: no answers of a kind, nothing seen in them.
        let queueing = self.connected_ms > self.default_ms * SLOWER_FACTOR + SLACK_MS
            || self.held_ms > self.connected_ms * HELD_BACK_FACTOR + SLACK_MS;
        let holds = self.connected_ms <= self.default_ms * HOLDS_FACTOR + SLACK_MS;
        // Where a browser holds attempts back, only one past its connections shows whether
        // more out at once are served as fast.
        let telling = held_back != Some(false);
        let calm = now_ms >= self.calm_until_ms;
        let warm = self.answers_at_default > WARM_UP_ANSWERS && seasoned;
        // Over HTTP/1.1 no attempt held for a connection overtakes those it waits for. Where
        // the map asks for too few at once for any to overtake, the default does not bind it,
        // and the delay readings below earn a jump back once a view overtakes.
        // Going to the default (`set`) ends the opening.
        let mut held_by_browser = false;
        if let Opening::Deciding { held, overtaking, unknown } = self.opening {
            if held >= OPENING_EVIDENCE && overtaking >= OVERTAKING_EVIDENCE {
                self.opening = Opening::Multiplexed;
            } else if held >= OPENING_EVIDENCE {
                held_by_browser = true;
            } else if unknown >= OPENING_EVIDENCE * GROWTH as u32 {
                // A host whose answers never tell (every tile an image load): its limit moves
                // on the delay readings, as any limit's.
                self.opening = Opening::Closed;
            }
        }
        let next = if !may_grow || held_by_browser {
            self.floor
        } else if self.opening != Opening::Closed {
            self.limit
        } else if queueing {
            self.limit.saturating_sub(1).max(self.floor)
        } else if calm && holds && !self.jumped && self.multiplexed() {
            // A browser that multiplexes the host's requests sends a whole view at once with
            // the map's own loader: the limit is there before the next view asks.
            self.jumped = true;
            self.floor * GROWTH
        } else if calm && holds && warm && telling && waiting {
            (self.limit + 1).min(self.floor * GROWTH)
        } else {
            self.limit
        };
        self.set(next)
    }

    /// A failure or a throttle: back to the default, which holds for [`CALM_MS`].
    pub fn on_trouble(&mut self, now_ms: f64) -> Option<usize> {
        self.calm_until_ms = now_ms + CALM_MS;
        self.jumped = false;
        self.set(self.floor)
    }

    fn set(&mut self, limit: usize) -> Option<usize> {
        if limit == self.floor {
            self.opening = Opening::Closed;
        }
        let changed = limit != self.limit;
        self.limit = limit;
        changed.then_some(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer at `at_ms` that took `took_ms`, to an attempt sent at `l`'s limit now.
    fn answer(l: &AdaptiveLimit, at_ms: f64, took_ms: f64, held_back: Option<bool>) -> Answer {
        Answer { at_ms, took_ms, held_back, overtook: Some(false), limit_at_send: l.limit() }
    }

    /// `l` takes in an answer (see `answer`), attempts waiting or not, the host bounded or not.
    fn on(
        l: &mut AdaptiveLimit,
        at_ms: f64,
        took_ms: f64,
        held_back: Option<bool>,
        waiting: bool,
        may_grow: bool,
    ) -> Option<usize> {
        let answer = answer(l, at_ms, took_ms, held_back);
        l.on_answer(answer, waiting, may_grow)
    }

    /// From `at`, `n` answers of `ms` each, a millisecond apart, with attempts waiting.
    fn answers(l: &mut AdaptiveLimit, at: f64, n: u32, ms: f64, held_back: Option<bool>) {
        for i in 0..n {
            on(l, at + f64::from(i), ms, held_back, true, true);
        }
    }

    /// A host's first answer at 0 and the warm-up's answers from a second on, of `ms` each:
    /// the next answer that holds may grow the limit.
    fn warmed(ms: f64, held_back: Option<bool>) -> AdaptiveLimit {
        let mut l = AdaptiveLimit::new(16);
        answers(&mut l, 0.0, 1, ms, held_back);
        answers(&mut l, WARM_UP_MS, WARM_UP_ANSWERS - 1, ms, held_back);
        assert_eq!(l.limit(), 16);
        l
    }

    /// After a second and the answers at the default that tell what the host takes, answers
    /// that hold their time while attempts wait: one more slot per answer (a doubling per round
    /// trip), up to four times the default. Nothing grows before, nor without attempts waiting.
    #[test]
    fn it_grows_while_answers_hold_and_attempts_wait() {
        let mut early = AdaptiveLimit::new(16);
        answers(&mut early, 0.0, 200, 40.0, None);
        assert_eq!(early.limit(), 16, "not within a second of its first answer");
        let mut l = warmed(40.0, None);
        assert_eq!(on(&mut l, 2_000.0, 40.0, None, false, true), None, "nobody waits: nothing to grow for");
        answers(&mut l, 2_000.0, 16, 45.0, None);
        assert_eq!(l.limit(), 32);
        answers(&mut l, 2_100.0, 100, 45.0, None);
        assert_eq!(l.limit(), 16 * GROWTH);
    }

    /// Answers that take half as long again as at the default (a server queueing them, or the
    /// client's own CPU): back down, never below the default; at the default, what they take
    /// then becomes the host's time, slowly, and it grows from there.
    #[test]
    fn it_falls_back_while_answers_slow_down() {
        let mut l = warmed(30.0, None);
        answers(&mut l, 2_000.0, 20, 30.0, None);
        assert_eq!(l.limit(), 36);
        answers(&mut l, 2_100.0, 10, 200.0, None);
        assert!(l.limit() < 36, "{}", l.limit());
        answers(&mut l, 2_200.0, 10, 200.0, None);
        assert_eq!(l.limit(), 16, "not below the default");
        answers(&mut l, 2_300.0, 10, 200.0, None);
        assert_eq!(l.limit(), 16, "200 ms is not its time yet");
        answers(&mut l, 2_400.0, 100, 200.0, None);
        assert!(l.limit() > 16, "200 ms is the host's time now");
    }

    /// A host whose answers grow with the attempts out (a server working through them one by
    /// one, or a client's busy CPU): the limit stops about where they take a quarter longer,
    /// and never gets to where they take half as long again.
    #[test]
    fn answers_that_grow_with_the_attempts_out_stop_it() {
        let mut l = warmed(20.0, None);
        for i in 0..2000 {
            let ms = 20.0 * l.limit() as f64 / 16.0;
            on(&mut l, 2_000.0 + f64::from(i), ms, None, true, true);
            assert!(l.limit() <= 28, "at answer {i}: {}", l.limit());
        }
        assert!(l.limit() >= 20, "{}", l.limit());
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
            on(&mut l, f64::from(i) * 10.0, serve_ms * (ahead + 1.0), Some(!connected), true, true);
            assert!(l.limit() == 16 && !l.multiplexed(), "at answer {i}: {}", l.limit());
        }
        // Over HTTP/2 every one of them is served at once: eight answers past the six show it
        // (after the host's first second), and the limit goes to its highest, whether or not
        // attempts wait now.
        let mut h2 = AdaptiveLimit::new(16);
        answers(&mut h2, 0.0, 6, serve_ms, Some(false));
        answers(&mut h2, 10.0, 20, serve_ms, Some(true));
        assert_eq!((h2.limit(), h2.multiplexed()), (16, false), "not from the first second's answers");
        answers(&mut h2, WARM_UP_MS, MULTIPLEXED_EVIDENCE - 1, serve_ms + 5.0, Some(true));
        assert_eq!(
            (h2.limit(), h2.multiplexed()),
            (16 + MULTIPLEXED_EVIDENCE as usize - 1, false),
            "a step each"
        );
        on(&mut h2, WARM_UP_MS + 10.0, serve_ms, Some(true), false, true);
        assert_eq!((h2.limit(), h2.multiplexed()), (16 * GROWTH, true));
    }

    /// Over HTTP/2 the limit jumps once: a server that then queues the view's requests gets
    /// it back down a step an answer, and steps, not another jump, when its answers hold again.
    /// Held-back attempts answered from a cache (far quicker than any with a connection) are no
    /// evidence of multiplexing.
    #[test]
    fn over_http2_it_jumps_once_and_steps_after_that() {
        let serve_ms = 50.0;
        let mut cached = AdaptiveLimit::new(16);
        answers(&mut cached, 0.0, 6, serve_ms, Some(false));
        answers(&mut cached, WARM_UP_MS, 20, 1.0, Some(true));
        assert!(!cached.multiplexed(), "a cache's copies");
        let mut h2 = AdaptiveLimit::new(16);
        answers(&mut h2, 0.0, 6, serve_ms, Some(false));
        answers(&mut h2, WARM_UP_MS, MULTIPLEXED_EVIDENCE, serve_ms, Some(true));
        assert_eq!(h2.limit(), 16 * GROWTH);
        // The server queues: its answers slow down, the limit falls.
        answers(&mut h2, 2_000.0, 20, 4.0 * serve_ms, Some(false));
        let fallen = h2.limit();
        assert!(fallen < 16 * GROWTH - 10, "{fallen}");
        // Back to its time: a step an answer, from where it fell.
        answers(&mut h2, 3_000.0, 30, serve_ms, Some(false));
        answers(&mut h2, 4_000.0, 3, serve_ms, Some(true));
        assert!(h2.limit() <= fallen + 3, "no second jump: {} from {fallen}", h2.limit());
    }

    /// A failure or a throttle: back to the default at once, and no growth for a while; nor
    /// while something else bounds the host.
    #[test]
    fn trouble_or_a_bound_holds_it_at_the_default() {
        let mut l = warmed(30.0, None);
        answers(&mut l, 2_000.0, 30, 30.0, None);
        assert_eq!(l.limit(), 46);
        assert_eq!(l.on_trouble(2_100.0), Some(16));
        assert_eq!(on(&mut l, 2_200.0, 30.0, None, true, true), None);
        assert_eq!(on(&mut l, 2_100.0 + CALM_MS, 30.0, None, true, true), Some(17), "calm again");
        assert_eq!(
            on(&mut l, 2_101.0 + CALM_MS, 30.0, None, true, false),
            Some(16),
            "a quota, a rate, a breaker"
        );
        assert_eq!(AdaptiveLimit::new(0).limit(), 1);
    }

    /// A limit opened wide (a browser) stays at its highest where attempts past the connections
    /// overtake those before them (HTTP/2), however slow the page makes their answers; goes to
    /// the default where too few overtake (HTTP/1.1, or a map asking for few at once), on a
    /// failure or throttle, or a bound. Answers before any with a connection and a cache's
    /// quick copies count for nothing; answers through a caller's own fetch only end the
    /// opening, after which the delay readings move the limit.
    #[test]
    fn opened_wide_it_reads_the_answers_past_the_connections() {
        let serve_ms = 50.0;
        let held = |l: &mut AdaptiveLimit, at: f64, took: f64, overtook: bool| {
            let answer = Answer {
                at_ms: at,
                took_ms: took,
                held_back: Some(true),
                overtook: Some(overtook),
                limit_at_send: l.limit(),
            };
            l.on_answer(answer, true, true)
        };
        // HTTP/1.1: each held attempt waited for an answer before its own; one cache's copy a
        // little slower than half an answer overtook.
        let mut h1 = AdaptiveLimit::opened_wide(16);
        assert_eq!(h1.limit(), 16 * GROWTH);
        for i in 0..OPENING_EVIDENCE {
            assert_eq!(
                held(&mut h1, f64::from(i), 2.0 * serve_ms, true),
                None,
                "no answer with a connection yet"
            );
        }
        answers(&mut h1, 50.0, 6, serve_ms, Some(false));
        assert_eq!(held(&mut h1, 90.0, 0.6 * serve_ms, true), None);
        for i in 0..OPENING_EVIDENCE - 2 {
            assert_eq!(held(&mut h1, 100.0 + f64::from(i), 2.0 * serve_ms, false), None);
        }
        assert_eq!(held(&mut h1, 200.0, 2.0 * serve_ms, false), Some(16));
        // Then as any limit at the default: no jump on those answers.
        answers(&mut h1, 300.0, 20, serve_ms, Some(false));
        assert_eq!(h1.limit(), 16);

        // HTTP/2: some overtake, with answers the page made far slower.
        let mut h2 = AdaptiveLimit::opened_wide(16);
        answers(&mut h2, 0.0, 6, serve_ms, Some(false));
        for i in 0..5 * OPENING_EVIDENCE {
            assert_eq!(held(&mut h2, 100.0 + f64::from(i), 3.0 * serve_ms, i % 4 == 0), None);
        }
        assert_eq!(h2.limit(), 16 * GROWTH);
        // HTTP/2 with a map that asks for few at once: none overtakes; the limit would not bind.
        let mut few = AdaptiveLimit::opened_wide(16);
        answers(&mut few, 0.0, 6, serve_ms, Some(false));
        for i in 0..OPENING_EVIDENCE - 1 {
            assert_eq!(held(&mut few, 100.0 + f64::from(i), serve_ms, false), None);
        }
        assert_eq!(held(&mut few, 200.0, serve_ms, false), Some(16));
        // Sent through a caller's own fetch (an image load in its stead): its order tells nothing.
        let mut own = AdaptiveLimit::opened_wide(16);
        answers(&mut own, 0.0, 6, serve_ms, Some(false));
        let unknown = |l: &mut AdaptiveLimit, at: f64| {
            let answer = Answer {
                at_ms: at,
                took_ms: 2.0 * serve_ms,
                held_back: Some(true),
                overtook: None,
                limit_at_send: l.limit(),
            };
            l.on_answer(answer, true, true)
        };
        for i in 0..OPENING_EVIDENCE * GROWTH as u32 - 1 {
            assert_eq!(unknown(&mut own, 100.0 + f64::from(i)), None);
        }
        assert_eq!(unknown(&mut own, 200.0), Some(16 * GROWTH - 1), "the opening over, a step down");
        // A cache's quick copies overtake too: no evidence either way.
        let mut cached = AdaptiveLimit::opened_wide(16);
        answers(&mut cached, 0.0, 6, serve_ms, Some(false));
        for i in 0..OPENING_EVIDENCE {
            assert_eq!(held(&mut cached, 100.0 + f64::from(i), 1.0, true), None);
        }
        for i in 0..OPENING_EVIDENCE {
            held(&mut cached, 200.0 + f64::from(i), 2.0 * serve_ms, false);
        }
        assert_eq!(cached.limit(), 16, "only the answers from the server count");

        assert_eq!(h2.on_trouble(1_000.0), Some(16));
        assert_eq!(held(&mut h2, 1_100.0, serve_ms, true), None, "calm: no growth, no reopening");
        let mut bounded = AdaptiveLimit::opened_wide(16);
        assert_eq!(
            on(&mut bounded, 0.0, serve_ms, None, true, false),
            Some(16),
            "a quota, a rate, a breaker"
        );
    }
}
