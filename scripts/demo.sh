#!/bin/sh
# The main job: tune the bundled demo app within a 3-minute budget and say where the results are.
set -eu
BIN="${1:-bin/phptune}"
OUT="${OUT:-phptune-results/demo-$(date +%Y%m%d-%H%M%S)}"
"$BIN" tune --budget 3m --out "$OUT"
echo
echo "The whole account, with charts: $OUT/report.html (every trial's figures: $OUT/result.json)"
