//! fetchTile options and TileClient config: any JSON-like input is either accepted with sane
//! numbers or refused with an error naming a field; never a panic (a panic traps the module).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tilefetch::options::client_config::ClientConfig;
use tilefetch::options::Options;
use tilefetch::MAX_DELAY_MS;
use tilefetch_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let entries = Bytes::new(data).entries(0);
    let borrowed: Vec<(&str, _)> = entries.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    match Options::parse(&borrowed) {
        Ok(options) => {
            // Values past the timer limit are kept (options.rs: "clamped later"): finite and not
            // negative is what parsing promises; every delay derived from them must fit a timer.
            for ms in
                [options.base_delay_ms, options.max_delay_ms, options.attempt_timeout_ms, options.deadline_ms]
            {
                assert!(ms.is_finite() && ms >= 0.0, "{entries:?} -> {ms}");
            }
            let backoff = options.backoff();
            let mut previous = options.base_delay_ms;
            for retry in 1..=64 {
                let delay = backoff.delay(retry, previous, 0.999_999);
                assert!((0.0..=MAX_DELAY_MS).contains(&delay), "{entries:?}: retry {retry} waits {delay}");
                previous = delay;
            }
            let _ = options.verdict_key();
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
    match ClientConfig::parse(&borrowed) {
        Ok(config) => {
            let host = config.host_config("tiles.example.com:8080");
            let _ = config.options_for("tiles.example.com").with(&tilefetch::options::entries_of(&entries));
            let _ = host;
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
});
