#!/bin/sh
# Would duet rounds serve a throughput knob's race? Two static pools of the demo, a knob at -a and -b (an A/A by
# default), tune's goodput trials in turn and at once (bench/duetgoodput). About 2 minutes; ROUNDS=n for more;
# BUSY=1 runs a busy loop on core 0 beside it. Example: sh bench/duetgoodput.sh -knob keepalive -a off -b on
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
dir=$(mktemp -d)
busy=
trap 'rm -rf "$dir"; [ -z "$busy" ] || kill $busy' EXIT
"$GO" build -o "$dir/duetgoodput" ./bench/duetgoodput
if [ "${BUSY:-0}" = 1 ]; then
	taskset -c 0 sh -c 'while :; do :; done' &
	busy=$!
fi
"$dir/duetgoodput" -rounds "${ROUNDS:-30}" "$@"
