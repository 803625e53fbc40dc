#!/usr/bin/env bash
# Builds tilefetch as it was when the "boundary" issue was filed (commit 7973870, 2026-11-30:
# 39,884 B, the seven positional protocols) into target/before/pkg/, so that the profile, the
# own-work and the crossings benches measure that module beside today's in the same run: the
# issue's "before and after" (everything that changed since, not the boundary work alone). The
# commit's own scripts/build.sh does the build, with today's toolchain; the repository's
# node_modules/ supplies its wasm-opt. Needs the commit in the repository's history (a full clone,
# not a shallow one). target/before/.commit, written last, is what says the build is complete.
set -euo pipefail
cd "$(dirname "$0")/../.."
BEFORE_COMMIT=$(node -e 'import("./bench/before/id.mjs").then((m) => console.log(m.BEFORE_COMMIT))')
dir=target/before
if [ "$(cat "$dir/.commit" 2>/dev/null)" = "$BEFORE_COMMIT" ]; then
  cat "$dir/size.txt"
  exit 0
fi
if ! git cat-file -e "$BEFORE_COMMIT^{commit}" 2>/dev/null; then
  echo "bench/before: commit $BEFORE_COMMIT is not in this clone's history (a shallow clone?): not built" >&2
  exit 1
fi
rm -rf "$dir" "$dir.partial"
mkdir -p "$dir.partial"
git archive "$BEFORE_COMMIT" | tar -x -C "$dir.partial"
ln -s "$PWD/node_modules" "$dir.partial/node_modules"
# Its own target/ (its build keeps the wasm-opt name mapping there); the size line it prints is
# kept, to set beside the 39,884 B it printed then.
(cd "$dir.partial" && bash scripts/build.sh | tail -1 >size.txt)
mv "$dir.partial" "$dir"
echo "$BEFORE_COMMIT" >"$dir/.commit"
cat "$dir/size.txt"
