//! Reading JS arguments into the pure types: the options object into `(key, Value)` entries
//! plus the JS values a call keeps (signal, headers, callbacks), and the URL (or mirror list, or
//! `{s}` template) into absolute http(s) URLs. Nothing here may throw or panic on any input.

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortSignal, RequestInit};

use super::js_values::{kind_of, read_fields};
use crate::format::concat;
use crate::options::{Options, Value};
use crate::redact::{redact_text, redact_url};
use crate::Error;

/// The JS values of an options object that stay JS values.
#[derive(Default, Clone)]
pub struct JsParts {
    pub signal: Option<AbortSignal>,
    pub headers: Option<JsValue>,
    pub on_retry: Option<Function>,
    pub on_event: Option<Function>,
}

/// Nested config (`hosts` → a host → `breaker`) is read this deep; deeper objects are opaque.
const MAX_DEPTH: u32 = 4;

/// An options or config object as entries. `undefined`/`null` is an empty object.
pub fn read_entries(value: &JsValue, what: &str) -> Result<(Vec<(String, Value)>, JsParts), Error> {
    let mut js = JsParts::default();
    match kind_of(value) {
        ABSENT => return Ok((Vec::new(), js)),
        PLAIN_OBJECT => {}
        _ => return Err(Error::invalid_options(what, "must be a plain object")),
    }
    let fields = fields_of(value).ok_or_else(|| Error::invalid_options(what, "could not be read"))?;
    let mut entries = Vec::with_capacity(fields.len());
    for (name, kind, item) in fields {
        if kind == UNREADABLE {
            return Err(Error::invalid_options(&name, "could not be read"));
        }
        let converted = to_value(kind, &item, 1);
        match (name.as_str(), &converted) {
            ("signal", Value::AbortSignal) => js.signal = Some(item.unchecked_into()),
            ("headers", Value::Object | Value::Record(_) | Value::List(_)) => js.headers = Some(item),
            ("onRetry", Value::Function) => js.on_retry = Some(item.unchecked_into()),
            ("onEvent", Value::Function) => js.on_event = Some(item.unchecked_into()),
            _ => {}
        }
        entries.push((name, converted));
    }
    Ok((entries, js))
}

// The codes of `kindOf` and `readFields` in js_objects.js.
const ABSENT: u32 = 0;
const BOOLEAN: u32 = 1;
const NUMBER: u32 = 2;
const STRING: u32 = 3;
const FUNCTION: u32 = 4;
const ARRAY: u32 = 5;
const ABORT_SIGNAL: u32 = 6;
const PLAIN_OBJECT: u32 = 7;
/// A field whose getter threw.
const UNREADABLE: u32 = 9;

/// Own enumerable fields with their kinds, read in one call that lets no throwing getter into
/// wasm; `None` when the keys themselves cannot be read.
fn fields_of(value: &JsValue) -> Option<Vec<(String, u32, JsValue)>> {
    let flat = read_fields(value)?;
    let field = |i: u32| {
        let kind = flat.get(i + 1).as_f64().map_or(UNREADABLE, |k| k as u32);
        (flat.get(i).as_string().unwrap_or_default(), kind, flat.get(i + 2))
    };
    Some((0..flat.length() / 3).map(|i| field(3 * i)).collect())
}

fn to_value(kind: u32, item: &JsValue, depth: u32) -> Value {
    match kind {
        ABSENT => Value::Absent,
        BOOLEAN => Value::Bool(item.as_bool().unwrap_or(false)),
        NUMBER => Value::Number(item.as_f64().unwrap_or(f64::NAN)),
        STRING => Value::Text(item.as_string().unwrap_or_default()),
        FUNCTION => Value::Function,
        ABORT_SIGNAL => Value::AbortSignal,
        // Array elements are scalars (status lists, subdomains, header pairs).
        ARRAY => match fields_of(item) {
            Some(fields) => Value::List(
                fields
                    .into_iter()
                    .map(|(_, kind, v)| if kind >= ARRAY { Value::Object } else { to_value(kind, &v, depth) })
                    .collect(),
            ),
            None => Value::Object,
        },
        PLAIN_OBJECT if depth < MAX_DEPTH => match fields_of(item) {
            Some(fields) => Value::Record(
                fields
                    .into_iter()
                    .map(|(k, kind, v)| {
                        let value =
                            if kind == UNREADABLE { Value::Object } else { to_value(kind, &v, depth + 1) };
                        (k, value)
                    })
                    .collect(),
            ),
            None => Value::Object,
        },
        _ => Value::Object,
    }
}

#[wasm_bindgen(module = "/src/web/request.js")]
extern "C" {
    /// The hrefs, one per line, or `[why, text]` (see request.js).
    #[wasm_bindgen(js_name = resolveUrls)]
    fn resolve_urls(url: &JsValue, label_lines: &str) -> JsValue;

    /// `[inputs, init, headers]`, or `[field, message]` (see request.js for the line format).
    #[wasm_bindgen(js_name = buildRequest)]
    fn build_request_js(
        url_lines: &str,
        headers: Option<&JsValue>,
        field_lines: &str,
        user_agent: Option<&str>,
    ) -> Array;
}

/// The fetch input per mirror (a URL, or a `Request` checked once when the call sets fields a
/// platform may refuse: workerd refuses `cache` on old compatibility dates), the init every
/// attempt sends, and its headers as one string (`name:value;` each, empty without headers).
pub fn build_request(
    url_lines: &str,
    options: &Options,
    headers: Option<&JsValue>,
) -> Result<(Array, RequestInit, String), Error> {
    // One string per kind instead of one argument per field: each argument costs the module
    // its own conversion code. `accept` has no line breaks (options.rs refuses them).
    let mut fields = String::new();
    for field in
        [options.accept.as_deref(), options.credentials, options.mode, options.cache, options.referrer_policy]
    {
        if let Some(value) = field {
            fields.push('=');
            fields.push_str(value);
        }
        fields.push('\n');
    }
    let built = build_request_js(url_lines, headers, &fields, super::default_user_agent());
    let first = built.get(0);
    match first.as_string() {
        Some(field) => {
            let message = built.get(1).as_string().unwrap_or_default();
            let message = if matches!(field.as_str(), "headers" | "accept") {
                message
            } else {
                concat(&["the platform refused the request: ", &redact_text(&message)])
            };
            Err(Error::invalid_options(&field, message))
        }
        None => Ok((
            first.unchecked_into(),
            built.get(1).unchecked_into(),
            built.get(2).as_string().unwrap_or_default(),
        )),
    }
}

/// The mirrors of a call: a URL, an array of URLs, or a template with `{s}` expanded over
/// `subdomains` (default a, b, c), each resolved to an absolute http(s) URL in the parser's form
/// (one spelling per host: `H:443` and `h` are one host to the per-host state). Resolved in JS,
/// against the page's or worker's location when there is one; refusals are worded here. The
/// URLs come one per line, the form the flight key and `buildRequest` take them in (a URL from
/// the URL parser has no line breaks).
pub fn read_urls(url: &JsValue, subdomains: Option<&str>) -> Result<String, Error> {
    // Leaflet's default.
    let resolved = resolve_urls(url, subdomains.unwrap_or("a\nb\nc"));
    if let Some(lines) = resolved.as_string() {
        return Ok(lines);
    }
    let refused: Array = resolved.unchecked_into();
    let text = refused.get(1).as_string().unwrap_or_default();
    let why = match refused.get(0).as_f64() {
        Some(5.0) => return Err(Error::invalid_options("url", "must be a string or an array of strings")),
        Some(6.0) => {
            return Err(Error::invalid_options(
                "url",
                "must be a URL string or an array of 1 to 16 URL strings",
            ))
        }
        Some(2.0) => " is not a valid absolute URL (relative URLs need a page or worker location)",
        Some(3.0) => " is not an http(s) URL",
        Some(4.0) => " has credentials in it, which fetch refuses: send them in `headers`",
        _ => " is not a valid absolute URL",
    };
    let redacted = redact_url(&text);
    Err(Error::invalid_options("url", concat(&["\"", crate::text::first_chars(&redacted, 200), "\"", why])))
}
