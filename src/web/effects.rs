//! Clock, randomness and sleep for the retry loop, from the JS global scope.

use gloo_timers::future::TimeoutFuture;
use wasm_bindgen::prelude::*;

use super::abort::AbortWatch;
use super::race::{race, Either};
use crate::backoff::clamp_delay;
use crate::platform::{Clock, Random, Sleep, Woke};

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: monotonic, present in pages, workers, Node and workerd.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Converts an already clamped delay to the `u32` gloo-timers takes.
pub fn timer_ms(ms: f64) -> u32 {
    clamp_delay(ms).ceil() as u32
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
        match race(TimeoutFuture::new(timer_ms(ms)), self.abort.fired()).await {
            Either::Left(()) => Woke::Elapsed,
            Either::Right(()) => Woke::Aborted,
        }
    }
}
