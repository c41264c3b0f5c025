#!/bin/sh
# Builds HearthCore and HearthRules with -O into a scratch folder and runs the rules benchmark.
set -e
cd "$(dirname "$0")/../.."
OUT=${TMPDIR:-/tmp}/hearth-rules-bench
mkdir -p "$OUT"
swiftc -O -wmo -parse-as-library -module-name HearthCore -emit-module -emit-library -static \
  Sources/HearthCore/*.swift -emit-module-path "$OUT/HearthCore.swiftmodule" -o "$OUT/libHearthCore.a"
swiftc -O -wmo -parse-as-library -module-name HearthRules -emit-module -emit-library -static -I "$OUT" \
  -enable-upcoming-feature ExistentialAny \
  Sources/HearthRules/*.swift -emit-module-path "$OUT/HearthRules.swiftmodule" -o "$OUT/libHearthRules.a"
swiftc -O -I "$OUT" -L "$OUT" -lHearthRules -lHearthCore bench/rules/main.swift -o "$OUT/rules-bench"
"$OUT/rules-bench"
