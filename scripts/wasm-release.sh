# The release wasm build, sourced by scripts/build.sh (the package) and scripts/size-ledger.sh
# (the same module with its function names kept, to say where its bytes go): one definition of
# the flags, so the ledger measures what the package ships.
#
# The release module is built with nightly's build-std, panic=immediate-abort and std's
# optimize_for_size: std's panic formatting and location strings are gzip that no caller can ever
# see (a panic traps either way, and no caller input may reach one). Tests, clippy and the
# wasm-bindgen tests use stable. Without the reference-types feature wasm-bindgen keeps JS values
# in a table of its glue instead of an externref table, which downloads smaller. MIR inlining (off
# by default at opt-level "z"), with every small function inlinable across crates and no shared
# generic copies, lets LLVM fold the async state machines and std's helpers into less code; the
# hint threshold 35 sits mid-way in a flat range. What each saves: ARCHITECTURE.md's ledger.

# cargo_wasm_release [CARGO_FEATURES]: target/release-wasm/wasm32-unknown-unknown/release/tilefetch.wasm
cargo_wasm_release() {
  local features=${1:-}
  RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Zfmt-debug=none \
    -Ctarget-feature=-reference-types,-multivalue -Zinline-mir=yes -Zinline-mir-threshold=800 -Zinline-mir-hint-threshold=35 \
    -Zcross-crate-inline-threshold=always -Zshare-generics=no" \
    cargo +nightly build --quiet --release --target wasm32-unknown-unknown ${features:+--features "$features"} \
    -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size --target-dir target/release-wasm
}
CARGO_WASM_RELEASE_OUT=target/release-wasm/wasm32-unknown-unknown/release/tilefetch.wasm

# wasm_opt_release FILE [EXTRA_FLAGS...]: wasm-opt -Oz from npm's binaryen, in place. Between two
# rounds of -Oz, the code is flattened and its control flow rebuilt by binaryen's relooper
# (--flatten --rereloop), from which -Oz then folds LLVM's branchy async state machines into less
# code without a measured change in a call's CPU (ARCHITECTURE.md's ledger).
wasm_opt_release() {
  local wasm=$1
  shift
  node_modules/.bin/wasm-opt -Oz --flatten --rereloop -Oz --converge \
    --low-memory-unused --zero-filled-memory \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$@" "$wasm" -o "$wasm"
}
