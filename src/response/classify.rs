//! What one HTTP response means for a tile: deliver it, retry, or give up.

use crate::options::Options;
use crate::response::byte_range::{check_partial, within_whole, PartialFault};
use crate::response::fields::ReadFields;
use crate::response::ogc_exception::{read_report, OgcException};
use crate::text::format::concat;
use crate::text::{before_any, contains, decimal_value, find_bytes, pieces};
use crate::timing::retry_after::parse_retry_after;
use crate::Error;

/// How many leading body bytes classification looks at (copied out of the JS heap).
pub const HEAD_BYTES: usize = 2048;
/// How many trailing body bytes classification looks at.
pub const TAIL_BYTES: usize = 12;

/// The parts of a response that decide its fate. Header values are as received.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResponseFacts {
    /// The HTTP status (0 for an opaque `no-cors` response).
    pub status: u16,
    /// Its fields, as read. Classification reads neither `Cache-Control` nor `Expires`: the
    /// transport moves them to the body, which the recent tiles keep (`src/response/freshness.rs`).
    /// `Content-Range` is read only for a call with `range`; `Retry-After` and `Date` (the
    /// reference for an HTTP-date Retry-After) matter on 429 and 503 only; an encoded body
    /// (`Content-Encoding`) is not held to `Content-Length`.
    pub fields: ReadFields,
    /// The length of the whole body, in bytes.
    pub body_len: usize,
    /// The first [`HEAD_BYTES`] bytes of the body (fewer if it is shorter).
    pub head: Vec<u8>,
    /// The last [`TAIL_BYTES`] bytes of the body (fewer if it is shorter).
    pub tail: Vec<u8>,
    /// The answer to a request sent before its attempt (the browser entry sends a call's first
    /// request before the module is ready: `sendEarly` in src/web/transport.js). When it
    /// arrived is not known, so it says nothing of how long the host takes to answer.
    pub sent_early: bool,
}

/// What one response means for the call: deliver it, retry, or give up.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A tile; `empty` when the status is one of `emptyOn`.
    Deliver {
        /// Whether the status says "no tile here" (one of `emptyOn`).
        empty: bool,
    },
    /// A transient failure; `retry_after_ms` is the server's wait (429/503 only), unclamped.
    Retry {
        /// What was wrong with this response.
        error: Error,
        /// How long the server asked to wait, in ms from now (its `Retry-After`).
        retry_after_ms: Option<f64>,
    },
    /// A permanent failure: give up now.
    Reject(Error),
}

/// Whether a delivered response is older than `maxAgeS` says it may be (its `Age` header).
pub fn is_stale(facts: &ResponseFacts, options: &Options) -> bool {
    let Some(max_age) = options.max_age_s else { return false };
    let age = facts.fields.age.as_deref().and_then(|a| decimal_value(a.trim_ascii()));
    age.is_some_and(|age| age as f64 > max_age)
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
const PNG_IEND: &[u8] = b"\0\0\0\0IEND\xaeB`\x82";

/// Classifies a response. `client_now_ms` is the wall clock (epoch ms) for HTTP-date waits.
pub fn classify(facts: &ResponseFacts, options: &Options, client_now_ms: f64) -> Verdict {
    let status = facts.status;
    // A byte range is never "no tile here": a missing archive is an error, not an empty range.
    if options.range.is_none() && options.empty_on.contains(status) {
        return Verdict::Deliver { empty: true };
    }
    if status == 0 {
        return Verdict::Reject(invalid(status, "opaque response: a `no-cors` request cannot read the tile"));
    }
    // The bytes asked for, proved by their place in the resource: a range is no image, and its
    // content (a directory, compressed data, a tile's middle) is not judged as one.
    if let (Some(range), 206) = (&options.range, status) {
        let checked = short_of_content_length(facts).map_or_else(
            || check_partial(range, facts.fields.content_range.as_deref(), facts.body_len as u64),
            |reason| Err(PartialFault::Short(reason)),
        );
        return match checked {
            Ok(()) => Verdict::Deliver { empty: false },
            Err(PartialFault::Short(reason)) => retry(invalid(status, reason)),
            Err(PartialFault::Wrong(reason)) => Verdict::Reject(invalid(status, reason)),
        };
    }
    let media_type = facts.fields.content_type.as_deref().map(media_type);
    let body = trim_start(&facts.head);
    // Only markup is searched for exception reports: a binary tile never starts with `<`, and
    // scanning every PNG's first 2 KB for XML markers was most of classification's cost.
    let markup = body.first() == Some(&b'<')
        || media_type.as_deref().is_some_and(|m| is_xml_media(m) || m.starts_with("text/"));
    let document = if markup { xml_document(media_type.as_deref(), body) } else { None };
    // An exception report is read whatever the status: servers send them with 200 (WMS's
    // default), 400/404 (WMTS) and 500 (MapProxy's WMS), and a code that says the request is
    // wrong is wrong on every retry, even on a `retryOn` status.
    let (exception, other_xml) = match document {
        Some(Document::Report(exception)) if exception.is_permanent() => {
            return Verdict::Reject(Error::ServiceException { status, exception });
        }
        Some(Document::Report(exception)) => (Some(exception), false),
        Some(Document::Other) => (None, true),
        None => (None, false),
    };
    if options.retry_on.contains(status) {
        let retry_after_ms = if status == 429 || status == 503 {
            let server_now = facts.fields.date.as_deref().and_then(crate::timing::http_date::parse_http_date);
            facts.fields.retry_after.as_deref().and_then(|v| parse_retry_after(v, server_now, client_now_ms))
        } else {
            None
        };
        return Verdict::Retry { error: Error::Http { status, exception }, retry_after_ms };
    }
    if !(200..300).contains(&status) {
        return Verdict::Reject(Error::Http { status, exception });
    }
    if let Some(exception) = exception {
        return retry(Error::ServiceException { status, exception });
    }
    if other_xml {
        return retry(invalid(status, "an XML document"));
    }
    if media_type.as_deref().is_some_and(|m| m == "text/html" || m == "application/xhtml+xml")
        || starts_with_ignore_case(body, b"<!doctype html")
        || starts_with_ignore_case(body, b"<html")
    {
        return retry(invalid(status, "an HTML page (a server or proxy error page)"));
    }
    if let Some(reason) = truncation(facts) {
        return retry(invalid(status, reason));
    }
    // A whole resource sent for a range is the archive, whatever `accept` says of tiles.
    let accept = options.accept.as_deref().filter(|_| options.range.is_none());
    if let (Some(accept), Some(media)) = (accept, media_type.as_deref()) {
        if !accepts(accept, media) {
            return retry(invalid(
                status,
                &concat(&["content type ", media, " does not match accept ", accept]),
            ));
        }
    }
    // A server that ignores `Range` sends the whole resource: the range is cut out of it, when
    // it reaches that far.
    if options.range.is_some_and(|range| within_whole(&range, facts.body_len as u64).is_none()) {
        return Verdict::Reject(invalid(status, "the whole resource sent ends before the range asked for"));
    }
    Verdict::Deliver { empty: false }
}

fn retry(error: Error) -> Verdict {
    Verdict::Retry { error, retry_after_ms: None }
}

fn invalid(status: u16, reason: &str) -> Error {
    Error::InvalidResponse { status, reason: reason.to_string() }
}

/// `Image/PNG; charset=x` → `image/png`.
fn media_type(content_type: &str) -> String {
    before_any(content_type, b";").trim_ascii().to_ascii_lowercase()
}

fn is_xml_media(media: &str) -> bool {
    media != "image/svg+xml"
        && (media.ends_with("/xml") || media.ends_with("+xml") || contains(media, "se_xml"))
}

/// An XML document where a tile should be.
enum Document {
    Report(OgcException),
    Other,
}

/// The XML document `body` is, if it is one (an SVG tile is an image, not a document).
fn xml_document(media: Option<&str>, body: &[u8]) -> Option<Document> {
    let report = read_report(body);
    if report.is_none() {
        let svg = media == Some("image/svg+xml") || (media.is_none() && find_bytes(body, b"<svg").is_some());
        if svg || !(media.is_some_and(is_xml_media) || body.starts_with(b"<?xml")) {
            return None;
        }
    }
    Some(report.map_or(Document::Other, Document::Report))
}

/// Why the body is shorter than the tile it claims to be, if it is.
fn truncation(facts: &ResponseFacts) -> Option<&'static str> {
    let head = &facts.head;
    if head.starts_with(PNG_SIGNATURE) {
        // A PNG always ends with its IEND chunk: when it is there, the image is whole, whatever
        // Content-Length says (a browser may hide Content-Encoding from cross-origin code).
        return (!facts.tail.ends_with(PNG_IEND)).then_some("truncated PNG (no IEND chunk)");
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        let declared = u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]])) + 8;
        return ((facts.body_len as u64) < declared).then_some("truncated WebP (shorter than its RIFF size)");
    }
    short_of_content_length(facts)
}

/// Whether the body is shorter than its `Content-Length` (which an encoded body is not held to).
fn short_of_content_length(facts: &ResponseFacts) -> Option<&'static str> {
    let encoded = facts
        .fields
        .content_encoding
        .as_deref()
        .is_some_and(|e| !e.trim_ascii().is_empty() && !e.eq_ignore_ascii_case("identity"));
    let declared = facts.fields.content_length.as_deref().and_then(|v| decimal_value(v.trim_ascii()));
    match declared {
        Some(length) if !encoded && (facts.body_len as u64) < length => {
            Some("truncated body (fewer bytes than Content-Length)")
        }
        _ => None,
    }
}

/// Whether `media` matches one of the media ranges of an Accept value.
fn accepts(accept: &str, media: &str) -> bool {
    let kind = before_any(media, b"/");
    pieces(accept, b',').map(media_type).any(|range| {
        range == "*/*" || range == media || range.strip_suffix("/*").is_some_and(|prefix| prefix == kind)
    })
}

fn trim_start(body: &[u8]) -> &[u8] {
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    let start = body.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(body.len());
    &body[start..]
}

fn starts_with_ignore_case(body: &[u8], prefix: &[u8]) -> bool {
    body.len() >= prefix.len() && body[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Value;

    fn png(len_ok: bool) -> (Vec<u8>, Vec<u8>, usize) {
        let mut body = PNG_SIGNATURE.to_vec();
        body.extend_from_slice(&[0; 40]);
        if len_ok {
            body.extend_from_slice(PNG_IEND);
        }
        let tail = body[body.len().saturating_sub(TAIL_BYTES)..].to_vec();
        (body.clone(), tail, body.len())
    }

    fn response(status: u16, content_type: Option<&str>, body: &[u8]) -> ResponseFacts {
        ResponseFacts {
            status,
            fields: ReadFields { content_type: content_type.map(str::to_string), ..ReadFields::default() },
            body_len: body.len(),
            head: body[..body.len().min(HEAD_BYTES)].to_vec(),
            tail: body[body.len().saturating_sub(TAIL_BYTES)..].to_vec(),
            ..ResponseFacts::default()
        }
    }

    fn defaults() -> Options {
        Options::parse(&[]).unwrap()
    }

    fn kind(v: &Verdict) -> (&'static str, &'static str) {
        match v {
            Verdict::Deliver { empty: false } => ("deliver", ""),
            Verdict::Deliver { empty: true } => ("empty", ""),
            Verdict::Retry { error, .. } => ("retry", error.kind()),
            Verdict::Reject(error) => ("reject", error.kind()),
        }
    }

    #[test]
    fn status_table() {
        let o = defaults();
        let (body, _, _) = png(true);
        let table: &[(u16, (&str, &str))] = &[
            (200, ("deliver", "")),
            (203, ("deliver", "")),
            (204, ("empty", "")),
            (408, ("retry", "http")),
            (425, ("retry", "http")),
            (429, ("retry", "http")),
            (500, ("retry", "http")),
            (502, ("retry", "http")),
            (503, ("retry", "http")),
            (504, ("retry", "http")),
            (400, ("reject", "http")),
            (401, ("reject", "http")),
            (403, ("reject", "http")),
            (404, ("reject", "http")),
            (410, ("reject", "http")),
            (501, ("reject", "http")),
            (304, ("reject", "http")),
            (0, ("reject", "invalid-response")),
        ];
        for (status, expected) in table {
            let verdict = classify(&response(*status, Some("image/png"), &body), &o, 0.0);
            assert_eq!(kind(&verdict), *expected, "status {status}");
        }
    }

    #[test]
    fn retry_on_and_empty_on_override_the_table() {
        let o = Options::parse(&[
            ("retryOn", Value::List(vec![Value::Number(404.0)])),
            ("emptyOn", Value::List(vec![Value::Number(404.0), Value::Number(410.0)])),
        ])
        .unwrap();
        assert_eq!(kind(&classify(&response(404, None, b""), &o, 0.0)), ("empty", ""));
        assert_eq!(kind(&classify(&response(503, None, b""), &o, 0.0)), ("reject", "http"));
        let o = Options::parse(&[("retryOn", Value::List(vec![Value::Number(404.0)]))]).unwrap();
        assert_eq!(kind(&classify(&response(404, None, b""), &o, 0.0)), ("retry", "http"));
    }

    #[test]
    fn retry_after_is_read_on_429_and_503_only() {
        let o = defaults();
        let mut r = response(429, None, b"");
        r.fields.retry_after = Some("2".into());
        assert_eq!(
            classify(&r, &o, 0.0),
            Verdict::Retry { error: Error::http(429), retry_after_ms: Some(2000.0) }
        );
        r.status = 503;
        r.fields.retry_after = Some("Sun, 06 Nov 1994 08:49:47 GMT".into());
        r.fields.date = Some("Sun, 06 Nov 1994 08:49:37 GMT".into());
        assert_eq!(
            classify(&r, &o, 1e15),
            Verdict::Retry { error: Error::http(503), retry_after_ms: Some(10_000.0) }
        );
        r.status = 502;
        assert_eq!(classify(&r, &o, 0.0), Verdict::Retry { error: Error::http(502), retry_after_ms: None });
        r.status = 429;
        r.fields.retry_after = Some("-5".into());
        assert_eq!(classify(&r, &o, 0.0), Verdict::Retry { error: Error::http(429), retry_after_ms: None });
    }

    const SE_REPORT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<ServiceExceptionReport version="1.3.0" xmlns="http://www.opengis.net/ogc">
  <ServiceException code="CODE">Something</ServiceException>
</ServiceExceptionReport>"#;
    const OWS_REPORT: &str = r#"<ows:ExceptionReport xmlns:ows="http://www.opengis.net/ows/1.1" version="1.1.0">
  <ows:Exception exceptionCode="CODE" locator="TileMatrix"><ows:ExceptionText>no</ows:ExceptionText></ows:Exception>
</ows:ExceptionReport>"#;

    #[test]
    fn ogc_exceptions_are_failures_and_request_errors_are_permanent_on_any_status() {
        let o = defaults();
        for template in [SE_REPORT, OWS_REPORT] {
            for content_type in [
                Some("application/vnd.ogc.se_xml"),
                Some("text/xml; charset=UTF-8"),
                Some("application/xml"),
                Some("image/png"),
                None,
            ] {
                for code in crate::response::ogc_exception::PERMANENT_CODES {
                    for status in [200, 400, 404, 429, 500, 503] {
                        let body = template.replace("CODE", code);
                        let verdict = classify(&response(status, content_type, body.as_bytes()), &o, 0.0);
                        let Verdict::Reject(Error::ServiceException { status: s, exception }) = verdict
                        else {
                            panic!("{code} {status} {content_type:?}: {verdict:?}");
                        };
                        assert_eq!((s, exception.code.as_deref()), (status, Some(code)));
                        assert!(exception.text.is_some());
                    }
                }
                // No request error: the status decides, and the error keeps what the server said.
                let body = template.replace("CODE", "NoApplicableCode");
                for (status, expected) in [
                    (200, ("retry", "service-exception")),
                    (500, ("retry", "http")),
                    (503, ("retry", "http")),
                    (404, ("reject", "http")),
                    (400, ("reject", "http")),
                ] {
                    let verdict = classify(&response(status, content_type, body.as_bytes()), &o, 0.0);
                    assert_eq!(kind(&verdict), expected, "{status} {content_type:?}");
                    let (Verdict::Retry { error, .. } | Verdict::Reject(error)) = verdict else {
                        unreachable!()
                    };
                    assert_eq!(error.exception().and_then(|e| e.code.as_deref()), Some("NoApplicableCode"));
                }
            }
        }
    }

    #[test]
    fn empty_on_still_wins_over_an_exception_report() {
        // `emptyOn: [404]` says what a 404 means on this server, whatever its body.
        let o = Options::parse(&[("emptyOn", Value::List(vec![Value::Number(404.0)]))]).unwrap();
        let body = OWS_REPORT.replace("CODE", "TileOutOfRange");
        assert_eq!(
            kind(&classify(&response(404, Some("text/xml"), body.as_bytes()), &o, 0.0)),
            ("empty", "")
        );
    }

    #[test]
    fn xml_without_a_report_and_reports_without_a_code_are_retried() {
        let o = defaults();
        let v = classify(&response(200, Some("application/xml"), b"<?xml version='1.0'?><x/>"), &o, 0.0);
        assert_eq!(kind(&v), ("retry", "invalid-response"));
        let v = classify(&response(200, None, b"\xef\xbb\xbf  <ServiceExceptionReport><ServiceException>down</ServiceException></ServiceExceptionReport>"), &o, 0.0);
        let exception = OgcException { code: None, text: Some("down".into()) };
        assert_eq!(
            v,
            Verdict::Retry {
                error: Error::ServiceException { status: 200, exception },
                retry_after_ms: None
            }
        );
        // An XML document on an error status is that status's failure.
        let v = classify(&response(503, Some("application/xml"), b"<?xml version='1.0'?><x/>"), &o, 0.0);
        assert_eq!(v, Verdict::Retry { error: Error::http(503), retry_after_ms: None });
    }

    #[test]
    fn svg_tiles_are_not_mistaken_for_exceptions() {
        let o = defaults();
        let svg = b"<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>";
        assert_eq!(kind(&classify(&response(200, Some("image/svg+xml"), svg), &o, 0.0)), ("deliver", ""));
    }

    #[test]
    fn html_pages_are_never_tiles() {
        let o = defaults();
        for (ct, body) in [
            (Some("text/html; charset=utf-8"), &b"whatever"[..]),
            (Some("application/xhtml+xml"), b"<x/>"),
            (None, b"\n <!DOCTYPE html><html><body>502</body></html>"),
            (Some("image/png"), b"<HTML><BODY>Access denied</BODY></HTML>"),
        ] {
            assert_eq!(
                kind(&classify(&response(200, ct, body), &o, 0.0)),
                ("retry", "invalid-response"),
                "{ct:?}"
            );
        }
    }

    #[test]
    fn truncated_bodies_are_retried() {
        let o = defaults();
        let (whole, _, _) = png(true);
        let (cut, _, _) = png(false);
        assert_eq!(kind(&classify(&response(200, Some("image/png"), &whole), &o, 0.0)), ("deliver", ""));
        assert_eq!(
            kind(&classify(&response(200, Some("image/png"), &cut), &o, 0.0)),
            ("retry", "invalid-response")
        );

        let mut r = response(200, Some("application/x-protobuf"), &[1u8; 100]);
        r.fields.content_length = Some("150".into());
        assert_eq!(kind(&classify(&r, &o, 0.0)), ("retry", "invalid-response"));
        r.fields.content_encoding = Some("gzip".into());
        assert_eq!(
            kind(&classify(&r, &o, 0.0)),
            ("deliver", ""),
            "decoded length differs from Content-Length"
        );
        r.fields.content_encoding = None;
        r.fields.content_length = Some("100".into());
        assert_eq!(kind(&classify(&r, &o, 0.0)), ("deliver", ""));
        r.fields.content_length = Some("garbage".into());
        assert_eq!(kind(&classify(&r, &o, 0.0)), ("deliver", ""));

        let mut whole_png = response(200, Some("image/png"), &whole);
        whole_png.fields.content_length = Some("999999".into());
        assert_eq!(kind(&classify(&whole_png, &o, 0.0)), ("deliver", ""), "a PNG with its IEND is whole");

        let mut webp = b"RIFF\x64\0\0\0WEBPVP8 ".to_vec();
        webp.resize(108, 0);
        assert_eq!(kind(&classify(&response(200, Some("image/webp"), &webp), &o, 0.0)), ("deliver", ""));
        let mut huge = webp.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            kind(&classify(&response(200, Some("image/webp"), &huge), &o, 0.0)),
            ("retry", "invalid-response")
        );
        assert_eq!(
            kind(&classify(&response(200, Some("image/webp"), &webp[..60]), &o, 0.0)),
            ("retry", "invalid-response")
        );
    }

    #[test]
    fn staleness_is_judged_by_the_age_header_only_when_asked() {
        let mut r = response(200, Some("image/png"), b"x");
        r.fields.age = Some("7200".into());
        assert!(!is_stale(&r, &defaults()));
        let o = Options::parse(&[("maxAgeS", Value::Number(3600.0))]).unwrap();
        assert!(is_stale(&r, &o));
        r.fields.age = Some("3600".into());
        assert!(!is_stale(&r, &o));
        r.fields.age = Some("soon".into());
        assert!(!is_stale(&r, &o));
        r.fields.age = None;
        assert!(!is_stale(&r, &o));
    }

    #[test]
    fn accept_mismatches_are_retried() {
        let o = Options::parse(&[("accept", Value::Text("image/*".into()))]).unwrap();
        assert_eq!(
            kind(&classify(&response(200, Some("application/json"), b"{}"), &o, 0.0)),
            ("retry", "invalid-response")
        );
        assert_eq!(
            kind(&classify(&response(200, Some("image/jpeg"), b"\xff\xd8"), &o, 0.0)),
            ("deliver", "")
        );
        assert_eq!(kind(&classify(&response(200, None, b"\xff\xd8"), &o, 0.0)), ("deliver", ""));
        let o = Options::parse(&[(
            "accept",
            Value::Text("application/vnd.mapbox-vector-tile, application/x-protobuf;q=0.9".into()),
        )])
        .unwrap();
        assert_eq!(
            kind(&classify(&response(200, Some("application/x-protobuf"), b"\x1a"), &o, 0.0)),
            ("deliver", "")
        );
        assert_eq!(
            kind(&classify(&response(200, Some("image/png"), b"x"), &o, 0.0)),
            ("retry", "invalid-response")
        );
        let o = Options::parse(&[("accept", Value::Text("*/*".into()))]).unwrap();
        assert_eq!(kind(&classify(&response(200, Some("text/plain"), b"x"), &o, 0.0)), ("deliver", ""));
    }

    fn ranged(offset: f64, length: f64) -> Options {
        let range = vec![("offset".into(), Value::Number(offset)), ("length".into(), Value::Number(length))];
        Options::parse(&[("range", Value::Record(range))]).unwrap()
    }

    fn partial(content_range: Option<&str>, body: &[u8]) -> ResponseFacts {
        let mut facts = response(206, Some("application/octet-stream"), body);
        facts.fields.content_range = content_range.map(str::to_string);
        facts
    }

    #[test]
    fn a_range_is_judged_by_its_place_in_the_resource_not_as_an_image() {
        let o = ranged(100.0, 6.0);
        // Archive bytes that would fail a tile's checks: markup, a PNG without its end.
        for body in [&b"<html>"[..], b"\x89PNG\r\n"] {
            let v = classify(&partial(Some("bytes 100-105/1000"), body), &o, 0.0);
            assert_eq!(kind(&v), ("deliver", ""), "{body:?}");
            assert_eq!(kind(&classify(&partial(None, body), &o, 0.0)), ("deliver", ""));
        }
        let cut = classify(&partial(Some("bytes 100-105/1000"), b"abc"), &o, 0.0);
        assert_eq!(kind(&cut), ("retry", "invalid-response"));
        // Another range is the server's answer to this one every time: not retried.
        let other = classify(&partial(Some("bytes 0-5/1000"), b"abcdef"), &o, 0.0);
        assert_eq!(kind(&other), ("reject", "invalid-response"));
        // Hidden Content-Range (a page, a server that does not expose it): Content-Length still counts.
        let mut short = partial(None, b"abc");
        short.fields.content_length = Some("6".into());
        assert_eq!(kind(&classify(&short, &o, 0.0)), ("retry", "invalid-response"));
        // Without `range`, the same 206 is judged as a tile.
        assert_eq!(
            kind(&classify(&partial(None, b"<html>"), &defaults(), 0.0)),
            ("retry", "invalid-response")
        );
    }

    #[test]
    fn a_whole_answer_to_a_range_is_still_checked_and_must_reach_the_range() {
        let o = ranged(4.0, 2.0);
        assert_eq!(kind(&classify(&response(200, None, b"PMTiles-whole"), &o, 0.0)), ("deliver", ""));
        assert_eq!(kind(&classify(&response(200, None, b"PMTi"), &o, 0.0)), ("reject", "invalid-response"));
        let page = response(200, Some("text/html"), b"<!doctype html><p>Bad gateway</p>");
        assert_eq!(kind(&classify(&page, &o, 0.0)), ("retry", "invalid-response"));
        assert_eq!(kind(&classify(&response(416, None, b""), &o, 0.0)), ("reject", "http"));
        assert_eq!(kind(&classify(&response(503, None, b""), &o, 0.0)), ("retry", "http"));
        assert_eq!(
            kind(&classify(&response(403, Some("application/xml"), b"<Error/>"), &o, 0.0)),
            ("reject", "http")
        );
        // Neither a client-wide `emptyOn` nor `accept` speaks for byte ranges.
        let range =
            Value::Record(vec![("offset".into(), Value::Number(4.0)), ("length".into(), Value::Number(2.0))]);
        let tile_rules = Options::parse(&[
            ("emptyOn", Value::List(vec![Value::Number(404.0)])),
            ("accept", Value::Text("image/*".into())),
            ("range", range),
        ])
        .unwrap();
        assert_eq!(kind(&classify(&response(404, None, b""), &tile_rules, 0.0)), ("reject", "http"));
        let whole = response(200, Some("application/octet-stream"), b"PMTiles-whole");
        assert_eq!(kind(&classify(&whole, &tile_rules, 0.0)), ("deliver", ""));
    }
}
