# Real-server test harness (tests/real-servers/): MapServer 8 from Debian, MapProxy 7.0.0 from
# PyPI in its own venv. Meant to be pasted into (or sourced by) scripts/setup.sh, which runs from
# the repo root under `set -euo pipefail` and defines step(). Each part is skipped when done.
command -v step >/dev/null 2>&1 || step() { printf '== %s\n' "$*"; }
if ! [ -x /usr/lib/cgi-bin/mapserv ] || ! command -v map2img >/dev/null 2>&1; then
  step "apt-get install cgi-mapserver mapserver-bin"
  apt-get update -qq
  # The lock timeout waits for any other apt run instead of failing on its lock.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    cgi-mapserver mapserver-bin >/dev/null
fi
if ! .venv-mapproxy/bin/python -c 'import mapproxy, importlib.metadata as m; assert m.version("MapProxy") == "7.0.0"' 2>/dev/null; then
  step "python venv .venv-mapproxy with mapproxy 7.0.0"
  # Debian's own python3 needs python3-venv for ensurepip; pyenv's and others have it built in.
  if ! python3 -c 'import ensurepip' 2>/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 python3-venv >/dev/null
  fi
  rm -rf .venv-mapproxy
  python3 -m venv .venv-mapproxy
  .venv-mapproxy/bin/pip install -q mapproxy==7.0.0 Pillow PyYAML pyproj lxml shapely
fi
