//! The one error type of the crate. The wasm layer turns it into a JS `TileError` whose `kind`
//! is [`Error::kind`] and whose message is [`Error::message`] (written with [`crate::text::format`]).

use core::fmt;

use crate::response::ogc_exception::OgcException;
use crate::text::format::{concat, decimal_text, number_text};

/// Why a tile could not be delivered (or why one attempt failed, when it is a `cause`).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The server answered with a status that is not retried (or retries ran out on it);
    /// `exception` when its body was an OGC exception report with no request-error code.
    Http {
        /// The response's status.
        status: u16,
        /// The OGC exception report the body was, if it was one.
        exception: Option<OgcException>,
    },
    /// The request or the body read failed below HTTP (DNS, refused, reset, CORS…).
    Network {
        /// What the platform said (the JS error's message).
        message: String,
    },
    /// The server answered a browser's cross-origin request without CORS headers
    /// (`Access-Control-Allow-Origin`), so the browser withheld the tile. Final: the answer is
    /// the same on every attempt.
    Cors,
    /// The body is larger than `maxBytes`: no tile is that large (a misrouted URL, a whole
    /// export, a decompression bomb). Final: the same URL gives the same body.
    TooLarge {
        /// The declared `Content-Length`, or the bytes read when the bound was passed.
        bytes: f64,
        /// The call's `maxBytes`.
        max_bytes: f64,
        /// Whether `bytes` was declared (refused unread) rather than counted.
        declared: bool,
    },
    /// A call with `range` got the whole resource, larger than `maxBytes`: the server does not
    /// serve byte ranges. Final: it answers every range so.
    RangeUnsupported {
        /// The call's `maxBytes`.
        max_bytes: f64,
    },
    /// One attempt took longer than `attemptTimeoutMs` and was aborted.
    Timeout {
        /// The time the attempt was given, in ms: `attemptTimeoutMs`, or less near the deadline.
        after_ms: f64,
    },
    /// The call's `deadlineMs` ran out, or the next wait would have ended past it.
    Deadline {
        /// The call's `deadlineMs`.
        deadline_ms: f64,
    },
    /// The caller's `AbortSignal` fired.
    Aborted,
    /// The server asked to wait (Retry-After) longer than what is left of the deadline, or the
    /// host is paused past it. `status` is the response's, when this call got one.
    RateLimited {
        /// The response's status; `None` when the host's pause stopped the call.
        status: Option<u16>,
        /// The wait asked for, in ms: the server's Retry-After (unclamped) or what is left of the
        /// host's pause.
        retry_after_ms: f64,
    },
    /// The host's circuit breaker is open and will not let a probe through before the deadline.
    CircuitOpen {
        /// How long until the breaker lets a probe through, in ms; `None` when the breaker is
        /// half-open and every probe is out.
        retry_after_ms: Option<f64>,
    },
    /// An OGC exception report (WMS/WMTS/WCS `ServiceException`) where a tile should be: on
    /// any status when its code says the request is wrong, else on a 2xx.
    ServiceException {
        /// The response's status.
        status: u16,
        /// The report: its code and text.
        exception: OgcException,
    },
    /// A 2xx body that cannot be a tile: HTML, truncated, or contradicting `accept`.
    InvalidResponse {
        /// The response's status.
        status: u16,
        /// Why the body cannot be a tile, as the message says it.
        reason: String,
    },
    /// A bad argument: `field` names it (`url`, `options`, or an option's key).
    InvalidOptions {
        /// The argument or option key, with its path when nested (`hosts["h"].breaker.openMs`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl Error {
    /// The JS-visible `kind` string.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Http { .. } => "http",
            Error::Network { .. } => "network",
            Error::Cors => "cors",
            Error::TooLarge { .. } => "too-large",
            Error::RangeUnsupported { .. } => "range-unsupported",
            Error::Timeout { .. } => "timeout",
            Error::Deadline { .. } => "deadline",
            Error::Aborted => "aborted",
            Error::RateLimited { .. } => "rate-limited",
            Error::CircuitOpen { .. } => "circuit-open",
            Error::ServiceException { .. } => "service-exception",
            Error::InvalidResponse { .. } => "invalid-response",
            Error::InvalidOptions { .. } => "invalid-options",
        }
    }

    /// The HTTP status behind the error, when there was a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Http { status, .. }
            | Error::ServiceException { status, .. }
            | Error::InvalidResponse { status, .. } => Some(*status),
            Error::RateLimited { status, .. } => *status,
            _ => None,
        }
    }

    /// The OGC exception report the server sent, when the body was one.
    pub fn exception(&self) -> Option<&OgcException> {
        match self {
            Error::Http { exception, .. } => exception.as_ref(),
            Error::ServiceException { exception, .. } => Some(exception),
            _ => None,
        }
    }

    /// How long the server or the host asked to wait, in ms (`rate-limited`, `circuit-open`).
    pub fn retry_after_ms(&self) -> Option<f64> {
        match self {
            Error::RateLimited { retry_after_ms, .. } => Some(*retry_after_ms),
            Error::CircuitOpen { retry_after_ms } => *retry_after_ms,
            _ => None,
        }
    }

    /// An HTTP error whose body was no exception report.
    pub fn http(status: u16) -> Error {
        Error::Http { status, exception: None }
    }

    /// An [`Error::InvalidOptions`] naming `field`.
    pub fn invalid_options(field: &str, message: impl Into<String>) -> Error {
        Error::InvalidOptions { field: field.to_string(), message: message.into() }
    }
}

impl Error {
    /// The message shown to people. Built by concatenation: `core::fmt` would cost the wasm
    /// module several KB for what a handful of `push_str` calls do.
    pub fn message(&self) -> String {
        let status = |s: &u16| decimal_text(u64::from(*s));
        match self {
            Error::Http { status: s, exception: None } => concat(&["HTTP ", &status(s)]),
            Error::Http { status: s, exception: Some(exception) } => concat(&[
                "HTTP ",
                &status(s),
                ", the server says",
                &code_part(exception),
                &text_part(exception),
            ]),
            Error::Network { message } => concat(&["network error: ", message]),
            Error::Cors => CORS_MESSAGE.into(),
            Error::TooLarge { bytes, max_bytes, declared: true } => concat(&[
                "too large: the server declared ",
                &number_text(*bytes),
                " bytes (Content-Length), more than maxBytes (",
                &number_text(*max_bytes),
                "); not read",
            ]),
            Error::TooLarge { bytes, max_bytes, declared: false } => concat(&[
                "too large: the body passed maxBytes (",
                &number_text(*max_bytes),
                ") at ",
                &number_text(*bytes),
                " bytes; the rest was not read",
            ]),
            Error::RangeUnsupported { max_bytes } => concat(&[
                "range not served: the server ignored Range and sent the whole resource, more than \
                 maxBytes (",
                &number_text(*max_bytes),
                "); it does not serve byte ranges",
            ]),
            Error::Timeout { after_ms } => {
                concat(&["attempt timed out after ", &number_text(*after_ms), " ms"])
            }
            Error::Deadline { deadline_ms } => {
                concat(&["deadline of ", &number_text(*deadline_ms), " ms exceeded"])
            }
            Error::Aborted => "aborted by signal".into(),
            Error::RateLimited { status: Some(s), retry_after_ms } => concat(&[
                "rate limited (HTTP ",
                &status(s),
                "): the server asks to wait ",
                &number_text(*retry_after_ms),
                " ms, more than the deadline leaves",
            ]),
            Error::RateLimited { status: None, retry_after_ms } => concat(&[
                "rate limited: the host is paused for ",
                &number_text(*retry_after_ms),
                " ms more, past the deadline",
            ]),
            Error::CircuitOpen { .. } => {
                "circuit open: the host is failing and no probe can go before the deadline".into()
            }
            Error::ServiceException { status: s, exception } => {
                let code = code_part(exception);
                concat(&["OGC service exception", &code, " (HTTP ", &status(s), ")", &text_part(exception)])
            }
            Error::InvalidResponse { status: s, reason } => {
                concat(&["not a tile (HTTP ", &status(s), "): ", reason])
            }
            Error::InvalidOptions { field, message } => concat(&["invalid `", field, "`: ", message]),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Error {}

/// What a `cors` give-up says: the cause and the three ways out.
pub const CORS_MESSAGE: &str = "the server answered without CORS headers, so the browser withheld the tile. \
Fix: have the server send Access-Control-Allow-Origin, or load through tilefetch's OpenLayers or \
Leaflet adapter (they fall back to an <img>) or through tilefetch/worker (it adds the header)";

/// ` CODE`, when the server sent one.
fn code_part(exception: &OgcException) -> String {
    exception.code.as_deref().map_or(String::new(), |code| concat(&[" ", code]))
}

/// `: text`, when the server sent one.
fn text_part(exception: &OgcException) -> String {
    exception.text.as_deref().map_or(String::new(), |text| concat(&[": ", text]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_the_documented_strings() {
        let all = [
            (Error::http(404), "http"),
            (Error::Network { message: "x".into() }, "network"),
            (Error::Cors, "cors"),
            (Error::TooLarge { bytes: 2.0, max_bytes: 1.0, declared: true }, "too-large"),
            (Error::RangeUnsupported { max_bytes: 1.0 }, "range-unsupported"),
            (Error::Timeout { after_ms: 1.0 }, "timeout"),
            (Error::Deadline { deadline_ms: 1.0 }, "deadline"),
            (Error::Aborted, "aborted"),
            (Error::RateLimited { status: Some(429), retry_after_ms: 5.0 }, "rate-limited"),
            (
                Error::ServiceException { status: 200, exception: OgcException::default() },
                "service-exception",
            ),
            (Error::InvalidResponse { status: 200, reason: "x".into() }, "invalid-response"),
            (Error::invalid_options("deadlineMs", "x"), "invalid-options"),
        ];
        for (error, kind) in all {
            assert_eq!(error.kind(), kind);
            assert!(!error.to_string().is_empty());
        }
    }

    #[test]
    fn messages_name_the_field_and_status() {
        assert_eq!(
            Error::invalid_options("deadlineMs", "must be a finite number").to_string(),
            "invalid `deadlineMs`: must be a finite number"
        );
        assert_eq!(Error::http(404).status(), Some(404));
        let exception =
            OgcException { code: Some("LayerNotDefined".into()), text: Some("no layer x".into()) };
        assert_eq!(
            Error::ServiceException { status: 500, exception: exception.clone() }.to_string(),
            "OGC service exception LayerNotDefined (HTTP 500): no layer x"
        );
        let text_only = OgcException { code: None, text: Some("busy".into()) };
        assert_eq!(
            Error::Http { status: 503, exception: Some(text_only) }.to_string(),
            "HTTP 503, the server says: busy"
        );
        assert_eq!(
            Error::ServiceException { status: 200, exception: OgcException::default() }.to_string(),
            "OGC service exception (HTTP 200)"
        );
        assert_eq!(Error::Aborted.status(), None);
        assert_eq!(Error::RateLimited { status: Some(429), retry_after_ms: 9.0 }.retry_after_ms(), Some(9.0));
    }
}
