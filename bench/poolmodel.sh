#!/bin/sh
# The pool size's model beside the goodput it stands for: static pools of 1, 2, 3, 4, 6 and 8 of the demo under
# one load, interleaved (bench/poolmodel). About 5 minutes; ROUNDS=n for more; BUSY=1 runs a busy loop on core 0
# beside it; -sizes and -c choose the sizes and the load.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
dir=$(mktemp -d)
busy=
trap 'rm -rf "$dir"; [ -z "$busy" ] || kill $busy' EXIT
"$GO" build -o "$dir/poolmodel" ./bench/poolmodel
if [ "${BUSY:-0}" = 1 ]; then
	taskset -c 0 sh -c 'while :; do :; done' &
	busy=$!
fi
"$dir/poolmodel" -rounds "${ROUNDS:-15}" "$@"
