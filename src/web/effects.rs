//! Clock, randomness and sleep for the retry loop, from the JS global scope.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::prelude::*;

use super::abort::AbortWatch;
use crate::retry::platform::{Clock, Random, Sleep, Woke};
use crate::retry::race::{race, Either};
use crate::timing::backoff::clamp_delay;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: monotonic, present in pages, workers, Node and workerd.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;

    /// `setTimeout(handler, ms, id)`: every platform passes the extra argument to the handler.
    /// The handle is a number in browsers and workerd, an object in Node.
    #[wasm_bindgen(js_name = setTimeout, catch)]
    fn set_timeout(handler: &JsValue, ms: f64, id: f64) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);
}

thread_local! {
    /// The clock's reading for the task poll under way (`Turn`): `UNREAD` until the poll's first
    /// reading, `OUTSIDE` when no poll is. A poll is one synchronous turn of the event loop, and
    /// every reading was a crossing into JS: the retry loop, the host state and the timers read
    /// the clock many times in one.
    static TURN_NOW: Cell<f64> = const { Cell::new(OUTSIDE) };
}
const OUTSIDE: f64 = f64::NAN;
const UNREAD: f64 = f64::NEG_INFINITY;

/// `performance.now()`, read once per task poll: within a poll, every reading is the poll's
/// first (time spent inside one synchronous turn is not waited for); outside one, fresh.
pub fn now() -> f64 {
    TURN_NOW.with(|turn| match turn.get() {
        t if t.is_nan() => performance_now(),
        UNREAD => {
            let t = performance_now();
            turn.set(t);
            t
        }
        t => t,
    })
}

/// Held around a task's poll (task.rs): the clock is read once in it (`now`). Polls do not nest
/// (every poll, a new task's first included, is a promise reaction of its own); should one ever
/// start inside another, it has its own reading and the outer one's is back when it ends.
pub struct Turn(f64);

impl Turn {
    pub fn begin() -> Turn {
        Turn(TURN_NOW.with(|turn| turn.replace(UNREAD)))
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        TURN_NOW.with(|turn| turn.set(self.0));
    }
}

/// A `setTimeout` as a future; dropping it clears the timer. `ms` is clamped into the timer
/// range (0 ..= 2^31 − 1).
pub use timer::Timer;

#[derive(Default)]
struct TimerState {
    fired: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

impl TimerState {
    fn fire(&self) {
        self.fired.set(true);
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    fn poll(&self, cx: &Context<'_>) -> Poll<()> {
        if self.fired.get() {
            return Poll::Ready(());
        }
        self.waker.set(Some(cx.waker().clone()));
        Poll::Pending
    }
}

/// Pages, workers, Node, Deno and Bun: the module's timers share one platform timer, set for the
/// soonest of them. Every attempt has a timeout and most a hedge's delay, and a view starts its
/// tiles together; a `setTimeout` and a `clearTimeout` for each was a cost every tile paid on the
/// page's main thread (RESULTS.md, "Where a call's time goes"), where almost none of them fires.
#[cfg(not(feature = "edge"))]
mod timer {
    use super::*;

    thread_local! {
        /// Timers set and not yet fired or dropped: (when due on `performance.now()`, state).
        /// A short list: a timer or two per call in progress.
        static TIMERS: RefCell<Vec<(f64, Rc<TimerState>)>> = const { RefCell::new(Vec::new()) };
        /// When the platform timer set is due, and its handle; none while no timer is set (a
        /// timer left would keep Node's event loop alive).
        static ARMED: RefCell<Option<(f64, JsValue)>> = const { RefCell::new(None) };
        // `Fn(f64)` as the task's poll is: one closure shim in the glue for both.
        static ON_TIMER: JsValue = Closure::<dyn Fn(f64)>::new(|_: f64| fire_due()).into_js_value();
    }

    pub struct Timer {
        state: Rc<TimerState>,
    }

    impl Timer {
        pub fn new(ms: f64) -> Timer {
            let state = Rc::new(TimerState::default());
            // A poll's reading may be a little behind the platform's clock: the platform timer
            // is set `ms` from when it is set, so it never goes off before `due`.
            let now = now();
            let due = now + clamp_delay(ms).ceil();
            if arm(due, now) {
                TIMERS.with(|timers| timers.borrow_mut().push((due, state.clone())));
            } else {
                // A platform with no working timer: end at once rather than never.
                state.fired.set(true);
            }
            Timer { state }
        }
    }

    /// Sees that the platform timer goes off by `due`; false when it cannot be set.
    fn arm(due: f64, now: f64) -> bool {
        ARMED.with(|armed| {
            let mut armed = armed.borrow_mut();
            if armed.as_ref().is_some_and(|(at, _)| *at <= due) {
                return true;
            }
            // The old one is cleared only once the new one is set: a set that fails leaves the
            // timers already listed their wake-up.
            let Ok(handle) =
                ON_TIMER.with(|on_timer| set_timeout(on_timer, clamp_delay(due - now).ceil(), 0.0))
            else {
                return false;
            };
            if let Some((_, old)) = armed.replace((due, handle)) {
                clear_timeout(&old);
            }
            true
        })
    }

    /// The platform timer went off: wakes every timer due, one at a time (a wake borrows
    /// nothing here), and sets it again for the soonest left (a platform whose timer worked
    /// once keeps working: no "end at once" here, as in `Timer::new`). Set from its own
    /// callback, the platform timer is a chain: a browser may throttle such a chain harder in a
    /// page hidden for minutes than timers set from a fetch's answer (ARCHITECTURE.md's ledger).
    fn fire_due() {
        ARMED.with(|armed| armed.borrow_mut().take());
        let now = performance_now();
        while let Some(state) = TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            let i = timers.iter().position(|(at, _)| *at <= now)?;
            Some(timers.swap_remove(i).1)
        }) {
            state.fire();
        }
        if let Some(next) = TIMERS.with(|timers| timers.borrow().iter().map(|(at, _)| *at).reduce(f64::min)) {
            arm(next, now);
        }
    }

    impl Drop for Timer {
        fn drop(&mut self) {
            if self.state.fired.get() {
                return;
            }
            let none_left = TIMERS.with(|timers| {
                let mut timers = timers.borrow_mut();
                timers.retain(|(_, state)| !Rc::ptr_eq(state, &self.state));
                timers.is_empty()
            });
            if none_left {
                if let Some((_, handle)) = ARMED.with(|armed| armed.borrow_mut().take()) {
                    clear_timeout(&handle);
                }
            }
        }
    }

    impl Future for Timer {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.state.poll(cx)
        }
    }
}

/// workerd: a timer of its own for each. A platform timer belongs to the request that set it
/// (workerd cancels it when that request ends), and a request waiting with no timer or fetch
/// of its own counts as hung: one shared timer would leave other requests' waits to whichever
/// request set it.
#[cfg(feature = "edge")]
mod timer {
    use super::*;

    thread_local! {
        /// Timers set and not yet fired or dropped, by id: a short list.
        static TIMERS: RefCell<Vec<(f64, Rc<TimerState>)>> = const { RefCell::new(Vec::new()) };
        static NEXT_TIMER: Cell<f64> = const { Cell::new(0.0) };
        /// The one handler of every timer, given its id: a wasm-bindgen closure per timer (what
        /// gloo-timers' `Timeout` makes) cost every attempt an allocation and a finalizer
        /// registration.
        static ON_TIMER: JsValue = Closure::<dyn Fn(f64)>::new(|id: f64| {
            let state = TIMERS.with(|timers| {
                let mut timers = timers.borrow_mut();
                let at = timers.iter().position(|(t, _)| *t == id)?;
                Some(timers.swap_remove(at).1)
            });
            if let Some(state) = state {
                state.fire();
            }
        })
        .into_js_value();
    }

    pub struct Timer {
        id: f64,
        handle: Option<JsValue>,
        state: Rc<TimerState>,
    }

    impl Timer {
        pub fn new(ms: f64) -> Timer {
            let state = Rc::new(TimerState::default());
            let id = NEXT_TIMER.with(|n| n.replace(n.get() + 1.0));
            let handle = ON_TIMER.with(|on_timer| set_timeout(on_timer, clamp_delay(ms).ceil(), id)).ok();
            match handle {
                Some(_) => TIMERS.with(|timers| timers.borrow_mut().push((id, state.clone()))),
                // A platform with no working timer: end at once rather than never.
                None => state.fired.set(true),
            }
            Timer { id, handle, state }
        }
    }

    impl Drop for Timer {
        fn drop(&mut self) {
            if !self.state.fired.get() {
                if let Some(handle) = &self.handle {
                    clear_timeout(handle);
                }
                TIMERS.with(|timers| timers.borrow_mut().retain(|(t, _)| *t != self.id));
            }
        }
    }

    impl Future for Timer {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.state.poll(cx)
        }
    }
}

pub struct JsClock;

impl Clock for JsClock {
    fn now_ms(&self) -> f64 {
        now()
    }
    fn epoch_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

thread_local! {
    /// The state of the jitter's generator (wyrand), seeded at its first use: one draw from the
    /// platform per module, not a crossing per jitter.
    static JITTER: Cell<u64> = const { Cell::new(0) };
}

/// Jitter needs spread between clients and between calls, not secrecy: a fast generator, seeded
/// from the platform's CSPRNG so that clients started together do not jitter alike.
pub struct JsRandom;

impl Random for JsRandom {
    fn unit(&self) -> f64 {
        JITTER.with(|jitter| {
            // 0 is "not seeded yet" (a state that comes up once in 2^64 draws only reseeds).
            let state = match jitter.get() {
                0 => seed(),
                state => state,
            };
            let mut rng = fastrand::Rng::with_seed(state);
            let unit = rng.f64();
            jitter.set(rng.get_seed());
            unit
        })
    }
}

/// 64 bits from `crypto.getRandomValues` (getrandom); where a platform has no Web Crypto, the
/// monotonic clock's finest digits, which differ between clients all the same.
fn seed() -> u64 {
    let mut bytes = (performance_now() * 1e6).to_bits().to_le_bytes();
    let _ = getrandom::fill(&mut bytes);
    u64::from_le_bytes(bytes)
}

/// A retry's backoff on gloo-timers' `Timeout` (cleared when dropped), which wakes the task.
struct Backoff {
    ms: u32,
    timeout: Option<gloo_timers::callback::Timeout>,
    state: Rc<TimerState>,
}

impl Backoff {
    fn new(ms: f64) -> Backoff {
        Backoff { ms: clamp_delay(ms).ceil() as u32, timeout: None, state: Rc::default() }
    }
}

impl Future for Backoff {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.state.poll(cx).is_ready() {
            return Poll::Ready(());
        }
        if self.timeout.is_none() {
            let state = self.state.clone();
            self.timeout = Some(gloo_timers::callback::Timeout::new(self.ms, move || state.fire()));
        }
        Poll::Pending
    }
}

/// Sleeps on a `setTimeout` that the caller's signal cuts short; the timer is cleared either way.
pub struct AbortableSleep<'a> {
    /// Ends every wait: the call is given up.
    pub abort: &'a AbortWatch,
    /// While the call has an attempt out, a wait (a hedge's delay) ends on this one instead: a
    /// call given up may let the attempt it has out land (see `Flight` in client.rs).
    pub while_out: Option<(&'a AbortWatch, &'a Cell<bool>)>,
}

impl AbortableSleep<'_> {
    fn watch(&self) -> &AbortWatch {
        match self.while_out {
            Some((watch, out)) if out.get() => watch,
            _ => self.abort,
        }
    }
}

impl Sleep for AbortableSleep<'_> {
    /// A retry's backoff, off the hot path: gloo-timers' `Timeout` (a closure per timer).
    /// Waits every tile may make (a hedge's delay, a queue) stay on the registry's one handler
    /// (`Timer`), which costs an attempt no allocation (ARCHITECTURE.md's ledger).
    async fn backoff(&self, ms: f64) -> Woke {
        match race(Backoff::new(ms), self.abort.fired()).await {
            Either::Left(()) => Woke::Elapsed,
            Either::Right(()) => Woke::Aborted,
        }
    }

    async fn sleep(&self, ms: f64) -> Woke {
        match race(Timer::new(ms), self.watch().fired()).await {
            Either::Left(()) => Woke::Elapsed,
            Either::Right(()) => Woke::Aborted,
        }
    }
}
