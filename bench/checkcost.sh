#!/bin/sh
# What `phptune check` costs the pool it reads: the demo's goodput with and without a check running beside it, in
# interleaved (ABBA) trials on one stack, and the ratios with their 95% CIs (target: within 1%): goodput, and
# capacity (requests per CPU-second of php-fpm, nginx and check itself, steadier on a shared machine); then an
# accounting of a started check's CPU and reads against the CPU the pool uses under steady load (the most check
# can take from a CPU-bound pool). About 3 minutes; ROUNDS=n for more, INTERVAL=250ms to sample 4 times as often.
# Runs pool: -rounds-file FILE appends each round; -from FILE reports the rounds kept there, measuring nothing.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
"$GO" build -o bin/phptune ./cmd/phptune
exec "$GO" run ./bench/checkcost -phptune bin/phptune -rounds "${ROUNDS:-10}" -interval "${INTERVAL:-1s}" "$@"
