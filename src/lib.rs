//! tilefetch: reliable map tile loading.
//!
//! The crate is split into a pure core and a thin platform layer:
//!
//! * [`options`], [`backoff`], [`deadline`], [`retry_after`], [`classify`], [`redact`] and
//!   [`retry`] are plain Rust with no web types. Time enters as numbers (milliseconds) and
//!   randomness as a number in `[0, 1)`, so all of it is tested natively with `cargo test`.
//! * `web` (only on `wasm32`) implements the [`platform`] traits with the global `fetch`,
//!   `AbortController` and timers, and exports `fetchTile` to JavaScript.
// `deny`, not `forbid`: the wasm allocator (web/heap.rs) is the one module allowed unsafe code,
// each block of it with the SAFETY argument that earns it.
#![deny(unsafe_code)]
// Every public item says what it is; backon and gloo deny it too.
#![deny(missing_docs)]

pub mod backoff;
pub mod classify;
pub mod client;
pub mod client_config;
pub mod deadline;
pub mod error;
mod format;
pub mod gate;
pub mod host;
mod http_date;
pub mod ogc_exception;
pub mod options;
pub mod platform;
mod race;
pub mod redact;
pub mod retry;
pub mod retry_after;
pub mod size_class;
mod status_set;
pub mod text;
mod validate;
mod value;

pub use error::Error;
pub use options::Options;

#[cfg(target_arch = "wasm32")]
pub mod web;

/// The longest delay a JavaScript timer can represent (2^31 − 1 ms); every delay is clamped to it.
pub const MAX_DELAY_MS: f64 = 2_147_483_647.0;

/// The `User-Agent` sent where the platform lets a script set one (Node, Deno, Bun, workerd;
/// never a browser, where it would force a CORS preflight) and the caller's `headers` have none.
/// OpenStreetMap's tile usage policy asks every client for one that names it, and libraries for
/// a default naming the library and its documentation. Cargo.toml's version and homepage, which
/// pkg/package.json repeats (tests/js/user-agent.test.mjs checks that they agree).
pub const USER_AGENT: &str =
    concat!("tilefetch/", env!("CARGO_PKG_VERSION"), " (+", env!("CARGO_PKG_HOMEPAGE"), ")");
