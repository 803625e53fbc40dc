//! HTTP-date (RFC 9110 §5.6.7) in its three forms, to milliseconds since the Unix epoch.

const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

use crate::text::{decimal_value, pieces, split_at_byte, split_once};

/// Parses `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
/// (RFC 850) or `Sun Nov  6 08:49:37 1994` (asctime). Returns `None` for anything else.
pub fn parse_http_date(text: &str) -> Option<f64> {
    let text = text.trim_ascii();
    if let Some((day, rest)) = split_once(text, ", ") {
        if DAYS.contains(&day) {
            return imf_fixdate(rest);
        }
        if LONG_DAYS.contains(&day) {
            return rfc850(rest);
        }
        return None;
    }
    asctime(text)
}

/// `06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(rest: &str) -> Option<f64> {
    let mut parts = pieces(rest, b' ');
    let day = two_digits(parts.next()?)?;
    let month = month(parts.next()?)?;
    let year = digits(parts.next()?, 4)?;
    let time = parts.next()?;
    if parts.next()? != "GMT" || parts.next().is_some() {
        return None;
    }
    epoch_ms(year, month, day, time)
}

/// `06-Nov-94 08:49:37 GMT`; a two-digit year is read as 1970–2069.
fn rfc850(rest: &str) -> Option<f64> {
    let (date, rest) = split_at_byte(rest, b' ')?;
    let (time, zone) = split_at_byte(rest, b' ')?;
    if zone != "GMT" {
        return None;
    }
    let mut fields = pieces(date, b'-');
    let day = two_digits(fields.next()?)?;
    let month = month(fields.next()?)?;
    let yy = two_digits(fields.next()?)?;
    if fields.next().is_some() {
        return None;
    }
    let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
    epoch_ms(year, month, day, time)
}

/// `Nov  6 08:49:37 1994` after the day name; the day of month may be space-padded.
fn asctime(text: &str) -> Option<f64> {
    let (day_name, rest) = split_at_byte(text, b' ')?;
    if !DAYS.contains(&day_name) {
        return None;
    }
    let mut parts = pieces(rest, b' ').filter(|p| !p.is_empty());
    let month = month(parts.next()?)?;
    let day_text = parts.next()?;
    if day_text.is_empty() || day_text.len() > 2 {
        return None;
    }
    let day = digits(day_text, day_text.len())?;
    let time = parts.next()?;
    let year = digits(parts.next()?, 4)?;
    if parts.next().is_some() {
        return None;
    }
    epoch_ms(year, month, day, time)
}

fn month(name: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == name).map(|i| i as u32 + 1)
}

fn two_digits(text: &str) -> Option<u32> {
    digits(text, 2)
}

fn digits(text: &str, len: usize) -> Option<u32> {
    if text.len() != len {
        return None;
    }
    // At most four digits here, so the value fits.
    decimal_value(text).map(|n| n as u32)
}

/// `hh:mm:ss` plus a calendar date to epoch milliseconds; rejects impossible fields.
fn epoch_ms(year: u32, month: u32, day: u32, time: &str) -> Option<f64> {
    let mut hms = pieces(time, b':');
    let hour = two_digits(hms.next()?)?;
    let minute = two_digits(hms.next()?)?;
    let second = two_digits(hms.next()?)?;
    if hms.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year as i64, month as i64, day as i64);
    let seconds = days * 86_400 + (hour * 3600 + minute * 60 + second) as i64;
    Some(seconds as f64 * 1000.0)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE_MS: f64 = 784_111_777_000.0; // 1994-11-06T08:49:37Z

    #[test]
    fn all_three_forms_of_the_rfc_example() {
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(EXAMPLE_MS));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), Some(EXAMPLE_MS));
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), Some(EXAMPLE_MS));
        assert_eq!(parse_http_date("  Sun, 06 Nov 1994 08:49:37 GMT "), Some(EXAMPLE_MS));
    }

    #[test]
    fn epoch_and_leap_days() {
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0.0));
        assert_eq!(parse_http_date("Thu, 29 Feb 2024 12:00:00 GMT"), Some(1_709_208_000_000.0));
        assert_eq!(parse_http_date("Sat, 29 Feb 2025 12:00:00 GMT"), None);
        assert_eq!(parse_http_date("Wednesday, 01-Jan-30 00:00:00 GMT"), Some(1_893_456_000_000.0));
    }

    #[test]
    fn malformed_dates_are_rejected() {
        for bad in [
            "",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Funday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov 6 08:49:37",
            "Sun Nov 100 08:49:37 1994",
            "1994-11-06T08:49:37Z",
            "Sun, 06 Nov +994 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }
}
