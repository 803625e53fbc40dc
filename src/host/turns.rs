//! Turns for a quota, kept by an edge gate: an attempt the gate refused because the quota its
//! upstream states had nothing to spare keeps its place in line, and when the quota comes back
//! (a window's start) the attempts that waited go before ones that came since. Without a turn,
//! a refused attempt goes back to its isolate's client, whose retry comes after a pause and a
//! backoff, to meet fresh calls that took the quota as it came; a tile can lose every window
//! until its deadline.
//!
//! A turn is held until a while after the wait the gate gave with it (the isolate asks again
//! then, from its own wait or its client's retry); one not taken by then is forgotten, so a
//! call that left holds back nothing for long.

use std::collections::VecDeque;

/// How long after its wait a turn is kept for the attempt that holds it: its isolate's client
/// pauses until the wait's end and then wakes its calls one after another.
pub const TURN_GRACE_MS: f64 = 1000.0;

/// The most turns kept: more waiting attempts than this take their chances.
const MAX_TURNS: usize = 1024;

/// The attempts waiting for a quota, oldest first.
#[derive(Debug, Default)]
pub struct Turns {
    /// Each waiting attempt's turn and until when it is kept (ms).
    line: VecDeque<(u64, f64)>,
    /// The last turn given (turns are 1, 2, …).
    last: u64,
}

impl Turns {
    /// Forgets turns not taken in time.
    pub fn expire(&mut self, now_ms: f64) {
        self.line.retain(|(_, until)| *until >= now_ms);
    }

    /// How many waiting attempts go before one that holds `turn` (`None`, or one forgotten:
    /// every attempt in line).
    pub fn ahead_of(&self, turn: Option<u64>) -> usize {
        match turn.filter(|t| self.holds(*t)) {
            Some(t) => self.line.iter().filter(|(n, _)| *n < t).count(),
            None => self.line.len(),
        }
    }

    /// When the first of the `count` attempts at the head of the line loses its turn.
    pub fn head_kept_until(&self, count: usize) -> Option<f64> {
        self.line.iter().take(count).map(|(_, until)| *until).reduce(f64::min)
    }

    /// Keeps `turn` (or gives a new one at the end of the line) until `until_ms`; `None` when
    /// the line is full.
    pub fn wait(&mut self, turn: Option<u64>, until_ms: f64) -> Option<u64> {
        if let Some(entry) = turn.and_then(|t| self.line.iter_mut().find(|(n, _)| *n == t)) {
            entry.1 = entry.1.max(until_ms);
            return Some(entry.0);
        }
        if self.line.len() == MAX_TURNS {
            return None;
        }
        self.last += 1;
        self.line.push_back((self.last, until_ms));
        Some(self.last)
    }

    /// The attempt holding `turn` went: out of the line.
    pub fn taken(&mut self, turn: Option<u64>) {
        if let Some(t) = turn {
            self.line.retain(|(n, _)| *n != t);
        }
    }

    fn holds(&self, turn: u64) -> bool {
        self.line.iter().any(|(n, _)| *n == turn)
    }
}

#[cfg(test)]
mod tests {
    use super::Turns;

    #[test]
    fn a_kept_turn_goes_before_later_ones_and_a_forgotten_one_goes_last() {
        let mut turns = Turns::default();
        let first = turns.wait(None, 100.0);
        let second = turns.wait(None, 200.0);
        assert_eq!((first, second), (Some(1), Some(2)));
        assert_eq!((turns.ahead_of(first), turns.ahead_of(second), turns.ahead_of(None)), (0, 1, 2));
        assert_eq!(turns.wait(first, 300.0), first, "asked again: the same turn, kept longer");
        assert_eq!(turns.head_kept_until(2), Some(200.0));
        turns.expire(250.0);
        assert_eq!((turns.ahead_of(first), turns.ahead_of(second)), (0, 1), "the second's is gone");
        turns.taken(first);
        assert_eq!(turns.ahead_of(None), 0);
        assert_eq!(turns.wait(second, 400.0), Some(3), "a forgotten turn: a new one, last");
    }

    #[test]
    fn the_line_is_bounded() {
        let mut turns = Turns::default();
        for _ in 0..super::MAX_TURNS {
            assert!(turns.wait(None, 1.0).is_some());
        }
        assert_eq!(turns.wait(None, 1.0), None);
        turns.expire(2.0);
        assert!(turns.wait(None, 3.0).is_some());
    }
}
