#!/usr/bin/env bash
# Fuzzes the pure parsers with cargo-fuzz (nightly, libFuzzer): Retry-After, the options and
# client config reader, URL redaction, response classification and stated rate limits
# (fuzz/fuzz_targets/).
#
#   scripts/fuzz.sh short   fixed runs per target, fixed seed (the test command runs this)
#   scripts/fuzz.sh long    60 s per target (the bench command runs this)
#
# Each target asserts its own invariants (see its file); a panic fails this script and leaves
# the input in fuzz/artifacts/<target>/, to be turned into a regression test in src/.
# Ends with a markdown summary on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-short}
case "$mode" in
  short) limit=(-runs=20000 -seed=1) ;;
  long) limit=(-max_total_time=60) ;;
  *) echo "usage: scripts/fuzz.sh short|long" >&2; exit 2 ;;
esac
targets=(retry_after options redact classify rate_limit)

if ! build_log=$(cargo +nightly fuzz build 2>&1); then
  echo "$build_log" >&2
  exit 1
fi
rows=()
for target in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$target"
  log=$(mktemp)
  start=$(date +%s.%N)
  if ! cargo +nightly fuzz run "$target" -- "${limit[@]}" -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "fuzz: $target FAILED (input saved under fuzz/artifacts/$target/)" >&2
    exit 1
  fi
  secs=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  rm -f "$log"
  echo "fuzz: $target ok, $runs runs in $secs s, corpus $corpus inputs" >&2
  rows+=("| \`$target\` | $runs | $secs | $corpus | no panic, invariants held |")
done

echo "## Fuzzing ($mode)"
echo
echo "\`scripts/fuzz.sh $mode\` (cargo-fuzz $(cargo +nightly fuzz --version | awk '{print $2}'), libFuzzer; limits: ${limit[*]})"
echo
echo "| target | runs | seconds | corpus inputs | result |"
echo "|---|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
