//! Bindings to `js_objects.js`: the objects tilefetch hands to JavaScript (Tile, TileError, the
//! onRetry info, stats and events), each built in one call.

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use web_sys::Response;

#[wasm_bindgen(module = "/src/web/js_objects.js")]
extern "C" {
    #[wasm_bindgen(js_name = makeTileError)]
    #[allow(clippy::too_many_arguments)]
    pub fn make_tile_error(
        message: &str,
        kind: &str,
        status: Option<u16>,
        attempts: u32,
        elapsed_ms: f64,
        retry_after_ms: Option<f64>,
        exception_code: Option<&str>,
        exception_text: Option<&str>,
        url: &str,
        cause: &JsValue,
    ) -> JsValue;

    #[wasm_bindgen(js_name = makeTile)]
    pub fn make_tile(
        response: &Response,
        body: &Uint8Array,
        first: bool,
        attempts: u32,
        elapsed_ms: f64,
        empty: bool,
    ) -> JsValue;

    /// See `makeStats` in js_objects.js for the layout of `text` and `numbers`.
    #[wasm_bindgen(js_name = makeStats)]
    pub fn make_stats(text: &str, numbers: &[f64]) -> JsValue;

    /// See `makeEvent` in js_objects.js for which fields `a` to `e` are.
    #[wasm_bindgen(js_name = makeEvent)]
    pub fn make_event(
        kind: &str,
        host: &str,
        a: JsValue,
        b: JsValue,
        c: JsValue,
        d: JsValue,
        e: JsValue,
    ) -> JsValue;

    #[wasm_bindgen(js_name = makeHostSettings)]
    pub fn make_host_settings(
        max_concurrent: u32,
        half_open_probes: u32,
        deadline_ms: f64,
        max_open_ms: f64,
    ) -> JsValue;

    #[wasm_bindgen(js_name = makeRetryInfo)]
    pub fn make_retry_info(
        attempt: u32,
        delay_ms: f64,
        reason: &str,
        status: Option<u16>,
        retry_after_ms: Option<f64>,
    ) -> JsValue;
}
