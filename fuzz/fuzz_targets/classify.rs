//! Classification: any response facts give a verdict, and a tile is only ever a 2xx response
//! whose body is not an error page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tilefetch::options::{Options, Preset};
use tilefetch::response::byte_range::{within_whole, ByteRange};
use tilefetch::response::classify::{classify, ResponseFacts, Verdict, HEAD_BYTES, TAIL_BYTES};
use tilefetch::response::fields::ReadFields;
use tilefetch::response::ogc_exception::MAX_TEXT_CHARS;
use tilefetch_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes::new(data);
    let header = |bytes: &mut Bytes| if bytes.byte().is_multiple_of(3) { None } else { Some(bytes.text()) };
    let status = u16::from_le_bytes([bytes.byte(), bytes.byte()]) % 700;
    let content_type = header(&mut bytes);
    let content_encoding = header(&mut bytes);
    let content_length = header(&mut bytes);
    let retry_after = header(&mut bytes);
    let age = header(&mut bytes);
    let date = header(&mut bytes);
    let rate_limit = header(&mut bytes);
    let content_range = header(&mut bytes);
    let body_len = u32::from_le_bytes([bytes.byte(), bytes.byte(), bytes.byte(), 0]) as usize;
    let head = bytes.take(HEAD_BYTES.min(body_len)).to_vec();
    let tail = bytes.take(TAIL_BYTES.min(body_len)).to_vec();
    let facts = ResponseFacts {
        status,
        fields: ReadFields {
            content_type,
            content_encoding,
            content_length,
            retry_after,
            age,
            date,
            rate_limit,
            content_range,
            ..ReadFields::default()
        },
        body_len,
        head,
        tail,
        sent_early: false,
    };
    let mut options =
        Options::preset(if bytes.byte().is_multiple_of(2) { Preset::Interactive } else { Preset::Batch });
    if bytes.byte().is_multiple_of(2) {
        let offset = u64::from(u32::from_le_bytes([bytes.byte(), bytes.byte(), 0, 0]));
        let length = 1 + u64::from(u32::from_le_bytes([bytes.byte(), bytes.byte(), 0, 0]));
        options.range = Some(ByteRange { offset, length });
    }
    let now = bytes.f64();
    let verdict = classify(&facts, &options, now);
    if let Verdict::Retry { error, .. } | Verdict::Reject(error) = &verdict {
        // What the server said is kept short; a code is a printable ASCII name.
        if let Some(exception) = error.exception() {
            let text = exception.text.as_deref().unwrap_or("");
            assert!(text.chars().count() <= MAX_TEXT_CHARS, "{text:?}");
            let code = exception.code.as_deref().unwrap_or("");
            assert!(code.bytes().all(|b| b.is_ascii_graphic() || b == b' '), "{code:?}");
        }
    }
    if let Verdict::Deliver { empty } = verdict {
        assert!((200..300).contains(&facts.status), "{facts:?}");
        if empty {
            return;
        }
        match options.range {
            // A range is bytes of the resource, proved by its place in it, not by its content.
            Some(range) if facts.status == 206 => {
                assert!(facts.body_len as u64 <= range.length, "a 206 longer than its range: {facts:?}")
            }
            Some(range) => {
                assert!(within_whole(&range, facts.body_len as u64).is_some(), "{facts:?}");
                assert!(!is_html(&facts), "an HTML page delivered as a range: {facts:?}");
            }
            None => assert!(!is_html(&facts), "an HTML page delivered as a tile: {facts:?}"),
        }
    }
});

/// An HTML page by its media type (the part before `;`, without HTTP whitespace) or by its first
/// bytes: written here from the HTTP and HTML specs, not from the classifier's code.
fn is_html(facts: &ResponseFacts) -> bool {
    let essence = facts.fields.content_type.as_deref().map(|t| {
        t.split(';').next().unwrap_or("").trim_matches([' ', '\t', '\r', '\n']).to_ascii_lowercase()
    });
    let by_type = matches!(essence.as_deref(), Some("text/html" | "application/xhtml+xml"));
    let body: Vec<u8> = facts
        .head
        .iter()
        .copied()
        .skip_while(|b| b" \t\r\n".contains(b))
        .take(14)
        .collect::<Vec<_>>()
        .to_ascii_lowercase();
    by_type || body.starts_with(b"<html") || body.starts_with(b"<!doctype html")
}
