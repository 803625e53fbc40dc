#!/usr/bin/env bash
# Regenerates bench/RESULTS.md: installs what is needed and builds pkg/ (as scripts/demo.sh does;
# BENCH_SKIP_BUILD=1 skips both), then runs every benchmark and writes their raw output to
# bench/out/ (git-ignored):
#   1. size      gzip -9 of the wasm, the glue, each adapter, each anchor bundled (bench/size.mjs)
#   2. startup   import to first fetchTile call, Node and Chromium (bench/startup.mjs); when a map's
#                first tile request leaves through each adapter against its own loader, on a cold
#                and a warm HTTP cache (bench/first-request.mjs)
#   3. overhead  healthy tiles, every client in alternating rounds, Node and Chromium (bench/overhead.mjs;
#      in Node beside the wasm floor that bench/floor/build.sh builds; the profile, own-work and
#      crossings benches also run tilefetch as it was at the boundary issue's start, which
#      bench/before/build.sh builds from the repository's history),
#      and where a call's CPU time goes, raw fetch, the plain JS wrapper and fetchTile, by V8's
#      profiler in Node and in Chromium (bench/profile.mjs), CPU per call with fetch stubbed out
#      (bench/own-work.mjs; a page's main thread per call in Chromium,
#      bench/own-work-chromium.mjs) and how often a call crosses between JS and the wasm module
#      (bench/crossings.mjs)
#   4. fault     every client × 18 fault scenarios on loopback (bench/fault.mjs)
#   5. mapview   OpenLayers, Leaflet, MapLibre, CesiumJS and deck.gl in Chromium, own loader against the tilefetch
#                adapter, 8 fault scenarios and, for OpenLayers and Leaflet, 2 on a server without
#                CORS headers (bench/mapview.mjs); the same over a fault server answering in 0–5 ms
#                and over a real MapProxy (--server fast, --server mapproxy), a returning visit on
#                the fast server (--server fast-returning), where a tile's time goes there
#                (bench/mapview-phases.mjs) and what starting a request costs the page
#                (bench/request-start.mjs); healthy, OpenLayers, Leaflet and MapLibre at full
#                screen and over HTTP/2 (--viewport 1792x1024, --protocol h2, both); a pan faster
#                than a 300 ms server and a long session panning back and forth
#                (bench/mapview-session.mjs)
#      and, through the edge proxy in workerd, a slow upstream and a fixed-window quota
#      (bench/slow-upstream.mjs; Node's side of both is in the fault benchmark)
#   6. soak      100 000 fetchTile calls in one process (bench/soak.mjs)
#   7. jitter    AWS's backoff experiment in Rust (examples/jitter_experiment.rs), when present
#   8. fuzz      cargo-fuzz, long runs (scripts/fuzz.sh long), when present
# and finally bench/report.mjs, which writes bench/RESULTS.md and its two plots (outage requests,
# map-view holes). BENCH_SKIP_RUST=1 leaves out 7 and 8 (RESULTS.md then says so).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
started=$SECONDS
rm -rf bench/out
mkdir -p bench/out
# Runs one phase and records its duration for the report.
phase() {
  local name=$1 t0=$SECONDS
  shift
  step "$name"
  "$@"
  printf '%s\t%s\n' "$name" $((SECONDS - t0)) >>bench/out/phases.tsv
}
# A Rust section: its stdout is markdown for RESULTS.md; a failure is reported there, not fatal.
rust_section() {
  local out=$1
  shift
  local code=0
  "$@" >"bench/out/$out.tmp" || code=$?
  cat "bench/out/$out.tmp"
  if [ "$code" -ne 0 ]; then
    { cat "bench/out/$out.tmp"; printf '\n**Failed**: `%s` exited with %s.\n' "$*" "$code"; } >"bench/out/$out"
  else
    mv "bench/out/$out.tmp" "bench/out/$out"
  fi
  rm -f "bench/out/$out.tmp"
}

if [ -z "${BENCH_SKIP_BUILD:-}" ]; then
  phase setup bash scripts/setup.sh
  phase build bash scripts/build.sh
fi
phase size node bench/size.mjs
phase startup node bench/startup.mjs
phase first-request node bench/first-request.mjs
phase floor bash bench/floor/build.sh
# Not fatal: without the old commit (a shallow clone) the benches leave its column out.
phase before bash -c 'bash bench/before/build.sh || echo "bench/before: not built; its column is left out"' 
phase overhead node bench/overhead.mjs
phase profile node bench/profile.mjs
phase own-work node bench/own-work.mjs
phase own-work-chromium node bench/own-work-chromium.mjs
phase crossings node bench/crossings.mjs
phase fault node bench/fault.mjs
phase mapview node bench/mapview.mjs
phase mapview-fast node bench/mapview.mjs --server fast
phase mapview-fast-returning node bench/mapview.mjs --server fast-returning
phase mapview-mapproxy node bench/mapview.mjs --server mapproxy
phase mapview-mapproxy-platform-fetch node bench/mapview.mjs --server mapproxy --libs leaflet --platform-loader fetch
phase mapview-mapproxy-platform-worker node bench/mapview.mjs --server mapproxy --libs leaflet --platform-loader worker
phase mapview-1792 node bench/mapview.mjs --scenarios ok --libs ol,leaflet,maplibre --viewport 1792x1024
phase mapview-h2 node bench/mapview.mjs --scenarios ok --libs ol,leaflet,maplibre --protocol h2
phase mapview-h2-1792 node bench/mapview.mjs --scenarios ok --libs ol,leaflet,maplibre --protocol h2 --viewport 1792x1024
phase mapview-h2-1792-platform-fetch node bench/mapview.mjs --scenarios ok --libs leaflet --protocol h2 --viewport 1792x1024 --platform-loader fetch
phase mapview-h2-1792-platform-worker node bench/mapview.mjs --scenarios ok --libs leaflet --protocol h2 --viewport 1792x1024 --platform-loader worker
phase mapview-session node bench/mapview-session.mjs
phase mapview-phases node bench/mapview-phases.mjs
phase mapview-phases-h2 node bench/mapview-phases.mjs --server public --protocol h2
phase request-start node bench/request-start.mjs
phase edge node bench/edge-scale.mjs
phase slow-upstream node bench/slow-upstream.mjs
phase pmtiles node bench/pmtiles.mjs
phase soak node --expose-gc bench/soak.mjs
if [ -n "${BENCH_SKIP_RUST:-}" ]; then
  echo "Not run: BENCH_SKIP_RUST was set." | tee bench/out/jitter.md bench/out/fuzz.md
elif [ -f examples/jitter_experiment.rs ]; then
  phase jitter rust_section jitter.md cargo run --release --quiet --example jitter_experiment
else
  echo "Not run: examples/jitter_experiment.rs does not exist." >bench/out/jitter.md
fi
if [ -n "${BENCH_SKIP_RUST:-}" ]; then
  :
elif [ -f scripts/fuzz.sh ]; then
  phase fuzz rust_section fuzz.md bash scripts/fuzz.sh long
else
  echo "Not run: scripts/fuzz.sh does not exist." >bench/out/fuzz.md
fi
step report
node bench/report.mjs
echo "bench/RESULTS.md regenerated in $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
