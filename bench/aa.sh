#!/bin/sh
# A/A through tune: RUNS (20) runs of `phptune tune` on the demo, BUDGET (3m) each, racing two knobs whose values
# cannot differ (html_errors 0 vs off on the CPU path, max_requests 0 vs 100000 on the goodput path), on stacks
# of their own, with the pool (and the listen backlog, at php-fpm's default) pinned so that the final comparison
# sets a configuration against itself (the recommendation against the rule of thumb, the same pool). Prints
# the share of runs with a false better/worse on each path and the share whose final intervals cover zero.
# Each run takes the heavy-work lock (LOCK=/tmp/phptune-heavy.lock; LOCK= for none); OUT=dir keeps the results.
# STALL=n tunes an app whose requests all wait 3 s on one in n, with --timeout 2s, instead of the demo.
# About 70 minutes at the defaults.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
"$GO" build -o bin/phptune ./cmd/phptune
exec "$GO" run ./bench/aa -runs "${RUNS:-20}" -budget "${BUDGET:-3m}" -lock "${LOCK-/tmp/phptune-heavy.lock}" -stall "${STALL:-0}" ${OUT:+-out "$OUT"} "$@"
