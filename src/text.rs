//! Substring search for the short strings tilefetch looks into (a URL, a header value, a
//! template). std's `str` methods with a `&str` pattern bring its two-way searcher, ~1 KB of the
//! shipped wasm, built for long haystacks these never are.

/// The byte offset of the first `needle` in `haystack` (0 for an empty needle).
pub fn find(haystack: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.as_bytes().windows(needle.len()).position(|window| window == needle.as_bytes())
}

pub fn contains(haystack: &str, needle: &str) -> bool {
    find(haystack, needle).is_some()
}

/// Splits around the first `separator`.
pub fn split_once<'a>(text: &'a str, separator: &str) -> Option<(&'a str, &'a str)> {
    let at = find(text, separator)?;
    // A match of valid UTF-8 in valid UTF-8 starts and ends on character boundaries.
    Some((text.get(..at)?, text.get(at + separator.len()..)?))
}

/// Every `from` replaced by `to`.
pub fn replace_all(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = split_once(rest, from).filter(|_| !from.is_empty()) {
        out.push_str(before);
        out.push_str(to);
        rest = after;
    }
    out.push_str(rest);
    out
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
        ];
        for (text, needle) in cases {
            assert_eq!(find(text, needle), text.find(needle), "{text:?} {needle:?}");
            assert_eq!(split_once(text, needle), text.split_once(needle), "{text:?} {needle:?}");
            if !needle.is_empty() {
                assert_eq!(
                    replace_all(text, needle, "[é]"),
                    text.replace(needle, "[é]"),
                    "{text:?} {needle:?}"
                );
            }
        }
    }
}
