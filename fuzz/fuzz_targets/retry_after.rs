//! Retry-After: any header text and any clocks give either nothing or a wait a timer can hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tilefetch::timing::retry_after::parse_retry_after;
use tilefetch::MAX_DELAY_MS;
use tilefetch_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes::new(data);
    let server_now = if bytes.byte().is_multiple_of(2) { Some(bytes.f64()) } else { None };
    let client_now = bytes.f64();
    let header = String::from_utf8_lossy(bytes.rest());
    if let Some(wait) = parse_retry_after(&header, server_now, client_now) {
        assert!((0.0..=MAX_DELAY_MS).contains(&wait), "{header:?} -> {wait}");
    }
});
