#!/bin/sh
# The engine's error rates, power and interval coverage, by simulation on rounds recorded in real tune runs
# (internal/experiment/testdata/noise-*.json): pairwise races, then whole simulated tune runs of the demo app
# at 10 and 3 minutes. Takes seconds. To replay other runs' noise:
#   go run ./bench/engine -extract DIR phptune-results/*/result.json && go run ./bench/engine -noise DIR
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
exec "$GO" run ./bench/engine -runs "${RUNS:-1000}" "$@"
