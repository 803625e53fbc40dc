//! The platform layer: the JS exports and the [`platform`](crate::platform) traits implemented
//! over the global scope. Compiled only for `wasm32`.

mod abort;
mod effects;
mod js_objects;
mod js_options;
mod transport;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

use self::abort::AbortWatch;
use self::effects::{AbortableSleep, JsClock, JsRandom};
use self::js_objects::{make_retry_info, make_tile, make_tile_error};
use self::transport::{FetchTransport, WebBody};
use crate::redact::redact_url;
use crate::retry::{fetch_with_retries, Cause, Delivered, Failure, GaveUp, RetryInfo};
use crate::Error;

/// `fetchTile(url, options?)`: see pkg/index.d.ts for the JS contract.
#[wasm_bindgen(js_name = fetchTile)]
pub async fn fetch_tile(url: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let (url, call) = match js_options::read_url(&url).and_then(|url| {
        let call = js_options::read_call(&url, &options)?;
        Ok((url, call))
    }) {
        Ok(ok) => ok,
        Err(error) => {
            let shown_url = url.as_string().map(|u| redact_url(&u)).unwrap_or_default();
            let failure = Failure { error, cause: None };
            let gave_up = GaveUp {
                failure,
                attempts: 0,
                elapsed_ms: 0.0,
            };
            return Err(to_js_error(&gave_up, &shown_url));
        }
    };
    let abort = AbortWatch::new(call.signal);
    let transport = FetchTransport::new(&call.input, &call.init, &abort);
    let on_retry = |info: &RetryInfo| {
        if let Some(callback) = &call.on_retry {
            let info = make_retry_info(
                info.attempt,
                info.delay_ms,
                info.reason,
                info.status,
                info.retry_after_ms,
            );
            // A throwing observer must not turn a loadable tile into a failure.
            let _ = callback.call1(&JsValue::UNDEFINED, &info);
        }
    };
    let sleeper = AbortableSleep { abort: &abort };
    match fetch_with_retries(
        &call.options,
        &transport,
        &JsClock,
        &sleeper,
        &JsRandom,
        on_retry,
    )
    .await
    {
        Ok(delivered) => Ok(to_tile(delivered)),
        Err(mut gave_up) => {
            if gave_up.failure.error == Error::Aborted {
                gave_up.failure.cause = Some(Cause::Platform(abort.reason()));
            }
            Err(to_js_error(&gave_up, &redact_url(&url)))
        }
    }
}

/// The `TileError` class, re-exported by the package entries so `instanceof` works.
#[wasm_bindgen(js_name = tileErrorClass)]
pub fn tile_error_class() -> JsValue {
    js_objects::tile_error_class()
}

fn to_tile(delivered: Delivered<WebBody>) -> JsValue {
    let Delivered {
        body: WebBody { response, data },
        empty,
        attempts,
        elapsed_ms,
    } = delivered;
    let headers = response.headers();
    let content_type = headers.get("content-type").ok().flatten();
    let data = if empty {
        Uint8Array::new_with_length(0)
    } else {
        data
    };
    make_tile(
        &data,
        response.status(),
        content_type,
        &headers,
        attempts,
        elapsed_ms,
        empty,
    )
}

fn to_js_error(gave_up: &GaveUp<JsValue>, url: &str) -> JsValue {
    failure_to_js(&gave_up.failure, gave_up.attempts, gave_up.elapsed_ms, url)
}

fn failure_to_js(failure: &Failure<JsValue>, attempts: u32, elapsed_ms: f64, url: &str) -> JsValue {
    let error = &failure.error;
    let mut message = error.to_string();
    if let Some(Cause::Attempt(last)) = &failure.cause {
        message.push_str(&format!(
            " after {attempts} attempt{}; last: {}",
            if attempts == 1 { "" } else { "s" },
            last.error
        ));
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
    make_tile_error(
        &message,
        error.kind(),
        error.status(),
        attempts,
        elapsed_ms,
        error.retry_after_ms(),
        url,
        &cause,
    )
}
