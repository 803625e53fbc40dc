//! Reading JS arguments into the pure types: the options object into `(key, Value)` entries
//! plus the JS values a call keeps (signal, headers, callbacks), and the URL (or mirror list, or
//! `{s}` template) into absolute http(s) URLs. Nothing here may throw or panic on any input.

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use super::wire::{kind_of, read_fields, ValueKind};
use crate::options::{Key, Options, Value};
use crate::redact::{redact_text, redact_url};
use crate::text::format::concat;
use crate::Error;

/// The JS values of an options object that stay JS values.
#[derive(Default, Clone)]
pub struct JsParts {
    pub signal: Option<AbortSignal>,
    pub headers: Option<JsValue>,
    pub on_retry: Option<Function>,
    pub on_event: Option<Function>,
    pub fetch: Option<Function>,
}

/// Nested config (`hosts` → a host → `breaker`) is read this deep; deeper objects are opaque.
const MAX_DEPTH: u32 = 4;

/// An options or config object as entries. `undefined`/`null` is an empty object.
pub fn read_entries(value: &JsValue, what: &str) -> Result<(Vec<(String, Value)>, JsParts), Error> {
    let mut js = JsParts::default();
    match ValueKind::of_code(kind_of(value)) {
        ValueKind::Absent => return Ok((Vec::new(), js)),
        ValueKind::PlainObject => {}
        _ => return Err(Error::invalid_options(what, "must be a plain object")),
    }
    let fields = fields_of(value).ok_or_else(|| Error::invalid_options(what, "could not be read"))?;
    let mut entries = Vec::with_capacity(fields.len());
    for (name, kind, item) in fields {
        if kind == ValueKind::Unreadable {
            return Err(Error::invalid_options(&name, "could not be read"));
        }
        let converted = to_value(kind, &item, 1);
        match (name.as_str(), &converted) {
            ("signal", Value::AbortSignal) => js.signal = Some(item.unchecked_into()),
            ("headers", Value::Object | Value::Record(_) | Value::List(_)) => js.headers = Some(item),
            ("onRetry", Value::Function) => js.on_retry = Some(item.unchecked_into()),
            ("onEvent", Value::Function) => js.on_event = Some(item.unchecked_into()),
            ("fetch", Value::Function) => js.fetch = Some(item.unchecked_into()),
            _ => {}
        }
        entries.push((name, converted));
    }
    Ok((entries, js))
}

/// Own enumerable fields with their kinds, read in one call that lets no throwing getter into
/// wasm; `None` when the keys themselves cannot be read.
fn fields_of(value: &JsValue) -> Option<Vec<(String, ValueKind, JsValue)>> {
    let fields = read_fields(value)?;
    let (keys, kinds, values) = (fields.keys(), fields.kinds(), fields.values());
    let field = |i: u32| {
        let kind = kinds.get(i).as_f64().map_or(ValueKind::Unreadable, |k| ValueKind::of_code(k as u32));
        (keys.get(i).as_string().unwrap_or_default(), kind, values.get(i))
    };
    Some((0..keys.length()).map(field).collect())
}

fn to_value(kind: ValueKind, item: &JsValue, depth: u32) -> Value {
    match kind {
        ValueKind::Absent => Value::Absent,
        ValueKind::Boolean => Value::Bool(item.as_bool().unwrap_or(false)),
        ValueKind::Number => Value::Number(item.as_f64().unwrap_or(f64::NAN)),
        ValueKind::String => Value::Text(item.as_string().unwrap_or_default()),
        ValueKind::Function => Value::Function,
        ValueKind::AbortSignal => Value::AbortSignal,
        // Array elements are scalars (status lists, subdomains, header pairs).
        ValueKind::Array => match fields_of(item) {
            Some(fields) => Value::List(
                fields
                    .into_iter()
                    .map(
                        |(_, kind, v)| {
                            if is_scalar(kind) {
                                to_value(kind, &v, depth)
                            } else {
                                Value::Object
                            }
                        },
                    )
                    .collect(),
            ),
            None => Value::Object,
        },
        ValueKind::PlainObject if depth < MAX_DEPTH => match fields_of(item) {
            Some(fields) => Value::Record(
                fields
                    .into_iter()
                    .map(|(k, kind, v)| {
                        let value = if kind == ValueKind::Unreadable {
                            Value::Object
                        } else {
                            to_value(kind, &v, depth + 1)
                        };
                        (k, value)
                    })
                    .collect(),
            ),
            None => Value::Object,
        },
        _ => Value::Object,
    }
}

/// Kinds an array item keeps; anything else in an array reads as an object.
fn is_scalar(kind: ValueKind) -> bool {
    matches!(
        kind,
        ValueKind::Absent | ValueKind::Boolean | ValueKind::Number | ValueKind::String | ValueKind::Function
    )
}

#[wasm_bindgen(module = "/src/web/request.js")]
extern "C" {
    /// The hrefs, one per line, or a [`UrlRefused`] (see request.js).
    #[wasm_bindgen(js_name = resolveUrls)]
    fn resolve_urls(url: &JsValue, label_lines: &str) -> JsValue;

    /// The refusal of a call's URL (`UrlRefused` in request.js).
    type UrlRefused;
    #[wasm_bindgen(method, getter)]
    fn refusal(this: &UrlRefused) -> u32;
    #[wasm_bindgen(method, getter)]
    fn text(this: &UrlRefused) -> String;

    /// See request.js.
    #[wasm_bindgen(js_name = buildRequest)]
    fn build_request_js(
        url_lines: &str,
        headers: Option<&JsValue>,
        fields: &str,
        custom: Option<&Function>,
        max_bytes: f64,
    ) -> BuiltRequest;

    /// A call's request, or the platform's refusal of a field (`BuiltRequest` in request.js);
    /// `fetchWhole` (transport.js) sends its attempts.
    pub type BuiltRequest;
    #[wasm_bindgen(method, getter)]
    fn headers(this: &BuiltRequest) -> String;
    #[wasm_bindgen(method, getter, js_name = refusedField)]
    fn refused_field(this: &BuiltRequest) -> Option<String>;
    #[wasm_bindgen(method, getter)]
    fn message(this: &BuiltRequest) -> String;
}

/// Why a call's URL was refused. On the wire: `URL_REFUSALS` in request.js.
#[derive(Clone, Copy, PartialEq, Eq)]
enum UrlRefusal {
    Invalid = 1,
    Relative = 2,
    NotHttp = 3,
    Credentials = 4,
    NotStringOrArray = 5,
    BadList = 6,
}

impl UrlRefusal {
    fn of_code(code: u32) -> UrlRefusal {
        const REFUSALS: [UrlRefusal; 6] = [
            UrlRefusal::Invalid,
            UrlRefusal::Relative,
            UrlRefusal::NotHttp,
            UrlRefusal::Credentials,
            UrlRefusal::NotStringOrArray,
            UrlRefusal::BadList,
        ];
        REFUSALS.iter().copied().find(|r| *r as u32 == code).unwrap_or(UrlRefusal::Invalid)
    }
}

/// A call's request: the fetch input per mirror (a URL, or a `Request` checked once when the
/// call sets fields a platform may refuse: workerd refuses `cache` on old compatibility dates),
/// the init every attempt sends, the `fetch` option (`custom`) and `maxBytes`, kept in JS for
/// `fetchWhole`; and its headers as one string (`name:value;` each, empty without headers).
pub fn build_request(
    url_lines: &str,
    options: &Options,
    headers: Option<&JsValue>,
    custom: Option<&Function>,
) -> Result<(BuiltRequest, String), Error> {
    // The fields the call set, each by its option's name ("name=value" per line).
    let mut fields = String::new();
    let range = options.range.map(|range| range.header_value());
    let named = [
        (Key::Range.name(), range.as_deref()),
        (Key::Accept.name(), options.accept.as_deref()),
        ("userAgent", super::default_user_agent()),
        (Key::Cache.name(), options.cache),
        (Key::Credentials.name(), options.credentials),
        (Key::Mode.name(), options.mode),
        (Key::ReferrerPolicy.name(), options.referrer_policy),
    ];
    for (name, value) in named {
        if let Some(value) = value {
            fields.push_str(name);
            fields.push('=');
            fields.push_str(value);
            fields.push('\n');
        }
    }
    let built = build_request_js(url_lines, headers, &fields, custom, options.max_bytes);
    match built.refused_field() {
        Some(field) => {
            let message = built.message();
            let message = if matches!(field.as_str(), "headers" | "accept") {
                message
            } else {
                concat(&["the platform refused the request: ", &redact_text(&message)])
            };
            Err(Error::invalid_options(&field, message))
        }
        None => {
            let sent = built.headers();
            Ok((built, sent))
        }
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
    let resolved = resolve_urls(url, subdomains.unwrap_or(Key::Subdomains.default().labels()));
    if let Some(lines) = resolved.as_string() {
        return Ok(lines);
    }
    let refused: UrlRefused = resolved.unchecked_into();
    let why = match UrlRefusal::of_code(refused.refusal()) {
        UrlRefusal::NotStringOrArray => {
            return Err(Error::invalid_options("url", "must be a string or an array of strings"))
        }
        UrlRefusal::BadList => {
            return Err(Error::invalid_options(
                "url",
                "must be a URL string or an array of 1 to 16 URL strings",
            ))
        }
        UrlRefusal::Relative => " is not a valid absolute URL (relative URLs need a page or worker location)",
        UrlRefusal::NotHttp => " is not an http(s) URL",
        UrlRefusal::Credentials => " has credentials in it, which fetch refuses: send them in `headers`",
        UrlRefusal::Invalid => " is not a valid absolute URL",
    };
    let redacted = redact_url(&refused.text());
    Err(Error::invalid_options("url", concat(&["\"", crate::text::first_chars(&redacted, 200), "\"", why])))
}
