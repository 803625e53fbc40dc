//! Byte ranges (RFC 9110 §14): the `range` option's request header, and what an answer to it
//! must be before its bytes are delivered. A cloud-optimised archive (PMTiles) is read this way
//! from static storage, where a byte range is no image: its content is not judged as a tile's.

use crate::text::format::{concat, decimal_text};
use crate::text::{decimal_value, split_at_byte};

/// `range`: `length` bytes from `offset` of the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    /// The first byte.
    pub offset: u64,
    /// How many bytes, at least 1.
    pub length: u64,
}

impl ByteRange {
    /// The last byte asked for.
    pub fn last(&self) -> u64 {
        self.offset + self.length - 1
    }

    /// The `Range` header's value: `bytes=first-last`.
    pub fn header_value(&self) -> String {
        concat(&["bytes=", &decimal_text(self.offset), "-", &decimal_text(self.last())])
    }
}

/// A `Content-Range` of a satisfied request: `bytes first-last/complete` (`*` for an unknown
/// complete length, `None` here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ContentRange {
    first: u64,
    last: u64,
    complete: Option<u64>,
}

fn content_range(value: &str) -> Option<ContentRange> {
    let rest = value.trim_ascii();
    let (unit, rest) = split_at_byte(rest, b' ')?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return None;
    }
    let (span, complete) = split_at_byte(rest.trim_ascii(), b'/')?;
    let (first, last) = split_at_byte(span, b'-')?;
    let (first, last) = (decimal_value(first)?, decimal_value(last)?);
    let complete = match complete {
        "*" => None,
        length => Some(decimal_value(length)?),
    };
    (first <= last && complete.is_none_or(|c| last < c)).then_some(ContentRange { first, last, complete })
}

/// What is wrong with a `206` answer, and whether asking again may mend it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartialFault {
    /// Fewer bytes than its span (a reset, a body cut short): retried like a truncated tile.
    Short(&'static str),
    /// Another range, or more than was asked for: the server's answer to this range, every time.
    Wrong(&'static str),
}

/// Whether a `206` answer holds exactly the bytes asked for: its `Content-Range` starts at the
/// range's first byte and ends at its last, or earlier only where the resource ends, and the body
/// is as long as that span. A page reads `Content-Range` only when the server exposes it (CORS):
/// without it, a body of 1 byte up to the range's length, and not shorter than its
/// `Content-Length` (checked with every body), is taken as it came.
pub fn check_partial(
    range: &ByteRange,
    content_range_value: Option<&str>,
    body_len: u64,
) -> Result<(), PartialFault> {
    let Some(value) = content_range_value else {
        return match body_len {
            0 => Err(PartialFault::Short("empty 206 body")),
            len if len > range.length => Err(PartialFault::Wrong("206 body longer than the range asked for")),
            _ => Ok(()),
        };
    };
    let Some(answer) = content_range(value) else {
        return Err(PartialFault::Wrong("206 with an unreadable Content-Range"));
    };
    let ends_early = answer.last < range.last() && answer.complete != Some(answer.last + 1);
    if answer.first != range.offset || answer.last > range.last() || ends_early {
        return Err(PartialFault::Wrong("Content-Range does not match the range asked for"));
    }
    if body_len != answer.last - answer.first + 1 {
        return Err(PartialFault::Short("truncated body (fewer bytes than Content-Range)"));
    }
    Ok(())
}

/// Where a `200` answer's whole body holds the range (a server that ignores `Range`): `None`
/// when the body ends before the range's first byte.
pub fn within_whole(range: &ByteRange, body_len: u64) -> Option<(u64, u64)> {
    (range.offset < body_len).then(|| (range.offset, body_len.min(range.offset + range.length)))
}

/// The part of a delivered body that is the range: `None` when the body is the range already
/// (a 206) or there is nothing to cut (an empty answer).
pub fn whole_to_range(range: &ByteRange, status: u16, body_len: u32) -> Option<(u64, u64)> {
    if status == 206 {
        return None;
    }
    within_whole(range, u64::from(body_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RANGE: ByteRange = ByteRange { offset: 100, length: 50 };

    #[test]
    fn the_header_names_the_first_and_last_byte() {
        assert_eq!(RANGE.header_value(), "bytes=100-149");
        assert_eq!(ByteRange { offset: 0, length: 1 }.header_value(), "bytes=0-0");
    }

    #[test]
    fn a_partial_answer_must_be_the_range_or_end_where_the_resource_ends() {
        let check = |value: &str, len| check_partial(&RANGE, Some(value), len);
        assert_eq!(check("bytes 100-149/1000", 50), Ok(()));
        assert_eq!(check("bytes 100-149/*", 50), Ok(()));
        assert_eq!(check("Bytes  100-149/150", 50), Ok(()));
        // The end of the resource: a shorter span, when the complete length says so.
        assert_eq!(check("bytes 100-119/120", 20), Ok(()));
        assert!(check("bytes 100-119/1000", 20).is_err());
        assert!(check("bytes 100-119/*", 20).is_err());
        // Another range and a wider one: the server's answer every time; a body that stopped short.
        assert!(matches!(check("bytes 0-49/1000", 50), Err(PartialFault::Wrong(_))));
        assert!(matches!(check("bytes 100-199/1000", 100), Err(PartialFault::Wrong(_))));
        let cut = Err(PartialFault::Short("truncated body (fewer bytes than Content-Range)"));
        assert_eq!(check("bytes 100-149/1000", 25), cut);
        for unreadable in
            ["", "bytes */1000", "bytes 149-100/1000", "items 100-149/1000", "bytes 100-149/120"]
        {
            let unread = Err(PartialFault::Wrong("206 with an unreadable Content-Range"));
            assert_eq!(check(unreadable, 50), unread, "{unreadable}");
        }
    }

    #[test]
    fn a_partial_answer_whose_content_range_is_hidden_is_held_to_the_range_length() {
        assert_eq!(check_partial(&RANGE, None, 50), Ok(()));
        assert_eq!(check_partial(&RANGE, None, 20), Ok(()));
        assert!(matches!(check_partial(&RANGE, None, 51), Err(PartialFault::Wrong(_))));
        assert!(matches!(check_partial(&RANGE, None, 0), Err(PartialFault::Short(_))));
    }

    #[test]
    fn a_whole_body_holds_the_range_up_to_its_end() {
        assert_eq!(within_whole(&RANGE, 1000), Some((100, 150)));
        assert_eq!(within_whole(&RANGE, 120), Some((100, 120)));
        assert_eq!(within_whole(&RANGE, 100), None);
        assert_eq!(whole_to_range(&RANGE, 200, 1000), Some((100, 150)));
        assert_eq!(whole_to_range(&RANGE, 206, 50), None);
        assert_eq!(whole_to_range(&RANGE, 204, 0), None);
    }
}
