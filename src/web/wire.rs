//! Bindings to `wire.js`: the values that cross between the module and JavaScript, each by name
//! on both sides. What JS receives (Tile, TileError, the onRetry info, stats, events) is built in
//! one call each from named parameters; caller values are read back as named objects. The other
//! snippets (request.js, transport.js, task.js) follow the same rule, and tests/wire.rs checks
//! every declaration here and there against its JS, name by name.

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::Response;

#[wasm_bindgen(module = "/src/web/wire.js")]
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
        data: &Uint8Array,
        first: bool,
        attempts: u32,
        elapsed_ms: f64,
        empty: bool,
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

    /// `give_up_kinds` are separated by spaces, one count each in `give_up_counts`.
    #[wasm_bindgen(js_name = makeHostStats)]
    #[allow(clippy::too_many_arguments)]
    pub fn make_host_stats(
        requests: f64,
        attempts: f64,
        retries: f64,
        successes: f64,
        aborted: f64,
        coalesced: f64,
        hedges: f64,
        hedges_won: f64,
        in_flight: f64,
        queued: f64,
        breaker_state: &str,
        breaker_changed_at: f64,
        retry_tokens: f64,
        paused_until: Option<f64>,
        rate_limit_per_second: Option<f64>,
        p50: Option<f64>,
        p95: Option<f64>,
        p99: Option<f64>,
        give_up_kinds: &str,
        give_up_counts: &[f64],
        cors_refused: bool,
    ) -> JsValue;

    #[wasm_bindgen(js_name = addHostStats)]
    pub fn add_host_stats(stats: &Object, host: &str, host_stats: &JsValue);

    #[wasm_bindgen(js_name = makeAttemptEvent)]
    pub fn make_attempt_event(host: &str, attempt: u32, probe: bool) -> JsValue;

    #[wasm_bindgen(js_name = makeRetryEvent)]
    pub fn make_retry_event(
        host: &str,
        attempt: u32,
        delay_ms: f64,
        reason: &str,
        status: Option<u16>,
        retry_after_ms: Option<f64>,
    ) -> JsValue;

    #[wasm_bindgen(js_name = makeQueueEvent)]
    pub fn make_queue_event(host: &str, hold: &str, wait_ms: f64) -> JsValue;

    #[wasm_bindgen(js_name = makeBreakerEvent)]
    pub fn make_breaker_event(host: &str, state: &str) -> JsValue;

    #[wasm_bindgen(js_name = makePauseEvent)]
    pub fn make_pause_event(host: &str, until: f64) -> JsValue;

    #[wasm_bindgen(js_name = makeHedgeEvent)]
    pub fn make_hedge_event(host: &str, attempt: u32, after_ms: f64) -> JsValue;

    #[wasm_bindgen(js_name = makeCorsEvent)]
    pub fn make_cors_event(host: &str) -> JsValue;

    #[wasm_bindgen(js_name = makeGiveUpEvent)]
    pub fn make_give_up_event(host: &str, kind: &str, attempts: u32) -> JsValue;

    #[wasm_bindgen(js_name = makeGateVerdict)]
    pub fn make_gate_verdict(
        allow: bool,
        probe: bool,
        retry_after_ms: f64,
        reason: &str,
        state: &str,
    ) -> JsValue;

    #[wasm_bindgen(js_name = makeGateState)]
    #[allow(clippy::too_many_arguments)]
    pub fn make_gate_state(
        state: &str,
        open_until: Option<f64>,
        paused_until: Option<f64>,
        retry_after_ms: f64,
        admitted: f64,
        denied: f64,
        ok: f64,
        failed: f64,
        opened: f64,
    ) -> JsValue;

    /// A [`ValueKind`] code; never throws.
    #[wasm_bindgen(js_name = kindOf)]
    pub fn kind_of(value: &JsValue) -> u32;

    /// `None` when the keys cannot be read; never throws.
    #[wasm_bindgen(js_name = readFields)]
    pub fn read_fields(value: &JsValue) -> Option<Fields>;

    /// A value's own enumerable fields, as three lists of the same length (`Fields` in wire.js).
    pub type Fields;
    #[wasm_bindgen(method, getter)]
    pub fn keys(this: &Fields) -> Array;
    #[wasm_bindgen(method, getter)]
    pub fn kinds(this: &Fields) -> Array;
    #[wasm_bindgen(method, getter)]
    pub fn values(this: &Fields) -> Array;
}

/// What a JS value is, as `kindOf` and `readFields` say. On the wire: `VALUE_KINDS` in wire.js.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Absent = 0,
    Boolean = 1,
    Number = 2,
    String = 3,
    Function = 4,
    Array = 5,
    AbortSignal = 6,
    PlainObject = 7,
    /// Anything else, including a value that throws when looked at.
    Other = 8,
    /// A field whose getter threw.
    Unreadable = 9,
}

impl ValueKind {
    /// The kind a code stands for; an unknown code is [`ValueKind::Other`].
    pub fn of_code(code: u32) -> ValueKind {
        const KINDS: [ValueKind; 10] = [
            ValueKind::Absent,
            ValueKind::Boolean,
            ValueKind::Number,
            ValueKind::String,
            ValueKind::Function,
            ValueKind::Array,
            ValueKind::AbortSignal,
            ValueKind::PlainObject,
            ValueKind::Other,
            ValueKind::Unreadable,
        ];
        KINDS.iter().copied().find(|kind| *kind as u32 == code).unwrap_or(ValueKind::Other)
    }
}
