//! Stated rate limits: any `RateLimit-Policy`, `RateLimit` or legacy field text parses to nothing
//! or to limits whose numbers are finite and not negative, and a policy's window is at least 1 s;
//! any text as a response's rate-limit lines states nothing or a limit the pacing takes in
//! without a panic, whose next slot is never in the past nor past `retryAfterMaxMs`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tilefetch::host::quota::StatedQuota;
use tilefetch::response::rate_limit::{parse_available, parse_legacy, parse_policies, stated};
use tilefetch_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes::new(data);
    let now = bytes.f64();
    let text = String::from_utf8_lossy(bytes.rest());
    for policy in parse_policies(&text).unwrap_or_default() {
        assert!(policy.quota.is_finite() && policy.quota >= 0.0, "{text:?}");
        assert!(policy.window_s.is_none_or(|w| w.is_finite() && w >= 1.0), "{text:?}");
    }
    let (remaining, reset) = match text.split_once(',') {
        Some((remaining, reset)) => (remaining, Some(reset)),
        None => (&*text, None),
    };
    let legacy = parse_legacy(remaining, reset, now);
    for limit in parse_available(&text).unwrap_or_default().into_iter().chain(legacy) {
        assert!(limit.remaining.is_finite() && limit.remaining >= 0.0, "{text:?}");
        assert!(limit.reset_s.is_none_or(|t| t >= 0.0 && !t.is_nan()), "{text:?} -> {:?}", limit.reset_s);
    }
    if let Some(limit) = stated(&text, now) {
        assert!(limit.remaining >= 0.0 && limit.reset_s.is_none_or(|t| t >= 0.0), "{text:?}");
        let mut quota = StatedQuota::default();
        quota.on_stated(1_000.0, 990.0, limit, 3, 60_000.0);
        if let Some(at) = quota.next_slot(1_000.0) {
            assert!((1_000.0..=61_000.0).contains(&at), "{text:?} -> {at}");
        }
    }
});
