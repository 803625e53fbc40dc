//! The response fields the core reads, as the platform layer hands them over: one `name: value`
//! line each (the name lower-case), for the fields the response has, all in one text. One text
//! crosses from JS where a getter per field cost a crossing, a string copy and an allocation
//! each, on every response.

use super::rate_limit;
use crate::text::{pieces, split_once};

/// The fields read, besides [`rate_limit::FIELDS`]; transport.js reads the same list
/// (`READ_FIELDS`, checked by tests/wire.rs). `content-range` only for a call with `range`.
pub const FIELDS: [&str; 9] = [
    "content-type",
    "content-encoding",
    "content-length",
    "content-range",
    "retry-after",
    "age",
    "date",
    "cache-control",
    "expires",
];

/// What a response's field lines say, field by field.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ReadFields {
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Content-Encoding`.
    pub content_encoding: Option<String>,
    /// `Content-Length`.
    pub content_length: Option<String>,
    /// `Content-Range`.
    pub content_range: Option<String>,
    /// `Retry-After`.
    pub retry_after: Option<String>,
    /// `Age`.
    pub age: Option<String>,
    /// `Date`.
    pub date: Option<String>,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// `Expires`.
    pub expires: Option<String>,
    /// The lines of the [`rate_limit::FIELDS`] the response has, as [`rate_limit::stated`]
    /// takes them; `None` when it has none (most responses).
    pub rate_limit: Option<String>,
}

impl ReadFields {
    /// Reads `name: value` lines; a line of another field, or no line at all, leaves its field
    /// `None`.
    pub fn parse(lines: &str) -> ReadFields {
        let mut read = ReadFields::default();
        for line in pieces(lines, b'\n') {
            let Some((name, value)) = split_once(line, ": ") else { continue };
            let slot = match name {
                "content-type" => &mut read.content_type,
                "content-encoding" => &mut read.content_encoding,
                "content-length" => &mut read.content_length,
                "content-range" => &mut read.content_range,
                "retry-after" => &mut read.retry_after,
                "age" => &mut read.age,
                "date" => &mut read.date,
                "cache-control" => &mut read.cache_control,
                "expires" => &mut read.expires,
                _ if rate_limit::FIELDS.contains(&name) => {
                    let kept = read.rate_limit.get_or_insert_with(String::new);
                    kept.push_str(line);
                    kept.push('\n');
                    continue;
                }
                _ => continue,
            };
            *slot = Some(value.into());
        }
        read
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_goes_to_its_field_and_rate_limit_lines_stay_lines() {
        let lines = "content-type: image/png\ncontent-length: 12\nratelimit: \"q\";r=0;t=5\n\
                     retry-after: 3\nage: 10\ndate: Sat, 05 Dec 2026 01:00:00 GMT\n\
                     cache-control: max-age=60\nexpires: 0\ncontent-encoding: gzip\n\
                     content-range: bytes 0-9/20\nx-ratelimit-reset: 5\nx-other: 1\n";
        let read = ReadFields::parse(lines);
        assert_eq!(read.content_type.as_deref(), Some("image/png"));
        assert_eq!(read.content_length.as_deref(), Some("12"));
        assert_eq!(read.content_encoding.as_deref(), Some("gzip"));
        assert_eq!(read.content_range.as_deref(), Some("bytes 0-9/20"));
        assert_eq!(read.retry_after.as_deref(), Some("3"));
        assert_eq!(read.age.as_deref(), Some("10"));
        assert_eq!(read.date.as_deref(), Some("Sat, 05 Dec 2026 01:00:00 GMT"));
        assert_eq!(read.cache_control.as_deref(), Some("max-age=60"));
        assert_eq!(read.expires.as_deref(), Some("0"));
        assert_eq!(read.rate_limit.as_deref(), Some("ratelimit: \"q\";r=0;t=5\nx-ratelimit-reset: 5\n"));
    }

    #[test]
    fn no_lines_read_as_no_fields() {
        assert_eq!(ReadFields::parse(""), ReadFields::default());
        assert_eq!(ReadFields::parse("content-type"), ReadFields::default(), "no separator");
        // A value may hold the separator itself: only the first splits.
        let read = ReadFields::parse("date: a: b");
        assert_eq!(read.date.as_deref(), Some("a: b"));
    }
}
