#!/usr/bin/env bash
# Installs everything the build and the tests need on a fresh machine of this kind; each step is
# skipped when already done, so it is cheap to run before every build.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\033[1m== %s\033[0m\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  step "rustup toolchain install nightly"
  rustup toolchain install nightly --profile minimal
fi
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
  step "rustup component add rust-src (nightly, for build-std)"
  rustup component add rust-src --toolchain nightly
fi

# The CLI must match the crate exactly (Cargo.toml pins wasm-bindgen with `=`).
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$want" != "$have" ]; then
  step "cargo install wasm-bindgen-cli $want (have: ${have:-none})"
  cargo install wasm-bindgen-cli --version "$want"
fi

# Fuzzing (scripts/fuzz.sh) runs cargo-fuzz on nightly.
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  step "cargo install cargo-fuzz 0.13.2"
  cargo install cargo-fuzz --version 0.13.2
fi

if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ]; then
  step "apt-get install chromium chromium-driver"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# `npm install`, not `npm ci`: vite 8 lists an optional dependency (napi-windows-process-start-time)
# that this registry does not have, and `npm ci` refuses a lock file without it. The versions
# are still the lock file's.
if ! [ -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "npm install (from package-lock.json)"
  npm install --no-audit --no-fund --loglevel=error
fi

# The real-server suite (tests/real-servers/): MapServer from Debian, MapProxy from PyPI.
# shellcheck source=../tests/real-servers/install.sh
source tests/real-servers/install.sh

# The PMTiles tests (tests/pmtiles/): archives written by the `pmtiles` tools from PyPI.
# shellcheck source=../tests/pmtiles/install.sh
source tests/pmtiles/install.sh
