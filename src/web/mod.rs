//! The platform layer: the JS exports and the [`platform`](crate::retry::platform) traits implemented
//! over the global scope. Compiled only for `wasm32`.

mod abort;
mod client;
mod effects;
#[cfg(feature = "edge")]
mod gate;
mod heap;
mod js_options;
mod task;
mod transport;
mod wire;

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use self::client::ClientInner;
use self::wire::{make_tile_error, Named};
use crate::retry::{Cause, Failure};
use crate::Error;

thread_local! {
    /// The client behind the top-level `fetchTile`: its per-host limits apply to every caller
    /// in this page, worker or isolate.
    static DEFAULT_CLIENT: Rc<ClientInner> =
        Rc::new(ClientInner::new(&JsValue::UNDEFINED).expect_throw("the default config is valid"));
}

thread_local! {
    /// Set by the package entries of platforms that let a script set `User-Agent`.
    static SENDS_USER_AGENT: Cell<bool> = const { Cell::new(false) };
}

/// Called once by the Node (also Deno and Bun) and workerd entries of the package: from then
/// on every request without a `User-Agent` in its `headers` sends [`crate::USER_AGENT`].
#[wasm_bindgen(js_name = sendUserAgent)]
pub fn send_user_agent() {
    SENDS_USER_AGENT.with(|sends| sends.set(true));
}

/// The `User-Agent` to send when the caller set none, on this platform.
fn default_user_agent() -> Option<&'static str> {
    SENDS_USER_AGENT.with(Cell::get).then_some(crate::USER_AGENT)
}

/// Whether an OGC exception code says the request itself is wrong: asked by the edge proxy
/// (pkg/worker/upstream.js), so the list has one owner, `ogc_exception::PERMANENT_CODES`.
#[cfg(feature = "edge")]
#[wasm_bindgen(js_name = isRequestError)]
pub fn is_request_error(code: &str) -> bool {
    crate::response::ogc_exception::is_request_error(code)
}

/// Whether a query parameter name names a secret (src/redact.rs): asked by the edge proxy's
/// cache keys (pkg/worker/cache.js), so the rule has one implementation.
#[cfg(feature = "edge")]
#[wasm_bindgen(js_name = isSecretName)]
pub fn is_secret_name(name: &str) -> bool {
    crate::redact::is_secret_name(name)
}

/// `fetchTile(url, options?)` on the default client: see pkg/index.d.ts for the JS contract.
#[wasm_bindgen(js_name = fetchTile)]
pub fn fetch_tile(url: JsValue, options: JsValue) -> js_sys::Promise {
    let client = DEFAULT_CLIENT.with(Rc::clone);
    task::promise(client.fetch(url, options, None))
}

/// `fetchTile` for a call made `called_ms` (`performance.now()`) ago, before the module was
/// ready: pkg/browser.js, which loads the module without top-level await.
#[wasm_bindgen(js_name = fetchTileCalledAt)]
pub fn fetch_tile_called_at(called_ms: f64, url: JsValue, options: JsValue) -> js_sys::Promise {
    let client = DEFAULT_CLIENT.with(Rc::clone);
    task::promise(client.fetch(url, options, Some(called_ms)))
}

/// Shared per-host state for the calls made through it: see pkg/index.d.ts.
#[wasm_bindgen]
pub struct TileClient {
    inner: Rc<ClientInner>,
}

#[wasm_bindgen]
impl TileClient {
    /// Throws a `TileError` of kind `invalid-options` naming the field for a bad config.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<TileClient, JsValue> {
        match ClientInner::new(&config) {
            Ok(inner) => Ok(TileClient { inner: Rc::new(inner) }),
            Err(error) => Err(early_error(error, "")),
        }
    }

    /// [`fetch_tile`] on this client.
    #[wasm_bindgen(js_name = fetchTile)]
    pub fn fetch_tile(&self, url: JsValue, options: JsValue) -> js_sys::Promise {
        let inner = self.inner.clone();
        task::promise(inner.fetch(url, options, None))
    }

    /// The settings calls to `host` (`host[:port]`) run with: see pkg/index.d.ts.
    #[wasm_bindgen(js_name = hostSettings)]
    pub fn host_settings(&self, host: &str) -> JsValue {
        self.inner.host_settings(host)
    }

    /// [`fetch_tile_called_at`] on this client.
    #[wasm_bindgen(js_name = fetchTileCalledAt)]
    pub fn fetch_tile_called_at(&self, called_ms: f64, url: JsValue, options: JsValue) -> js_sys::Promise {
        let inner = self.inner.clone();
        task::promise(inner.fetch(url, options, Some(called_ms)))
    }

    /// Per-host statistics, keyed by `host[:port]`.
    pub fn stats(&self) -> JsValue {
        self.inner.stats()
    }
}

/// Statistics of the default client (the one behind the top-level `fetchTile`).
#[wasm_bindgen]
pub fn stats() -> JsValue {
    DEFAULT_CLIENT.with(|client| client.stats())
}

/// A TileError for a call that was refused before it sent anything.
fn early_error(error: Error, url: &str) -> JsValue {
    failure_to_js(&Failure { error, cause: None }, 0, 0.0, url)
}

fn failure_to_js(failure: &Failure<JsValue>, attempts: u32, elapsed_ms: f64, url: &str) -> JsValue {
    let error = &failure.error;
    let mut message = error.message();
    if let Some(Cause::Attempt(last)) = &failure.cause {
        let plural = if attempts == 1 { "" } else { "s" };
        let count = crate::text::format::decimal_text(u64::from(attempts));
        message.push_str(&crate::text::format::concat(&[
            " after ",
            &count,
            " attempt",
            plural,
            "; last: ",
            &last.error.message(),
        ]));
    }
    if !matches!(error, Error::InvalidOptions { .. }) || !url.is_empty() {
        message.push_str(" — ");
        message.push_str(url);
    }
    let cause = match &failure.cause {
        None => JsValue::UNDEFINED,
        Some(Cause::Platform(js)) => js.clone(),
        Some(Cause::Attempt(last)) => failure_to_js(last, attempts, elapsed_ms, url),
    };
    let exception = error.exception();
    let tile_error = Named(make_tile_error(&message, error.kind(), attempts, elapsed_ms, url, &cause));
    // Set only when there: an error without a status has no `status` field.
    if let Some(status) = error.status() {
        tile_error.number("status", f64::from(status));
    }
    if let Some(after) = error.retry_after_ms() {
        tile_error.number("retryAfterMs", after);
    }
    if let Some(code) = exception.and_then(|e| e.code.as_deref()) {
        tile_error.text("exceptionCode", Some(code));
    }
    if let Some(text) = exception.and_then(|e| e.text.as_deref()) {
        tile_error.text("exceptionText", Some(text));
    }
    tile_error.0
}
