//! Coalescing: identical concurrent calls share one flight (one retry loop on the network). What
//! makes calls identical (the key), which flight a call may join, and who is still waiting.

use std::cell::Cell;
use std::rc::Rc;

use super::key_hash;
use crate::options::Options;

/// Calls are identical when they fetch the same mirrors with the same request headers and
/// fields and judge responses alike; timing options may differ (each caller keeps its own
/// deadline and signal, and joins only a flight that lasts about as long: see
/// [`FlightTable::joinable`]). `url_lines` has the mirrors one per line; `headers` is the
/// headers as sent (the call's or the client's, with `accept`), `name:value;` each.
pub fn flight_key(url_lines: &str, options: &Options, headers: &str) -> String {
    flight_key_of(&tile_key(url_lines, options, headers), options.cache)
}

/// The flight key of a call whose [`tile_key`] is `tile_key`, with the fetch `cache` mode.
pub fn flight_key_of(tile_key: &str, cache: Option<&str>) -> String {
    let mut key = String::from(tile_key);
    key.push('\n');
    key.push_str(cache.unwrap_or(""));
    key
}

/// What identifies a tile's answer among the client's recent tiles: the flight key less the
/// fetch `cache` mode, so that a call with `cache: "reload"` replaces the answer plain calls
/// are served.
pub fn tile_key(url_lines: &str, options: &Options, headers: &str) -> String {
    let mut key = String::from(url_lines);
    // What decides whether a response is a tile must match too.
    key.push('\n');
    key.push_str(&options.verdict_key());
    for field in [options.credentials, options.mode, options.referrer_policy] {
        key.push('\n');
        key.push_str(field.unwrap_or(""));
    }
    key.push('\n');
    key.push_str(headers);
    key
}

/// What the join rule asks of a flight.
pub trait Joinable {
    /// When the flight's shared loop gives up (its leader's deadline), on the clock of calls.
    fn ends_at(&self) -> f64;
    /// Whether every caller has left, so the flight is being aborted.
    fn is_stopped(&self) -> bool;
}

/// The flights in progress, by key. A short list (one per distinct tile in flight), so a Vec:
/// a map would cost the wasm module more than its lookups save. Each key's hash is compared
/// before its text: the keys of one server's tiles share a long prefix.
pub struct FlightTable<F> {
    flights: Vec<(u64, String, Rc<F>)>,
}

impl<F> Default for FlightTable<F> {
    fn default() -> Self {
        FlightTable { flights: Vec::new() }
    }
}

impl<F: Joinable> FlightTable<F> {
    /// The flight a call with this key and deadline joins, if any: one that is not being
    /// aborted and does not end much sooner than the call would (by more than a quarter of the
    /// call's deadline). Otherwise the call starts a flight of its own.
    pub fn joinable(&self, key: &str, own_end: f64, deadline_ms: f64) -> Option<Rc<F>> {
        let tolerance = deadline_ms / 4.0;
        let hash = key_hash(key);
        self.flights
            .iter()
            .find(|(h, k, f)| *h == hash && k == key && !f.is_stopped() && f.ends_at() >= own_end - tolerance)
            .map(|(_, _, f)| f.clone())
    }

    /// Records a new flight under `key`, in place of any older one (which its callers keep).
    pub fn start(&mut self, key: String, flight: Rc<F>) {
        let hash = key_hash(&key);
        self.flights.retain(|(h, k, _)| !(*h == hash && *k == key));
        self.flights.push((hash, key, flight));
    }

    /// Forgets `flight` once it has finished, unless a newer flight has taken its key.
    pub fn finish(&mut self, key: &str, flight: &Rc<F>) {
        self.flights.retain(|(_, k, f)| !(Rc::ptr_eq(f, flight) && k == key));
    }

    /// How many flights are in progress.
    pub fn len(&self) -> usize {
        self.flights.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.flights.is_empty()
    }
}

/// How many calls wait on a flight; the last one to leave an unfinished flight stops it.
#[derive(Default)]
pub struct Callers {
    count: Cell<usize>,
}

impl Callers {
    /// A call joins.
    pub fn join(&self) {
        self.count.set(self.count.get() + 1);
    }

    /// A call leaves; true when it was the last.
    pub fn leave(&self) -> bool {
        let left = self.count.get().saturating_sub(1);
        self.count.set(left);
        left == 0
    }

    /// How many are waiting.
    pub fn count(&self) -> usize {
        self.count.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Value;

    struct Fake {
        ends_at: f64,
        stopped: Cell<bool>,
    }

    impl Joinable for Fake {
        fn ends_at(&self) -> f64 {
            self.ends_at
        }
        fn is_stopped(&self) -> bool {
            self.stopped.get()
        }
    }

    fn fake(ends_at: f64) -> Rc<Fake> {
        Rc::new(Fake { ends_at, stopped: Cell::new(false) })
    }

    #[test]
    fn a_call_joins_a_flight_that_lasts_about_as_long_as_it_would() {
        let mut table = FlightTable::default();
        let flight = fake(6_000.0);
        table.start("k".into(), flight.clone());
        // A call at t=0 with a 6 s deadline: same end.
        assert!(table.joinable("k", 6_000.0, 6_000.0).is_some());
        // Called 1.5 s later: the flight ends 1.5 s sooner, exactly the tolerance (6 s / 4).
        assert!(table.joinable("k", 7_500.0, 6_000.0).is_some());
        // A little later still: more than a quarter sooner, so it starts its own.
        assert!(table.joinable("k", 7_501.0, 6_000.0).is_none());
        // A call that ends sooner than the flight always joins.
        assert!(table.joinable("k", 1_000.0, 1_000.0).is_some());
        assert!(table.joinable("other", 6_000.0, 6_000.0).is_none());
    }

    #[test]
    fn a_stopped_flight_is_never_joined() {
        let mut table = FlightTable::default();
        let flight = fake(6_000.0);
        table.start("k".into(), flight.clone());
        flight.stopped.set(true);
        assert!(table.joinable("k", 6_000.0, 6_000.0).is_none());
    }

    #[test]
    fn a_new_flight_takes_the_key_and_the_old_one_finishing_leaves_it() {
        let mut table = FlightTable::default();
        let old = fake(1_000.0);
        let new = fake(9_000.0);
        table.start("k".into(), old.clone());
        table.start("k".into(), new.clone());
        assert_eq!(table.len(), 1);
        table.finish("k", &old);
        let found = table.joinable("k", 9_000.0, 6_000.0).expect("the new flight stays");
        assert!(Rc::ptr_eq(&found, &new));
        table.finish("k", &new);
        assert!(table.is_empty());
    }

    #[test]
    fn the_last_caller_to_leave_is_told_so() {
        let callers = Callers::default();
        callers.join();
        callers.join();
        assert!(!callers.leave());
        assert_eq!(callers.count(), 1);
        assert!(callers.leave());
        // Never below zero.
        assert!(callers.leave());
        assert_eq!(callers.count(), 0);
    }

    fn options(entries: &[(&str, Value)]) -> Options {
        Options::parse(entries).expect("valid options")
    }

    #[test]
    fn the_key_tells_apart_what_changes_the_request_or_its_verdict_and_nothing_else() {
        let url = "https://a.example/1.png";
        let base = flight_key(url, &options(&[]), "");
        // Timing options do not make calls different.
        let timing =
            options(&[("deadlineMs", Value::Number(2_000.0)), ("attemptTimeoutMs", Value::Number(900.0))]);
        assert_eq!(flight_key(url, &timing, ""), base);
        // What is sent, and what a response means, do.
        assert_ne!(flight_key("https://b.example/1.png", &options(&[]), ""), base);
        assert_ne!(flight_key(url, &options(&[]), "x-key:1;"), base);
        assert_ne!(flight_key(url, &options(&[("mode", Value::Text("cors".into()))]), ""), base);
        let statuses = Value::List(vec![Value::Number(503.0)]);
        assert_ne!(flight_key(url, &options(&[("retryOn", statuses)]), ""), base);
        let reload = options(&[("cache", Value::Text("reload".into()))]);
        assert_ne!(flight_key(url, &reload, ""), base, "a reload is its own flight");
        assert_eq!(tile_key(url, &reload, ""), tile_key(url, &options(&[]), ""), "and the same tile");
    }
}
