#!/bin/sh
# How precisely a CPU trial tells one configuration from another, by its connections and length: two stacks of
# one configuration in the same rounds; prints each mode's noise and what a race pays for a given precision.
# About 3 minutes; ROUNDS=n for more, MODES=4x0.4,1x0.4,... for other modes.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
exec "$GO" run ./bench/cpunoise -rounds "${ROUNDS:-60}" ${MODES:+-modes "$MODES"} "$@"
