//! HTTP-date (RFC 9110 §5.6.7) in its three forms, to milliseconds since the Unix epoch.

const MONTHS: [&str; 12] =
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

use crate::text::{decimal_value, pieces, split_once};

/// Parses `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
/// (RFC 850) or `Sun Nov  6 08:49:37 1994` (asctime). Returns `None` for anything else. The
/// first two are fixed-width once the day name is off, so their fields are read by position.
pub fn parse_http_date(text: &str) -> Option<f64> {
    let text = text.trim_ascii();
    let (year, month, day, time) = match split_once(text, ", ") {
        // `06 Nov 1994 08:49:37 GMT`
        Some((name, rest)) if DAYS.contains(&name) => {
            layout(rest, &[(2, b' '), (6, b' '), (11, b' ')], " GMT", 24)?;
            (number(rest, 7, 4)?, at(rest, 3, 3)?, number(rest, 0, 2)?, at(rest, 12, 8)?)
        }
        // `06-Nov-94 08:49:37 GMT`; a two-digit year is read as 1970–2069.
        Some((name, rest)) if LONG_DAYS.contains(&name) => {
            layout(rest, &[(2, b'-'), (6, b'-'), (9, b' ')], " GMT", 22)?;
            let yy = number(rest, 7, 2)?;
            let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
            (year, at(rest, 3, 3)?, number(rest, 0, 2)?, at(rest, 10, 8)?)
        }
        Some(_) => return None,
        // `Sun Nov  6 08:49:37 1994`: the day of month is space-padded, and servers that pad
        // it otherwise (or not at all) are common enough to take: fields between any spaces.
        None => {
            let mut fields = pieces(text, b' ').filter(|field| !field.is_empty());
            let (name, month, day, time, year) =
                (fields.next()?, fields.next()?, fields.next()?, fields.next()?, fields.next()?);
            if fields.next().is_some() || !DAYS.contains(&name) || day.len() > 2 || year.len() != 4 {
                return None;
            }
            (decimal_value(year)? as u32, month, decimal_value(day)? as u32, time)
        }
    };
    let month = MONTHS.iter().position(|m| *m == month)? as u32 + 1;
    epoch_ms(year, month, day, time)
}

/// Whether `text` is `len` bytes long, with the given bytes at the given places, ending in `end`.
fn layout(text: &str, bytes: &[(usize, u8)], end: &str, len: usize) -> Option<()> {
    let fits = text.len() == len
        && text.ends_with(end)
        && bytes.iter().all(|&(i, b)| text.as_bytes().get(i) == Some(&b));
    fits.then_some(())
}

/// `len` bytes of `text` from `from` (`None` past its end or off a character boundary).
fn at(text: &str, from: usize, len: usize) -> Option<&str> {
    text.get(from..from + len)
}

/// `len` decimal digits of `text` from `from` (at most four here, so the value fits).
fn number(text: &str, from: usize, len: usize) -> Option<u32> {
    decimal_value(at(text, from, len)?).map(|n| n as u32)
}

/// `hh:mm:ss` plus a calendar date to epoch milliseconds; rejects impossible fields.
fn epoch_ms(year: u32, month: u32, day: u32, time: &str) -> Option<f64> {
    layout(time, &[(2, b':'), (5, b':')], "", 8)?;
    let (hour, minute, second) = (number(time, 0, 2)?, number(time, 3, 2)?, number(time, 6, 2)?);
    if hour > 23 || minute > 59 || second > 60 {
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
        assert_eq!(parse_http_date("Sun Nov 06 08:49:37 1994"), Some(EXAMPLE_MS));
        // asctime with other spacing, as the parser before this one (and servers) had it.
        assert_eq!(parse_http_date("Sun Nov 6 08:49:37 1994"), Some(EXAMPLE_MS));
        assert_eq!(parse_http_date("Sun  Nov   6  08:49:37  1994"), Some(EXAMPLE_MS));
        assert_eq!(parse_http_date("Wed Nov 16 08:49:37 1994"), Some(EXAMPLE_MS + 10.0 * 86_400_000.0));
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
            "Sun Nov 006 08:49:37 1994",
            "Sun Nov  6 08:49:37 01994",
            "Sun Nov  6 08:49:37 1994 GMT",
            "Sun Nov  6 08-49-37 1994",
            "Sun Nov 06 08:49:37 199x",
            "Sun, 06 Nov 1994 08:49:37 GMTX",
            "Sun, 06 Növ 1994 08:49:37 GMT",
            "Sun, 06 Nö 1994 08:49:37 GMT",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 UTC",
            "Sunday, 06 Nov 94 08:49:37 GMT",
            "Thu Jan  0 00:00:00 1970",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }
}
