#!/bin/sh
# What interleaved trials do to a dynamic pool against a static one of the same size (goodput, CPU a request,
# a round's noise), side by side in one run: why tune races transport and keep-alive knobs on static twins.
# About 2 minutes; ROUNDS=n for more.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
exec "$GO" run ./bench/poolnoise -rounds "${ROUNDS:-60}" "$@"
