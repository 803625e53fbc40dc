#!/usr/bin/env bash
# Builds the npm package in pkg/: the wasm module (opt-level z, LTO), its wasm-bindgen glue in
# pkg/gen/, then wasm-opt -Oz from npm's binaryen. Prints the gzip -9 size users download.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet --release --target wasm32-unknown-unknown
rm -rf pkg/gen
wasm-bindgen --target web --no-typescript --out-dir pkg/gen --out-name tilefetch \
  target/wasm32-unknown-unknown/release/tilefetch.wasm
node_modules/.bin/wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
  pkg/gen/tilefetch_bg.wasm -o pkg/gen/tilefetch_bg.wasm

wasm_gz=$(gzip -9 -c pkg/gen/tilefetch_bg.wasm | wc -c)
glue_gz=$(cat pkg/gen/tilefetch.js pkg/gen/snippets/*/src/web/js_objects.js pkg/browser.js | gzip -9 -c | wc -c)
echo "tilefetch size: wasm $(wc -c <pkg/gen/tilefetch_bg.wasm) B raw, ${wasm_gz} B gzip -9;" \
  "JS glue ${glue_gz} B gzip -9; total $(( (wasm_gz + glue_gz) )) B ($(( (wasm_gz + glue_gz + 512) / 1024 )) KB) gzip -9"
