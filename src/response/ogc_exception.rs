//! OGC exception reports: WMS's `ServiceExceptionReport` and OWS Common's `ExceptionReport`
//! (WMTS, WCS, WFS), read from the first bytes of a body, and which of their codes say that the
//! request itself is wrong.

use crate::redact::redact_text;
use crate::text::{find_bytes, first_chars};

/// Exception codes that say the request itself is wrong, so every retry would get the same
/// answer. From the specifications' code tables, not from any one server:
/// - WMS 1.1.1 (OGC 01-068r3), Annex A.3: `InvalidFormat`, `InvalidSRS`, `LayerNotDefined`,
///   `StyleNotDefined`, `LayerNotQueryable`, `InvalidPoint`, `CurrentUpdateSequence`,
///   `InvalidUpdateSequence`, `MissingDimensionValue`, `InvalidDimensionValue`;
/// - WMS 1.3.0 (OGC 06-042), Table E.1: the same with `InvalidCRS` for `InvalidSRS`, plus
///   `OperationNotSupported`;
/// - OWS Common 1.1 (OGC 06-121r3), Table 25: `OperationNotSupported`, `MissingParameterValue`,
///   `InvalidParameterValue`, `VersionNegotiationFailed`, `InvalidUpdateSequence`,
///   `OptionNotSupported` (its seventh, `NoApplicableCode`, is "no other code applies": it may be
///   a transient server error, so it is not here);
/// - WMTS 1.0.0 (OGC 07-057r7), Table 28: OWS Common's, plus `TileOutOfRange`.
pub const PERMANENT_CODES: [&str; 17] = [
    "InvalidFormat",
    "InvalidSRS",
    "InvalidCRS",
    "LayerNotDefined",
    "StyleNotDefined",
    "LayerNotQueryable",
    "InvalidPoint",
    "CurrentUpdateSequence",
    "InvalidUpdateSequence",
    "MissingDimensionValue",
    "InvalidDimensionValue",
    "OperationNotSupported",
    "MissingParameterValue",
    "InvalidParameterValue",
    "VersionNegotiationFailed",
    "OptionNotSupported",
    "TileOutOfRange",
];

/// The most characters of the server's exception text kept on an error.
pub const MAX_TEXT_CHARS: usize = 200;

/// The first exception of a report: what the server said was wrong.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OgcException {
    /// The `code` (WMS) or `exceptionCode` (OWS) attribute.
    pub code: Option<String>,
    /// The exception's text, entities decoded, whitespace collapsed, URLs redacted, at most
    /// [`MAX_TEXT_CHARS`] characters.
    pub text: Option<String>,
}

impl OgcException {
    /// Whether the code says the request itself is wrong.
    pub fn is_permanent(&self) -> bool {
        self.code.as_deref().is_some_and(is_request_error)
    }
}

/// Whether an exception code is one of [`PERMANENT_CODES`].
pub fn is_request_error(code: &str) -> bool {
    PERMANENT_CODES.contains(&code)
}

/// The exception report in `body` (leading whitespace already trimmed), if it is one.
pub fn read_report(body: &[u8]) -> Option<OgcException> {
    // `ExceptionReport` also finds WMS's `ServiceExceptionReport`; a 1.1.1 report may also be
    // just `<ServiceException>` elements, so those count on their own.
    let Some(report) =
        find_bytes(body, b"ExceptionReport").or_else(|| find_bytes(body, b"<ServiceException"))
    else {
        return storage_error(body);
    };
    let body = &body[report..];
    Some(OgcException { code: exception_code(body), text: exception_text(body) })
}

/// The error document of object storage's XML API (S3, R2, GCS, Azure Blob: `<Error><Code>…
/// </Code><Message>…</Message></Error>`), where an archive's bytes should be, read as a report:
/// its codes (`NoSuchKey`, `SlowDown`, `AccessDenied`) say nothing the status does not, so none
/// is a request error.
fn storage_error(body: &[u8]) -> Option<OgcException> {
    let body = &body[find_bytes(body, b"<Error>")?..];
    let code = element_content(body, b"<Code").and_then(|rest| {
        let code = rest[..rest.iter().position(|b| *b == b'<')?].trim_ascii();
        let plain = !code.is_empty() && code.iter().all(u8::is_ascii_alphanumeric);
        plain.then(|| code.iter().map(|&b| char::from(b)).collect())
    });
    Some(OgcException { code, text: element_content(body, b"<Message").and_then(element_text) })
}

/// The value of the first `exceptionCode="…"` or `code="…"` attribute.
fn exception_code(body: &[u8]) -> Option<String> {
    for attribute in [&b"exceptionCode=\""[..], b"code=\"", b"exceptionCode='", b"code='"] {
        if let Some(at) = find_bytes(body, attribute) {
            let start = at + attribute.len();
            let quote = attribute[attribute.len() - 1];
            let end = body[start..].iter().position(|b| *b == quote)?;
            let code = body[start..start + end].trim_ascii();
            // Codes are ASCII names (some spaced); anything else is no code this library knows, and
            // reading it as UTF-8 would cost the module std's validator.
            if code.is_empty() || !code.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
                return None;
            }
            return Some(code.iter().map(|&b| char::from(b)).collect());
        }
    }
    None
}

/// The text of the first exception: OWS's `<ExceptionText>` element, or the content of WMS's
/// `<ServiceException>` element.
fn exception_text(body: &[u8]) -> Option<String> {
    element_text(
        element_content(body, b"ExceptionText").or_else(|| element_content(body, b"<ServiceException"))?,
    )
}

/// An element's text, from what follows its start tag: CDATA or up to the next tag, entities
/// decoded, whitespace collapsed, URLs redacted, at most [`MAX_TEXT_CHARS`] characters.
fn element_text(rest: &[u8]) -> Option<String> {
    let content = match rest.trim_ascii_start().strip_prefix(b"<![CDATA[") {
        Some(data) => &data[..find_bytes(data, b"]]>").unwrap_or(data.len())],
        None => &rest[..rest.iter().position(|b| *b == b'<').unwrap_or(rest.len())],
    };
    let text = collapse(&decode_entities(content));
    if text.is_empty() {
        return None;
    }
    // A body cut at its first bytes may end inside a character: keep the valid part.
    let text = match core::str::from_utf8(&text) {
        Ok(text) => text,
        Err(error) => core::str::from_utf8(&text[..error.valid_up_to()]).ok()?,
    };
    let redacted = redact_text(text);
    if first_chars(&redacted, MAX_TEXT_CHARS).len() == redacted.len() {
        return Some(redacted);
    }
    // Cut, with an ellipsis as the last of the characters kept.
    let mut cut = first_chars(&redacted, MAX_TEXT_CHARS - 1).trim_end().to_string();
    cut.push('…');
    Some(cut)
}

/// What follows the start tag of the first element whose name ends in `name`; `None` when there
/// is none or it is empty (`<… />`).
fn element_content<'a>(body: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let mut from = 0;
    loop {
        let after = from + find_bytes(&body[from..], name)? + name.len();
        if body.get(after).is_some_and(u8::is_ascii_alphanumeric) {
            // A longer name: `<ServiceExceptionReport` is not `<ServiceException`.
            from = after;
            continue;
        }
        let open_end = after + body[after..].iter().position(|b| *b == b'>')?;
        return (body[open_end - 1] != b'/').then(|| &body[open_end + 1..]);
    }
}

/// XML's five predefined entities and numeric character references below 128; others are kept
/// as written.
fn decode_entities(text: &[u8]) -> Vec<u8> {
    const NAMED: [(&[u8], u8); 5] =
        [(b"&lt;", b'<'), (b"&gt;", b'>'), (b"&amp;", b'&'), (b"&quot;", b'"'), (b"&apos;", b'\'')];
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    'bytes: while i < text.len() {
        if text[i] == b'&' {
            for (entity, byte) in NAMED {
                if text[i..].starts_with(entity) {
                    out.push(byte);
                    i += entity.len();
                    continue 'bytes;
                }
            }
            if let Some((byte, len)) = numeric_reference(&text[i..]) {
                out.push(byte);
                i += len;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

/// `&#60;` or `&#x3C;` at the start of `text`, when it names an ASCII character.
fn numeric_reference(text: &[u8]) -> Option<(u8, usize)> {
    let (digits_at, radix) = if text.starts_with(b"&#x") || text.starts_with(b"&#X") {
        (3, 16)
    } else if text.starts_with(b"&#") {
        (2, 10)
    } else {
        return None;
    };
    let end = digits_at + text[digits_at..].iter().take(6).position(|b| *b == b';')?;
    let mut value = 0u32;
    for &b in &text[digits_at..end] {
        value = value * radix + char::from(b).to_digit(radix)?;
    }
    (end > digits_at && value < 128).then_some((value as u8, end + 1))
}

/// Runs of ASCII whitespace as one space, none at either end.
fn collapse(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for &b in text {
        if b.is_ascii_whitespace() {
            if out.last().is_some_and(|last| *last != b' ') {
                out.push(b' ');
            }
        } else {
            out.push(b);
        }
    }
    if out.last() == Some(&b' ') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Option<OgcException> {
        read_report(body.as_bytes())
    }

    fn exception(code: Option<&str>, text: Option<&str>) -> Option<OgcException> {
        Some(OgcException { code: code.map(str::to_string), text: text.map(str::to_string) })
    }

    #[test]
    fn object_storage_error_documents_are_read_as_reports_with_no_request_error_code() {
        // S3's and R2's form (GCS and Azure Blob write the same elements).
        let s3 = r#"<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>
<Key>world.pmtiles</Key><RequestId>4442587FB7D0A2F9</RequestId></Error>"#;
        assert_eq!(read(s3), exception(Some("NoSuchKey"), Some("The specified key does not exist.")));
        assert!(!read(s3).unwrap().is_permanent());
        let slow =
            "<Error><Code>SlowDown</Code><Message>Please reduce your\n  request rate.</Message></Error>";
        assert_eq!(read(slow), exception(Some("SlowDown"), Some("Please reduce your request rate.")));
        assert_eq!(read("<Error><Message>denied</Message></Error>"), exception(None, Some("denied")));
        assert_eq!(read("<Errors><Code>x</Code></Errors>"), None);
        assert_eq!(read("<Error><Code>a b</Code></Error>"), exception(None, None));
    }

    #[test]
    fn wms_reports_give_their_first_code_and_text() {
        let wms130 = r#"<?xml version="1.0" encoding="UTF-8"?>
<ServiceExceptionReport version="1.3.0" xmlns="http://www.opengis.net/ogc">
  <ServiceException code="LayerNotDefined">
    msWMSLoadGetMapParams(): WMS server error. Invalid layer(s) given in the LAYERS parameter.
  </ServiceException>
  <ServiceException code="StyleNotDefined">second</ServiceException>
</ServiceExceptionReport>"#;
        assert_eq!(
            read(wms130),
            exception(
                Some("LayerNotDefined"),
                Some("msWMSLoadGetMapParams(): WMS server error. Invalid layer(s) given in the LAYERS parameter.")
            )
        );
        let wms111 = "<ServiceExceptionReport version=\"1.1.1\"><ServiceException code='InvalidSRS'><![CDATA[unsupported srs: <EPSG:9>]]></ServiceException></ServiceExceptionReport>";
        assert_eq!(read(wms111), exception(Some("InvalidSRS"), Some("unsupported srs: <EPSG:9>")));
        assert_eq!(
            read("<ServiceException>no &lt;code&gt; &amp; &#65;&#x42; &unknown;</ServiceException>"),
            exception(None, Some("no <code> & AB &unknown;"))
        );
        assert_eq!(
            read("<ServiceExceptionReport><ServiceException code=\"X\"/></ServiceExceptionReport>"),
            exception(Some("X"), None)
        );
    }

    #[test]
    fn ows_reports_give_their_first_code_and_text() {
        let ows = r#"<ows:ExceptionReport xmlns:ows="http://www.opengis.net/ows/1.1" version="1.1.0">
  <ows:Exception exceptionCode="TileOutOfRange" locator="TileRow">
    <ows:ExceptionText>TileRow is out of range</ows:ExceptionText>
  </ows:Exception>
</ows:ExceptionReport>"#;
        assert_eq!(read(ows), exception(Some("TileOutOfRange"), Some("TileRow is out of range")));
        assert_eq!(
            read("<ExceptionReport><Exception exceptionCode=\"NoApplicableCode\"/></ExceptionReport>"),
            exception(Some("NoApplicableCode"), None)
        );
    }

    #[test]
    fn other_documents_are_not_reports() {
        for body in
            ["<?xml version='1.0'?><WMS_Capabilities/>", "<svg/>", "<html><body>500</body></html>", ""]
        {
            assert_eq!(read(body), None, "{body}");
        }
    }

    #[test]
    fn texts_are_short_redacted_and_valid_utf8() {
        let long =
            format!("<ServiceException code=\"InvalidFormat\">{}</ServiceException>", "é ".repeat(300));
        let text = read(&long).unwrap().text.unwrap();
        assert_eq!(text.chars().count(), MAX_TEXT_CHARS);
        assert!(text.ends_with("é…"));
        let exact = format!("<ServiceException>{}</ServiceException>", "x".repeat(MAX_TEXT_CHARS));
        assert_eq!(
            read(&exact).unwrap().text.unwrap().len(),
            MAX_TEXT_CHARS,
            "200 characters are kept whole"
        );
        let over = format!("<ServiceException>{}</ServiceException>", "x".repeat(MAX_TEXT_CHARS + 1));
        let text = read(&over).unwrap().text.unwrap();
        assert_eq!((text.chars().count(), text.ends_with("x…")), (MAX_TEXT_CHARS, true));
        let secret = "<ServiceException>bad request https://h/wms?LAYERS=x&apikey=S3CRET see ?token=T0K&x=1</ServiceException>";
        let text = read(secret).unwrap().text.unwrap();
        assert!(!text.contains("S3CRET") && !text.contains("T0K"), "{text}");
        // A body cut inside a two-byte character keeps what came before it.
        let mut cut = b"<ServiceException>caf".to_vec();
        cut.push(0xC3);
        assert_eq!(read_report(&cut).unwrap().text.as_deref(), Some("caf"));
    }

    #[test]
    fn the_permanent_codes_are_the_specifications_request_errors() {
        for code in PERMANENT_CODES {
            assert!(exception(Some(code), None).unwrap().is_permanent());
        }
        for code in [None, Some("NoApplicableCode"), Some("layernotdefined"), Some("ServerBusy")] {
            assert!(!OgcException { code: code.map(str::to_string), text: None }.is_permanent(), "{code:?}");
        }
    }
}
