#!/bin/sh
# Issue 51's targets for `phptune gate`, on the demo: RUNS (20) runs each, alternating, of a slowdown of PLANT
# (0.05) of one route's CPU planted in NEW and of the demo against a copy of itself, BUDGET (2m) each; prints in how
# many runs the planted route was called worse, and how many A/A runs called anything worse. BUSY=1 keeps a busy
# loop on one core beside every run. Each run takes the heavy-work lock (LOCK=/tmp/phptune-heavy.lock; LOCK= for
# none); OUT=dir keeps the results; FASTER=1 also races a route made 20% cheaper; KINDS=aa runs the A/A alone
# (KINDS is a comma list of planted, aa, faster). About RUNS x 2 x BUDGET (80 minutes at the defaults).
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
"$GO" build -o bin/phptune ./cmd/phptune
flags=
[ "${BUSY:-0}" = 1 ] && flags=-busy
[ "${FASTER:-0}" = 1 ] && flags="$flags -faster"
[ -n "${KINDS:-}" ] && flags="$flags -kinds $KINDS"
exec "$GO" run ./bench/gate -runs "${RUNS:-20}" -budget "${BUDGET:-2m}" -plant "${PLANT:-0.05}" \
	-lock "${LOCK-/tmp/phptune-heavy.lock}" $flags ${OUT:+-out "$OUT"} "$@"
