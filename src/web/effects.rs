//! Clock, randomness and sleep for the retry loop, from the JS global scope.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use gloo_timers::callback::Timeout;
use wasm_bindgen::prelude::*;

use super::abort::AbortWatch;
use crate::backoff::clamp_delay;
use crate::platform::{Clock, Random, Sleep, Woke};
use crate::race::{race, Either};

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: monotonic, present in pages, workers, Node and workerd.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// A `setTimeout` as a future; dropping it clears the timer. gloo-timers' own `TimeoutFuture`
/// would do, but drags in a thread-safe oneshot channel that costs the wasm module ~2 KB.
pub struct Timer {
    _timeout: Timeout,
    state: Rc<TimerState>,
}

#[derive(Default)]
struct TimerState {
    fired: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

impl Timer {
    /// `ms` is clamped into the timer range (0 ..= 2^31 − 1).
    pub fn new(ms: f64) -> Timer {
        let state = Rc::new(TimerState::default());
        let on_fire = state.clone();
        let timeout = Timeout::new(clamp_delay(ms).ceil() as u32, move || {
            on_fire.fired.set(true);
            if let Some(waker) = on_fire.waker.take() {
                waker.wake();
            }
        });
        Timer { _timeout: timeout, state }
    }
}

impl Future for Timer {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.state.fired.get() {
            return Poll::Ready(());
        }
        self.state.waker.set(Some(cx.waker().clone()));
        Poll::Pending
    }
}

pub struct JsClock;

impl Clock for JsClock {
    fn now_ms(&self) -> f64 {
        performance_now()
    }
    fn epoch_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

/// `Math.random()`: jitter needs spread, not secrecy, and this costs no extra code or entropy.
pub struct JsRandom;

impl Random for JsRandom {
    fn unit(&self) -> f64 {
        js_sys::Math::random()
    }
}

/// Sleeps on a `setTimeout` that the caller's signal cuts short; the timer is cleared either way.
pub struct AbortableSleep<'a> {
    pub abort: &'a AbortWatch,
}

impl Sleep for AbortableSleep<'_> {
    async fn sleep(&self, ms: f64) -> Woke {
        match race(Timer::new(ms), self.abort.fired()).await {
            Either::Left(()) => Woke::Elapsed,
            Either::Right(()) => Woke::Aborted,
        }
    }
}
