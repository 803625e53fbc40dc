//! The order in which calls waiting for a host's slot get one, on the concurrent virtual clock:
//! LIFO serves the newest first, except a call whose deadline is near, which goes ahead of newer
//! ones (`LIFO_URGENT_SHARE`): newest-first must not starve an old tile while newer ones are served.

mod sim;

use sim::*;
use tilefetch::host::slots::QueueOrder;
use tilefetch::host::HostConfig;
use tilefetch::options::Value;
use tilefetch::retry::platform::Sleep;
use tilefetch::retry::{fetch_with_retries, Runtime, LIFO_URGENT_SHARE};
use tilefetch::{Error, Options};

/// One slot; call 0 takes it at once, call 1 queues right behind it, then a new call arrives
/// every 100 ms, each answered 100 ms after it is sent: there is always a newer waiter when the
/// slot frees. Returns each call's outcome: the attempts of its tile, or its error.
fn steady_arrivals(order: QueueOrder) -> Vec<Result<(u32, f64), Error>> {
    const CALLS: usize = 14;
    let sim = Sim::new((0..CALLS).map(|_| (100.0, Reply::Ok)).collect());
    let host = host("tiles.test", &HostConfig { max_concurrent: 1, queue_order: order, ..PERMISSIVE });
    let fx = Runtime { transport: &sim, clock: &sim, sleeper: &sim, random: &sim, cancel: &sim };
    let options =
        Options::parse(&[("hedge", Value::Text("off".into())), ("deadlineMs", Value::Number(1000.0))])
            .unwrap();
    let route = std::slice::from_ref(&host);
    let calls = (0..CALLS)
        .map(|i| {
            let (sim, fx, options) = (&sim, &fx, &options);
            async move {
                let arrives = match i {
                    0 => 0.0,
                    1 => 1.0,
                    _ => 50.0 + 100.0 * (i - 2) as f64,
                };
                sim.sleep(arrives).await;
                let started = sim.now.get();
                fetch_with_retries(options, route, fx, started, |_| {})
                    .await
                    .map(|tile| (tile.attempts, sim.now.get() - started))
                    .map_err(|gave_up| gave_up.failure.error)
            }
        })
        .collect();
    block_on(&sim, all(calls))
}

#[test]
fn lifo_serves_an_old_call_before_its_deadline_passes() {
    let out = steady_arrivals(QueueOrder::Lifo);
    for (i, call) in out.iter().enumerate() {
        let (_, took) = call.as_ref().unwrap_or_else(|e| panic!("call {i}: {e:?}"));
        assert!(*took <= 1000.0, "call {i} took {took} ms");
    }
    // Call 1 waited behind newer calls until half its deadline was gone, then went next.
    let (_, took) = out[1].as_ref().unwrap();
    assert!((1000.0 * LIFO_URGENT_SHARE..1000.0 * LIFO_URGENT_SHARE + 200.0).contains(took), "{took}");
}

#[test]
fn fifo_serves_in_arrival_order() {
    let out = steady_arrivals(QueueOrder::Fifo);
    let took: Vec<f64> = out.iter().map(|c| c.as_ref().unwrap().1).collect();
    assert_eq!(took[1], 199.0, "call 1 goes second: {took:?}");
    assert!(took.iter().all(|t| *t <= 250.0), "{took:?}");
}
