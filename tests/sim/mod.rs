//! The virtual world of the concurrent retry-loop tests (tests/hedging.rs, tests/queue_order.rs):
//! attempts, sleeps and the caller's signal run concurrently; a future is pending until the clock
//! reaches its time, and the executor moves the clock to the earliest time anything waits for.
#![allow(dead_code)] // each test file uses its part

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use tilefetch::host::breaker::BreakerConfig;
use tilefetch::host::budget::BudgetConfig;
use tilefetch::host::state::SharedHost;
use tilefetch::host::{HostConfig, HostState};
use tilefetch::options::Value;
use tilefetch::response::classify::ResponseFacts;
use tilefetch::response::fields::ReadFields;
use tilefetch::retry::platform::{Attempt, Cancel, Clock, Random, Sleep, Transport, Woke};
use tilefetch::retry::{fetch_with_retries, Delivered, Event, GaveUp, Runtime};
use tilefetch::Options;

#[derive(Clone, Copy)]
pub enum Reply {
    Ok,
    Status(u16),
    /// A 429 with `Retry-After` in seconds.
    Throttle(u32),
    /// A tile (`ok`) or a 429 with `Retry-After: 1`, stating the server's quota policy
    /// (`RateLimit-Policy: "tiles";q=…;w=…`) and what remains (`RateLimit: "tiles";r=…;t=…`).
    Stated {
        ok: bool,
        quota: u32,
        window_s: u32,
        remaining: u32,
        reset_s: u32,
    },
    Hang,
}

/// A server that answers each request by the time it is sent: (ms until the answer, the answer).
pub type Server = Box<dyn FnMut(f64) -> (f64, Reply)>;

/// The virtual world: a clock, the times pending futures wait for, the caller's abort time and
/// the scripted replies, one per request in the order they are sent.
pub struct Sim {
    pub now: Cell<f64>,
    pub wakes: RefCell<Vec<f64>>,
    pub abort_at: Cell<f64>,
    pub script: RefCell<VecDeque<(f64, Reply)>>,
    /// Per request: (mirror, sent at, how it ended: "landed", "dropped", "aborted").
    pub requests: RefCell<Vec<(usize, f64, &'static str)>>,
    /// Per request: whether the loop sent it as a hedge (past the local HTTP cache).
    pub hedged: RefCell<Vec<bool>>,
    /// Answers requests when the script is empty.
    pub server: RefCell<Option<Server>>,
}

impl Sim {
    pub fn new(script: Vec<(f64, Reply)>) -> Sim {
        Sim {
            now: Cell::new(1_000.0),
            wakes: RefCell::default(),
            abort_at: Cell::new(f64::INFINITY),
            script: RefCell::new(script.into()),
            requests: RefCell::default(),
            hedged: RefCell::default(),
            server: RefCell::default(),
        }
    }

    /// A world whose requests a server model answers.
    pub fn serving(server: Server) -> Sim {
        let sim = Sim::new(Vec::new());
        *sim.server.borrow_mut() = Some(server);
        sim
    }

    /// Pending until `at`; registers `at` as a time to move the clock to.
    pub fn ready_at(&self, at: f64) -> bool {
        if self.now.get() >= at {
            return true;
        }
        self.wakes.borrow_mut().push(at);
        false
    }

    pub fn aborted(&self) -> bool {
        self.ready_at(self.abort_at.get())
    }

    pub fn ends(&self) -> Vec<&'static str> {
        self.requests.borrow().iter().map(|r| r.2).collect()
    }
}

impl Clock for Sim {
    fn now_ms(&self) -> f64 {
        self.now.get()
    }
    fn epoch_ms(&self) -> f64 {
        1.7e12 + self.now.get()
    }
}

impl Random for Sim {
    fn unit(&self) -> f64 {
        0.5
    }
}

pub struct SleepFor<'a> {
    sim: &'a Sim,
    until: f64,
}

impl Future for SleepFor<'_> {
    type Output = Woke;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Woke> {
        if self.sim.aborted() {
            return Poll::Ready(Woke::Aborted);
        }
        if self.sim.ready_at(self.until) {
            return Poll::Ready(Woke::Elapsed);
        }
        Poll::Pending
    }
}

impl Sleep for Sim {
    fn sleep(&self, ms: f64) -> impl Future<Output = Woke> {
        SleepFor { sim: self, until: self.now.get() + ms }
    }
}

pub struct Fired<'a>(&'a Sim);

impl Future for Fired<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.0.aborted() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Cancel for Sim {
    fn is_aborted(&self) -> bool {
        self.now.get() >= self.abort_at.get()
    }
    fn fired(&self) -> impl Future<Output = ()> {
        Fired(self)
    }
}

/// One request in flight; dropping it before it lands is aborting it.
pub struct Request<'a> {
    sim: &'a Sim,
    index: usize,
    lands_at: f64,
    reply: Option<Reply>,
}

impl Future for Request<'_> {
    type Output = Attempt<Vec<u8>, &'static str>;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let sim = self.sim;
        if sim.aborted() {
            sim.requests.borrow_mut()[self.index].2 = "aborted";
            self.reply = None;
            return Poll::Ready(Attempt::Aborted);
        }
        if !sim.ready_at(self.lands_at) {
            return Poll::Pending;
        }
        sim.requests.borrow_mut()[self.index].2 = "landed";
        Poll::Ready(match self.reply.take() {
            Some(Reply::Ok) => Attempt::Response(facts(200, "image/png", b"tile"), b"tile".to_vec()),
            Some(Reply::Status(code)) => {
                Attempt::Response(facts(code, "text/plain", b"busy"), b"busy".to_vec())
            }
            Some(Reply::Throttle(seconds)) => {
                let mut facts = facts(429, "text/plain", b"slow down");
                facts.fields.retry_after = Some(seconds.to_string());
                Attempt::Response(facts, b"slow down".to_vec())
            }
            Some(Reply::Stated { ok, quota, window_s, remaining, reset_s }) => {
                let mut facts = if ok {
                    facts(200, "image/png", b"tile")
                } else {
                    facts(429, "text/plain", b"slow down")
                };
                if !ok {
                    facts.fields.retry_after = Some("1".into());
                }
                facts.fields.rate_limit = Some(format!(
                    "ratelimit-policy: \"tiles\";q={quota};w={window_s}\nratelimit: \"tiles\";r={remaining};t={reset_s}\n"
                ));
                Attempt::Response(facts, if ok { b"tile".to_vec() } else { b"slow down".to_vec() })
            }
            // A hang, or an answer slower than the attempt's budget.
            _ => Attempt::TimedOut,
        })
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if self.reply.is_some() {
            self.sim.requests.borrow_mut()[self.index].2 = "dropped";
        }
    }
}

pub fn facts(status: u16, content_type: &str, body: &[u8]) -> ResponseFacts {
    ResponseFacts {
        status,
        fields: ReadFields { content_type: Some(content_type.into()), ..ReadFields::default() },
        body_len: body.len(),
        head: body.to_vec(),
        tail: body.to_vec(),
        ..ResponseFacts::default()
    }
}

impl Transport for Sim {
    type Body = Vec<u8>;
    type Cause = &'static str;
    fn attempt(
        &self,
        mirror: usize,
        timeout_ms: f64,
        _bust: bool,
        hedge: bool,
    ) -> impl Future<Output = Attempt<Vec<u8>, &'static str>> {
        let now = self.now.get();
        let scripted = self.script.borrow_mut().pop_front();
        let (took, reply) = scripted.unwrap_or_else(|| {
            let mut server = self.server.borrow_mut();
            server.as_mut().expect("more requests than scripted")(now)
        });
        self.hedged.borrow_mut().push(hedge);
        let mut requests = self.requests.borrow_mut();
        requests.push((mirror, now, "in flight"));
        let late = matches!(reply, Reply::Hang) || took > timeout_ms;
        let lands_at = now + if late { timeout_ms } else { took };
        let reply = if late { Reply::Hang } else { reply };
        Request { sim: self, index: requests.len() - 1, lands_at, reply: Some(reply) }
    }
}

/// Set by a wake: something became ready without the clock moving (a slot handed on).
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Polls; when nothing is ready and nothing was woken, moves the clock to the earliest time
/// something waits for.
pub fn block_on<F: Future>(sim: &Sim, future: F) -> F::Output {
    let mut future = pin!(future);
    let woken = Arc::new(Woken(AtomicBool::new(false)));
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    for _ in 0..100_000 {
        sim.wakes.borrow_mut().clear();
        woken.0.store(false, Ordering::SeqCst);
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        if woken.0.load(Ordering::SeqCst) {
            continue;
        }
        let next = sim.wakes.borrow().iter().copied().fold(f64::INFINITY, f64::min);
        assert!(next.is_finite(), "the loop waits for nothing: it would hang");
        sim.now.set(sim.now.get().max(next));
    }
    panic!("the retry loop did not finish");
}

pub type Outcome = Result<Delivered<Vec<u8>>, GaveUp<&'static str>>;

pub const PERMISSIVE: HostConfig = HostConfig {
    breaker: BreakerConfig { failure_threshold: u32::MAX, ..BreakerConfig::INTERACTIVE },
    budget: BudgetConfig { ratio: 1.0, min_per_second: 1e6 },
    learn_rate: false,
    ..HostConfig::DEFAULT
};

pub fn host(name: &str, config: &HostConfig) -> SharedHost {
    HostState::new(name, config, 0.0).shared()
}

pub fn run(sim: &Sim, options: &[(&str, Value)], route: &[SharedHost]) -> (Outcome, Vec<Event>) {
    let options = Options::parse(options).expect("valid options");
    let mut events = Vec::new();
    let fx = Runtime { transport: sim, clock: sim, sleeper: sim, random: sim, cancel: sim };
    let out = block_on(sim, fetch_with_retries(&options, route, &fx, sim.now.get(), |e| events.push(e)));
    (out, events)
}

pub fn n(v: f64) -> Value {
    Value::Number(v)
}

/// Runs two futures side by side until both are done.
pub async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut out_a, mut out_b) = (None, None);
    std::future::poll_fn(|cx| {
        if out_a.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(cx) {
                out_a = Some(v);
            }
        }
        if out_b.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(cx) {
                out_b = Some(v);
            }
        }
        if out_a.is_some() && out_b.is_some() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    (out_a.unwrap(), out_b.unwrap())
}

/// Runs every future side by side until all are done; their outputs in order.
pub async fn all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (future, out) in futures.iter_mut().zip(outs.iter_mut()) {
            if out.is_none() {
                if let Poll::Ready(v) = future.as_mut().poll(cx) {
                    *out = Some(v);
                }
            }
        }
        if outs.iter().all(Option::is_some) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outs.into_iter().flatten().collect()
}
