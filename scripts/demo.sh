#!/usr/bin/env bash
# The main job: installs what is needed and builds pkg/; then
#   1. www/demo.mjs fetches a few hundred tiles from embedded fault-injecting servers through
#      fetchTile and through plain fetch, and prints both plus per-host stats;
#   2. www/serve.mjs serves the interactive demo page (maps side by side, fault controls, live
#      stats) on loopback and prints its URL. Flags go to it: --port N, --lib ol|leaflet|maplibre,
#      --check (load the page in headless Chromium, save test-output/demo.png, exit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
node www/demo.mjs
exec node www/serve.mjs "$@"
