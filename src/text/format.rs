//! Text for messages without `core::fmt`: strings joined, integers in decimal digits, and
//! numbers as JavaScript prints them. `core::fmt` and Rust's float formatting would add more to
//! the wasm module than these few loops are (ARCHITECTURE.md's ledger).

/// Joins `parts` into one string.
pub(crate) fn concat(parts: &[&str]) -> String {
    // Not `[&str]::concat`: its length pre-pass and specialised copies cost more wasm than the pushes.
    let mut joined = String::new();
    for part in parts {
        joined.push_str(part);
    }
    joined
}

/// `n` in decimal digits.
pub(crate) fn decimal_text(mut n: u64) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits[at..].iter().map(|&d| char::from(d)).collect()
}

/// A number for a message: as JS prints integers below 1e15 and fractions of up to three
/// decimals; other fractions rounded to three, and 1e15 or more as "1e+15+". Written by hand
/// because Rust's float formatting would add more to the wasm module (ARCHITECTURE.md's ledger).
pub(crate) fn number_text(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    let abs = n.abs();
    if abs >= 1e15 {
        // Past what a message needs to tell apart.
        let sign = if n < 0.0 { "-" } else { "" };
        return concat(&[sign, if n.is_infinite() { "Infinity" } else { "1e+15+" }]);
    }
    let mut whole = abs.trunc() as u64;
    let mut fraction = ((abs - abs.trunc()) * 1000.0).round() as u64;
    if fraction == 1000 {
        whole += 1;
        fraction = 0;
    }
    // A negative number that rounds to zero stays visibly negative ("-0"): it is shown because
    // it was refused for being negative.
    let sign = if n < 0.0 { "-" } else { "" };
    let mut text = concat(&[sign, &decimal_text(whole)]);
    // Up to three decimals, without trailing zeros: 3.050 → "3.05", 1.007 → "1.007".
    let mut unit = 100;
    if fraction > 0 {
        text.push('.');
    }
    while fraction > 0 {
        text.push(char::from(b'0' + (fraction / unit) as u8));
        fraction %= unit;
        unit /= 10;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_have_every_digit() {
        for (n, text) in [(0, "0"), (7, "7"), (10, "10"), (404, "404"), (u64::MAX, "18446744073709551615")] {
            assert_eq!(decimal_text(n), text);
        }
    }

    #[test]
    fn numbers_print_like_js() {
        let cases = [
            (0.0, "0"),
            (6000.0, "6000"),
            (-1.0, "-1"),
            (2.5, "2.5"),
            (0.125, "0.125"),
            (1.9999, "2"),
            (3.05, "3.05"),
            (1.007, "1.007"),
            (1e21, "1e+15+"),
            (1e15 - 1.0, "999999999999999"),
            (-0.0004, "-0"),
            (-0.0, "0"),
            (0.0005, "0.001"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (n, text) in cases {
            assert_eq!(number_text(n), text);
        }
    }
}
