#!/bin/sh
# How often nginx's upstream keep-alive stalls requests on a php-fpm pool no larger than its load (a kept
# connection pins a worker): trials of fresh connections on a keepalive=on stack and a keepalive=off one.
# About 2 minutes; TRIALS=n for more.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
exec "$GO" run ./bench/keepstall -trials "${TRIALS:-100}" "$@"
