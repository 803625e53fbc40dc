//! Reading the JS options object and URL into the pure [`Options`] and the JS values the call
//! keeps (signal, headers, onRetry). Nothing here may throw or panic on any input.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    AbortSignal, Headers, ReferrerPolicy, Request, RequestCache, RequestCredentials, RequestInit,
    RequestMode, Url,
};

use crate::options::{Options, Value};
use crate::redact::redact_url;
use crate::Error;

/// A validated call: its options and the request it sends.
pub struct Call {
    pub options: Options,
    /// What `fetch` is called with: the URL, or a `Request` built once when the call sets fields
    /// a platform may refuse (workerd and `cache`, say): a refusal is then the caller's error,
    /// reported at once, not a network failure retried until the deadline.
    pub input: JsValue,
    pub init: RequestInit,
    pub signal: Option<AbortSignal>,
    pub on_retry: Option<Function>,
}

pub fn read_call(url: &str, options: &JsValue) -> Result<Call, Error> {
    let (options, js) = read_options(options)?;
    let init = RequestInit::new();
    let headers = match &js.headers {
        Some(given) => Headers::new_with_str_sequence_sequence(given)
            .map_err(|_| Error::invalid_options("headers", "is not a valid headers init"))?,
        None => Headers::new()
            .map_err(|_| Error::invalid_options("headers", "Headers is not available"))?,
    };
    if let Some(accept) = &options.accept {
        if !headers.has("accept").unwrap_or(false) {
            headers
                .set("accept", accept)
                .map_err(|_| Error::invalid_options("accept", "is not a valid header value"))?;
        }
    }
    init.set_headers(&headers);
    // Only fields the caller set are sent: workerd rejects some of them outright.
    if let Some(v) = options
        .credentials
        .and_then(|s| RequestCredentials::from_js_value(&JsValue::from_str(s)))
    {
        init.set_credentials(v);
    }
    if let Some(v) = options
        .mode
        .and_then(|s| RequestMode::from_js_value(&JsValue::from_str(s)))
    {
        init.set_mode(v);
    }
    if let Some(v) = options
        .cache
        .and_then(|s| RequestCache::from_js_value(&JsValue::from_str(s)))
    {
        init.set_cache(v);
    }
    if let Some(v) = options
        .referrer_policy
        .and_then(|s| ReferrerPolicy::from_js_value(&JsValue::from_str(s)))
    {
        init.set_referrer_policy(v);
    }
    let refusable = options.credentials.is_some()
        || options.mode.is_some()
        || options.cache.is_some()
        || options.referrer_policy.is_some();
    let input = if refusable {
        Request::new_with_str_and_init(url, &init)
            .map_err(refused)?
            .into()
    } else {
        JsValue::from_str(url)
    };
    Ok(Call {
        options,
        input,
        init,
        signal: js.signal,
        on_retry: js.on_retry,
    })
}

/// Names the field a platform's refusal of the request mentions.
fn refused(refusal: JsValue) -> Error {
    let message = Reflect::get(&refusal, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_default();
    let field = ["cache", "credentials", "mode", "referrerPolicy"]
        .into_iter()
        .find(|name| message.contains(name))
        .unwrap_or("options");
    Error::invalid_options(
        field,
        format!("the platform refused the request: {message}"),
    )
}

#[derive(Default)]
struct JsParts {
    signal: Option<AbortSignal>,
    headers: Option<JsValue>,
    on_retry: Option<Function>,
}

fn read_options(value: &JsValue) -> Result<(Options, JsParts), Error> {
    if value.is_undefined() || value.is_null() {
        return Ok((Options::parse(&[])?, JsParts::default()));
    }
    if !value.is_object() || value.is_function() || Array::is_array(value) {
        return Err(Error::invalid_options("options", "must be an object"));
    }
    let keys = Object::keys(value.unchecked_ref::<Object>());
    let mut entries: Vec<(String, Value)> = Vec::with_capacity(keys.length() as usize);
    let mut js = JsParts::default();
    for key in keys.iter() {
        let name = key.as_string().unwrap_or_default();
        let item = Reflect::get(value, &key)
            .map_err(|_| Error::invalid_options(&name, "could not be read"))?;
        let converted = to_value(&item);
        match (name.as_str(), &converted) {
            ("signal", Value::AbortSignal) => js.signal = Some(item.unchecked_into()),
            ("headers", Value::Object | Value::List(_)) => js.headers = Some(item),
            ("onRetry", Value::Function) => js.on_retry = Some(item.unchecked_into()),
            _ => {}
        }
        entries.push((name, converted));
    }
    let borrowed: Vec<(&str, Value)> = entries
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    Ok((Options::parse(&borrowed)?, js))
}

fn to_value(item: &JsValue) -> Value {
    if item.is_undefined() || item.is_null() {
        Value::Absent
    } else if let Some(b) = item.as_bool() {
        Value::Bool(b)
    } else if let Some(n) = item.as_f64() {
        Value::Number(n)
    } else if let Some(s) = item.as_string() {
        Value::Text(s)
    } else if item.is_function() {
        Value::Function
    } else if Array::is_array(item) {
        let items: Array = item.clone().unchecked_into();
        Value::List(items.iter().map(|i| scalar(&i)).collect())
    } else if item.is_instance_of::<AbortSignal>() {
        Value::AbortSignal
    } else {
        Value::Object
    }
}

/// An array element: only scalars matter (status lists, header pairs).
fn scalar(item: &JsValue) -> Value {
    if Array::is_array(item) {
        Value::Object
    } else {
        to_value(item)
    }
}

/// Resolves `url` to an absolute http(s) URL: against the page or worker location when there is
/// one, else it must already be absolute.
pub fn read_url(url: &JsValue) -> Result<String, Error> {
    let Some(text) = url.as_string() else {
        return Err(Error::invalid_options("url", "must be a string"));
    };
    // The common case, an absolute http(s) URL, needs one parse and no `location` lookup.
    let scheme = text.get(..8).unwrap_or(&text).to_ascii_lowercase();
    if (scheme.starts_with("http://") || scheme.starts_with("https://")) && Url::new(&text).is_ok()
    {
        return Ok(text);
    }
    let base = Reflect::get(&js_sys::global(), &JsValue::from_str("location"))
        .ok()
        .filter(|l| l.is_object())
        .and_then(|l| Reflect::get(&l, &JsValue::from_str("href")).ok())
        .and_then(|h| h.as_string());
    let parsed = match &base {
        Some(base) => Url::new_with_base(&text, base),
        None => Url::new(&text),
    };
    let shown = || {
        let mut s: String = redact_url(&text).chars().take(200).collect();
        s.insert(0, '"');
        s.push('"');
        s
    };
    let parsed = parsed.map_err(|_| {
        let hint = if base.is_none() {
            " (relative URLs need a page or worker location)"
        } else {
            ""
        };
        Error::invalid_options(
            "url",
            format!("{} is not a valid absolute URL{hint}", shown()),
        )
    })?;
    match parsed.protocol().as_str() {
        "http:" | "https:" => Ok(parsed.href()),
        _ => Err(Error::invalid_options(
            "url",
            format!("{} is not an http(s) URL", shown()),
        )),
    }
}
