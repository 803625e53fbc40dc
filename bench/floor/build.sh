#!/usr/bin/env bash
# Builds the overhead bench's floor (bench/floor/src/lib.rs) into target/floor/pkg/ for Node.
# Needs what scripts/setup.sh installs (the wasm32 target, the wasm-bindgen CLI).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet --release --target wasm32-unknown-unknown --manifest-path bench/floor/Cargo.toml \
  --target-dir target/floor
wasm-bindgen --target nodejs --no-typescript --out-dir target/floor/pkg \
  target/floor/wasm32-unknown-unknown/release/tilefetch_bench_floor.wasm
# wasm-bindgen's Node target is CommonJS; the repository's package.json says "type": "module".
echo '{ "type": "commonjs" }' >target/floor/pkg/package.json
