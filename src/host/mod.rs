//! What one host's calls share: a concurrency queue, a circuit breaker, a retry budget, a
//! rate-limit pause and an adaptive rate, and statistics. Pure state machines driven by explicit
//! time; the retry loop turns them into waits over the platform traits. `gate` is the same state
//! shared by a fleet of edge isolates.

pub mod breaker;
pub mod budget;
pub mod gate;
pub mod latency;
pub mod limit;
pub mod quota;
pub mod rate;
pub mod slots;
pub mod state;
pub mod turns;

pub use state::{HostConfig, HostState};

/// `host[:port]` of an absolute URL, lowercased, without user-info: the key of per-host state
/// and of `stats()`.
pub fn host_key(url: &str) -> String {
    let rest = crate::text::split_once(url, "://").map_or(url, |(_, rest)| rest);
    let authority = crate::text::before_any(rest, b"/?#");
    let host = crate::text::rsplit_at_byte(authority, b'@').map_or(authority, |(_, host)| host);
    host.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::host_key;

    #[test]
    fn host_keys_drop_paths_queries_and_credentials() {
        assert_eq!(host_key("https://Tiles.Example.com/1/2/3.png?key=x"), "tiles.example.com");
        assert_eq!(host_key("http://127.0.0.1:8080/t"), "127.0.0.1:8080");
        assert_eq!(host_key("https://user:pw@h.example:8443?x"), "h.example:8443");
        assert_eq!(host_key("https://h.example#frag"), "h.example");
    }
}
