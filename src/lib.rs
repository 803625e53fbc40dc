//! tilefetch: reliable map tile loading.
//!
//! The crate is split into a pure core and a thin platform layer:
//!
//! * The pure core, plain Rust with no web types: [`options`] (the option registry, `fetchTile`'s
//!   options, a client's config), [`timing`] (the retry arithmetic: backoff, deadline,
//!   Retry-After), [`response`] (what a response means), [`host`] (what calls to a host share,
//!   and the edge gate), [`client`] (what a client keeps between calls), [`retry`] (the loop, over
//!   the [`retry::platform`] traits), [`redact`] and [`error`]. Time enters as numbers
//!   (milliseconds) and randomness as a number in `[0, 1)`, so all of it is tested natively.
//! * `web` (only on `wasm32`) implements the platform traits with the global `fetch`,
//!   `AbortController` and timers, and exports `fetchTile` to JavaScript.
// `deny`, not `forbid`: the wasm allocator (web/heap.rs) is the one module allowed unsafe code,
// each block of it with the SAFETY argument that earns it.
#![deny(unsafe_code)]
// Every public item says what it is; backon and gloo deny it too.
#![deny(missing_docs)]

pub mod client;
pub mod error;
pub mod host;
pub mod options;
pub mod redact;
pub mod response;
pub mod retry;
// The allocator's arithmetic: used by web/heap.rs on wasm32 only, tested natively.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod size_class;
mod text;
pub mod timing;

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
