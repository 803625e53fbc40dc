#!/usr/bin/env bash
# The main job: installs what is needed, builds pkg/, then fetches a few hundred tiles from the
# embedded fault-injecting server through fetchTile and through plain fetch, and prints both.
# Pass --serve to keep running and serve the www/ page; other flags: --tiles N --concurrency N --seed N.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec node www/demo.mjs "$@"
