#!/bin/sh
# What duet rounds do to a CPU round's noise on the demo: two stacks of one configuration, alternating against
# at once (bench/duet). About 2 minutes; ROUNDS=n for more; BUSY=1 runs a busy loop on core 0 beside it;
# -starts adds duet rounds with two fresh stacks starting beside them (as tune starts the next round's).
# -pin adds pinned duet rounds: each stack on a CPU share of its own, swapped every round (tune --duet-pin).
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
"$GO" build -o /tmp/phptune-bench-duet ./bench/duet
if [ "${BUSY:-0}" = 1 ]; then
	taskset -c 0 sh -c 'while :; do :; done' &
	busy=$!
	trap 'kill $busy' EXIT
fi
/tmp/phptune-bench-duet -rounds "${ROUNDS:-30}" "$@"
