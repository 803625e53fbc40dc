//! Redaction: whatever surrounds it, a secret parameter's value never survives, and nothing
//! panics on odd percent-escapes or UTF-8.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tilefetch::redact::{redact_text, redact_url};

const SECRET: &str = "zqxSECRETzqx";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = redact_url(&text);
    let _ = redact_text(&text);
    // The fuzzed text sits before a secret parameter, in the query and in the fragment. The
    // secret itself must not be made by the fuzzed text (it would then be the text's, not ours).
    if text.contains("zqx") {
        return;
    }
    for name in ["token", "api_key", "access_token", "X-Amz-Signature", "apikey"] {
        let url = format!("https://tiles.example/1/2/3.png?{text}&{name}={SECRET}");
        let shown = redact_url(&url);
        assert!(!shown.contains(SECRET), "{url:?} -> {shown:?}");
        // Platform messages quote URLs the platform has normalised: no spaces inside them.
        if !text.chars().any(char::is_whitespace) {
            let message = format!("fetch failed: {url} (connection reset)");
            let shown = redact_text(&message);
            assert!(!shown.contains(SECRET), "{message:?} -> {shown:?}");
        }
    }
});
