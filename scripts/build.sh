#!/usr/bin/env bash
# Builds the npm package in pkg/: the wasm module, its wasm-bindgen glue in pkg/gen/, then
# wasm-opt -Oz from npm's binaryen. Prints the gzip -9 size of what users download.
#
# The release module is built with nightly's build-std, panic=immediate-abort and std's
# optimize_for_size: std's panic formatting and location strings are ~8 KB of gzip that no caller
# can ever see (a panic traps either way, and no caller input may reach one). Tests, clippy and
# the wasm-bindgen tests use stable. Without the reference-types feature wasm-bindgen keeps JS values
# in a table of its glue instead of an externref table: 0.9 KB less to download.
# MIR inlining (off by default at opt-level "z"), with every small function inlinable across crates
# and no shared generic copies, lets LLVM fold the async state machines and std's helpers into
# less code: 5.1 KB less gzip. The hint threshold 35 sits mid-way in a flat range (30–40 measured
# within 60 B; 100, the default, costs 0.8 KB).
set -euo pipefail
cd "$(dirname "$0")/.."

RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none -Zfmt-debug=none \
  -Ctarget-feature=-reference-types,-multivalue -Zinline-mir=yes -Zinline-mir-threshold=800 -Zinline-mir-hint-threshold=35 \
  -Zcross-crate-inline-threshold=always -Zshare-generics=no" \
  cargo +nightly build --quiet --release --target wasm32-unknown-unknown \
  -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size --target-dir target/release-wasm
rm -rf pkg/gen
# --omit-default-module-path: browser.js always says where the .wasm is.
wasm-bindgen --target web --no-typescript --omit-default-module-path --out-dir pkg/gen --out-name tilefetch \
  target/release-wasm/wasm32-unknown-unknown/release/tilefetch.wasm
node_modules/.bin/wasm-opt -Oz --converge --low-memory-unused --zero-filled-memory \
  --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue \
  --strip-producers --strip-target-features \
  pkg/gen/tilefetch_bg.wasm -o pkg/gen/tilefetch_bg.wasm
# Its own run: under --converge the renaming pass would run again and print a second mapping.
node_modules/.bin/wasm-opt --minify-imports-and-exports-and-modules --enable-bulk-memory \
  --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
  --enable-reference-types --enable-multivalue \
  pkg/gen/tilefetch_bg.wasm -o pkg/gen/tilefetch_bg.wasm >target/wasm-names.json
node scripts/shrink-names.mjs pkg/gen/tilefetch.js target/wasm-names.json pkg/gen/tilefetch_bg.wasm

node scripts/bundle-glue.mjs pkg/gen/tilefetch.js

gz() { cat "$@" | gzip -9 -c | wc -c; }
wasm_gz=$(gz pkg/gen/tilefetch_bg.wasm)
glue_gz=$(gz pkg/gen/tilefetch.js pkg/browser.js)
total=$((wasm_gz + glue_gz))
echo "tilefetch size (gzip -9): wasm ${wasm_gz} B + JS glue ${glue_gz} B = ${total} B" \
  "($(awk "BEGIN { printf \"%.1f\", $total / 1024 }") KB); raw wasm $(wc -c <pkg/gen/tilefetch_bg.wasm) B"
