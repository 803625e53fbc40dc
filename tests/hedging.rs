//! Hedged attempts on a virtual clock where attempts, sleeps and the caller's signal run
//! concurrently: a future is pending until the clock reaches its time, and the executor moves
//! the clock to the earliest time anything waits for. The race of an attempt and its hedge:
//! the winner, the loser aborted, both failing, an abort and the deadline during a hedge, and
//! when no hedge may go (a paused, paced or not-closed host: `HostState::admit_hedge`'s tests).

mod sim;

use sim::*;
use tilefetch::host::budget::BudgetConfig;
use tilefetch::host::state::Report;
use tilefetch::host::HostConfig;
use tilefetch::options::Value;
use tilefetch::retry::{
    fetch_with_retries, Event, Runtime, HEDGE_BLIND_SHARE, HEDGE_COLD_FACTOR, HEDGE_COLD_FLOOR_MS,
    HEDGE_FLOOR_MS,
};
use tilefetch::{Error, Options};

/// The cold hedge delay of a host that has answered nothing yet, with the default attempt timeout.
const HEDGE_COLD_MS: f64 = 4_000.0 * HEDGE_BLIND_SHARE;

fn hedges(events: &[Event]) -> Vec<(u32, f64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Hedge { attempt, after_ms, .. } => Some((*attempt, *after_ms)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_hedge_wins_over_a_hung_attempt_and_the_hung_one_is_aborted() {
    let sim = Sim::new(vec![(0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let h = host("tiles.test", &PERMISSIVE);
    let (out, events) = run(&sim, &[("hedge", n(100.0))], std::slice::from_ref(&h));
    let tile = out.expect("the hedge's tile");
    assert_eq!((tile.attempts, tile.elapsed_ms), (2, 130.0), "hedged at 100 ms, answered 30 ms later");
    assert_eq!(sim.ends(), ["dropped", "landed"], "the hung request is aborted once the hedge wins");
    assert_eq!(*sim.hedged.borrow(), [false, true], "the transport is told which one is the hedge");
    assert_eq!(hedges(&events), [(2, 100.0)]);
    let c = &h.borrow().counters;
    assert_eq!((c.attempts, c.hedges, c.hedges_won, c.retries), (2, 1, 1, 0));
}

#[test]
fn the_first_attempt_still_wins_when_it_answers_before_its_hedge() {
    let sim = Sim::new(vec![(150.0, Reply::Ok), (500.0, Reply::Ok)]);
    let h = host("tiles.test", &PERMISSIVE);
    let (out, events) = run(&sim, &[("hedge", n(100.0))], std::slice::from_ref(&h));
    let tile = out.unwrap();
    assert_eq!((tile.attempts, tile.elapsed_ms), (2, 150.0));
    assert_eq!(sim.ends(), ["landed", "dropped"], "the hedge is aborted");
    assert_eq!(hedges(&events).len(), 1);
    assert_eq!((h.borrow().counters.hedges, h.borrow().counters.hedges_won), (1, 0));
}

#[test]
fn a_fast_attempt_sends_no_hedge() {
    let sim = Sim::new(vec![(40.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[("hedge", n(100.0))], &[host("tiles.test", &PERMISSIVE)]);
    assert_eq!(out.unwrap().attempts, 1);
    assert!(hedges(&events).is_empty());
    assert_eq!(sim.ends(), ["landed"]);
}

#[test]
fn when_both_fail_the_loop_retries_and_hedges_no_more() {
    // The first 503 lands at 300, the hedge's at 100 + 250 = 350, the second hedge's at
    // 200 + 250 = 450; then a backoff and a retry.
    let sim = Sim::new(vec![
        (300.0, Reply::Status(503)),
        (250.0, Reply::Status(503)),
        (250.0, Reply::Status(503)),
        (500.0, Reply::Ok),
    ]);
    let h = host("tiles.test", &PERMISSIVE);
    let (out, events) = run(
        &sim,
        &[("hedge", n(100.0)), ("jitter", Value::Text("none".into())), ("baseDelayMs", n(50.0))],
        std::slice::from_ref(&h),
    );
    let tile = out.expect("the retry's tile");
    assert_eq!(tile.attempts, 4);
    // The hedges count as attempts, so the backoff is the third one's: 4 × 50 ms.
    assert_eq!(tile.elapsed_ms, 450.0 + 200.0 + 500.0, "every failure waited for, then one backoff");
    assert_eq!(sim.ends(), ["landed", "landed", "landed", "landed"]);
    assert_eq!(hedges(&events), [(2, 100.0), (3, 100.0)], "two hedges per call: the slow retry gets none");
    assert_eq!(h.borrow().counters.hedges_won, 0);
}

#[test]
fn a_failure_that_lands_first_leaves_the_hedge_to_deliver() {
    // The hedge, out 100 ms when the first one's 503 lands, gets a hedge of its own.
    let sim = Sim::new(vec![(200.0, Reply::Status(503)), (150.0, Reply::Ok), (0.0, Reply::Hang)]);
    let h = host("tiles.test", &PERMISSIVE);
    let (out, _) = run(&sim, &[("hedge", n(100.0))], std::slice::from_ref(&h));
    let tile = out.expect("the hedge's tile, after the first one's 503");
    assert_eq!((tile.attempts, tile.elapsed_ms), (3, 250.0));
    assert_eq!(sim.ends(), ["landed", "landed", "dropped"]);
    assert_eq!(h.borrow().counters.hedges_won, 1);
}

#[test]
fn an_abort_during_a_hedge_stops_both_at_once() {
    let sim = Sim::new(vec![(0.0, Reply::Hang), (0.0, Reply::Hang)]);
    sim.abort_at.set(1_000.0 + 150.0);
    let (out, events) = run(&sim, &[("hedge", n(100.0))], &[host("tiles.test", &PERMISSIVE)]);
    let gave_up = out.expect_err("aborted");
    assert_eq!(gave_up.failure.error, Error::Aborted);
    assert_eq!(gave_up.elapsed_ms, 150.0);
    assert_eq!(hedges(&events).len(), 1);
    let ends = sim.ends();
    assert!(ends.iter().all(|e| *e == "aborted" || *e == "dropped"), "nothing left in flight: {ends:?}");
}

#[test]
fn the_deadline_ends_a_call_whose_attempt_and_hedge_both_hang() {
    let sim = Sim::new(vec![(0.0, Reply::Hang), (0.0, Reply::Hang), (0.0, Reply::Hang)]);
    let (out, _) = run(
        &sim,
        // The hedges go at 100 and 200 ms: uncapped they would time out past the deadline.
        &[("hedge", n(100.0)), ("deadlineMs", n(1_000.0)), ("attemptTimeoutMs", n(950.0))],
        &[host("tiles.test", &PERMISSIVE)],
    );
    let gave_up = out.expect_err("out of time");
    assert!(matches!(gave_up.failure.error, Error::Deadline { .. }), "{:?}", gave_up.failure.error);
    assert!(gave_up.elapsed_ms <= 1_000.0, "within its deadline: {}", gave_up.elapsed_ms);
    assert_eq!(gave_up.attempts, 3);
    assert_eq!(sim.ends(), ["landed", "landed", "landed"], "all timed out (the hedges within the deadline)");
}

#[test]
fn a_hedge_goes_to_the_next_mirror() {
    let sim = Sim::new(vec![(0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let (a, b) = (host("a.test", &PERMISSIVE), host("b.test", &PERMISSIVE));
    let (out, events) = run(&sim, &[("hedge", n(100.0))], &[a.clone(), b.clone()]);
    out.unwrap();
    let mirrors: Vec<usize> = sim.requests.borrow().iter().map(|r| r.0).collect();
    assert_eq!(mirrors, [0, 1]);
    assert!(events.iter().any(|e| matches!(e, Event::Hedge { host, .. } if &**host == "b.test")));
    assert_eq!(
        (a.borrow().counters.hedges, b.borrow().counters.hedges, b.borrow().counters.hedges_won),
        (0, 1, 1)
    );
}

#[test]
fn auto_waits_for_enough_answers_then_hedges_after_their_p95() {
    let h = host("tiles.test", &PERMISSIVE);
    // Nothing answered yet: nothing tells a hang from a host slow for everyone, so no hedge;
    // the attempt timeout ends the hung one and the retry delivers.
    let sim = Sim::new(vec![(0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[("deadlineMs", n(6_000.0))], std::slice::from_ref(&h));
    assert!(hedges(&events).is_empty(), "{events:?}");
    let tile = out.unwrap();
    assert_eq!(tile.attempts, 2);
    assert!(tile.elapsed_ms > 4_000.0, "{}", tile.elapsed_ms);
    // Too few answers learned: the cold delay, not the attempt timeout.
    let sim = Sim::new(vec![(0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[("deadlineMs", n(6_000.0))], std::slice::from_ref(&h));
    assert_eq!(hedges(&events), [(2, HEDGE_COLD_MS)]);
    let tile = out.unwrap();
    assert_eq!((tile.attempts, tile.elapsed_ms), (2, HEDGE_COLD_MS + 30.0));
    let sim = Sim::new(vec![(900.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[], std::slice::from_ref(&h));
    assert!(hedges(&events).is_empty(), "an answer within the cold delay needs no hedge");
    assert_eq!(out.unwrap().attempts, 1);
    // The hung attempt that lost to the cold hedge is not learned as taking the cold delay: a few
    // hangs among a host's first answers would make it the host's p95 for good.
    assert_eq!(h.borrow().counters.attempt_latency.count(), 3, "the retry's, the hedge's and the 900 ms one");
    for _ in 0..40 {
        h.borrow_mut().counters.attempt_latency.record(80.0);
    }
    let p95 = h.borrow().counters.attempt_latency.percentile(0.95).unwrap();
    assert!(p95 > HEDGE_FLOOR_MS);
    let sim = Sim::new(vec![(0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[], std::slice::from_ref(&h));
    assert_eq!(hedges(&events), [(2, p95)], "the interactive default hedges after the learned p95");
    assert_eq!(out.unwrap().elapsed_ms, p95 + 30.0);
    // Batch calls never hedge, nor does "off".
    for options in [vec![("preset", Value::Text("batch".into()))], vec![("hedge", Value::Text("off".into()))]]
    {
        let sim = Sim::new(vec![(300.0, Reply::Ok)]);
        let (out, events) = run(&sim, &options, std::slice::from_ref(&h));
        assert!(hedges(&events).is_empty());
        assert_eq!(out.unwrap().attempts, 1);
    }
}

/// A map's first view: twelve tiles asked at once of a host that has answered nothing yet, one of
/// them hung. The others overtake it as they answer: its hedge goes at four times their median,
/// not at the blind quarter of the attempt timeout it started with.
#[test]
fn a_hang_in_the_first_view_is_hedged_by_what_the_view_has_answered_since() {
    let mut script = vec![(0.0, Reply::Hang)];
    script.extend((1..12).map(|i| (35.0 + 5.0 * f64::from(i), Reply::Ok)));
    script.push((30.0, Reply::Ok));
    let sim = Sim::new(script);
    let h = host("tiles.test", &PERMISSIVE);
    let fx = Runtime { transport: &sim, clock: &sim, sleeper: &sim, random: &sim, cancel: &sim };
    let options = Options::parse(&[]).unwrap();
    let start = sim.now.get();
    let calls = (0..12)
        .map(|_| {
            let (fx, options, route, sim) = (&fx, &options, std::slice::from_ref(&h), &sim);
            async move {
                let out = fetch_with_retries(options, route, fx, sim.now.get(), |_| {}).await;
                (out.map(|tile| tile.attempts), sim.now.get() - start)
            }
        })
        .collect();
    let ends = block_on(&sim, all(calls));
    let median = h.borrow().counters.attempt_latency.percentile(0.5).unwrap();
    let (attempts, hung_ms) = (ends[0].0.as_ref().copied().unwrap(), ends[0].1);
    assert_eq!(attempts, 2, "the hung tile came from its hedge");
    assert!(hung_ms < HEDGE_COLD_MS / 2.0, "the hung tile after {hung_ms} ms");
    assert!(
        hung_ms >= median * HEDGE_COLD_FACTOR.min(3.0),
        "{hung_ms} ms: not before the others showed their pace"
    );
    assert!(ends[1..].iter().all(|(out, _)| out.as_ref().copied().unwrap() == 1), "no other hedge");
    assert_eq!(sim.requests.borrow().len(), 13);
}

/// A host that has answered too few to say: a lone hang waits for the blind delay. Once it has
/// answered enough, the last tile of a view, hung, with no more attempts out than a browser has
/// connections, gets its hedge at four times the median answer (nothing is left to overtake
/// it); and a host that is merely slow gets none for an answer within that.
#[test]
fn a_cold_attempt_with_few_others_out_is_hedged_after_four_times_the_median_answer() {
    let h = host("tiles.test", &PERMISSIVE);
    for took in [50.0, 80.0, 60.0] {
        run(&Sim::new(vec![(took, Reply::Ok)]), &[], std::slice::from_ref(&h)).0.unwrap();
    }
    let hang = || Sim::new(vec![(0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let (out, events) = run(&hang(), &[], std::slice::from_ref(&h));
    assert_eq!(hedges(&events), [(2, HEDGE_COLD_MS)], "three answers: too few to say");
    assert_eq!(out.unwrap().elapsed_ms, HEDGE_COLD_MS + 30.0);
    run(&Sim::new(vec![(70.0, Reply::Ok)]), &[], std::slice::from_ref(&h)).0.unwrap();
    let median = h.borrow().counters.attempt_latency.percentile(0.5).unwrap();
    let after = (median * HEDGE_COLD_FACTOR).max(HEDGE_COLD_FLOOR_MS);
    let (out, events) = run(&hang(), &[], std::slice::from_ref(&h));
    assert_eq!(hedges(&events), [(2, after)]);
    assert!(after < HEDGE_COLD_MS, "{after} ms");
    assert_eq!(out.unwrap().elapsed_ms, after + 30.0);
    let slow = host("slow.test", &PERMISSIVE);
    for _ in 0..4 {
        run(&Sim::new(vec![(600.0, Reply::Ok)]), &[], std::slice::from_ref(&slow)).0.unwrap();
    }
    let (out, events) = run(&Sim::new(vec![(900.0, Reply::Ok)]), &[], std::slice::from_ref(&slow));
    assert!(hedges(&events).is_empty(), "a slow host's slow answer is no hang");
    assert_eq!(out.unwrap().attempts, 1);
}

#[test]
fn a_hedge_takes_over_its_attempts_slot_and_none_goes_without_a_retry_token_or_to_a_paced_host() {
    // The only slot is the hung attempt's: the hedge takes it over (it stands in for that
    // request), so a host whose every slot hangs still gets its hedges.
    let one_slot = HostConfig { max_concurrent: 1, ..PERMISSIVE };
    let h = host("tiles.test", &one_slot);
    let sim = Sim::new(vec![(0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[("hedge", n(100.0))], std::slice::from_ref(&h));
    assert_eq!(hedges(&events).len(), 1);
    assert_eq!(out.unwrap().elapsed_ms, 130.0);
    assert_eq!(h.borrow().slots.in_flight(), 0, "the slot is given back once");
    // No retry budget: hedges spend it like retries.
    let broke = HostConfig { budget: BudgetConfig { ratio: 0.0, min_per_second: 0.0 }, ..PERMISSIVE };
    let h = host("tiles.test", &broke);
    while h.borrow_mut().budget.try_retry(1_000.0) {}
    let sim = Sim::new(vec![(400.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[("hedge", n(100.0))], &[h]);
    assert!(hedges(&events).is_empty());
    assert_eq!(out.unwrap().attempts, 1);
    // A host a 429 taught a rate: its pace is not spent on hedges.
    let paced = HostConfig { learn_rate: true, ..PERMISSIVE };
    let h = host("tiles.test", &paced);
    for t in 0..40 {
        h.borrow_mut().report(f64::from(t) * 25.0, false, Report::Alive, 0.5);
    }
    // A 429 from a host that served 40 requests in the last second teaches it a rate.
    h.borrow_mut().report(
        1_000.0,
        false,
        Report::Throttled { wait_ms: None, too_many: true, sent_ms: 1_000.0 },
        0.5,
    );
    assert!(h.borrow().rate().is_some());
    let sim = Sim::new(vec![(400.0, Reply::Ok)]);
    let (out, events) = run(&sim, &[("hedge", n(100.0))], &[h]);
    assert!(hedges(&events).is_empty(), "{events:?}");
    assert_eq!(out.unwrap().attempts, 1);
}

#[test]
fn under_load_a_hedge_to_another_mirror_takes_its_next_freed_slot() {
    // Mirror b's two slots are both taken: call A's attempt (answers at 300 ms) and, behind it,
    // nothing else. Call B's attempt to mirror a hangs; its hedge is due at 100 ms, goes to b,
    // waits ahead of b's queue, and goes when A's attempt frees its slot.
    let sim = Sim::new(vec![(300.0, Reply::Ok), (300.0, Reply::Ok), (0.0, Reply::Hang), (30.0, Reply::Ok)]);
    let b = host("b.test", &HostConfig { max_concurrent: 2, ..PERMISSIVE });
    let a = host("a.test", &PERMISSIVE);
    let fx = Runtime { transport: &sim, clock: &sim, sleeper: &sim, random: &sim, cancel: &sim };
    let off = Options::parse(&[("hedge", Value::Text("off".into()))]).unwrap();
    let hedged = Options::parse(&[("hedge", n(100.0))]).unwrap();
    let mut events = Vec::new();
    let start = sim.now.get();
    let to_b = std::slice::from_ref(&b);
    let route = [a.clone(), b.clone()];
    let (first, second) = block_on(
        &sim,
        both(
            both(
                fetch_with_retries(&off, to_b, &fx, start, |_| {}),
                fetch_with_retries(&off, to_b, &fx, start, |_| {}),
            ),
            fetch_with_retries(&hedged, &route, &fx, start, |e| events.push(e)),
        ),
    );
    assert_eq!((first.0.unwrap().elapsed_ms, first.1.unwrap().elapsed_ms), (300.0, 300.0));
    let tile = second.expect("the hedge's tile");
    assert_eq!(
        (tile.attempts, tile.elapsed_ms),
        (2, 330.0),
        "the hedge went at 300 ms, when b had a free slot"
    );
    assert_eq!(hedges(&events), [(2, 100.0)]);
    assert_eq!(sim.ends(), ["landed", "landed", "dropped", "landed"]);
    assert_eq!((a.borrow().slots.in_flight(), b.borrow().slots.in_flight()), (0, 0), "every slot given back");
}
