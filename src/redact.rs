//! Removes secrets from URLs before they appear in an error, a message or a statistic.

use crate::text::{before_any, contains, pieces, rsplit_at_byte, split_at_byte, split_once};

/// Replaces the values of secret query (and fragment) parameters, and any user-info, with `***`.
///
/// A parameter is secret when its name, lowercased and without `-`/`_`, is one of `sig`, `auth`,
/// `session`, `code`, `credential(s)`, `authorization`, or ends in `key`, `token`, `secret`,
/// `signature` or `password`/`passwd`/`pwd`, or starts with `xamz` / `xgoog` (signed S3 and GCS
/// URLs). Names are percent-decoded before the test, so `api%5Fkey` is caught too.
pub fn redact_url(url: &str) -> String {
    let (before_fragment, fragment) = match split_at_byte(url, b'#') {
        Some((a, b)) => (a, Some(b)),
        None => (url, None),
    };
    let (base, query) = match split_at_byte(before_fragment, b'?') {
        Some((a, b)) => (a, Some(b)),
        None => (before_fragment, None),
    };
    let mut out = String::with_capacity(url.len());
    out.push_str(&redact_userinfo(base));
    if let Some(query) = query {
        out.push('?');
        redact_params(query, &mut out);
    }
    if let Some(fragment) = fragment {
        out.push('#');
        redact_params(fragment, &mut out);
    }
    out
}

/// Redacts every URL inside free text (a platform's error message, a server's exception text),
/// and every query string without its URL (`?key=…`, `LAYERS=a&token=…`), which a server may
/// echo on its own.
pub fn redact_text(text: &str) -> String {
    if !text.bytes().any(|b| b == b'=' || b == b'@') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for (i, word) in pieces(text, b' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if contains(word, "://") || contains(word, "?") {
            out.push_str(&redact_url(word));
        } else if contains(word, "=") {
            redact_params(word, &mut out);
        } else {
            out.push_str(word);
        }
    }
    out
}

fn redact_userinfo(base: &str) -> String {
    let Some((scheme, rest)) = split_once(base, "://") else {
        return base.to_string();
    };
    let authority = before_any(rest, b"/");
    match rsplit_at_byte(authority, b'@') {
        Some((_, host)) => {
            let path = rest.strip_prefix(authority).unwrap_or("");
            let mut out = String::with_capacity(base.len());
            for part in [scheme, "://***@", host, path] {
                out.push_str(part);
            }
            out
        }
        None => base.to_string(),
    }
}

fn redact_params(params: &str, out: &mut String) {
    for (i, pair) in pieces(params, b'&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match split_at_byte(pair, b'=') {
            Some((name, _)) if is_secret_name(name) => {
                out.push_str(name);
                out.push_str("=***");
            }
            _ => out.push_str(pair),
        }
    }
}

/// Secret parameter names, as [`is_secret_name`] compares them (lowercase, no `-`, `_` or
/// spaces): these exactly, those ending in one of [`SECRET_SUFFIXES`], and those starting with one
/// of [`SECRET_PREFIXES`]. The one statement of the rule: the edge proxy's cache keys ask it too
/// (`isSecretName`, exported by the wasm module), and its test reads these lists.
pub const SECRET_NAMES: [&str; 7] =
    ["sig", "auth", "session", "code", "credential", "credentials", "authorization"];
/// See [`SECRET_NAMES`].
pub const SECRET_SUFFIXES: [&str; 7] = ["key", "token", "secret", "signature", "password", "passwd", "pwd"];
/// See [`SECRET_NAMES`]: signed S3 (`X-Amz-*`) and GCS (`X-Goog-*`) URLs.
pub const SECRET_PREFIXES: [&str; 2] = ["xamz", "xgoog"];

/// Whether a (possibly percent-encoded) parameter name names a secret.
pub fn is_secret_name(raw: &str) -> bool {
    let name = normalise(raw);
    SECRET_NAMES.iter().any(|n| name == n.as_bytes())
        || SECRET_SUFFIXES.iter().any(|s| name.ends_with(s.as_bytes()))
        || SECRET_PREFIXES.iter().any(|p| name.starts_with(p.as_bytes()))
}

/// Percent-decodes (and `+` → space), ASCII-lowercases and drops `-`, `_` and spaces. Works
/// on bytes: secret names are ASCII, and Unicode case tables would grow the wasm module
/// (ARCHITECTURE.md's ledger).
fn normalise(raw: &str) -> Vec<u8> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let mut b = bytes[i];
        i += 1;
        if b == b'%' {
            if let (Some(h), Some(l)) =
                (bytes.get(i).and_then(|c| hex(*c)), bytes.get(i + 1).and_then(|c| hex(*c)))
            {
                b = h * 16 + l;
                i += 2;
            }
        }
        if !matches!(b, b'-' | b'_' | b' ' | b'+') {
            out.push(b.to_ascii_lowercase());
        }
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_parameters_are_replaced_and_others_kept() {
        let url = "https://t.example/7/64/42.png?key=K1&style=dark&access_token=T2&apikey=A3&api_key=A4&signature=S5&sig=S6&X-Amz-Signature=S7&X-Amz-Credential=C8&token=T9&x=1";
        let out = redact_url(url);
        for secret in ["K1", "T2", "A3", "A4", "S5", "S6", "S7", "C8", "T9"] {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        assert_eq!(
            out,
            "https://t.example/7/64/42.png?key=***&style=dark&access_token=***&apikey=***&api_key=***&signature=***&sig=***&X-Amz-Signature=***&X-Amz-Credential=***&token=***&x=1"
        );
    }

    #[test]
    fn case_encoding_and_separators_do_not_hide_a_secret() {
        assert_eq!(
            redact_url("https://h/a?API_KEY=1&Api-Key=2&apiKey=3&api%5Fkey=4"),
            "https://h/a?API_KEY=***&Api-Key=***&apiKey=***&api%5Fkey=***"
        );
        assert_eq!(
            redact_url("https://h/a?subscription-key=1&client_secret=2&password=3"),
            "https://h/a?subscription-key=***&client_secret=***&password=***"
        );
    }

    #[test]
    fn fragments_and_userinfo_are_redacted() {
        assert_eq!(
            redact_url("https://user:pw@h.example/a.png#access_token=abc&z=1"),
            "https://***@h.example/a.png#access_token=***&z=1"
        );
        assert_eq!(redact_url("https://h.example/a@b.png"), "https://h.example/a@b.png");
    }

    #[test]
    fn urls_without_secrets_are_unchanged() {
        for url in [
            "https://h/1/2/3.png",
            "https://h/1.png?x=1&y",
            "https://h/?=&&=",
            "not a url",
            "",
            "?key",
            "%",
            "?a%=1&key%2=2&%zz=3",
        ] {
            assert_eq!(redact_url(url), url, "{url}");
        }
    }

    #[test]
    fn urls_inside_messages_are_redacted() {
        assert_eq!(
            redact_text(
                "Request cannot be constructed from a URL that includes credentials: https://u:pw@h/a?key=K"
            ),
            "Request cannot be constructed from a URL that includes credentials: https://***@h/a?key=***"
        );
        assert_eq!(redact_text("fetch failed"), "fetch failed");
        assert_eq!(
            redact_text("bad value in ?token=T&x=1 and LAYERS=a&api_key=K (see x@y)"),
            "bad value in ?token=***&x=1 and LAYERS=a&api_key=*** (see x@y)"
        );
    }

    #[test]
    fn odd_encodings_never_panic() {
        for name in ["%", "%4", "%ZZ", "%ff%fe", "é", "%e9", "key%"] {
            let _ = is_secret_name(name);
            let _ = redact_url(&format!("https://h/?{name}=v"));
        }
        assert!(is_secret_name("%6Bey"));
    }
}
