//! One attempt: the global `fetch`, the whole body read, under an AbortController that the
//! attempt timeout and the caller's signal both trigger.

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal, Response};

use super::abort::AbortWatch;
use super::effects::Timer;
use super::js_options::BuiltRequest;
use super::task::PromiseFuture;
use crate::redact::redact_text;
use crate::response::classify::{ResponseFacts, HEAD_BYTES, TAIL_BYTES};
use crate::response::fields::ReadFields;
use crate::retry::platform::{Attempt, Transport};
use crate::retry::serving::CONNECTIONS_PER_HOST;

thread_local! {
    /// [`queues_per_host`], asked once per module: the scope does not change.
    static QUEUES_PER_HOST: bool = queues_per_host();
}
use crate::retry::race::{race, Either};

#[wasm_bindgen(module = "/src/web/transport.js")]
extern "C" {
    /// `fetch` and the body read; resolves with a [`Fetched`].
    #[wasm_bindgen(js_name = fetchWhole)]
    fn fetch_whole(
        request: &BuiltRequest,
        index: u32,
        signal: &AbortSignal,
        bust: bool,
        hedge: bool,
    ) -> Promise;

    /// A response and what classification reads of it (`Fetched` in transport.js).
    pub type Fetched;
    #[wasm_bindgen(method, getter)]
    fn response(this: &Fetched) -> Response;
    #[wasm_bindgen(method, getter)]
    fn data(this: &Fetched) -> Uint8Array;
    #[wasm_bindgen(method, getter)]
    fn status(this: &Fetched) -> u16;
    /// The fields the core reads, as `name: value` lines (see `crate::response::fields`).
    #[wasm_bindgen(method, getter)]
    fn fields(this: &Fetched) -> String;
    #[wasm_bindgen(method, getter)]
    fn early(this: &Fetched) -> bool;

    /// The error's message, and its cause's code where there is one (see transport.js).
    /// Aborts an attempt that ran out of time with a `TimeoutError`, as `AbortSignal.timeout`
    /// would: a `fetch` option (an edge gate) tells a timeout from an attempt nobody wants.
    #[wasm_bindgen(js_name = timeOut)]
    fn time_out(controller: &AbortController);

    /// Whether the platform queues requests per host behind a few connections (a page, a worker).
    #[wasm_bindgen(js_name = queuesPerHost)]
    fn queues_per_host() -> bool;

    #[wasm_bindgen(js_name = errorText)]
    fn error_text(error: &JsValue) -> String;

    /// Whether `fetchWhole` found the server answering without CORS headers.
    #[wasm_bindgen(js_name = isCorsRefusal)]
    fn is_cors_refusal(error: &JsValue) -> bool;

    /// What `fetchWhole` found of a body over `maxBytes`, when that is why it rejected.
    #[wasm_bindgen(js_name = tooLargeOf)]
    fn too_large_of(error: &JsValue) -> Option<TooLarge>;

    /// A body over `maxBytes` (`TooLarge` in transport.js).
    type TooLarge;
    #[wasm_bindgen(method, getter)]
    fn bytes(this: &TooLarge) -> f64;
    #[wasm_bindgen(method, getter)]
    fn declared(this: &TooLarge) -> bool;
    #[wasm_bindgen(method, getter)]
    fn status(this: &TooLarge) -> u16;
}

/// Whether this scope queues requests per host behind a few connections (a page, a worker),
/// asked once per module.
pub fn holds_requests_per_host() -> bool {
    QUEUES_PER_HOST.with(|queues| *queues)
}

/// A received tile, left in the JS heap.
pub struct WebBody {
    pub response: Response,
    pub data: Uint8Array,
    /// What says for how long the tile may be handed out again (read when it is kept):
    /// `Cache-Control`, `Expires`, `Age`.
    pub cache_control: Option<String>,
    pub expires: Option<String>,
    pub age: Option<String>,
}

pub struct FetchTransport<'a> {
    /// The call's request (`buildRequest` in request.js): its inputs per mirror, the init every
    /// attempt sends, the `fetch` option and `maxBytes`.
    request: &'a BuiltRequest,
    abort: &'a AbortWatch,
    /// The call's `fetch` option is its own, not the platform's.
    own_fetch: bool,
}

impl<'a> FetchTransport<'a> {
    pub fn new(request: &'a BuiltRequest, abort: &'a AbortWatch, own_fetch: bool) -> FetchTransport<'a> {
        FetchTransport { request, abort, own_fetch }
    }

    async fn request(
        &self,
        mirror: usize,
        cache_bust: bool,
        hedge: bool,
        controller: &AbortController,
    ) -> Result<(ResponseFacts, WebBody), JsValue> {
        let fetched = fetch_whole(self.request, mirror as u32, &controller.signal(), cache_bust, hedge);
        let fetched: Fetched = PromiseFuture::new(fetched).await?.unchecked_into();
        let data = fetched.data();
        let mut fields = ReadFields::parse(&fetched.fields());
        // Classification reads none of the freshness fields but `Age`: they move to the body.
        let (cache_control, expires, age) =
            (fields.cache_control.take(), fields.expires.take(), fields.age.clone());
        let facts = facts(&fetched, fields, &data);
        Ok((facts, WebBody { response: fetched.response(), data, cache_control, expires, age }))
    }
}

impl Transport for FetchTransport<'_> {
    type Body = WebBody;
    type Cause = JsValue;

    fn connections_per_host(&self) -> Option<usize> {
        QUEUES_PER_HOST.with(|queues| queues.then_some(CONNECTIONS_PER_HOST))
    }

    fn tells_connections(&self) -> bool {
        !self.own_fetch
    }

    async fn attempt(
        &self,
        mirror: usize,
        timeout_ms: f64,
        cache_bust: bool,
        hedge: bool,
    ) -> Attempt<WebBody, JsValue> {
        if self.abort.is_aborted() {
            return Attempt::Aborted;
        }
        let controller = match AbortController::new() {
            Ok(controller) => controller,
            Err(cause) => return Attempt::Failed { message: "AbortController unavailable".into(), cause },
        };
        // A hedge race drops the losing attempt's future mid-request: that aborts its request.
        let guard = AbortOnDrop { controller: &controller, armed: true };
        let stop = race(Timer::new(timeout_ms), self.abort.fired());
        let landed = race(self.request(mirror, cache_bust, hedge, &controller), stop).await;
        guard.disarm();
        match landed {
            Either::Left(Ok((facts, body))) => Attempt::Response(facts, body),
            Either::Left(Err(_)) if self.abort.is_aborted() => Attempt::Aborted,
            Either::Left(Err(cause)) if is_cors_refusal(&cause) => Attempt::CorsRefused,
            Either::Left(Err(cause)) => match too_large_of(&cause) {
                Some(large) => {
                    // The body's read is cancelled already; the request goes with it.
                    controller.abort();
                    Attempt::TooLarge {
                        bytes: large.bytes(),
                        declared: large.declared(),
                        status: large.status(),
                    }
                }
                None => Attempt::Failed { message: error_message(&cause), cause },
            },
            Either::Right(stopped) => {
                // Aborting here, before the request future is dropped, is what guarantees that no
                // request of a settled call is still in flight.
                match stopped {
                    Either::Left(()) => {
                        time_out(&controller);
                        Attempt::TimedOut
                    }
                    Either::Right(()) => {
                        controller.abort();
                        Attempt::Aborted
                    }
                }
            }
        }
    }
}

/// Aborts an attempt's request when the attempt's future is dropped before it lands.
struct AbortOnDrop<'a> {
    controller: &'a AbortController,
    armed: bool,
}

impl AbortOnDrop<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for AbortOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.controller.abort();
        }
    }
}

/// What classification needs: the status, the headers, and the first and last bytes of the body
/// (only those are copied into wasm memory).
fn facts(fetched: &Fetched, fields: ReadFields, data: &Uint8Array) -> ResponseFacts {
    let len = data.length();
    let head_end = len.min(HEAD_BYTES as u32);
    let tail_start = len.saturating_sub(TAIL_BYTES as u32);
    ResponseFacts {
        status: fetched.status(),
        fields,
        sent_early: fetched.early(),
        body_len: len as usize,
        head: data.subarray(0, head_end).to_vec(),
        tail: data.subarray(tail_start, len).to_vec(),
    }
}

/// The platform's words for a network failure, with any URL in them redacted.
fn error_message(error: &JsValue) -> String {
    redact_text(&error_text(error))
}
