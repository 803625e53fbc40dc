//! A rate-limited host on the concurrent virtual clock: a token bucket server (the fault
//! benchmark's `bucket-429` scenario: 100 requests/s, a burst of 20, `429 + Retry-After: 1`
//! when empty), 400 tiles asked 32 at a time, the default host settings. The benchmark measures
//! the real run against its target; this world checks the mechanism it relies on, without the
//! noise of a real clock: the rate learned from the 429s lets the tiles go at close to the
//! server's pace, with few refusals.

mod sim;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use sim::*;
use tilefetch::host::HostConfig;
use tilefetch::retry::{fetch_with_retries, Runtime};
use tilefetch::Options;

const TILES: usize = 400;
const CONCURRENCY: usize = 32;
const RATE: f64 = 100.0;
const BURST: f64 = 20.0;
/// How long the server takes to answer: loopback, and a tile server far away.
const LOOPBACK_MS: f64 = 2.0;
const FAR_MS: f64 = 250.0;

/// What a run measured: when 95 % of the tiles were delivered (ms from the start), requests sent,
/// tiles delivered, and the times of the refusals.
struct Paced {
    ms_to_95: f64,
    /// Tiles per second delivered between the first and the third quarter of them.
    steady_per_second: f64,
    requests: usize,
    delivered: usize,
    refused_at: Vec<f64>,
}

fn bucket_run(max_concurrent: usize, answer_ms: f64) -> Paced {
    stated_bucket_run(max_concurrent, answer_ms, false)
}

/// The same bucket; with `stated`, every answer states it: `RateLimit-Policy: "tiles";q=100;w=1`
/// and `RateLimit: "tiles";r=<whole tokens left>;t=<whole seconds until the next token>`.
fn stated_bucket_run(max_concurrent: usize, answer_ms: f64, stated: bool) -> Paced {
    let refused_at = Rc::new(RefCell::new(Vec::new()));
    let bucket = Rc::new(Cell::new((BURST, 0.0_f64))); // (tokens, last refill)
    let (log, state) = (refused_at.clone(), bucket.clone());
    let sim = Sim::serving(Box::new(move |sent| {
        // The stated bucket counts a request when it arrives, half the answer time after it is
        // sent, as a server does: the requests sent since are not in its count yet.
        let now = if stated { sent + answer_ms / 2.0 } else { sent };
        let (tokens, last) = state.get();
        let tokens = (tokens + (now - last) / 1000.0 * RATE).min(BURST);
        let ok = tokens >= 1.0;
        let left = if ok { tokens - 1.0 } else { tokens };
        state.set((left, now));
        if !ok {
            log.borrow_mut().push(now);
        }
        let reply = if stated {
            let next_s = ((1.0 - left.fract()) / RATE).ceil() as u32;
            Reply::Stated { ok, quota: RATE as u32, window_s: 1, remaining: left as u32, reset_s: next_s }
        } else if ok {
            Reply::Ok
        } else {
            Reply::Throttle(1)
        };
        (answer_ms, reply)
    }));
    let start = sim.now.get();
    let host = host("tiles.test", &HostConfig { max_concurrent, ..HostConfig::DEFAULT });
    let fx = Runtime { transport: &sim, clock: &sim, sleeper: &sim, random: &sim, cancel: &sim };
    let options = Options::parse(&[]).unwrap();
    let route = std::slice::from_ref(&host);
    let next = Cell::new(0);
    let ends = RefCell::new(Vec::new());
    let workers = (0..CONCURRENCY)
        .map(|_| {
            let (sim, fx, options, next, ends) = (&sim, &fx, &options, &next, &ends);
            async move {
                while next.get() < TILES {
                    next.set(next.get() + 1);
                    let started = sim.now.get();
                    let r = fetch_with_retries(options, route, fx, started, |_| {}).await;
                    if let Err(e) = &r {
                        eprintln!("{:?} at {}", e.failure.error, sim.now.get() - start);
                    }
                    if r.is_ok() {
                        ends.borrow_mut().push(sim.now.get() - start);
                    }
                }
            }
        })
        .collect();
    block_on(&sim, all(workers));
    let mut ends = ends.into_inner();
    ends.sort_by(f64::total_cmp);
    let need = (0.95 * TILES as f64).ceil() as usize;
    let refused_at = refused_at.borrow().iter().map(|t| t - start).collect();
    let requests = sim.requests.borrow().len();
    Paced {
        ms_to_95: ends.get(need - 1).copied().unwrap_or(f64::INFINITY),
        steady_per_second: ends
            .get(3 * TILES / 4)
            .map_or(0.0, |late| (TILES / 2) as f64 / (late - ends[TILES / 4]) * 1000.0),
        requests,
        delivered: ends.len(),
        refused_at,
    }
}

/// The default client: 16 slots per host, so half of the 32 calls queue for one.
#[test]
fn a_token_bucket_host_is_served_near_its_pace() {
    check_near_pace(bucket_run(HostConfig::DEFAULT.max_concurrent, LOOPBACK_MS));
}

/// 32 slots: nobody queues, so the first 429s come from a burst that nobody waits behind.
#[test]
fn a_token_bucket_host_is_served_near_its_pace_with_a_slot_for_every_call() {
    check_near_pace(bucket_run(CONCURRENCY, LOOPBACK_MS));
}

/// Answers that take longer than the quiet time: the 429s of what was in flight at the first
/// refusal keep coming after it, and must not be taken for a refusal of the rate it taught. 32
/// calls at 250 ms per answer can ask 128/s at most.
#[test]
fn a_far_token_bucket_host_is_served_near_its_pace() {
    check_near_pace(bucket_run(CONCURRENCY, FAR_MS));
}

fn check_near_pace(run: Paced) {
    // A perfectly paced client has its 95th percentile tile after (0.95·N − burst) / rate.
    let limit_ms = (0.95 * TILES as f64 - BURST) / RATE * 1000.0;
    eprintln!(
        "95 % after {:.0} ms (pacing limit {limit_ms:.0}), {} requests, {} delivered, refusals at {:?}",
        run.ms_to_95,
        run.requests,
        run.delivered,
        run.refused_at.iter().map(|t| t.round()).collect::<Vec<_>>()
    );
    assert_eq!(run.delivered, TILES);
    assert!(run.requests as f64 <= 1.1 * TILES as f64, "{} requests", run.requests);
    assert!(run.ms_to_95 <= 1.3 * limit_ms, "95 % after {:.0} ms", run.ms_to_95);
}

/// The bucket states its quota on every answer: paced by what it states, the client is not
/// refused (≤ 1 % of requests, past the first requests, which go before anything is stated) and
/// uses the stated rate to at least 90 %.
#[test]
fn a_token_bucket_that_states_its_quota_is_used_to_its_rate_without_refusals() {
    for (slots, answer_ms) in [(HostConfig::DEFAULT.max_concurrent, LOOPBACK_MS), (CONCURRENCY, FAR_MS)] {
        let run = stated_bucket_run(slots, answer_ms, true);
        let limit_ms = (0.95 * TILES as f64 - BURST) / RATE * 1000.0;
        let unstated = slots.saturating_sub(BURST as usize);
        eprintln!(
            "{slots} slots, {answer_ms} ms answers: {:.1} tiles/s (stated {RATE}/s), 95 % after {:.0} ms (pacing limit {limit_ms:.0}), {} requests, {} refused ({unstated} sent before a statement)",
            run.steady_per_second,
            run.ms_to_95,
            run.requests,
            run.refused_at.len()
        );
        assert_eq!(run.delivered, TILES);
        let refused = run.refused_at.len().saturating_sub(unstated);
        assert!(refused * 100 <= run.requests, "{refused} of {} refused once stated", run.requests);
        assert!(
            run.steady_per_second >= 0.9 * RATE,
            "{:.1} tiles/s: under 90 % of the stated rate",
            run.steady_per_second
        );
    }
}
