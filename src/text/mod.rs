//! Searching and splitting the short ASCII-structured strings tilefetch looks into (a URL, a
//! header value, an option name). std's `str` methods with `&str` and `char`
//! patterns bring its two-way and memchr searchers and UTF-8 decoding into the shipped wasm
//! (their cost: ARCHITECTURE.md's ledger), built for long haystacks these never are. Every
//! separator here is ASCII, and an ASCII byte never occurs inside a multi-byte UTF-8 character, so
//! splitting at one keeps valid UTF-8. `format` writes text and numbers the same way.

pub(crate) mod format;

/// The byte offset of the first `needle` in `haystack` (0 for an empty needle).
pub fn find(haystack: &str, needle: &str) -> Option<usize> {
    find_bytes(haystack.as_bytes(), needle.as_bytes())
}

/// [`find`] for bytes (a response body).
pub fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &str, needle: &str) -> bool {
    find(haystack, needle).is_some()
}

/// Splits around the first `separator`.
pub fn split_once<'a>(text: &'a str, separator: &str) -> Option<(&'a str, &'a str)> {
    let at = find(text, separator)?;
    // A match of valid UTF-8 in valid UTF-8 starts and ends on character boundaries.
    Some((text.get(..at)?, text.get(at + separator.len()..)?))
}

/// Splits around the first `byte` (ASCII).
pub fn split_at_byte(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == byte)?;
    Some((text.get(..at)?, text.get(at + 1..)?))
}

/// Splits around the last `byte` (ASCII).
pub fn rsplit_at_byte(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = text.bytes().rposition(|b| b == byte)?;
    Some((text.get(..at)?, text.get(at + 1..)?))
}

/// The text before the first of `bytes` (ASCII), or all of it.
pub fn before_any<'a>(text: &'a str, bytes: &[u8]) -> &'a str {
    // Not `bytes.contains(&b)`: that is memchr, more wasm than a loop to search three bytes.
    #[allow(clippy::manual_contains)]
    let end = text.bytes().position(|b| bytes.iter().any(|x| *x == b)).unwrap_or(text.len());
    text.get(..end).unwrap_or(text)
}

/// The pieces between `byte`s (ASCII), as `str::split` gives them.
pub fn pieces(text: &str, byte: u8) -> Pieces<'_> {
    Pieces { rest: Some(text), byte }
}

/// The iterator of [`pieces`].
pub struct Pieces<'a> {
    rest: Option<&'a str>,
    byte: u8,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        match split_at_byte(rest, self.byte) {
            Some((piece, after)) => {
                self.rest = Some(after);
                Some(piece)
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// `text` as a non-negative decimal integer: ASCII digits only (no sign, no spaces), `None` when
/// empty or past `u64::MAX`. Not `str::parse`, which brings its own copy of the digit loop per
/// integer type and accepts a leading `+` that no HTTP header number has.
pub fn decimal_value(text: &str) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    let mut value = 0u64;
    for b in text.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(value)
}

/// At most the first `max` characters of `text`.
pub fn first_chars(text: &str, max: usize) -> &str {
    // Characters start at every byte that is not a continuation byte (0b10xx_xxxx).
    let end =
        text.bytes().enumerate().filter(|(_, b)| b & 0xC0 != 0x80).nth(max).map_or(text.len(), |(i, _)| i);
    text.get(..end).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_std() {
        let cases = [
            ("https://a.example/x", "://"),
            ("no scheme here", "://"),
            ("", "x"),
            ("x", ""),
            ("{s}.tiles/{s}/1", "{s}"),
            ("Sun, 06 Nov 1994", ", "),
            ("été://ü", "://"),
            ("aaa", "aa"),
            ("application/vnd.ogc.se_xml", "se_xml"),
            ("a@b@c", "@"),
            ("k=v&&x=", "&"),
            ("Sun Nov  6 08:49:37 1994", " "),
            ("ü#é#", "#"),
            ("", " "),
        ];
        for (text, needle) in cases {
            assert_eq!(find(text, needle), text.find(needle), "{text:?} {needle:?}");
            assert_eq!(split_once(text, needle), text.split_once(needle), "{text:?} {needle:?}");
            if let &[byte] = needle.as_bytes() {
                assert_eq!(split_at_byte(text, byte), text.split_once(byte as char));
                assert_eq!(rsplit_at_byte(text, byte), text.rsplit_once(byte as char));
                assert_eq!(
                    pieces(text, byte).collect::<Vec<_>>(),
                    text.split(byte as char).collect::<Vec<_>>()
                );
            }
        }
    }

    #[test]
    fn decimal_value_reads_what_std_reads_from_plain_digits_only() {
        for text in ["0", "7", "0042", "1234567890", "18446744073709551615", "18446744073709551616"] {
            assert_eq!(decimal_value(text), text.parse::<u64>().ok(), "{text:?}");
        }
        // std takes a leading `+`; no header number has one.
        for text in ["", "+5", "-1", " 5", "5 ", "1.5", "1e3", "٣", "99999999999999999999999"] {
            assert_eq!(decimal_value(text), None, "{text:?}");
        }
    }

    #[test]
    fn first_chars_and_before_any_agree_with_std() {
        for text in ["", "abc", "héllo wörld", "日本語のテキスト", "a\u{1F600}b"] {
            for max in 0..12 {
                assert_eq!(
                    first_chars(text, max),
                    text.chars().take(max).collect::<String>(),
                    "{text:?} {max}"
                );
            }
        }
        for text in ["h.example/x?y#z", "h.example?x/y", "h.example#a", "h.example", "ü.example/é"] {
            assert_eq!(before_any(text, b"/?#"), text.split(['/', '?', '#']).next().unwrap(), "{text:?}");
        }
    }
}
