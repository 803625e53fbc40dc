//! What a `TileClient` keeps between calls, as plain Rust: the hosts it has seen (and which it
//! may forget), the flights identical concurrent calls share (their key and the rule for joining
//! one), the tiles it delivered lately, and what `stats()` reports of a host. The wasm layer (`src/web/client.rs`) holds these
//! and only converts values and runs effects.

pub mod flights;
pub mod hosts;
pub mod recent;
pub mod snapshot;

pub use flights::{flight_key, flight_key_of, tile_key, Callers, FlightTable, Joinable};
pub use hosts::{HostRegistry, MAX_HOSTS};
pub use recent::RecentTiles;
pub use snapshot::HostSnapshot;

/// A key's FNV-1a hash: what the flights and the recent tiles compare before (or instead of) the
/// key's text, which for two tiles of one server differs only past a long common prefix.
pub(crate) fn key_hash(key: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for b in key.bytes() {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
