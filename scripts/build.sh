#!/usr/bin/env bash
# Builds the npm package in pkg/: the wasm module twice (for browsers and Node; with the `edge`
# feature for workerd), each with its wasm-bindgen glue in pkg/gen/, then wasm-opt -Oz from npm's
# binaryen. Prints the gzip -9 size of what a page downloads and fails above SIZE_BUDGET_BYTES.
# The release flags and why: scripts/wasm-release.sh. KEEP_NAMES=1 keeps the wasm's function
# names (for a profile: V8 shows them), which the size gate then counts.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/wasm-release.sh

# build_module NAME [CARGO_FEATURES]: pkg/gen/NAME.js (glue, bundled and minified) and
# pkg/gen/NAME_bg.wasm. "tilefetch" is what browsers and Node load; "tilefetch_edge" adds the
# exports of the `edge` feature, and pkg/workerd.js loads it.
build_module() {
  local name=$1 features=${2:-}
  cargo_wasm_release "$features"
  # --omit-default-module-path: every entry says where its .wasm is.
  wasm-bindgen --target web --no-typescript --omit-default-module-path --out-dir pkg/gen --out-name "$name" \
    "$CARGO_WASM_RELEASE_OUT"
  local wasm=pkg/gen/${name}_bg.wasm
  wasm_opt_release "$wasm" --strip-producers --strip-target-features ${KEEP_NAMES:+-g}
  # Its own run: under --converge the renaming pass would run again and print a second mapping.
  node_modules/.bin/wasm-opt --minify-imports-and-exports-and-modules --enable-bulk-memory \
    --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
    --enable-reference-types --enable-multivalue ${KEEP_NAMES:+-g} \
    "$wasm" -o "$wasm" >"target/wasm-names-$name.json"
  node scripts/shrink-names.mjs "pkg/gen/$name.js" "target/wasm-names-$name.json" "$wasm"
  node scripts/bundle-glue.mjs "pkg/gen/$name.js"
}

rm -rf pkg/gen
build_module tilefetch
build_module tilefetch_edge edge
# The options' names, their .d.ts and docs/reference.md's table, from the core's registry.
node scripts/options-from-registry.mjs

# The size gate: what a page downloads for `import { fetchTile } from "tilefetch"` (the browser
# build's wasm, its glue and pkg/browser.js), gzip -9, may not grow past this. The target is
# 40 KB (40,960 B); the budget is what the module measures today rounded up to the next KB, and
# moves only down, but for a capability, or a measured saving of a call's CPU, whose cost
# ARCHITECTURE.md's Size section records.
SIZE_BUDGET_BYTES=64512

gz() { cat "$@" | gzip -9 -c | wc -c; }
wasm_gz=$(gz pkg/gen/tilefetch_bg.wasm)
glue_gz=$(gz pkg/gen/tilefetch.js pkg/browser.js)
total=$((wasm_gz + glue_gz))
echo "tilefetch size (gzip -9): wasm ${wasm_gz} B + JS glue ${glue_gz} B = ${total} B" \
  "($(awk "BEGIN { printf \"%.1f\", $total / 1024 }") KB); raw wasm $(wc -c <pkg/gen/tilefetch_bg.wasm) B;" \
  "edge build (workerd) wasm $(gz pkg/gen/tilefetch_edge_bg.wasm) B + glue $(gz pkg/gen/tilefetch_edge.js) B"
if [ -z "${KEEP_NAMES:-}" ] && [ "$total" -gt "$SIZE_BUDGET_BYTES" ]; then
  echo "size gate: ${total} B is over the budget of ${SIZE_BUDGET_BYTES} B (scripts/build.sh)" >&2
  exit 1
fi

# The package's texts: README.md as published, the docs it links to, CHANGELOG.md, the licences.
node scripts/package-docs.mjs
