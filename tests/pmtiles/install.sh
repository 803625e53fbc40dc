# PMTiles test harness (tests/pmtiles/): the `pmtiles` writer from PyPI in its own venv, which
# make-archive.py uses to write the archives the tests read. Sourced by scripts/setup.sh (repo
# root, `set -euo pipefail`, step() defined); skipped when done.
command -v step >/dev/null 2>&1 || step() { printf '== %s\n' "$*"; }
if ! .venv-pmtiles/bin/python -c 'import importlib.metadata as m; assert m.version("pmtiles") == "3.8.1"' 2>/dev/null; then
  step "python venv .venv-pmtiles with pmtiles 3.8.1"
  if ! python3 -c 'import ensurepip' 2>/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 python3-venv >/dev/null
  fi
  rm -rf .venv-pmtiles
  python3 -m venv .venv-pmtiles
  .venv-pmtiles/bin/pip install -q pmtiles==3.8.1
fi
