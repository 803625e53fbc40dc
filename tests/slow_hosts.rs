//! Slow is not failed: a healthy host that takes seconds per tile, and a view whose hung tile's
//! hedge hangs too, on the virtual clock with the default options and host settings. Calls run
//! side by side, so they queue for the host's slots as a map's view does.

mod sim;

use sim::*;
use tilefetch::host::state::SharedHost;
use tilefetch::host::{HostConfig, HostState};
use tilefetch::retry::{fetch_with_retries, Event, Runtime};
use tilefetch::Options;

/// Runs `n` calls at once against one host with its default settings; returns each call's
/// attempts (0 when it gave up) and when it ended, and the events.
fn view(sim: &Sim, n: usize) -> (Vec<(u32, f64)>, Vec<Event>) {
    pool(sim, n, n, &HostConfig::DEFAULT)
}

/// Runs `n` calls, `at_once` at a time (each caller asks for the next tile when its last one
/// ends), against one host with `config`.
fn pool(sim: &Sim, n: usize, at_once: usize, config: &HostConfig) -> (Vec<(u32, f64)>, Vec<Event>) {
    pool_on(sim, n, at_once, host("tiles.test", config))
}

/// [`pool`] on a host made by the caller.
fn pool_on(sim: &Sim, n: usize, at_once: usize, h: SharedHost) -> (Vec<(u32, f64)>, Vec<Event>) {
    let fx = Runtime { transport: sim, clock: sim, sleeper: sim, random: sim, cancel: sim };
    let options = Options::parse(&[]).unwrap();
    let start = sim.now.get();
    let events = std::cell::RefCell::new(Vec::new());
    let next = std::cell::Cell::new(0);
    let callers = (0..at_once)
        .map(|_| {
            let (fx, options, route, sim, events, next) =
                (&fx, &options, std::slice::from_ref(&h), sim, &events, &next);
            async move {
                let mut ends = Vec::new();
                while next.get() < n {
                    next.set(next.get() + 1);
                    let on_event = |e| events.borrow_mut().push(e);
                    let out = fetch_with_retries(options, route, fx, sim.now.get(), on_event).await;
                    ends.push((out.map_or(0, |tile| tile.attempts), sim.now.get() - start));
                }
                ends
            }
        })
        .collect();
    let ends = block_on(sim, all(callers)).into_iter().flatten().collect();
    (ends, events.into_inner())
}

/// A host that answers every request after 2–3 s, however many are out.
fn slow_for_everyone() -> Sim {
    let mut n = 0u32;
    Sim::serving(Box::new(move |_| {
        n += 1;
        (2_000.0 + f64::from((n * 379) % 1_000), Reply::Ok)
    }))
}

/// Forty tiles asked at once of a host that answers every request after 2–3 s, through a fixed
/// `maxConcurrent` (the default's 16): the later ones queue behind the earlier ones for longer
/// than the interactive deadline. Queued is not failed, and every answer slow alike is no hang:
/// every tile comes, with no hedge and no retry.
#[test]
fn a_host_slow_for_everyone_gets_each_tile_asked_once() {
    let sim = slow_for_everyone();
    let fixed = HostConfig { fixed_concurrency: true, ..HostConfig::DEFAULT };
    let (ends, events) = pool(&sim, 40, 40, &fixed);
    assert!(ends.iter().all(|(attempts, _)| *attempts == 1), "{ends:?}");
    assert_eq!(sim.requests.borrow().len(), 40);
    assert!(!events.iter().any(|e| matches!(e, Event::Hedge { .. })), "no hedge to a host slow for everyone");
    let last = ends.iter().map(|(_, at)| *at).fold(0.0, f64::max);
    assert!(last > 6_000.0, "the last tiles queued past the deadline: {last} ms");
}

/// A longer session of the same host, 200 tiles, 64 asked at a time: with the default, adaptive
/// limit the host's answers take no longer with more out (the simulated platform counts six
/// connections a host, as a browser's, but holds nothing back: HTTP/2), so once it has a record
/// more go at once, and the session ends sooner than through the fixed 16. (Warm, the host's slowest answers get a hedge at its p95, as any host's do.)
#[test]
fn a_slow_host_that_serves_more_at_once_gets_more_at_once() {
    let session = |config: &HostConfig| {
        let sim = slow_for_everyone();
        let (ends, _) = pool(&sim, 200, 64, config);
        assert!(ends.iter().all(|(attempts, _)| *attempts >= 1), "{ends:?}");
        let requests = sim.requests.borrow().len();
        (ends.iter().map(|(_, at)| *at).fold(0.0, f64::max), requests)
    };
    let (adaptive, requests) = session(&HostConfig::DEFAULT);
    let (fixed, _) = session(&HostConfig { fixed_concurrency: true, ..HostConfig::DEFAULT });
    assert!(adaptive < fixed * 0.75, "adaptive {adaptive} ms, fixed {fixed} ms");
    assert!(requests <= 210, "{requests} requests");
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

/// A quota of 60 requests per fixed 2 s window, stated in the draft's fields on every answer,
/// 429 + Retry-After past it; 200 tiles, 32 at a time. Once the host has refused a request sent
/// at its policy's rate, each window's quota goes at once and its end is waited for: every tile
/// comes, almost nothing is refused, and the whole takes little more than the windows it needs.
#[test]
fn a_fixed_window_quota_is_spent_and_then_waited_for() {
    const QUOTA: u32 = 60;
    const WINDOW_MS: f64 = 2_000.0;
    const TILES: usize = 200;
    let start = Sim::new(Vec::new()).now.get();
    let mut counted = (0u32, 0u32);
    let sim = Sim::serving(Box::new(move |now| {
        let arrived = now + 15.0;
        let window = ((arrived - start) / WINDOW_MS).floor() as u32;
        if counted.0 != window {
            counted = (window, 0);
        }
        let reset_ms = start + f64::from(window + 1) * WINDOW_MS - arrived;
        let ok = counted.1 < QUOTA;
        counted.1 += u32::from(ok);
        let reset_s = (reset_ms / 1000.0).ceil() as u32;
        (30.0, Reply::Stated { ok, quota: QUOTA, window_s: 2, remaining: QUOTA - counted.1, reset_s })
    }));
    let (ends, _) = pool(&sim, TILES, 32, &HostConfig::DEFAULT);
    let requests = sim.requests.borrow().len();
    let delivered = ends.iter().filter(|(attempts, _)| *attempts > 0).count();
    let refused = requests.saturating_sub(delivered);
    let wall = ends.iter().map(|(_, at)| *at).fold(0.0, f64::max);
    // The last window the tiles need begins after this many whole windows.
    let floor = (TILES as f64 / f64::from(QUOTA)).ceil().max(1.0) - 1.0;
    let floor_ms = floor * WINDOW_MS;
    eprintln!(
        "{delivered}/{TILES} delivered, {refused} refused of {requests}, {wall:.0} ms (floor {floor_ms} ms)"
    );
    assert_eq!(delivered, TILES);
    assert!(refused * 100 <= requests, "{refused} of {requests} refused");
    assert!(wall <= 1.1 * floor_ms + 100.0, "{wall:.0} ms against the windows' {floor_ms} ms");
}

/// A full-screen first view from a host a browser meets for the first time, over HTTP/2 (the
/// simulated platform counts a browser's connections a host but holds nothing back): the whole
/// view goes at once, as the map's own loader sends it, and ends within about one answer's
/// time, where the default's limit takes several rounds; the limit stays at its highest.
#[test]
fn a_first_view_in_a_browser_goes_at_once_over_http2() {
    let view_of = |h: SharedHost| {
        let mut n = 0u32;
        let sim = Sim::serving(Box::new(move |_| {
            n += 1;
            (30.0 + f64::from((n * 17) % 50), Reply::Ok)
        }));
        let (ends, events) = pool_on(&sim, 48, 48, h.clone());
        assert!(ends.iter().all(|(attempts, _)| *attempts == 1), "{ends:?}");
        assert!(!events.iter().any(|e| matches!(e, Event::Hedge { .. })));
        let last = ends.iter().map(|(_, at)| *at).fold(0.0, f64::max);
        let limit = h.borrow().slots.limit();
        (last, limit)
    };
    let (browser, limit) =
        view_of(HostState::new("tiles.test", &HostConfig::DEFAULT, 0.0).in_a_browser().shared());
    assert!(browser < 90.0, "the view in {browser} ms");
    assert_eq!(limit, 64);
    let (elsewhere, limit) = view_of(host("tiles.test", &HostConfig::DEFAULT));
    assert!(elsewhere > 150.0, "16 at a time: {elsewhere} ms");
    assert_eq!(limit, 16);
    let fixed = HostConfig { fixed_concurrency: true, ..HostConfig::DEFAULT };
    let (_, limit) = view_of(HostState::new("tiles.test", &fixed, 0.0).in_a_browser().shared());
    assert_eq!(limit, 16, "a maxConcurrent set stays as set");
}
