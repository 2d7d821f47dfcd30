#!/bin/sh
# How often `phptune profile` of a pool whose workers recycle every 20 requests (pm.max_requests=20) succeeds:
# N runs (10) on the demo app, syscalls only; prints each failure's message and "successes: S of N". BUSY=1 runs
# a busy loop on core 0 beside it (a test build's load), killed at the end. About 3 s a run; OUT=dir keeps the
# runs' results (default a temporary dir, removed).
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
bin=/tmp/phptune-bench-profilerecycle
"$GO" build -o "$bin" ./cmd/phptune
out="${OUT:-$(mktemp -d /tmp/phptune-profilerecycle.XXXXXX)}"
mkdir -p "$out"
busy=
cleanup() {
	[ -n "$busy" ] && kill "$busy"
	[ -n "${OUT:-}" ] || rm -rf "$out"
	rm -f "$bin"
}
trap cleanup EXIT
if [ "${BUSY:-0}" = 1 ]; then
	taskset -c 0 sh -c 'while :; do :; done' &
	busy=$!
fi
n="${N:-10}"
ok=0
i=1
while [ "$i" -le "$n" ]; do
	if "$bin" profile --knob max_requests=20 --without instructions --out "$out/run$i" "$@" >"$out/run$i.log" 2>&1; then
		ok=$((ok + 1))
	else
		echo "run $i failed: $(grep -m1 -i 'error\|fail' "$out/run$i.log" || tail -n1 "$out/run$i.log")"
	fi
	i=$((i + 1))
done
echo "successes: $ok of $n (pm.max_requests=20${BUSY:+, busy loop on core 0: BUSY=$BUSY})"
