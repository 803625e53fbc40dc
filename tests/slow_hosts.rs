//! Slow is not failed: a healthy host that takes seconds per tile, and a view whose hung tile's
//! hedge hangs too, on the virtual clock with the default options and host settings. Calls run
//! side by side, so they queue for the host's slots as a map's view does.

mod sim;

use sim::*;
use tilefetch::host::HostConfig;
use tilefetch::retry::{fetch_with_retries, Event, Runtime};
use tilefetch::Options;

/// Runs `n` calls at once against one host with its default settings; returns each call's
/// attempts (0 when it gave up) and when it ended, and the events.
fn view(sim: &Sim, n: usize) -> (Vec<(u32, f64)>, Vec<Event>) {
    let h = host("tiles.test", &HostConfig::DEFAULT);
    let fx = Runtime { transport: sim, clock: sim, sleeper: sim, random: sim, cancel: sim };
    let options = Options::parse(&[]).unwrap();
    let start = sim.now.get();
    let events = std::cell::RefCell::new(Vec::new());
    let calls = (0..n)
        .map(|_| {
            let (fx, options, route, sim, events) = (&fx, &options, std::slice::from_ref(&h), sim, &events);
            async move {
                let out =
                    fetch_with_retries(options, route, fx, sim.now.get(), |e| events.borrow_mut().push(e))
                        .await;
                (out.map_or(0, |tile| tile.attempts), sim.now.get() - start)
            }
        })
        .collect();
    let ends = block_on(sim, all(calls));
    (ends, events.into_inner())
}

/// Forty tiles asked at once of a host that answers every request after 2–3 s: more than the
/// host's slots at once, and the later ones queue behind the earlier ones for longer than the
/// interactive deadline. Queued is not failed, and every answer slow alike is no hang: every tile
/// comes, with no hedge and no retry.
#[test]
fn a_host_slow_for_everyone_gets_each_tile_asked_once() {
    let mut n = 0u32;
    let sim = Sim::serving(Box::new(move |_| {
        n += 1;
        (2_000.0 + f64::from((n * 379) % 1_000), Reply::Ok)
    }));
    let (ends, events) = view(&sim, 40);
    assert!(ends.iter().all(|(attempts, _)| *attempts == 1), "{ends:?}");
    assert_eq!(sim.requests.borrow().len(), 40);
    assert!(!events.iter().any(|e| matches!(e, Event::Hedge { .. })), "no hedge to a host slow for everyone");
    let last = ends.iter().map(|(_, at)| *at).fold(0.0, f64::max);
    assert!(last > 6_000.0, "the last tiles queued past the deadline: {last} ms");
}

/// A first view of twenty tiles from a host answering in 30–80 ms, where one tile's request
/// hangs and so does its hedge: a second hedge brings it in well before the attempt timeout.
#[test]
fn a_hung_tile_whose_hedge_hangs_too_comes_from_a_second_hedge() {
    let mut script = vec![(0.0, Reply::Hang)];
    script.extend((1..20).map(|i| (30.0 + f64::from((i * 17) % 50), Reply::Ok)));
    script.push((0.0, Reply::Hang));
    script.push((40.0, Reply::Ok));
    let sim = Sim::new(script);
    let (ends, events) = view(&sim, 20);
    let (attempts, at) = ends[0];
    assert_eq!(attempts, 3, "the tile came from the second hedge: {ends:?}");
    assert!(at < 1_500.0, "the hung tile after {at} ms");
    assert!(ends[1..].iter().all(|(attempts, at)| *attempts == 1 && *at < 200.0), "{ends:?}");
    let hedges = events.iter().filter(|e| matches!(e, Event::Hedge { .. })).count();
    assert_eq!(hedges, 2);
    assert_eq!(sim.requests.borrow().len(), 22);
}
