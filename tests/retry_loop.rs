//! The retry loop against a virtual clock, scripted responses and a scripted abort: every path
//! of `fetch_with_retries` without a network or a timer.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use tilefetch::host::breaker::BreakerConfig;
use tilefetch::host::budget::BudgetConfig;
use tilefetch::host::state::{Report, SharedHost};
use tilefetch::host::{HostConfig, HostState};
use tilefetch::options::{Preset, Value};
use tilefetch::response::classify::ResponseFacts;
use tilefetch::response::fields::ReadFields;
use tilefetch::response::ogc_exception::OgcException;
use tilefetch::retry::platform::{Attempt, Cancel, Clock, Random, Sleep, Transport, Woke};
use tilefetch::retry::{fetch_with_retries, Cause, Delivered, Event, GaveUp, RetryInfo, Runtime};
use tilefetch::{Error, Options};

/// One scripted server reply: how long it takes and what it is.
#[derive(Clone)]
enum Reply {
    Status(u16, &'static [(&'static str, &'static str)], &'static [u8]),
    Network,
    /// The server answered without CORS headers, and the platform found that out.
    Cors,
    /// A body over `maxBytes`: declared (`true`) or counted.
    TooLarge(f64, bool),
    Hang,
}

struct World {
    now: Cell<f64>,
    abort_at: Cell<f64>,
    replies: RefCell<VecDeque<(f64, Reply)>>,
    sent: Cell<u32>,
    sleeps: RefCell<Vec<f64>>,
    unit: Cell<f64>,
    mirrors: RefCell<Vec<usize>>,
    busted: RefCell<Vec<bool>>,
}

impl World {
    fn new(replies: Vec<(f64, Reply)>) -> World {
        World {
            now: Cell::new(10_000.0),
            abort_at: Cell::new(f64::INFINITY),
            replies: RefCell::new(replies.into()),
            sent: Cell::new(0),
            sleeps: RefCell::new(Vec::new()),
            unit: Cell::new(0.5),
            mirrors: RefCell::new(Vec::new()),
            busted: RefCell::new(Vec::new()),
        }
    }

    /// Advances to `now + ms`, or to the abort time if it comes first. True if aborted.
    fn advance(&self, ms: f64) -> bool {
        let end = self.now.get() + ms;
        if self.abort_at.get() <= end {
            self.now.set(self.now.get().max(self.abort_at.get()));
            return true;
        }
        self.now.set(end);
        false
    }
}

impl Clock for World {
    fn now_ms(&self) -> f64 {
        self.now.get()
    }
    fn epoch_ms(&self) -> f64 {
        784_111_777_000.0 + self.now.get() // Sun, 06 Nov 1994 08:49:37 GMT at t = 0
    }
}

impl Random for World {
    fn unit(&self) -> f64 {
        self.unit.get()
    }
}

impl Sleep for World {
    fn sleep(&self, ms: f64) -> impl Future<Output = Woke> {
        self.sleeps.borrow_mut().push(ms);
        let woke = if self.advance(ms) { Woke::Aborted } else { Woke::Elapsed };
        std::future::ready(woke)
    }
}

impl Cancel for World {
    fn is_aborted(&self) -> bool {
        self.now.get() >= self.abort_at.get()
    }

    async fn fired(&self) {
        if !self.is_aborted() {
            std::future::pending::<()>().await;
        }
    }
}

impl Transport for World {
    type Body = Vec<u8>;
    type Cause = &'static str;

    fn attempt(
        &self,
        mirror: usize,
        timeout_ms: f64,
        cache_bust: bool,
        _hedge: bool,
    ) -> impl Future<Output = Attempt<Vec<u8>, &'static str>> {
        self.sent.set(self.sent.get() + 1);
        self.busted.borrow_mut().push(cache_bust);
        self.mirrors.borrow_mut().push(mirror);
        let (took, reply) =
            self.replies.borrow_mut().pop_front().expect("the loop sent more requests than scripted");
        let outcome = if matches!(reply, Reply::Hang) || took > timeout_ms {
            if self.advance(timeout_ms) {
                Attempt::Aborted
            } else {
                Attempt::TimedOut
            }
        } else if self.advance(took) {
            Attempt::Aborted
        } else {
            match reply {
                Reply::Network => Attempt::Failed { message: "connection reset".into(), cause: "ECONNRESET" },
                Reply::Cors => Attempt::CorsRefused,
                Reply::TooLarge(bytes, declared) => Attempt::TooLarge { bytes, declared, status: 200 },
                Reply::Status(status, headers, body) => {
                    let header =
                        |name: &str| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string());
                    let facts = ResponseFacts {
                        status,
                        fields: ReadFields {
                            content_type: header("content-type"),
                            retry_after: header("retry-after"),
                            age: header("age"),
                            date: header("date"),
                            content_length: header("content-length"),
                            ..ReadFields::default()
                        },
                        body_len: body.len(),
                        head: body.to_vec(),
                        tail: body[body.len().saturating_sub(12)..].to_vec(),
                        ..ResponseFacts::default()
                    };
                    Attempt::Response(facts, body.to_vec())
                }
                Reply::Hang => unreachable!(),
            }
        };
        std::future::ready(outcome)
    }
}

/// Every fake effect is immediately ready, so one poll with a no-op waker drives the loop.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the retry loop did not finish")
}

type Outcome = Result<Delivered<Vec<u8>>, GaveUp<&'static str>>;

/// A host that never holds a call back, so a test sees the retry loop alone.
const PERMISSIVE: HostConfig = HostConfig {
    breaker: BreakerConfig { failure_threshold: u32::MAX, ..BreakerConfig::INTERACTIVE },
    budget: BudgetConfig { ratio: 1.0, min_per_second: 1e6 },
    learn_rate: false,
    ..HostConfig::DEFAULT
};

/// A host that holds every failure against itself: its breaker opens at the second, and no retry
/// budget is to spare. What must not count as the host's failure is checked against it.
const UNFORGIVING: HostConfig = HostConfig {
    breaker: BreakerConfig {
        failure_threshold: 2,
        open_ms: 60_000.0,
        half_open_probes: 1,
        max_open_ms: 60_000.0,
    },
    budget: BudgetConfig { ratio: 0.0, min_per_second: 0.0 },
    ..PERMISSIVE
};

fn host(config: &HostConfig) -> SharedHost {
    HostState::new("tiles.test", config, 0.0).shared()
}

fn run(world: &World, options: &[(&str, Value)]) -> (Outcome, Vec<RetryInfo>) {
    let (out, events) = run_on(world, options, &[host(&PERMISSIVE)]);
    let retries = events
        .into_iter()
        .filter_map(|e| match e {
            Event::Retry { info, .. } => Some(info),
            _ => None,
        })
        .collect();
    (out, retries)
}

/// Hedges are off unless a test sets `hedge`: this world runs one future at a time (a sleep or an
/// attempt moves the clock when it is made), so a hedge's timer would pass before its attempt
/// lands. The race is tested in tests/hedging.rs, whose world runs futures side by side.
fn run_on(world: &World, options: &[(&str, Value)], route: &[SharedHost]) -> (Outcome, Vec<Event>) {
    let mut options = options.to_vec();
    if !options.iter().any(|(k, _)| *k == "hedge") {
        options.push(("hedge", Value::Text("off".into())));
    }
    let options = Options::parse(&options).expect("valid options");
    let mut events = Vec::new();
    let effects = Runtime { transport: world, clock: world, sleeper: world, random: world, cancel: world };
    let out = block_on(fetch_with_retries(&options, route, &effects, world.now.get(), |e| events.push(e)));
    (out, events)
}

fn ok() -> Reply {
    Reply::Status(200, &[("content-type", "image/png")], b"tile")
}
fn status(code: u16) -> Reply {
    Reply::Status(code, &[], b"")
}
fn n(v: f64) -> Value {
    Value::Number(v)
}
fn none_jitter() -> (&'static str, Value) {
    ("jitter", Value::Text("none".into()))
}
fn gave_up(out: Outcome) -> GaveUp<&'static str> {
    match out {
        Err(g) => g,
        Ok(d) => panic!("expected a give-up, got a tile after {} attempts", d.attempts),
    }
}
fn last_error<'a>(g: &'a GaveUp<&'static str>) -> &'a Error {
    match &g.failure.cause {
        Some(Cause::Attempt(last)) => &last.error,
        _ => panic!("no attempt cause on {:?}", g.failure.error),
    }
}

#[test]
fn first_try_success_needs_no_sleep() {
    let world = World::new(vec![(80.0, ok())]);
    let (out, retries) = run(&world, &[]);
    let tile = out.unwrap();
    assert_eq!((tile.attempts, tile.elapsed_ms, tile.empty, tile.body), (1, 80.0, false, b"tile".to_vec()));
    assert!(retries.is_empty() && world.sleeps.borrow().is_empty());
}

#[test]
fn transient_failures_are_retried_with_exponential_delays() {
    let world =
        World::new(vec![(50.0, status(503)), (50.0, Reply::Network), (50.0, status(429)), (50.0, ok())]);
    let (out, retries) = run(&world, &[none_jitter(), ("baseDelayMs", n(100.0))]);
    let tile = out.unwrap();
    assert_eq!(tile.attempts, 4);
    assert_eq!(*world.sleeps.borrow(), vec![100.0, 200.0, 400.0]);
    assert_eq!(tile.elapsed_ms, 4.0 * 50.0 + 700.0);
    let reasons: Vec<_> = retries.iter().map(|r| (r.attempt, r.reason, r.status)).collect();
    assert_eq!(reasons, vec![(1, "http", Some(503)), (2, "network", None), (3, "http", Some(429))]);
}

#[test]
fn full_jitter_draws_below_the_ceiling() {
    let world = World::new(vec![(10.0, status(500)), (10.0, status(500)), (10.0, ok())]);
    world.unit.set(0.25);
    let (out, _) = run(&world, &[("baseDelayMs", n(400.0))]);
    assert_eq!(out.unwrap().attempts, 3);
    assert_eq!(*world.sleeps.borrow(), vec![100.0, 200.0]);
}

#[test]
fn permanent_statuses_are_not_retried() {
    for code in [400, 401, 403, 404, 410] {
        let world = World::new(vec![(30.0, status(code))]);
        let (out, retries) = run(&world, &[]);
        let g = gave_up(out);
        assert_eq!((g.failure.error.clone(), g.attempts), (Error::http(code), 1));
        assert_eq!(world.sent.get(), 1);
        assert!(retries.is_empty());
    }
}

#[test]
fn empty_on_statuses_deliver_an_empty_tile() {
    let world = World::new(vec![(30.0, status(204))]);
    let (out, _) = run(&world, &[]);
    assert!(out.unwrap().empty);
}

#[test]
fn error_bodies_with_200_are_retried_until_a_real_tile_arrives() {
    let se: &[u8] = b"<?xml version='1.0'?><ServiceExceptionReport><ServiceException code='NoApplicableCode'>busy</ServiceException></ServiceExceptionReport>";
    let world = World::new(vec![
        (20.0, Reply::Status(200, &[("content-type", "application/vnd.ogc.se_xml")], se)),
        (20.0, Reply::Status(200, &[("content-type", "text/html")], b"<html>502</html>")),
        (20.0, Reply::Status(200, &[("content-type", "image/png"), ("content-length", "900")], b"short")),
        (20.0, ok()),
    ]);
    let (out, retries) = run(&world, &[("baseDelayMs", n(10.0))]);
    assert_eq!(out.unwrap().attempts, 4);
    let reasons: Vec<_> = retries.iter().map(|r| r.reason).collect();
    assert_eq!(reasons, vec!["service-exception", "invalid-response", "invalid-response"]);
}

#[test]
fn request_errors_in_an_ogc_exception_are_permanent() {
    let se: &[u8] = b"<ServiceExceptionReport><ServiceException code=\"LayerNotDefined\">no</ServiceException></ServiceExceptionReport>";
    let world = World::new(vec![(20.0, Reply::Status(200, &[("content-type", "text/xml")], se))]);
    let g = gave_up(run(&world, &[]).0);
    assert_eq!(
        g.failure.error,
        Error::ServiceException {
            status: 200,
            exception: OgcException { code: Some("LayerNotDefined".into()), text: Some("no".into()) }
        }
    );
    assert_eq!(world.sent.get(), 1);
}

#[test]
fn a_request_error_code_rejects_after_one_request_whatever_the_status() {
    // MapProxy sends WMS exceptions with 500, WMTS servers with 400/404; some proxies with 429.
    const BODY: &[u8] = b"<?xml version=\"1.0\"?><ServiceExceptionReport version=\"1.3.0\"><ServiceException code=\"InvalidCRS\">unknown crs</ServiceException></ServiceExceptionReport>";
    for code in [200, 400, 404, 429, 500, 503] {
        let world = World::new(vec![(
            20.0,
            Reply::Status(code, &[("content-type", "text/xml"), ("retry-after", "1")], BODY),
        )]);
        let g =
            gave_up(run(&world, &[("retryOn", Value::List(vec![n(400.0), n(429.0), n(500.0), n(503.0)]))]).0);
        assert_eq!(g.failure.error.kind(), "service-exception", "HTTP {code}");
        assert_eq!(g.failure.error.exception().and_then(|e| e.code.as_deref()), Some("InvalidCRS"));
        assert_eq!((g.attempts, world.sent.get()), (1, 1), "HTTP {code}");
    }
}

#[test]
fn a_transient_code_keeps_the_statuss_verdict_and_its_exception() {
    const BODY: &[u8] = b"<ServiceExceptionReport><ServiceException code=\"NoApplicableCode\">database busy</ServiceException></ServiceExceptionReport>";
    let world = World::new(vec![
        (20.0, Reply::Status(500, &[("content-type", "application/vnd.ogc.se_xml")], BODY)),
        (20.0, ok()),
    ]);
    let (out, retries) = run(&world, &[("baseDelayMs", n(10.0))]);
    assert_eq!(out.unwrap().attempts, 2);
    assert_eq!(retries[0].reason, "http");
    let world = World::new(vec![(20.0, Reply::Status(403, &[], BODY))]);
    let g = gave_up(run(&world, &[]).0);
    let exception =
        OgcException { code: Some("NoApplicableCode".into()), text: Some("database busy".into()) };
    assert_eq!(g.failure.error, Error::Http { status: 403, exception: Some(exception) });
    assert_eq!(world.sent.get(), 1);
}

#[test]
fn request_errors_leave_the_breaker_the_budget_and_the_good_tiles_alone() {
    // A mistyped layer's tiles must not open the breaker, spend the budget or pause the host for
    // the good layer's tiles.
    let route = [host(&UNFORGIVING)];
    const BAD: &[u8] = b"<ServiceExceptionReport><ServiceException code=\"LayerNotDefined\">unknown layer: osmm</ServiceException></ServiceExceptionReport>";
    for _ in 0..12 {
        let world = World::new(vec![(
            20.0,
            Reply::Status(500, &[("content-type", "text/xml"), ("retry-after", "60")], BAD),
        )]);
        let g = gave_up(run_on(&world, &[], &route).0);
        assert_eq!((g.failure.error.kind(), world.sent.get()), ("service-exception", 1));
        let world = World::new(vec![(20.0, ok())]);
        let tile = run_on(&world, &[], &route).0.unwrap();
        assert_eq!((tile.attempts, tile.elapsed_ms), (1, 20.0), "a good tile at its healthy latency");
    }
    let host = route[0].borrow();
    assert_eq!(host.breaker.state(0.0).name(), "closed");
    assert_eq!(host.paused_until(0.0), None);
    assert_eq!(host.counters.retries, 0);
}

#[test]
fn a_server_without_cors_headers_ends_the_call_at_once_and_is_not_held_against_the_host() {
    // Were a CORS refusal a failure, the host would be down for the calls after the first two.
    let route = [host(&UNFORGIVING)];
    let mut cors_events = 0;
    for _ in 0..5 {
        let world = World::new(vec![(20.0, Reply::Cors)]);
        let (out, events) = run_on(&world, &[], &route);
        let g = gave_up(out);
        assert_eq!((g.failure.error.kind(), g.attempts, world.sent.get()), ("cors", 1, 1));
        assert!(g.failure.error.message().contains("Access-Control-Allow-Origin"));
        assert!(world.sleeps.borrow().is_empty(), "not retried");
        cors_events += events.iter().filter(|e| matches!(e, Event::CorsRefused { .. })).count();
    }
    assert_eq!(cors_events, 1, "said once");
    assert!(route[0].borrow().cors_refused());
    assert_eq!(route[0].borrow().breaker.state(0.0).name(), "closed");
    assert_eq!(route[0].borrow().paused_until(0.0), None);
    // The server sends the headers again: a tile, and the mark is gone.
    let world = World::new(vec![(20.0, ok())]);
    assert!(run_on(&world, &[], &route).0.is_ok());
    assert!(!route[0].borrow().cors_refused());
}

#[test]
fn a_body_over_max_bytes_ends_the_call_after_one_request_and_is_not_held_against_the_host() {
    let route = [host(&UNFORGIVING)];
    for (bytes, declared, says) in
        [(629_145_608.0, true, "declared 629145608 bytes"), (1_048_577.0, false, "at 1048577 bytes")]
    {
        for _ in 0..3 {
            let world = World::new(vec![(20.0, Reply::TooLarge(bytes, declared))]);
            let g = gave_up(run_on(&world, &[("maxBytes", n(1_048_576.0))], &route).0);
            assert_eq!((g.failure.error.kind(), g.attempts, world.sent.get()), ("too-large", 1, 1));
            let message = g.failure.error.message();
            assert!(message.contains(says) && message.contains("maxBytes (1048576)"), "{message}");
            assert!(world.sleeps.borrow().is_empty(), "not retried");
        }
    }
    let h = route[0].borrow();
    assert_eq!((h.breaker.state(0.0).name(), h.paused_until(0.0), h.counters.retries), ("closed", None, 0));
}

#[test]
fn retry_after_is_a_floor_on_the_delay() {
    let world = World::new(vec![(20.0, Reply::Status(429, &[("retry-after", "2")], b"")), (20.0, ok())]);
    let (out, retries) = run(&world, &[]);
    assert_eq!(out.unwrap().attempts, 2);
    assert_eq!(*world.sleeps.borrow(), vec![2000.0]);
    assert_eq!(retries[0].retry_after_ms, Some(2000.0));
    assert_eq!(retries[0].delay_ms, 2000.0);
}

#[test]
fn retry_after_below_the_jittered_delay_does_not_shorten_it() {
    let world = World::new(vec![(20.0, Reply::Status(503, &[("retry-after", "0")], b"")), (20.0, ok())]);
    run(&world, &[none_jitter(), ("baseDelayMs", n(300.0))]).0.unwrap();
    assert_eq!(*world.sleeps.borrow(), vec![300.0]);
}

#[test]
fn retry_after_as_an_http_date_is_honoured() {
    // The world's epoch is 08:49:37 + 10 s at t = 10 000 ms; the server asks for 08:49:50.
    let world = World::new(vec![
        (0.0, Reply::Status(503, &[("retry-after", "Sun, 06 Nov 1994 08:49:50 GMT")], b"")),
        (10.0, ok()),
    ]);
    run(&world, &[]).0.unwrap();
    assert_eq!(*world.sleeps.borrow(), vec![3000.0]);
}

#[test]
fn retry_after_beyond_the_deadline_rejects_at_once_as_rate_limited() {
    let world = World::new(vec![(20.0, Reply::Status(429, &[("retry-after", "86400")], b""))]);
    let (out, retries) = run(&world, &[]);
    let g = gave_up(out);
    assert_eq!(g.failure.error, Error::RateLimited { status: Some(429), retry_after_ms: 86_400_000.0 });
    assert_eq!(last_error(&g), &Error::http(429));
    assert_eq!((g.attempts, g.elapsed_ms), (1, 20.0));
    assert!(retries.is_empty() && world.sleeps.borrow().is_empty());
}

#[test]
fn retry_after_is_clamped_by_retry_after_max_ms() {
    let world = World::new(vec![(20.0, Reply::Status(429, &[("retry-after", "86400")], b"")), (20.0, ok())]);
    run(&world, &[("retryAfterMaxMs", n(1500.0))]).0.unwrap();
    assert_eq!(*world.sleeps.borrow(), vec![1500.0]);
}

#[test]
fn garbage_retry_after_falls_back_to_backoff() {
    let world = World::new(vec![(20.0, Reply::Status(429, &[("retry-after", "-3")], b"")), (20.0, ok())]);
    run(&world, &[none_jitter()]).0.unwrap();
    assert_eq!(*world.sleeps.borrow(), vec![Options::preset(Preset::Interactive).base_delay_ms]);
}

#[test]
fn a_sleep_past_the_deadline_is_never_started() {
    let replies = (0..50).map(|_| (100.0, status(503))).collect();
    let world = World::new(replies);
    let (out, retries) = run(&world, &[none_jitter(), ("deadlineMs", n(2000.0)), ("baseDelayMs", n(200.0))]);
    let g = gave_up(out);
    assert_eq!(g.failure.error, Error::Deadline { deadline_ms: 2000.0 });
    assert_eq!(last_error(&g), &Error::http(503));
    // 100 + 200 + 100 + 400 + 100 + 800 = 1700; the next sleep (1600) would end past 2000.
    assert_eq!(*world.sleeps.borrow(), vec![200.0, 400.0, 800.0]);
    assert_eq!((g.attempts, g.elapsed_ms, retries.len()), (4, 1800.0, 3));
    assert!(g.elapsed_ms <= 2000.0);
}

#[test]
fn attempts_are_cut_to_the_time_left_and_end_as_deadline() {
    let world = World::new(vec![(10.0, Reply::Hang), (10.0, Reply::Hang)]);
    let (out, _) = run(
        &world,
        &[
            none_jitter(),
            ("attemptTimeoutMs", n(600.0)),
            ("deadlineMs", n(1000.0)),
            ("baseDelayMs", n(100.0)),
        ],
    );
    let g = gave_up(out);
    assert_eq!(g.failure.error, Error::Deadline { deadline_ms: 1000.0 });
    // The second attempt was cut to the 300 ms left: the cause is the failure before it, the
    // first attempt's full timeout, which says something about the server.
    assert_eq!(last_error(&g), &Error::Timeout { after_ms: 600.0 });
    assert_eq!((g.attempts, g.elapsed_ms), (2, 1000.0));
}

#[test]
fn a_slow_attempt_times_out_and_is_retried() {
    let world = World::new(vec![(5000.0, ok()), (100.0, ok())]);
    let (out, retries) = run(&world, &[]);
    let tile = out.unwrap();
    assert_eq!(tile.attempts, 2);
    assert_eq!(retries[0].reason, "timeout");
    assert!(tile.elapsed_ms <= 6000.0);
}

#[test]
fn an_aborted_signal_sends_nothing() {
    let world = World::new(vec![]);
    world.abort_at.set(0.0);
    let g = gave_up(run(&world, &[]).0);
    assert_eq!((g.failure.error.clone(), g.attempts), (Error::Aborted, 0));
    assert_eq!(world.sent.get(), 0);
}

#[test]
fn abort_during_a_sleep_ends_the_call_without_another_request() {
    let world = World::new(vec![(100.0, status(503)), (100.0, ok())]);
    world.abort_at.set(10_000.0 + 100.0 + 50.0);
    let g = gave_up(run(&world, &[none_jitter(), ("baseDelayMs", n(2000.0))]).0);
    assert_eq!((g.failure.error.clone(), g.attempts, g.elapsed_ms), (Error::Aborted, 1, 150.0));
    assert_eq!(world.sent.get(), 1);
}

#[test]
fn abort_during_an_attempt_is_not_retried() {
    let world = World::new(vec![(500.0, ok())]);
    world.abort_at.set(10_000.0 + 200.0);
    let g = gave_up(run(&world, &[]).0);
    assert_eq!((g.failure.error.clone(), g.elapsed_ms), (Error::Aborted, 200.0));
}

#[test]
fn network_failures_keep_the_platform_cause() {
    let world = World::new(vec![(10.0, Reply::Network)]);
    let g = gave_up(run(&world, &[("deadlineMs", n(100.0)), ("baseDelayMs", n(200.0)), none_jitter()]).0);
    let Some(Cause::Attempt(last)) = &g.failure.cause else { panic!("no cause") };
    assert_eq!(last.error, Error::Network { message: "connection reset".into() });
    assert!(matches!(last.cause, Some(Cause::Platform("ECONNRESET"))));
}

#[test]
fn no_retry_sleep_exceeds_the_cap_over_a_long_outage() {
    for unit in [0.1, 0.5, 0.999_999] {
        let world = World::new((0..2000).map(|_| (1.0, status(503))).collect());
        world.unit.set(unit);
        let g =
            gave_up(run(&world, &[("preset", Value::Text("batch".into())), ("deadlineMs", n(120_000.0))]).0);
        assert_eq!(g.failure.error, Error::Deadline { deadline_ms: 120_000.0 });
        let sleeps = world.sleeps.borrow();
        assert!(sleeps.len() > 3 && sleeps.iter().all(|d| *d <= 30_000.0), "{sleeps:?}");
    }
}

// ---- What calls to one host share: breaker, pause, learned rate, budget, mirrors, counters.

fn breaker_host(threshold: u32, open_ms: f64) -> SharedHost {
    host(&HostConfig {
        breaker: BreakerConfig {
            failure_threshold: threshold,
            open_ms,
            half_open_probes: 1,
            max_open_ms: open_ms * 4.0,
        },
        ..PERMISSIVE
    })
}

#[test]
fn an_open_breaker_fails_calls_fast_when_their_deadline_cannot_reach_half_open() {
    let route = [breaker_host(3, 5000.0)];
    let world = World::new((0..3).map(|_| (10.0, status(503))).collect());
    let (out, events) =
        run_on(&world, &[("deadlineMs", n(100.0)), none_jitter(), ("baseDelayMs", n(1.0))], &route);
    assert_eq!(gave_up(out).attempts, 3);
    assert!(events.iter().any(|e| matches!(e, Event::Breaker { state, .. } if state.name() == "open")));
    let sent = world.sent.get();
    let (out, _) = run_on(&world, &[("deadlineMs", n(1000.0))], &route);
    let g = gave_up(out);
    assert_eq!(g.failure.error.kind(), "circuit-open");
    assert_eq!((g.attempts, world.sent.get()), (0, sent), "nothing was sent");
    assert!(g.failure.error.retry_after_ms().unwrap() > 1000.0);
}

#[test]
fn a_call_waits_for_half_open_when_its_deadline_allows_and_the_probe_closes_the_breaker() {
    let route = [breaker_host(2, 1000.0)];
    let world = World::new(vec![(10.0, status(503)), (10.0, status(503)), (10.0, ok())]);
    let _ = run_on(&world, &[("deadlineMs", n(50.0)), none_jitter(), ("baseDelayMs", n(1.0))], &route);
    let (out, events) = run_on(&world, &[], &route);
    let tile = out.unwrap();
    assert_eq!(tile.attempts, 1);
    assert!(events.iter().any(|e| matches!(e, Event::Attempt { probe: true, .. })));
    assert!(events.iter().any(|e| matches!(e, Event::Breaker { state, .. } if state.name() == "closed")));
    assert!(tile.elapsed_ms >= 700.0, "waited for the open time, {}", tile.elapsed_ms);
}

#[test]
fn retry_after_pauses_every_call_to_the_host() {
    let route = [host(&PERMISSIVE)];
    let world = World::new(vec![
        (10.0, Reply::Status(429, &[("retry-after", "2")], b"")),
        (10.0, ok()),
        (10.0, ok()),
    ]);
    world.unit.set(0.0);
    let (first, events) = run_on(&world, &[], &route);
    first.unwrap();
    assert!(events.iter().any(|e| matches!(e, Event::Pause { .. })));
    // A second call right away finds the host paused (the first slept through its own pause).
    let world2 = World::new(vec![(10.0, Reply::Status(429, &[("retry-after", "3")], b"")), (10.0, ok())]);
    world2.now.set(world.now.get());
    let _ = run_on(&world2, &[("deadlineMs", n(10_000.0))], &route);
    let world3 = World::new(vec![(10.0, ok())]);
    world3.now.set(world2.now.get() - 3000.0);
    let (third, events) = run_on(&world3, &[], &route);
    third.unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Queue { hold: Some(tilefetch::host::state::Hold::Pause), .. })));
    assert!(*world3.sleeps.borrow().first().unwrap() >= 2000.0, "{:?}", world3.sleeps.borrow());
}

#[test]
fn a_pause_past_the_deadline_rejects_as_rate_limited_without_sending() {
    let route = [host(&PERMISSIVE)];
    let world = World::new(vec![(10.0, Reply::Status(503, &[("retry-after", "30")], b""))]);
    let _ = run_on(&world, &[("deadlineMs", n(1000.0))], &route);
    let world2 = World::new(vec![]);
    world2.now.set(world.now.get());
    let g = gave_up(run_on(&world2, &[], &route).0);
    assert_eq!(g.failure.error.kind(), "rate-limited");
    assert_eq!(g.failure.error.status(), None);
    assert!(g.failure.error.retry_after_ms().unwrap() > 29_000.0);
    assert_eq!(world2.sent.get(), 0);
}

#[test]
fn a_spent_retry_budget_makes_the_retry_wait_for_a_token_within_the_deadline() {
    let config = HostConfig { budget: BudgetConfig { ratio: 0.0, min_per_second: 1.0 }, ..PERMISSIVE };
    let route = [host(&config)];
    let world = World::new((0..20).map(|_| (10.0, status(503))).collect());
    let (out, _) = run_on(&world, &[none_jitter(), ("baseDelayMs", n(10.0))], &route);
    let g = gave_up(out);
    // Not the last 503's kind (`http` reads as permanent): the deadline, with the 503 as cause.
    assert!(matches!(g.failure.error, Error::Deadline { .. }), "{:?}", g.failure.error);
    assert_eq!(*last_error(&g), Error::http(503));
    // One retry from the reserve at once, then one per refilled token (1 per second) until the
    // 6 s deadline: the budget paces the retries instead of ending the call.
    assert!((6..=8).contains(&g.attempts), "{} attempts", g.attempts);
    let long: Vec<f64> = world.sleeps.borrow().iter().copied().filter(|s| *s > 500.0).collect();
    assert!(long.len() >= 4 && long.iter().all(|s| *s <= 1000.0), "token waits {long:?}");
    assert!(g.elapsed_ms <= 6000.0);
}

#[test]
fn a_budget_that_never_refills_ends_the_call_at_once_as_deadline() {
    let config = HostConfig { budget: BudgetConfig { ratio: 0.0, min_per_second: 0.0 }, ..PERMISSIVE };
    let route = [host(&config)];
    let world = World::new(vec![(10.0, status(503))]);
    let g = gave_up(run_on(&world, &[], &route).0);
    assert!(matches!(g.failure.error, Error::Deadline { .. }));
    assert_eq!((g.attempts, g.elapsed_ms), (1, 10.0), "no sleep into a certain failure");
    assert!(world.sleeps.borrow().is_empty());
}

#[test]
fn retries_rotate_over_mirrors_and_skip_open_breakers() {
    let route = [host(&PERMISSIVE), host(&PERMISSIVE), breaker_host(1, 60_000.0)];
    // Open the third mirror's breaker.
    let opener = World::new(vec![(1.0, status(503))]);
    let _ = run_on(&opener, &[("deadlineMs", n(5.0))], &route[2..]);
    let world = World::new(vec![(10.0, status(503)), (10.0, status(503)), (10.0, ok())]);
    let tile = run_on(&world, &[none_jitter(), ("baseDelayMs", n(1.0))], &route).0.unwrap();
    assert_eq!(tile.attempts, 3);
    assert_eq!(*world.mirrors.borrow(), vec![0, 1, 0], "mirror 2 is open, so attempt 3 goes to mirror 0");
}

#[test]
fn a_retry_after_sends_the_retry_to_another_mirror_and_later_calls_skip_the_paused_host() {
    let route = [host(&PERMISSIVE), host(&PERMISSIVE)];
    // Mirror 0 says "come back in an hour": the retry goes to mirror 1 after the backoff alone,
    // not an hour later and not as a rate-limited give-up; mirror 0 is paused.
    let world = World::new(vec![(10.0, Reply::Status(429, &[("retry-after", "3600")], b"")), (10.0, ok())]);
    let tile = run_on(&world, &[none_jitter(), ("baseDelayMs", n(5.0))], &route).0.unwrap();
    assert_eq!(tile.attempts, 2);
    assert_eq!(*world.mirrors.borrow(), vec![0, 1]);
    assert_eq!(*world.sleeps.borrow(), vec![5.0], "the backoff, not the Retry-After");
    assert!(route[0].borrow().paused_until(world.now.get()).is_some());
    // The next call starts on mirror 1: the paused host is not asked again.
    let later = World::new(vec![(10.0, ok())]);
    later.now.set(world.now.get());
    assert_eq!(run_on(&later, &[], &route).0.unwrap().attempts, 1);
    assert_eq!(*later.mirrors.borrow(), vec![1]);
    // With every mirror paused, a Retry-After beyond the deadline still ends the call at once.
    let both = World::new(vec![(10.0, Reply::Status(429, &[("retry-after", "3600")], b""))]);
    both.now.set(world.now.get());
    route[1].borrow_mut().report(
        both.now.get(),
        false,
        Report::Throttled { wait_ms: Some(3_600_000.0), too_many: true, sent_ms: both.now.get() },
        0.5,
    );
    let g = gave_up(run_on(&both, &[], &route).0);
    assert!(matches!(g.failure.error, Error::RateLimited { .. }), "{:?}", g.failure.error);
}

#[test]
fn start_jitter_delays_the_first_attempt() {
    let world = World::new(vec![(10.0, ok())]);
    world.unit.set(0.25);
    let tile = run(&world, &[("startJitterMs", n(400.0))]).0.unwrap();
    assert_eq!(*world.sleeps.borrow(), vec![100.0]);
    assert_eq!(tile.elapsed_ms, 110.0);
}

#[test]
fn hosts_count_calls_attempts_retries_and_give_ups() {
    let route = [host(&PERMISSIVE)];
    let world = World::new(vec![(10.0, status(503)), (10.0, ok()), (10.0, status(404)), (10.0, ok())]);
    run_on(&world, &[("baseDelayMs", n(1.0))], &route).0.unwrap();
    let _ = run_on(&world, &[], &route);
    world.abort_at.set(0.0);
    let _ = run_on(&world, &[], &route);
    let h = route[0].borrow();
    let c = &h.counters;
    assert_eq!((c.requests, c.attempts, c.retries, c.successes, c.aborted), (3, 3, 1, 1, 1));
    assert_eq!(c.give_ups, vec![("http", 1)]);
    assert_eq!(c.latency.count(), 1);
}

#[test]
fn a_learned_rate_spaces_the_attempts_of_later_calls() {
    let config = HostConfig { learn_rate: true, ..PERMISSIVE };
    let route = [host(&config)];
    let world = World::new((0..10).map(|_| (1.0, ok())).collect());
    for _ in 0..10 {
        run_on(&world, &[], &route).0.unwrap();
    }
    // A 429 from a host that served 10 requests in the last second (this world runs one call at
    // a time, so the host hears it directly): 90 % of that is its rate.
    let now = world.now.get();
    route[0].borrow_mut().report(
        now,
        false,
        Report::Throttled { wait_ms: None, too_many: true, sent_ms: now },
        0.5,
    );
    assert_eq!(route[0].borrow().rate(), Some(9.0));
    let later = World::new((0..5).map(|_| (1.0, ok())).collect());
    later.now.set(world.now.get());
    let t0 = later.now.get();
    for _ in 0..5 {
        run_on(&later, &[], &route).0.unwrap();
    }
    assert!(
        later.now.get() - t0 >= 4.0 * 1000.0 / 9.5,
        "5 calls at ~9/s take ≥ 420 ms, took {}",
        later.now.get() - t0
    );
}

#[test]
fn a_stale_tile_is_fetched_once_more_past_the_caches() {
    let old = Reply::Status(200, &[("content-type", "image/png"), ("age", "90000")], b"old");
    let world = World::new(vec![(10.0, old.clone()), (10.0, old)]);
    let tile = run(&world, &[("maxAgeS", n(86_400.0))]).0.unwrap();
    assert_eq!((tile.attempts, tile.body), (2, b"old".to_vec()), "the second stale answer is delivered");
    assert_eq!(*world.busted.borrow(), vec![false, true]);
    assert!(world.sleeps.borrow().is_empty(), "no backoff: the host is fine");
    let world = World::new(vec![(10.0, Reply::Status(200, &[("age", "90000")], b"old"))]);
    assert_eq!(run(&world, &[]).0.unwrap().attempts, 1, "off by default");
}

#[test]
fn a_stale_tile_is_kept_when_its_fresh_copy_fails() {
    let old = Reply::Status(200, &[("content-type", "image/png"), ("age", "90000")], b"old");
    let world = World::new(vec![(10.0, old), (10.0, status(400))]);
    let tile = run(&world, &[("maxAgeS", n(60.0))]).0.unwrap();
    assert_eq!(tile.body, b"old".to_vec());
    assert_eq!(*world.busted.borrow(), vec![false, true]);
}

#[test]
fn the_cache_busting_attempt_goes_to_the_same_mirror() {
    let route = [host(&PERMISSIVE), host(&PERMISSIVE)];
    let old = Reply::Status(200, &[("age", "90000")], b"old");
    let world = World::new(vec![(10.0, old), (10.0, ok())]);
    run_on(&world, &[("maxAgeS", n(60.0))], &route).0.unwrap();
    assert_eq!(*world.mirrors.borrow(), vec![0, 0]);
}

#[test]
fn a_timeout_cut_by_the_calls_own_deadline_does_not_count_against_the_host() {
    let route = [breaker_host(1, 60_000.0)];
    let world = World::new(vec![(10.0, Reply::Hang)]);
    let g = gave_up(run_on(&world, &[("deadlineMs", n(100.0)), ("attemptTimeoutMs", n(1000.0))], &route).0);
    assert_eq!(g.failure.error.kind(), "deadline");
    assert_eq!(route[0].borrow().breaker.state(world.now.get()).name(), "closed");
}

/// A host that has just served a tile (at the world's now).
fn answering_host(world: &World) -> SharedHost {
    let h = host(&PERMISSIVE);
    h.borrow_mut().report(world.now.get(), false, tilefetch::host::state::Report::Alive, 0.5);
    h
}

#[test]
fn an_absurd_retry_after_from_a_host_that_is_serving_tiles_is_not_believed() {
    let world = World::new(vec![(10.0, Reply::Status(503, &[("retry-after", "86400")], b"")), (10.0, ok())]);
    let route = [answering_host(&world)];
    let (out, events) = run_on(&world, &[none_jitter(), ("baseDelayMs", n(100.0))], &route);
    let tile = out.expect("retried like a 503 without the header");
    assert_eq!(tile.attempts, 2);
    assert_eq!(*world.sleeps.borrow(), vec![100.0], "the backoff, not the header");
    assert!(!events.iter().any(|e| matches!(e, Event::Pause { .. })), "the host is not paused");
    assert_eq!(route[0].borrow().paused_until(world.now.get()), None);
}

#[test]
fn the_same_header_from_a_host_that_serves_nothing_is_a_quota() {
    let world = World::new(vec![(10.0, Reply::Status(429, &[("retry-after", "3600")], b""))]);
    let route = [host(&PERMISSIVE)];
    let g = gave_up(run_on(&world, &[], &route).0);
    assert_eq!(g.failure.error.kind(), "rate-limited");
    assert_eq!(world.sent.get(), 1, "one request, no retry");
    let paused = route[0].borrow().paused_until(world.now.get());
    assert!(paused.is_some() && route[0].borrow().pause_is_doubtful());
    // A later call with nothing in flight that could lift the pause ends at once, sending nothing.
    let world2 = World::new(vec![]);
    world2.now.set(world.now.get());
    let g = gave_up(run_on(&world2, &[], &route).0);
    assert_eq!((g.failure.error.kind(), world2.sent.get()), ("rate-limited", 0));
    assert!(world2.sleeps.borrow().is_empty(), "no sleep into a certain failure");
}

#[test]
fn a_plausible_retry_after_is_still_a_floor_when_the_host_is_serving() {
    let world = World::new(vec![(10.0, Reply::Status(429, &[("retry-after", "1")], b"")), (10.0, ok())]);
    let route = [answering_host(&world)];
    let (out, _) = run_on(&world, &[none_jitter(), ("baseDelayMs", n(100.0))], &route);
    assert_eq!(out.unwrap().attempts, 2);
    assert_eq!(*world.sleeps.borrow(), vec![1000.0]);
}

#[test]
fn an_honest_retry_after_late_in_a_call_is_still_believed() {
    // 5 s is within what a 6 s call could wait: believed even from a host serving tiles, though
    // at 1.5 s into the call it no longer fits what is left.
    let world = World::new(vec![(1_500.0, Reply::Status(429, &[("retry-after", "5")], b""))]);
    let route = [answering_host(&world)];
    let g = gave_up(run_on(&world, &[], &route).0);
    assert_eq!(g.failure.error.kind(), "rate-limited");
    assert_eq!(world.sent.get(), 1);
    assert!(route[0].borrow().paused_until(world.now.get()).is_some(), "the host pauses");
    assert!(!route[0].borrow().pause_is_doubtful());
}
