//! The `Retry-After` header: delta-seconds or an HTTP-date, to a wait in milliseconds.

use crate::timing::backoff::clamp_delay;
use crate::timing::http_date::parse_http_date;

/// Parses a Retry-After value into how long to wait from now, in milliseconds.
///
/// * delta-seconds: `120`, also `1.5` (some servers send fractions); a sign or anything else
///   makes it garbage.
/// * HTTP-date, any of the three forms. The wait is measured against `server_now_ms` (the
///   response's own `Date` header, which cancels clock skew between client and server) when given,
///   else against `client_now_ms`. A date in the past means "now" (0).
///
/// Garbage returns `None` and is ignored by the caller. Huge values saturate at 2^31 − 1 ms.
pub fn parse_retry_after(value: &str, server_now_ms: Option<f64>, client_now_ms: f64) -> Option<f64> {
    let value = value.trim_ascii();
    if value.is_empty() {
        return None;
    }
    if value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return seconds(value).map(|s| clamp_delay(s * 1000.0));
    }
    let at = parse_http_date(value)?;
    let now = server_now_ms.unwrap_or(client_now_ms);
    Some(clamp_delay(at - now))
}

/// `12` or `1.5` to seconds; by hand, since `str::parse::<f64>` would add its float parser to the
/// wasm module (ARCHITECTURE.md's ledger).
fn seconds(text: &str) -> Option<f64> {
    let (whole, fraction) = match crate::text::split_at_byte(text, b'.') {
        Some((w, f)) if !w.is_empty() && !f.is_empty() && !f.bytes().any(|b| b == b'.') => (w, f),
        Some(_) => return None,
        None => (text, ""),
    };
    let mut value = 0.0f64;
    for digit in whole.bytes() {
        value = value * 10.0 + f64::from(digit - b'0');
    }
    let mut scale = 0.1;
    for digit in fraction.bytes() {
        value += f64::from(digit - b'0') * scale;
        scale /= 10.0;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MAX_DELAY_MS;

    const NOW: f64 = 784_111_777_000.0; // Sun, 06 Nov 1994 08:49:37 GMT

    #[test]
    fn delta_seconds() {
        assert_eq!(parse_retry_after("0", None, NOW), Some(0.0));
        assert_eq!(parse_retry_after("1", None, NOW), Some(1000.0));
        assert_eq!(parse_retry_after(" 120 ", None, NOW), Some(120_000.0));
        assert_eq!(parse_retry_after("1.5", None, NOW), Some(1500.0));
        assert_eq!(parse_retry_after("86400", None, NOW), Some(86_400_000.0));
    }

    #[test]
    fn huge_values_saturate_at_the_timer_limit() {
        assert_eq!(parse_retry_after("99999999999999999999999", None, NOW), Some(MAX_DELAY_MS));
        assert_eq!(parse_retry_after(&"9".repeat(400), None, NOW), Some(MAX_DELAY_MS));
        assert_eq!(parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", None, NOW), Some(MAX_DELAY_MS));
    }

    #[test]
    fn each_http_date_form_is_measured_from_now() {
        for form in
            ["Sun, 06 Nov 1994 08:49:47 GMT", "Sunday, 06-Nov-94 08:49:47 GMT", "Sun Nov  6 08:49:47 1994"]
        {
            assert_eq!(parse_retry_after(form, None, NOW), Some(10_000.0), "{form}");
        }
    }

    #[test]
    fn the_servers_date_header_cancels_clock_skew() {
        let server_now = NOW - 60_000.0; // the server's clock is a minute behind ours
        let wait = parse_retry_after("Sun, 06 Nov 1994 08:48:47 GMT", Some(server_now), NOW);
        assert_eq!(wait, Some(10_000.0));
    }

    #[test]
    fn past_dates_mean_now() {
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", None, NOW), Some(0.0));
    }

    #[test]
    fn garbage_and_negative_values_are_ignored() {
        for bad in [
            "", "  ", "-1", "-0", "+5", "1e3", "5s", "soon", "1.2.3", ".5", "5.", "0x10", "NaN", "Infinity",
            "١٢",
        ] {
            assert_eq!(parse_retry_after(bad, None, NOW), None, "{bad:?}");
        }
    }
}
