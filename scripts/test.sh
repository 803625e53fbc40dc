#!/usr/bin/env bash
# Runs every test of tilefetch, after installing what they need (scripts/setup.sh):
#   1. cargo fmt --check, cargo clippy -D warnings on the host and on wasm32, the .d.ts type tests
#      (tsc -p tests/types), the JS formatter and linter (biome ci, biome.jsonc)
#   2. native Rust tests (pure core and the retry loop against fakes), then a short fuzz run
#      of the parsers (scripts/fuzz.sh short: fixed runs per target)
#   3. the npm package build (prints its gzip size)
#   4. wasm-bindgen tests with real fetch against the loopback fault server: Node, headless
#      Chromium, and a dedicated worker in Chromium
#   5. JS tests (node:test) on the built pkg/: fault server, fetchTile and TileClient behaviour,
#      a soak, npm pack + install, the packed tarball's contents (publint, arethetypeswrong),
#      workerd (miniflare), real map servers (MapProxy, MapServer
#      behind a counting proxy, tests/real-servers/); then, one file at a time, Chromium: a
#      page, a worker, Vite builds, webpack, Rspack, Parcel, esbuild and Rollup builds, the
#      examples/ apps, the map adapters with the real libraries and the demo page
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
log=$(mktemp -d)
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$log"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Runs a command, shows its output, and keeps a copy for the summary.
run() {
  local name=$1
  shift
  "$@" 2>&1 | tee "$log/$name"
  return "${PIPESTATUS[0]}"
}
cargo_passed() { grep -hoE 'test result: ok\. [0-9]+ passed' "$log/$1" | awk '{ n += $4 } END { print n + 0 }'; }

step "static checks"
cargo fmt --all -- --check
cargo clippy --quiet --all-targets -- -D warnings
cargo clippy --quiet --all-targets --target wasm32-unknown-unknown -- -D warnings
# The edge build's own exports (src/web/gate.rs, two in src/web/mod.rs) exist only with its feature.
cargo clippy --quiet --all-targets --target wasm32-unknown-unknown --features edge -- -D warnings
(cd fuzz && cargo fmt -- --check && cargo +nightly clippy --quiet --bins -- -D warnings)
# The options' .d.ts, written from the core's registry (the build writes it again); the docs'
# option tables must be the registry's as committed.
node scripts/options-from-registry.mjs --check
node_modules/.bin/tsc -p tests/types
node_modules/.bin/biome ci --colors=off .

step "native tests (cargo test)"
run native cargo test --quiet

step "fuzz (short, scripts/fuzz.sh short)"
run fuzz bash scripts/fuzz.sh short

step "build pkg/"
bash scripts/build.sh

step "wasm-bindgen tests"
node tests/server/fault-server.mjs --port 0 >"$log/server.out" 2>&1 </dev/null &
server_pid=$!
for _ in $(seq 50); do grep -q '^FAULT_SERVER_URL=' "$log/server.out" && break; sleep 0.1; done
TILEFETCH_TEST_SERVER=$(sed -n 's/^FAULT_SERVER_URL=//p' "$log/server.out")
[ -n "$TILEFETCH_TEST_SERVER" ] || { cat "$log/server.out"; echo "fault server did not start"; exit 1; }
export TILEFETCH_TEST_SERVER CHROMEDRIVER=/usr/bin/chromedriver
echo "-- in Node"
run wasm-node cargo test --target wasm32-unknown-unknown --test wasm
# Chromium under chromedriver sometimes never runs the tests at all: the runner's own static
# server (wasm-bindgen-test-runner's, on rouille) never answers one of the page's module requests
# (a net log of such a run: task.js sent, its headers never read; the other snippets served), so
# the page never finishes loading and the runner waits out its 300 s page-load bound. Seen here in
# 3 of 6 runs on 2026-12-01, and in 1 of 6 with Chromium's background networking off
# (tests/webdriver.json: the flags tests/browser/helpers.mjs gives Chromium too; without them its
# own connections to Google's hosts are refused by this closed network). A whole run takes about
# 10 s, so a run is bounded at 45 s; one that reported no result is run again, at most eight times
# in all, and said so (the worker run once took four: three ended at the runner's own 20 s with
# "Loading Wasm module..." and no test run). A run that reports a result, passed or FAILED, is
# final: a failing test is never retried.
export WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/tests/webdriver.json"
again_if_unreported() {
  local name=$1
  shift
  local rc=0
  for attempt in 1 2 3 4 5 6 7 8; do
    rc=0
    run "$name" timeout 45 "$@" || rc=$?
    if [ "$rc" = 0 ] || grep -q '^test result: ' "$log/$name"; then
      return "$rc"
    fi
    echo "-- $name reported no test result (exit $rc, attempt $attempt of 8)"
  done
  return "$rc"
}
echo "-- in headless Chromium"
again_if_unreported wasm-browser env WASM_BINDGEN_USE_BROWSER=1 cargo test --target wasm32-unknown-unknown --test wasm
echo "-- in a dedicated worker (Chromium)"
again_if_unreported wasm-worker env WASM_BINDGEN_USE_DEDICATED_WORKER=1 cargo test --target wasm32-unknown-unknown --test wasm
grep -q 'Running headless tests in Chrome' "$log/wasm-browser" || { echo "the browser run did not use Chrome"; exit 1; }
kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
server_pid=""

step "JS tests on pkg/ (node --test): server, Node, workerd, real map servers"
run js node --test --test-concurrency=2 tests/server/ tests/js/ tests/workerd/ tests/real-servers/
step "JS tests on pkg/ (node --test): Chromium, one file at a time (their timings are asserted)"
run browser node --test --test-concurrency=1 tests/browser/

js_pass=$(( $(sed -n 's/^# pass //p' "$log/js" | tail -1) + $(sed -n 's/^# pass //p' "$log/browser" | tail -1) ))
js_fail=$(( $(sed -n 's/^# fail //p' "$log/js" | tail -1) + $(sed -n 's/^# fail //p' "$log/browser" | tail -1) ))
step "summary"
printf '%-34s %s\n' \
  "native (cargo test):" "$(cargo_passed native) passed" \
  "wasm-bindgen, Node:" "$(cargo_passed wasm-node) passed" \
  "wasm-bindgen, Chromium page:" "$(cargo_passed wasm-browser) passed" \
  "wasm-bindgen, Chromium worker:" "$(cargo_passed wasm-worker) passed" \
  "fuzz targets (short runs):" "$(grep -c 'invariants held' "$log/fuzz") passed" \
  "JS (node:test):" "${js_pass:-0} passed, ${js_fail:-0} failed"
total=$(( $(cargo_passed native) + $(grep -c 'invariants held' "$log/fuzz") + $(cargo_passed wasm-node) + $(cargo_passed wasm-browser) + $(cargo_passed wasm-worker) + ${js_pass:-0} ))
echo "all: ${total} passed, ${js_fail:-0} failed"
