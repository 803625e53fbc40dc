//! Bindings to `js_values.js`: caller-supplied JS values read in one call each, never throwing.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/js_values.js")]
extern "C" {
    /// See `kindOf` in js_values.js for the codes.
    #[wasm_bindgen(js_name = kindOf)]
    pub fn kind_of(value: &JsValue) -> u32;

    /// `[key, kind, value, …]`, or `None` when the keys cannot be read (see js_values.js).
    #[wasm_bindgen(js_name = readFields)]
    pub fn read_fields(value: &JsValue) -> Option<js_sys::Array>;
}
