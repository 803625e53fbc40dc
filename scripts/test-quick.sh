#!/usr/bin/env bash
# The quick tier, for a contributor between edits: cargo fmt --check, clippy on the host, the
# native tests, the .d.ts type tests, the JS formatter and linter, and the Node JS tests of tests/js/ on the package as built
# (built first only when pkg/gen/ is missing). It leaves out the slow and the heavy: wasm32
# clippy, fuzzing, wasm-bindgen tests, npm pack + install, Deno and Bun, the soak, workerd, the
# real map servers and Chromium. scripts/test.sh runs everything; CI runs scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
cargo fmt --all -- --check
cargo clippy --quiet --all-targets -- -D warnings
cargo test --quiet
node scripts/options-from-registry.mjs --check
node_modules/.bin/tsc -p tests/types
node_modules/.bin/biome ci --colors=off .
[ -f pkg/gen/tilefetch_bg.wasm ] || bash scripts/build.sh
node --test --test-concurrency=2 tests/js/client.test.mjs tests/js/options.test.mjs tests/js/responses.test.mjs \
  tests/js/timing.test.mjs tests/js/user-agent.test.mjs
echo "quick tier: $((SECONDS - started)) s"
