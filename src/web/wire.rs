//! Bindings to `wire.js`: the values that cross between the module and JavaScript, each by name
//! on both sides. What JS receives (Tile, TileError, the onRetry info, stats, events) is built in
//! one call each from named parameters; caller values are read back as named objects. The other
//! snippets (request.js, transport.js, task.js) follow the same rule, and tests/wire.rs checks
//! every declaration here and there against its JS, name by name.

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/wire.js")]
extern "C" {
    /// The fields every `TileError` has; the others are set by name ([`Named`]).
    #[wasm_bindgen(js_name = makeTileError)]
    pub fn make_tile_error(
        message: &str,
        kind: &str,
        attempts: u32,
        elapsed_ms: f64,
        url: &str,
        cause: &JsValue,
    ) -> JsValue;

    #[wasm_bindgen(js_name = setNumber)]
    fn set_number(object: &JsValue, name: &str, value: Option<f64>);

    #[wasm_bindgen(js_name = setText)]
    fn set_text(object: &JsValue, name: &str, value: Option<&str>);

    #[wasm_bindgen(js_name = setFlag)]
    fn set_flag(object: &JsValue, name: &str, value: bool);

    #[wasm_bindgen(js_name = addObject)]
    fn add_object(object: &JsValue, name: &str) -> JsValue;

    /// What a tile is made from besides its bytes: a `status` and `headers`. A `Response` is one;
    /// a kept tile holds one of its own ([`tile_head`]), not the whole response.
    #[derive(Clone)]
    pub type TileHead;

    /// The status and headers of `head` (a response), without the rest of it (its body's
    /// stream and state): what a tile kept for later calls holds, so that the store does not
    /// keep every response's whole object graph alive for the garbage collector to walk.
    #[wasm_bindgen(js_name = tileHead)]
    pub fn tile_head(head: &TileHead) -> TileHead;

    #[wasm_bindgen(js_name = makeTile)]
    pub fn make_tile(
        head: &TileHead,
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

    #[wasm_bindgen(js_name = makePacingEvent)]
    pub fn make_pacing_event(host: &str, per_second: f64, until: f64) -> JsValue;

    #[wasm_bindgen(js_name = makeHedgeEvent)]
    pub fn make_hedge_event(host: &str, attempt: u32, after_ms: f64) -> JsValue;

    #[wasm_bindgen(js_name = makeCorsEvent)]
    pub fn make_cors_event(host: &str) -> JsValue;

    #[wasm_bindgen(js_name = makeGiveUpEvent)]
    pub fn make_give_up_event(host: &str, kind: &str, attempts: u32) -> JsValue;

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

/// A JS object built field by field, each value with its name: a host's stats, a `TileError`'s
/// optional fields. The names are the ones the `.d.ts` promises (tests/js checks
/// the objects against it); a value that is not there is `null`.
pub struct Named(pub JsValue);

impl Named {
    /// A new plain object.
    pub fn new() -> Named {
        Named(Object::new().into())
    }

    /// Sets `name` to `value` (`null` for `None`).
    pub fn number(&self, name: &str, value: impl Into<Option<f64>>) -> &Named {
        set_number(&self.0, name, value.into());
        self
    }

    /// Sets `name` to `value` (`null` for `None`).
    pub fn text(&self, name: &str, value: Option<&str>) -> &Named {
        set_text(&self.0, name, value);
        self
    }

    /// Sets `name` to `value`.
    pub fn flag(&self, name: &str, value: bool) -> &Named {
        set_flag(&self.0, name, value);
        self
    }

    /// A new object as field `name`.
    pub fn object(&self, name: &str) -> Named {
        Named(add_object(&self.0, name))
    }
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
