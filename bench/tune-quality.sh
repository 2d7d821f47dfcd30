#!/bin/sh
# Does tune find what an exhaustive search would? For an I/O-bound app (20 ms wait a request) and a
# memory-heavy app (48 MiB a request) under --memory 400MiB: `phptune tune --only pm` (pm and the pool size),
# then an interleaved grid over pm x max_children under the same constraints (tune's load, trial length and
# memory limit), with the recommendation as one more arm. Prints rec/best (goal >= 0.97) and tune/grid time
# (goal <= 0.25). Then tune twice on the demo app: does every better/worse verdict agree?
# Usage: bench/tune-quality.sh [-budget 3m] [-demo-budget 5m] [-demo=false] [-apps io-20ms,memory-48MiB]
# Takes about 40 minutes with the defaults; run it on a quiet machine.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
make -s build GO="$GO"
exec "$GO" run ./bench/tunequality -phptune bin/phptune "$@"
