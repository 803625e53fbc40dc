//! The rate limits a server states: the `RateLimit-Policy` and `RateLimit` fields of the IETF
//! draft "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers, revision 11:
//! both fields are Structured Field Lists, RFC 9651), and the older `X-RateLimit-*` and
//! `RateLimit-Reset` fields many APIs and tile services send. Parsing only: what a host does
//! with a stated limit is the host state's. A field that does not parse, or breaks the draft's
//! rules (a missing `q` or `r`, a negative number, `w=0`), is ignored whole, as the draft asks.

/// One quota policy of a `RateLimit-Policy` field: `"burst";q=100;w=60`. Texts are borrowed
/// from the field as sent (a String's escapes kept: names are compared as sent).
#[derive(Debug, Clone, PartialEq)]
pub struct Policy<'a> {
    /// The policy's name (the item's String), which `RateLimit` items refer to.
    pub name: &'a str,
    /// `q`: the quota, in `unit`s.
    pub quota: f64,
    /// `w`: the window the quota is for, in seconds, when stated.
    pub window_s: Option<f64>,
    /// `qu`: what the quota counts; `"requests"` when not stated.
    pub unit: &'a str,
    /// `pk`: the partition the quota is allocated to (its base64 text), when stated.
    pub partition: Option<&'a str>,
}

/// One service limit of a `RateLimit` field: `"default";r=50;t=30`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Available<'a> {
    /// The policy it reports on; `None` for a legacy field, which names none.
    pub policy: Option<&'a str>,
    /// `r`: the quota still available.
    pub remaining: f64,
    /// `t`: the seconds within which no more than `remaining` may be used, when stated.
    pub reset_s: Option<f64>,
    /// `pk`: the partition (its base64 text), when stated.
    pub partition: Option<&'a str>,
}

/// The policies of a `RateLimit-Policy` field value (several field lines joined by ", ", as
/// `Headers.get` gives them); `None` when it is malformed.
pub fn parse_policies(field: &str) -> Option<Vec<Policy<'_>>> {
    let mut policies = Vec::new();
    members(field, &mut |item| {
        policies.push(policy_of(item)?);
        Some(())
    })?;
    Some(policies)
}

/// The service limits of a `RateLimit` field value; `None` when it is malformed.
pub fn parse_available(field: &str) -> Option<Vec<Available<'_>>> {
    let mut limits = Vec::new();
    members(field, &mut |item| {
        limits.push(available_of(item)?);
        Some(())
    })?;
    Some(limits)
}

/// A `RateLimit-Policy` member; `None` when it breaks the draft's rules.
fn policy_of<'a>(item: &Item<'a>) -> Option<Policy<'a>> {
    let Bare::Text(name) = item.value else { return None };
    let mut policy = Policy { name, quota: -1.0, window_s: None, unit: "requests", partition: None };
    for &(key, value) in item.params() {
        match (key, value) {
            ("q", Bare::Integer(q)) if q >= 0 => policy.quota = q as f64,
            ("w", Bare::Integer(w)) if w >= 1 => policy.window_s = Some(w as f64),
            ("qu", Bare::Text(unit)) => policy.unit = unit,
            ("pk", Bare::Bytes(key)) => policy.partition = Some(key),
            ("q" | "w" | "qu" | "pk", _) => return None,
            // Other parameters are comments (a vendor's `acme-burst`).
            _ => {}
        }
    }
    (policy.quota >= 0.0).then_some(policy)
}

/// A `RateLimit` member; `None` when it breaks the draft's rules.
fn available_of<'a>(item: &Item<'a>) -> Option<Available<'a>> {
    let policy = match item.value {
        Bare::Text(name) | Bare::Token(name) => Some(name),
        _ => return None,
    };
    let mut limit = Available { policy, remaining: -1.0, reset_s: None, partition: None };
    for &(key, value) in item.params() {
        match (key, value) {
            ("r", Bare::Integer(r)) if r >= 0 => limit.remaining = r as f64,
            ("t", Bare::Integer(t)) if t >= 0 => limit.reset_s = Some(t as f64),
            ("pk", Bare::Bytes(key)) => limit.partition = Some(key),
            ("r" | "t" | "pk", _) => return None,
            _ => {}
        }
    }
    (limit.remaining >= 0.0).then_some(limit)
}

/// The legacy fields: `X-RateLimit-Remaining` (required), and `X-RateLimit-Reset` or
/// `RateLimit-Reset`, which servers send as seconds from now or as a Unix time in seconds or
/// milliseconds. Told apart by size: no window is 30 years long, so a number past 10^9 is a
/// time (in ms past 10^12), read against `now_epoch_ms`; a time already past means "now".
/// `None` when the remaining count is missing or not a number ≥ 0.
pub fn parse_legacy(remaining: &str, reset: Option<&str>, now_epoch_ms: f64) -> Option<Available<'static>> {
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

/// The response fields this module reads, lower-case, as the platform layer hands them over:
/// one `name: value` line each, for the fields the response has (see [`stated`]).
pub const FIELDS: [&str; 5] =
    ["ratelimit-policy", "ratelimit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-reset"];

/// The limit a response states that binds its client first: of the service limits it reports,
/// the one whose remaining quota allows the fewest requests per second until more is made
/// available, with its policy when one is named.
#[derive(Debug, Clone, PartialEq)]
pub struct Stated {
    /// The policy it reports on (`None` for the legacy fields).
    pub policy: Option<String>,
    /// The policy's quota and window, when its `RateLimit-Policy` item came with it.
    pub quota: Option<f64>,
    /// The policy's window in seconds.
    pub window_s: Option<f64>,
    /// The quota still available (never above the policy's quota).
    pub remaining: f64,
    /// Seconds until more quota is made available (never beyond the policy's window); `None`
    /// when neither the limit nor its policy says.
    pub reset_s: Option<f64>,
}

/// The binding limit of a response's rate-limit fields, given as `name: value` lines (names from
/// [`FIELDS`]): the draft's `RateLimit` when the response has one that parses, else the legacy
/// fields. `None` when no field states a limit. A limit whose unit is not requests (the draft's
/// `qu="content-bytes"`) is not one a request count can pace by, and is skipped.
pub fn stated(lines: &str, now_epoch_ms: f64) -> Option<Stated> {
    let field = |name: &str| {
        for line in crate::text::pieces(lines, b'\n') {
            if let Some((key, value)) = crate::text::split_at_byte(line, b':') {
                if key == name {
                    return Some(value.trim_ascii());
                }
            }
        }
        None
    };
    // The policy a limit reports on, when the policy field parses.
    let policy_field = field(FIELDS[0]);
    let policy_for = |limit: &Available| {
        let mut found = None;
        members(policy_field?, &mut |item| {
            let policy = policy_of(item)?;
            if Some(policy.name) == limit.policy
                && (limit.partition.is_none() || policy.partition == limit.partition)
            {
                found = Some(policy);
            }
            Some(())
        })?;
        found
    };
    let mut binding: Option<Stated> = None;
    let mut consider = |limit: Available| {
        let policy = policy_for(&limit);
        if policy.as_ref().is_some_and(|p| p.unit != "requests") {
            return;
        }
        let quota = policy.as_ref().map(|p| p.quota);
        let window_s = policy.and_then(|p| p.window_s);
        // Contradictions resolved toward the policy: more remaining than the whole quota, or
        // longer to wait than a whole window.
        let remaining = quota.map_or(limit.remaining, |q| limit.remaining.min(q));
        let reset_s = match (limit.reset_s, window_s) {
            (Some(t), Some(w)) => Some(t.min(w)),
            (t, w) => t.or(w),
        };
        let stated = Stated { policy: limit.policy.map(String::from), quota, window_s, remaining, reset_s };
        if binding.as_ref().is_none_or(|b| per_second(&stated) < per_second(b)) {
            binding = Some(stated);
        }
    };
    // The draft's field when it parses whole (its limits are taken in only then), else the legacy ones.
    let mut limits: [Option<Available>; MAX_LIMITS] = [None; MAX_LIMITS];
    let mut count = 0;
    let parsed = field(FIELDS[1]).and_then(|text| {
        members(text, &mut |item| {
            let limit = available_of(item)?;
            *limits.get_mut(count)? = Some(limit);
            count += 1;
            Some(())
        })
    });
    if parsed.is_some() && count > 0 {
        for limit in limits.into_iter().flatten() {
            consider(limit);
        }
    } else {
        let reset = field(FIELDS[3]).or_else(|| field(FIELDS[4]));
        consider(parse_legacy(field(FIELDS[2])?, reset, now_epoch_ms)?);
    }
    binding
}

/// The most service limits one `RateLimit` field is read for: a server states a few (per
/// second, per day); a field with more is not one to pace by.
const MAX_LIMITS: usize = 8;

/// Requests per second a limit allows until more quota comes: what orders limits by how soon
/// they bind (one with no reset binds only when nothing remains).
fn per_second(limit: &Stated) -> f64 {
    match limit.reset_s {
        Some(t) if t > 0.0 => limit.remaining / t,
        _ if limit.remaining < 1.0 => 0.0,
        _ => f64::INFINITY,
    }
}

/// A decimal number as legacy fields write it: digits, with an optional fraction.
fn plain_number(text: &str) -> Option<f64> {
    use crate::text::decimal_value;
    let text = text.trim_ascii();
    let (whole, fraction) = crate::text::split_once(text, ".").unwrap_or((text, ""));
    if whole.len() > 15 || fraction.len() > 9 {
        return None;
    }
    let whole = decimal_value(whole)? as f64;
    if fraction.is_empty() {
        return Some(whole);
    }
    Some(whole + decimal_value(fraction)? as f64 / 10f64.powi(fraction.len() as i32))
}

/// A bare item of a Structured Field (RFC 9651 §3.3), its texts borrowed as sent.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bare<'a> {
    Integer(i64),
    Decimal,
    /// A String, its escapes kept.
    Text(&'a str),
    Token(&'a str),
    /// A Byte Sequence, kept as its base64 text.
    Bytes(&'a str),
    Boolean,
}

/// An Item with its Parameters (RFC 9651 §3.3, §3.1.2), at most [`MAX_PARAMS`] of them.
struct Item<'a> {
    value: Bare<'a>,
    params: [(&'a str, Bare<'a>); MAX_PARAMS],
    count: usize,
}

/// The most parameters an item is read with: these fields define four, and a server's own
/// comments come on top; an item with more fails its field.
const MAX_PARAMS: usize = 12;

impl<'a> Item<'a> {
    fn params(&self) -> &[(&'a str, Bare<'a>)] {
        &self.params[..self.count]
    }
}

/// Each member of a List of Items (RFC 9651 §4.2.1), in order, until `each` refuses one; `None`
/// when the list is malformed or a member was refused. An Inner List fails the field, which
/// neither of these fields may hold. An empty field is an empty list.
fn members<'a>(input: &'a str, each: &mut dyn FnMut(&Item<'a>) -> Option<()>) -> Option<()> {
    let mut parser = Parser { bytes: input.as_bytes(), at: 0 };
    parser.skip(b' ');
    if parser.at_end() {
        return Some(());
    }
    loop {
        each(&parser.item()?)?;
        parser.skip_ows();
        if parser.at_end() {
            return Some(());
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

impl<'a> Parser<'a> {
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

    fn item(&mut self) -> Option<Item<'a>> {
        let value = self.bare()?;
        let mut item = Item { value, params: [("", Bare::Boolean); MAX_PARAMS], count: 0 };
        while self.peek() == Some(b';') {
            self.at += 1;
            self.skip(b' ');
            let key = self.key()?;
            let value = if self.peek() == Some(b'=') {
                self.at += 1;
                self.bare()?
            } else {
                Bare::Boolean
            };
            // A repeated key: the last one wins (RFC 9651 §4.2.3.2).
            let at = item.params().iter().position(|(k, _)| *k == key).unwrap_or(item.count);
            *item.params.get_mut(at)? = (key, value);
            item.count = item.count.max(at + 1);
        }
        Some(item)
    }

    fn key(&mut self) -> Option<&'a str> {
        let start = self.at;
        if !matches!(self.peek(), Some(b'a'..=b'z' | b'*')) {
            return None;
        }
        while matches!(self.peek(), Some(b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'*')) {
            self.at += 1;
        }
        self.text(start)
    }

    /// The bytes from `start` to here, which were all checked to be ASCII.
    fn text(&self, start: usize) -> Option<&'a str> {
        std::str::from_utf8(&self.bytes[start..self.at]).ok()
    }

    fn bare(&mut self) -> Option<Bare<'a>> {
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.number(),
            b'"' => self.string(),
            b':' => self.byte_sequence(),
            b'?' => {
                self.at += 1;
                if !matches!(self.peek()?, b'0' | b'1') {
                    return None;
                }
                self.at += 1;
                Some(Bare::Boolean)
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'*' => {
                let start = self.at;
                self.at += 1;
                while self.peek().is_some_and(|b| is_tchar(b) || b == b':' || b == b'/') {
                    self.at += 1;
                }
                Some(Bare::Token(self.text(start)?))
            }
            _ => None,
        }
    }

    /// An Integer (at most 15 digits) or a Decimal (at most 12 + 3 digits).
    fn number(&mut self) -> Option<Bare<'a>> {
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
        let start = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        // No field here takes a Decimal: only its syntax is checked.
        let places = self.at - start;
        (digits <= 12 && (1..=3).contains(&places)).then_some(Bare::Decimal)
    }

    fn string(&mut self) -> Option<Bare<'a>> {
        self.at += 1;
        let start = self.at;
        loop {
            match self.peek()? {
                b'"' => {
                    let text = self.text(start)?;
                    self.at += 1;
                    return Some(Bare::Text(text));
                }
                b'\\' => {
                    self.at += 1;
                    if !matches!(self.peek()?, b'"' | b'\\') {
                        return None;
                    }
                }
                0x20..=0x7e => {}
                _ => return None,
            }
            self.at += 1;
        }
    }

    fn byte_sequence(&mut self) -> Option<Bare<'a>> {
        self.at += 1;
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')) {
            self.at += 1;
        }
        let text = self.text(start)?;
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

    fn policy(name: &str, quota: f64, window_s: Option<f64>) -> Policy<'_> {
        Policy { name, quota, window_s, unit: "requests", partition: None }
    }

    fn available(policy: &str, remaining: f64, reset_s: Option<f64>) -> Available<'_> {
        Available { policy: Some(policy), remaining, reset_s, partition: None }
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
        assert_eq!(keyed[0].partition, Some("sdfjLJUOUH=="));
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

    fn lines(fields: &[(&str, &str)]) -> String {
        fields.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()
    }

    #[test]
    fn the_binding_limit_is_the_one_that_allows_the_fewest_requests_per_second() {
        let now = 1_767_225_600_000.0;
        let two = lines(&[
            ("ratelimit-policy", r#""burst";q=100;w=60, "daily";q=1000;w=86400"#),
            ("ratelimit", r#""burst";r=50;t=30, "daily";r=20;t=3600"#),
        ]);
        let limit = stated(&two, now).unwrap();
        assert_eq!(limit.policy.as_deref(), Some("daily"), "20 in an hour binds before 50 in 30 s");
        assert_eq!(
            (limit.quota, limit.window_s, limit.remaining, limit.reset_s),
            (Some(1000.0), Some(86400.0), 20.0, Some(3600.0))
        );
        let contradictory =
            lines(&[("ratelimit-policy", r#""p";q=10;w=5"#), ("ratelimit", r#""p";r=500;t=90"#)]);
        let limit = stated(&contradictory, now).unwrap();
        assert_eq!(
            (limit.remaining, limit.reset_s),
            (10.0, Some(5.0)),
            "held to the policy's quota and window"
        );
        let no_reset = lines(&[("ratelimit-policy", r#""p";q=10;w=5"#), ("ratelimit", r#""p";r=3"#)]);
        assert_eq!(stated(&no_reset, now).unwrap().reset_s, Some(5.0), "the window, when no t");
        let bytes = lines(&[
            ("ratelimit-policy", r#""b";q=65535;qu="content-bytes";w=10, "r";q=9;w=1"#),
            ("ratelimit", r#""b";r=0;t=10, "r";r=5;t=1"#),
        ]);
        assert_eq!(stated(&bytes, now).unwrap().policy.as_deref(), Some("r"), "bytes are not requests");
        let legacy = lines(&[("x-ratelimit-remaining", "7"), ("x-ratelimit-reset", "1767225610")]);
        assert_eq!(stated(&legacy, now).unwrap().reset_s, Some(10.0));
        let both = lines(&[("ratelimit", r#""d";r=50;t=30"#), ("x-ratelimit-remaining", "1")]);
        assert_eq!(stated(&both, now).unwrap().remaining, 50.0, "the draft's field first");
        let broken =
            lines(&[("ratelimit", "garbage("), ("x-ratelimit-remaining", "4"), ("ratelimit-reset", "2")]);
        assert_eq!(stated(&broken, now).unwrap().remaining, 4.0, "a malformed draft field falls back");
        assert_eq!(stated("", now), None);
        assert_eq!(
            stated(&lines(&[("ratelimit-policy", r#""p";q=10;w=5"#)]), now),
            None,
            "a policy alone states no remaining quota"
        );
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
