//! One tile fetch from wasm, the least a wasm-bindgen library does per call: `fetch` through an
//! imported global (never `window()`), the two header reads of the plain JS wrapper, the body as
//! bytes. Awaited with wasm-bindgen-futures, the crate's standard executor.
#![deny(unsafe_code)]

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, RequestInit, Response};

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` of whatever scope the module runs in.
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(input: &str, init: &RequestInit) -> Promise;
}

/// The tile at `url` under `signal`: rejects on a network error, a status other than 2xx, or a
/// Content-Type that is not an image, as the plain JS wrapper does.
#[wasm_bindgen]
pub async fn get(url: String, signal: AbortSignal) -> Result<Uint8Array, JsValue> {
    let init = RequestInit::new();
    init.set_signal(Some(&signal));
    let response: Response = JsFuture::from(global_fetch(&url, &init)).await?.unchecked_into();
    let headers = response.headers();
    let content_type = headers.get("content-type")?;
    let retry_after = headers.get("retry-after")?;
    if !response.ok() {
        let wait = retry_after.map(|r| format!(", Retry-After {r}")).unwrap_or_default();
        return Err(JsValue::from_str(&format!("HTTP {}{wait}", response.status())));
    }
    let body = JsFuture::from(response.array_buffer()?).await?;
    if content_type.is_some_and(|t| !t.starts_with("image/")) {
        return Err(JsValue::from_str("not an image"));
    }
    Ok(Uint8Array::new(&body))
}
