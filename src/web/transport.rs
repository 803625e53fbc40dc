//! One attempt: the global `fetch`, the whole body read, under an AbortController that the
//! attempt timeout and the caller's signal both trigger.

use js_sys::{Array, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, RequestInit, Response};

use super::abort::AbortWatch;
use super::effects::Timer;
use super::task::PromiseFuture;
use crate::classify::{ResponseFacts, HEAD_BYTES, TAIL_BYTES};
use crate::platform::{Attempt, Transport};
use crate::race::{race, Either};
use crate::redact::redact_text;

#[wasm_bindgen(module = "/src/web/transport.js")]
extern "C" {
    /// `fetch` and the body read; see transport.js for the array it resolves with.
    #[wasm_bindgen(js_name = fetchWhole)]
    fn fetch_whole(scope: &JsValue, inputs: &Array, index: u32, init: &RequestInit, bust: bool) -> Promise;

    /// The error's message, and its cause's code where there is one (see transport.js).
    #[wasm_bindgen(js_name = errorText)]
    fn error_text(error: &JsValue) -> String;
}

/// A received tile, left in the JS heap.
pub struct WebBody {
    pub response: Response,
    pub data: Uint8Array,
}

pub struct FetchTransport<'a> {
    /// Whatever `globalThis` is here: Window, WorkerGlobalScope, Node's global or workerd's.
    scope: JsValue,
    /// Per mirror: the URL string, or a `Request` when the call set fields a platform may refuse.
    inputs: &'a Array,
    /// The same for every attempt but its signal.
    init: &'a RequestInit,
    abort: &'a AbortWatch,
}

impl<'a> FetchTransport<'a> {
    pub fn new(inputs: &'a Array, init: &'a RequestInit, abort: &'a AbortWatch) -> FetchTransport<'a> {
        FetchTransport { scope: js_sys::global().into(), inputs, init, abort }
    }

    async fn request(
        &self,
        mirror: usize,
        cache_bust: bool,
        controller: &AbortController,
    ) -> Result<(ResponseFacts, WebBody), JsValue> {
        self.init.set_signal(Some(&controller.signal()));
        let fetched = fetch_whole(&self.scope, self.inputs, mirror as u32, self.init, cache_bust);
        let whole: Array = PromiseFuture::new(fetched).await?.unchecked_into();
        let body = WebBody { response: whole.get(0).unchecked_into(), data: whole.get(1).unchecked_into() };
        Ok((facts(&whole, &body.data), body))
    }
}

impl Transport for FetchTransport<'_> {
    type Body = WebBody;
    type Cause = JsValue;

    async fn attempt(&self, mirror: usize, timeout_ms: f64, cache_bust: bool) -> Attempt<WebBody, JsValue> {
        if self.abort.is_aborted() {
            return Attempt::Aborted;
        }
        let controller = match AbortController::new() {
            Ok(controller) => controller,
            Err(cause) => return Attempt::Failed { message: "AbortController unavailable".into(), cause },
        };
        let stop = race(Timer::new(timeout_ms), self.abort.fired());
        match race(self.request(mirror, cache_bust, &controller), stop).await {
            Either::Left(Ok((facts, body))) => Attempt::Response(facts, body),
            Either::Left(Err(_)) if self.abort.is_aborted() => Attempt::Aborted,
            Either::Left(Err(cause)) => Attempt::Failed { message: error_message(&cause), cause },
            Either::Right(stopped) => {
                // Aborting here, before the request future is dropped, is what guarantees that no
                // request of a settled call is still in flight.
                controller.abort();
                match stopped {
                    Either::Left(()) => Attempt::TimedOut,
                    Either::Right(()) => Attempt::Aborted,
                }
            }
        }
    }
}

/// What classification needs, from fetchWhole's array: the status, the headers, and the first
/// and last bytes of the body (only those are copied into wasm memory).
fn facts(whole: &Array, data: &Uint8Array) -> ResponseFacts {
    let header = |i: u32| whole.get(3 + i).as_string();
    let len = data.length();
    let head_end = len.min(HEAD_BYTES as u32);
    let tail_start = len.saturating_sub(TAIL_BYTES as u32);
    ResponseFacts {
        status: whole.get(2).as_f64().unwrap_or(0.0) as u16,
        content_type: header(0),
        content_encoding: header(1),
        content_length: header(2),
        retry_after: header(3),
        age: header(4),
        date: header(5),
        body_len: len as usize,
        head: data.subarray(0, head_end).to_vec(),
        tail: data.subarray(tail_start, len).to_vec(),
    }
}

/// The platform's words for a network failure, with any URL in them redacted.
fn error_message(error: &JsValue) -> String {
    redact_text(&error_text(error))
}
