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
