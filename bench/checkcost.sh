#!/bin/sh
# What `phptune check` costs the pool it reads: the demo's goodput with and without a check running beside it, in
# interleaved (ABBA) trials on one stack, and the ratio with its 95% CI (target: within 1%). About 2 minutes;
# ROUNDS=n for more, INTERVAL=250ms to sample 4 times as often as the default.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
"$GO" build -o bin/phptune ./cmd/phptune
exec "$GO" run ./bench/checkcost -phptune bin/phptune -rounds "${ROUNDS:-10}" -interval "${INTERVAL:-1s}" "$@"
