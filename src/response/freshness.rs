//! How long a delivered tile may be handed out again from a client's memory without a request:
//! what a page's `<img>` loader does with the images it has shown (HTML's list of available
//! images), held to what the response says of its freshness (RFC 9111): `no-store` is never
//! kept, `no-cache` never reused, `max-age` (less the `Age` a cache has held it) or `Expires`
//! bounds it, and a tile that says nothing is reused for [`UNSTATED_REUSE_MS`].

use crate::text::{decimal_value, pieces, split_at_byte};
use crate::timing::http_date::parse_http_date;

/// How long a tile whose response states no freshness is reused: the span of a map session's
/// pans back and forth, short enough that a tile changed on the server shows within minutes.
pub const UNSTATED_REUSE_MS: f64 = 300_000.0;

/// The response headers freshness is read from. `Cache-Control` and `Expires` are
/// CORS-safelisted, readable on any answer a page may read at all; `Age` only where the server
/// exposes it, so across origins a tile's reuse may run from its arrival.
pub struct FreshnessHeaders<'a> {
    /// `Cache-Control`.
    pub cache_control: Option<&'a str>,
    /// `Age`: seconds a cache has held it.
    pub age: Option<&'a str>,
    /// `Expires`.
    pub expires: Option<&'a str>,
}

/// For how many ms from now the tile may be reused; `None`: it may not be (not kept).
/// `now_epoch_ms`: the client's wall clock, against which `Expires` is read.
pub fn reuse_ms(headers: &FreshnessHeaders<'_>, now_epoch_ms: f64) -> Option<f64> {
    let mut max_age_s = None;
    for directive in pieces(headers.cache_control.unwrap_or(""), b',') {
        let (name, value) = split_at_byte(directive, b'=').unwrap_or((directive, ""));
        let name = name.trim_ascii();
        if name.eq_ignore_ascii_case("no-store") || name.eq_ignore_ascii_case("no-cache") {
            return None;
        }
        if name.eq_ignore_ascii_case("max-age") {
            // An unreadable max-age is stale (RFC 9111 §4.2.1).
            let value = value.trim_ascii();
            let unquoted = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
            max_age_s = Some(decimal_value(unquoted).unwrap_or(0));
        }
    }
    let stated_ms = match max_age_s {
        Some(seconds) => {
            let age_s = headers.age.map(str::trim_ascii).and_then(decimal_value).unwrap_or(0);
            Some(seconds.saturating_sub(age_s) as f64 * 1000.0)
        }
        // An unreadable Expires (such as "0") is in the past (§5.3).
        None => headers.expires.map(|text| parse_http_date(text).map_or(0.0, |at| at - now_epoch_ms)),
    };
    match stated_ms {
        Some(ms) if ms > 0.0 => Some(ms.min(UNSTATED_REUSE_MS)),
        Some(_) => None,
        None => Some(UNSTATED_REUSE_MS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reuse(cache_control: Option<&str>, age: Option<&str>, expires: Option<&str>) -> Option<f64> {
        // 2026-01-01T00:00:00Z
        reuse_ms(&FreshnessHeaders { cache_control, age, expires }, 1_767_225_600_000.0)
    }

    #[test]
    fn nothing_stated_is_reused_for_the_unstated_span() {
        assert_eq!(reuse(None, None, None), Some(UNSTATED_REUSE_MS));
        assert_eq!(reuse(Some("public"), None, None), Some(UNSTATED_REUSE_MS));
    }

    #[test]
    fn no_store_and_no_cache_are_never_reused() {
        assert_eq!(reuse(Some("no-store"), None, None), None);
        assert_eq!(reuse(Some("public, No-Cache"), None, None), None);
        assert_eq!(reuse(Some("max-age=600, no-store"), None, None), None);
    }

    #[test]
    fn max_age_less_age_bounds_it_and_wins_over_expires() {
        assert_eq!(reuse(Some("max-age=60"), None, None), Some(60_000.0));
        assert_eq!(reuse(Some("public, max-age=60"), Some("45"), None), Some(15_000.0));
        assert_eq!(reuse(Some("max-age=60"), Some("60"), None), None);
        assert_eq!(reuse(Some("max-age=0"), None, None), None);
        assert_eq!(reuse(Some("max-age=\"30\""), None, None), Some(30_000.0));
        assert_eq!(reuse(Some("max-age=abc"), None, None), None);
        assert_eq!(reuse(Some("max-age=86400"), None, None), Some(UNSTATED_REUSE_MS));
        assert_eq!(reuse(Some("max-age=60"), None, Some("Thu, 01 Jan 1970 00:00:00 GMT")), Some(60_000.0));
    }

    #[test]
    fn expires_bounds_it_when_no_max_age_says() {
        assert_eq!(reuse(None, None, Some("Thu, 01 Jan 2026 00:00:20 GMT")), Some(20_000.0));
        assert_eq!(reuse(None, None, Some("Wed, 31 Dec 2025 23:59:00 GMT")), None);
        assert_eq!(reuse(None, None, Some("0")), None);
    }
}
