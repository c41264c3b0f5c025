#!/bin/sh
# Builds HearthCore and HearthRules with libFuzzer's coverage instrumentation into a scratch folder (no change
# to Package.swift) and runs each fuzz target for a bounded time.
#   fuzz/run.sh [seconds per target, default 60] [target: rules|json, default both]
#   FUZZ_RUNS=N fuzz/run.sh    # instead of a time, N inputs per target from a fixed seed and only the
#                              # checked-in seeds, in a folder of its own (what .ci/run does)
# Seeds come from fuzz/corpus/<target>/ and, for the rules target, the project's rules/ folder. Timed runs keep
# what libFuzzer finds in $TMPDIR/hearth-fuzz/corpus-<target>/ for the next run. A failing input is written
# to the scratch folder's crashes-<target>/ and makes the script fail.
set -e
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
ONLY=${2:-}
if [ -n "${FUZZ_RUNS:-}" ]; then
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/hearth-fuzz-run.XXXXXX")
  trap 'rm -rf "$OUT"' EXIT
else
  OUT=${TMPDIR:-/tmp}/hearth-fuzz
  mkdir -p "$OUT"
fi
FLAGS="-O -sanitize=fuzzer -parse-as-library -package-name hearth"
swiftc $FLAGS -wmo -module-name HearthCore -emit-module -emit-library -static \
  $(find Sources/HearthCore -name '*.swift') -emit-module-path "$OUT/HearthCore.swiftmodule" \
  -o "$OUT/libHearthCore.a"
swiftc $FLAGS -wmo -module-name HearthRules -emit-module -emit-library -static -I "$OUT" \
  $(find Sources/HearthRules -name '*.swift') -emit-module-path "$OUT/HearthRules.swiftmodule" -o "$OUT/libHearthRules.a"
swiftc $FLAGS -I "$OUT" -L "$OUT" -lHearthRules -lHearthCore fuzz/RulesFuzz.swift -o "$OUT/fuzz-rules"
swiftc $FLAGS -I "$OUT" -L "$OUT" -lHearthCore fuzz/JSONFuzz.swift -o "$OUT/fuzz-json"

failed=0
run() {
  target=$1; shift
  mkdir -p "$OUT/corpus-$target" "$OUT/crashes-$target"
  if [ -n "${FUZZ_RUNS:-}" ]; then
    bound="-runs=$FUZZ_RUNS -seed=1"; echo "fuzzing $target: $FUZZ_RUNS inputs"
  else
    bound="-max_total_time=$SECONDS_EACH"; echo "fuzzing $target for $SECONDS_EACH s"
  fi
  # Swift's own crash handler would take the signal before libFuzzer could save the input.
  status=0
  SWIFT_BACKTRACE=enable=no "$OUT/fuzz-$target" $bound -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$OUT/crashes-$target/" -print_final_stats=1 "$OUT/corpus-$target" "$@" \
    >"$OUT/log-$target" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==|.*ERROR|.*Fatal error|.*failed|Test unit written)' \
    "$OUT/log-$target" || true
  if [ "$status" != 0 ]; then
    echo "fuzz-$target exited with status $status (log: $OUT/log-$target)"
    failed=1
  fi
  for crash in "$OUT/crashes-$target"/*; do
    [ -e "$crash" ] || continue
    echo "fuzz-$target found a failing input: $crash"
    failed=1
  done
}
if [ -z "$ONLY" ] || [ "$ONLY" = rules ]; then run rules fuzz/corpus/rules rules; fi
if [ -z "$ONLY" ] || [ "$ONLY" = json ]; then run json fuzz/corpus/json; fi
if [ "$failed" = 1 ]; then
  # Keep the failing inputs of a fixed run where the message says they are.
  trap - EXIT
  exit 1
fi
echo "fuzzing done"
