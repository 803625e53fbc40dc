#!/usr/bin/env bash
# The size ledger: where the bytes of what a page downloads go. Builds the browser module as
# scripts/build.sh does (scripts/wasm-release.sh) but keeps its function names, then
# scripts/size-ledger.mjs attributes each function body to its source folder, file and crate and
# prints (or, with --write, puts into ARCHITECTURE.md) the tables. The glue and entry are the
# package's own (pkg/, built when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/wasm-release.sh
[ -f pkg/gen/tilefetch.js ] || bash scripts/build.sh
out=target/size-ledger
rm -rf "$out"
cargo_wasm_release
wasm-bindgen --target web --no-typescript --omit-default-module-path --out-dir "$out" --out-name tilefetch \
  "$CARGO_WASM_RELEASE_OUT"
# -g: the same passes, the name section kept.
wasm_opt_release "$out/tilefetch_bg.wasm" -g --strip-producers --strip-target-features
node scripts/size-ledger.mjs "$out/tilefetch_bg.wasm" pkg/gen/tilefetch_bg.wasm "$@"
