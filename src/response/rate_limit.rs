//! The rate limits a server states: the `RateLimit-Policy` and `RateLimit` fields of the IETF
//! draft "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers, revision 11:
//! both fields are Structured Field Lists, RFC 9651), and the older `X-RateLimit-*` and
//! `RateLimit-Reset` fields many APIs and tile services send. Parsing only: what a host does
//! with a stated limit is the host state's. A field that does not parse, or breaks the draft's
//! rules (a missing `q` or `r`, a negative number, `w=0`), is ignored whole, as the draft asks.

/// One quota policy of a `RateLimit-Policy` field: `"burst";q=100;w=60`.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The policy's name (the item's String), which `RateLimit` items refer to.
    pub name: String,
    /// `q`: the quota, in `unit`s.
    pub quota: f64,
    /// `w`: the window the quota is for, in seconds, when stated.
    pub window_s: Option<f64>,
    /// `qu`: what the quota counts; `"requests"` when not stated.
    pub unit: String,
    /// `pk`: the partition the quota is allocated to (its base64 text), when stated.
    pub partition: Option<String>,
}

/// One service limit of a `RateLimit` field: `"default";r=50;t=30`.
#[derive(Debug, Clone, PartialEq)]
pub struct Available {
    /// The policy it reports on; `None` for a legacy field, which names none.
    pub policy: Option<String>,
    /// `r`: the quota still available.
    pub remaining: f64,
    /// `t`: the seconds within which no more than `remaining` may be used, when stated.
    pub reset_s: Option<f64>,
    /// `pk`: the partition (its base64 text), when stated.
    pub partition: Option<String>,
}

/// The policies of a `RateLimit-Policy` field value (several field lines joined by ", ", as
/// `Headers.get` gives them); `None` when it is malformed.
pub fn parse_policies(field: &str) -> Option<Vec<Policy>> {
    let mut policies = Vec::new();
    for item in parse_list(field)? {
        let Bare::Text(name) = item.value else { return None };
        let mut policy =
            Policy { name, quota: -1.0, window_s: None, unit: "requests".into(), partition: None };
        for (key, value) in item.params {
            match (key.as_str(), value) {
                ("q", Bare::Integer(q)) if q >= 0 => policy.quota = q as f64,
                ("w", Bare::Integer(w)) if w >= 1 => policy.window_s = Some(w as f64),
                ("qu", Bare::Text(unit)) => policy.unit = unit,
                ("pk", Bare::Bytes(key)) => policy.partition = Some(key),
                ("q" | "w" | "qu" | "pk", _) => return None,
                // Other parameters are comments (a vendor's `acme-burst`).
                _ => {}
            }
        }
        if policy.quota < 0.0 {
            return None;
        }
        policies.push(policy);
    }
    Some(policies)
}

/// The service limits of a `RateLimit` field value; `None` when it is malformed.
pub fn parse_available(field: &str) -> Option<Vec<Available>> {
    let mut limits = Vec::new();
    for item in parse_list(field)? {
        let policy = match item.value {
            Bare::Text(name) | Bare::Token(name) => Some(name),
            _ => return None,
        };
        let mut limit = Available { policy, remaining: -1.0, reset_s: None, partition: None };
        for (key, value) in item.params {
            match (key.as_str(), value) {
                ("r", Bare::Integer(r)) if r >= 0 => limit.remaining = r as f64,
                ("t", Bare::Integer(t)) if t >= 0 => limit.reset_s = Some(t as f64),
                ("pk", Bare::Bytes(key)) => limit.partition = Some(key),
                ("r" | "t" | "pk", _) => return None,
                _ => {}
            }
        }
        if limit.remaining < 0.0 {
            return None;
        }
        limits.push(limit);
    }
    Some(limits)
}

/// The legacy fields: `X-RateLimit-Remaining` (required), and `X-RateLimit-Reset` or
/// `RateLimit-Reset`, which servers send as seconds from now or as a Unix time in seconds or
/// milliseconds. Told apart by size: no window is 30 years long, so a number past 10^9 is a
/// time (in ms past 10^12), read against `now_epoch_ms`; a time already past means "now".
/// `None` when the remaining count is missing or not a number ≥ 0.
pub fn parse_legacy(remaining: &str, reset: Option<&str>, now_epoch_ms: f64) -> Option<Available> {
    let remaining = plain_number(remaining).filter(|r| *r >= 0.0)?;
    let reset_s = reset.and_then(plain_number).filter(|t| *t >= 0.0).map(|t| {
        if t >= 1e12 {
            ((t - now_epoch_ms) / 1000.0).max(0.0)
        } else if t >= 1e9 {
            (t - now_epoch_ms / 1000.0).max(0.0)
        } else {
            t
        }
    });
    Some(Available { policy: None, remaining: remaining.floor(), reset_s, partition: None })
}

/// A decimal number as legacy fields write it: digits, with an optional fraction.
fn plain_number(text: &str) -> Option<f64> {
    let text = text.trim_ascii();
    let (whole, fraction) = crate::text::split_once(text, ".").unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || whole.len() > 15 || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
        return None;
    }
    let mut value = 0.0;
    for b in whole.bytes().chain(fraction.bytes()) {
        value = value * 10.0 + f64::from(b - b'0');
    }
    Some(value / 10f64.powi(fraction.len() as i32))
}

/// A bare item of a Structured Field (RFC 9651 §3.3).
#[derive(Debug, Clone, PartialEq)]
enum Bare {
    Integer(i64),
    Decimal(f64),
    Text(String),
    Token(String),
    /// A Byte Sequence, kept as its base64 text.
    Bytes(String),
    Boolean(bool),
}

/// An Item with its Parameters (RFC 9651 §3.3, §3.1.2).
struct Item {
    value: Bare,
    params: Vec<(String, Bare)>,
}

/// A List of Items (RFC 9651 §4.2.1); an Inner List fails the field, which neither of these
/// fields may hold. An empty field is an empty list.
fn parse_list(input: &str) -> Option<Vec<Item>> {
    let mut parser = Parser { bytes: input.as_bytes(), at: 0 };
    parser.skip(b' ');
    let mut items = Vec::new();
    if parser.at_end() {
        return Some(items);
    }
    loop {
        items.push(parser.item()?);
        parser.skip_ows();
        if parser.at_end() {
            return Some(items);
        }
        parser.expect(b',')?;
        parser.skip_ows();
        if parser.at_end() {
            return None;
        }
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip(&mut self, byte: u8) {
        while self.peek() == Some(byte) {
            self.at += 1;
        }
    }

    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    fn item(&mut self) -> Option<Item> {
        let value = self.bare()?;
        let mut params = Vec::new();
        while self.peek() == Some(b';') {
            self.at += 1;
            self.skip(b' ');
            let key = self.key()?;
            let value = if self.peek() == Some(b'=') {
                self.at += 1;
                self.bare()?
            } else {
                Bare::Boolean(true)
            };
            // A repeated key: the last one wins (RFC 9651 §4.2.3.2).
            params.retain(|(k, _): &(String, Bare)| *k != key);
            params.push((key, value));
        }
        Some(Item { value, params })
    }

    fn key(&mut self) -> Option<String> {
        let start = self.at;
        if !matches!(self.peek(), Some(b'a'..=b'z' | b'*')) {
            return None;
        }
        while matches!(self.peek(), Some(b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'*')) {
            self.at += 1;
        }
        Some(self.text(start))
    }

    fn text(&self, start: usize) -> String {
        // Only ASCII bytes were accepted between `start` and here.
        String::from_utf8_lossy(&self.bytes[start..self.at]).into_owned()
    }

    fn bare(&mut self) -> Option<Bare> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.number(),
            b'"' => self.string(),
            b':' => self.byte_sequence(),
            b'?' => {
                self.at += 1;
                let value = match self.peek()? {
                    b'0' => false,
                    b'1' => true,
                    _ => return None,
                };
                self.at += 1;
                Some(Bare::Boolean(value))
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'*' => {
                let start = self.at;
                self.at += 1;
                while self.peek().is_some_and(|b| is_tchar(b) || b == b':' || b == b'/') {
                    self.at += 1;
                }
                Some(Bare::Token(self.text(start)))
            }
            _ => None,
        }
    }

    /// An Integer (at most 15 digits) or a Decimal (at most 12 + 3 digits).
    fn number(&mut self) -> Option<Bare> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let (mut whole, mut digits) = (0i64, 0);
        while let Some(d @ b'0'..=b'9') = self.peek() {
            whole = whole * 10 + i64::from(d - b'0');
            digits += 1;
            self.at += 1;
            if digits > 15 {
                return None;
            }
        }
        if digits == 0 {
            return None;
        }
        let sign = if negative { -1 } else { 1 };
        if self.peek() != Some(b'.') {
            return Some(Bare::Integer(sign * whole));
        }
        self.at += 1;
        let (mut fraction, mut places) = (0.0, 0);
        while let Some(d @ b'0'..=b'9') = self.peek() {
            fraction = fraction * 10.0 + f64::from(d - b'0');
            places += 1;
            self.at += 1;
        }
        if digits > 12 || places == 0 || places > 3 {
            return None;
        }
        let value = whole as f64 + fraction / 10f64.powi(places);
        Some(Bare::Decimal(if negative { -value } else { value }))
    }

    fn string(&mut self) -> Option<Bare> {
        self.at += 1;
        let mut text = String::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(Bare::Text(text));
                }
                b'\\' => {
                    self.at += 1;
                    match self.peek()? {
                        c @ (b'"' | b'\\') => text.push(char::from(c)),
                        _ => return None,
                    }
                }
                c @ 0x20..=0x7e => text.push(char::from(c)),
                _ => return None,
            }
            self.at += 1;
        }
    }

    fn byte_sequence(&mut self) -> Option<Bare> {
        self.at += 1;
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')) {
            self.at += 1;
        }
        let text = self.text(start);
        self.expect(b':')?;
        Some(Bare::Bytes(text))
    }
}

/// RFC 9110's tchar.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(name: &str, quota: f64, window_s: Option<f64>) -> Policy {
        Policy { name: name.into(), quota, window_s, unit: "requests".into(), partition: None }
    }

    fn available(policy: &str, remaining: f64, reset_s: Option<f64>) -> Available {
        Available { policy: Some(policy.into()), remaining, reset_s, partition: None }
    }

    /// The draft's own examples (revision 11, §3, §3.2, §4.2, Appendix B).
    #[test]
    fn the_drafts_examples_parse() {
        assert_eq!(
            parse_policies(r#""burst";q=100;w=60,"daily";q=1000;w=86400"#),
            Some(vec![policy("burst", 100.0, Some(60.0)), policy("daily", 1000.0, Some(86400.0))])
        );
        assert_eq!(parse_policies(r#""hour";q=1000;w=3600, "day";q=5000;w=86400"#).map(|p| p.len()), Some(2));
        let keyed = parse_policies(r#""peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:"#).unwrap();
        assert_eq!(keyed[0].unit, "content-bytes");
        assert_eq!(keyed[0].partition.as_deref(), Some("sdfjLJUOUH=="));
        assert_eq!(
            parse_policies(r#""sliding";q=100;w=60;burst=1000"#),
            Some(vec![policy("sliding", 100.0, Some(60.0))]),
            "a vendor's parameter is a comment"
        );
        assert_eq!(
            parse_available(r#""default";r=50;t=30"#),
            Some(vec![available("default", 50.0, Some(30.0))])
        );
        assert_eq!(parse_available(r#""default";r=999;pk=:dHJpYWwxMjEzMjM=:"#).unwrap()[0].reset_s, None);
        assert_eq!(
            parse_available(r#""default";r=300000000;t=60;pk=:QXBwLTk5OQ==:"#).unwrap()[0].remaining,
            300_000_000.0
        );
        assert_eq!(parse_available(r#""problemPolicy";r=0;t=10"#).unwrap()[0].remaining, 0.0);
        // The web-usage appendix's `q` on a RateLimit item is a comment there.
        assert_eq!(
            parse_available(r#""sliding";q=12;r=6;t=1"#),
            Some(vec![available("sliding", 6.0, Some(1.0))])
        );
        assert_eq!(parse_available(r#"RateLimit:"default";r=50;t=60"#), None, "a field name is no value");
    }

    #[test]
    fn several_field_lines_are_one_list() {
        let joined = r#""permin";q=50;w=60, "perhr";q=1000;w=3600"#;
        assert_eq!(
            parse_policies(joined).unwrap().iter().map(|p| p.quota).collect::<Vec<_>>(),
            [50.0, 1000.0]
        );
        assert_eq!(parse_available(r#""a";r=1, "b";r=2;t=3"#).unwrap().len(), 2);
        assert_eq!(parse_policies(""), Some(vec![]));
    }

    /// A field that breaks the rules is ignored whole (`None`), never a panic.
    #[test]
    fn malformed_fields_are_ignored_whole() {
        for bad in [
            r#""default";w=60"#,           // no q
            r#""default";q=-1;w=60"#,      // negative
            r#""default";q=100;w=0"#,      // a window of 0
            r#""default";q=1.5"#,          // not an Integer
            r#""default";q="100""#,        // not an Integer
            r#"default;q=100"#,            // a Token, not a String
            r#""a";q=1,"#,                 // a trailing comma
            r#""a";q=1,,"b";q=2"#,         // an empty member
            r#"("a" "b");q=1"#,            // an Inner List
            r#""a";q=1;Q=2"#,              // an upper-case key
            r#""a";q=1234567890123456"#,   // 16 digits
            r#""unterminated;q=1"#,        // no closing quote
            r#""a\nb";q=1"#,               // a bad escape
            "\"\u{e9}\";q=1",              // not ASCII
            r#""a";q=1;pk=:not base64!:"#, // a bad Byte Sequence
            r#""a";q=1 "b";q=2"#,          // no comma
            r#""a";q=1;pk="text""#,        // pk is no Byte Sequence
        ] {
            assert_eq!(parse_policies(bad), None, "{bad}");
        }
        for bad in
            [r#""default";t=30"#, r#""default";r=-3"#, r#""default";r=5;t=-1"#, r#""d";r=5;t=1.5"#, "?1;r=5"]
        {
            assert_eq!(parse_available(bad), None, "{bad}");
        }
    }

    #[test]
    fn huge_numbers_parse_and_are_left_to_the_pacing_to_clamp() {
        let huge = parse_available(r#""d";r=999999999999999;t=999999999999999"#).unwrap();
        assert_eq!(huge[0].remaining, 999_999_999_999_999.0);
        assert_eq!(parse_available(r#""d";r=9999999999999999"#), None, "past 15 digits");
    }

    #[test]
    fn legacy_fields_give_remaining_and_a_reset_in_seconds_from_now() {
        let now = 1_767_225_600_000.0; // 2026-01-01T00:00:00Z, in ms
        let seconds = parse_legacy("12", Some("8"), now).unwrap();
        assert_eq!((seconds.remaining, seconds.reset_s, seconds.policy), (12.0, Some(8.0), None));
        assert_eq!(parse_legacy("12", Some("1767225630"), now).unwrap().reset_s, Some(30.0), "epoch seconds");
        assert_eq!(parse_legacy("12", Some("1767225630000"), now).unwrap().reset_s, Some(30.0), "epoch ms");
        assert_eq!(
            parse_legacy("12", Some("1767225000"), now).unwrap().reset_s,
            Some(0.0),
            "a past time: now"
        );
        assert_eq!(parse_legacy(" 7 ", None, now).unwrap().reset_s, None);
        assert_eq!(parse_legacy("2.5", Some("0.5"), now).unwrap().remaining, 2.0);
        for bad in ["", "-1", "abc", "1e3", "12 requests"] {
            assert_eq!(parse_legacy(bad, Some("8"), now), None, "{bad:?}");
        }
        assert_eq!(
            parse_legacy("5", Some("soon"), now).unwrap().reset_s,
            None,
            "an unreadable reset is none"
        );
    }
}
