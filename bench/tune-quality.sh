#!/bin/sh
# Does tune find what an exhaustive search would? For an I/O-bound app (20 ms wait and about 1 ms of CPU a
# request) and a memory-heavy app (16 MiB held for 100 ms a request) under --memory 260MiB: `phptune tune --only
# pm` (pm and the pool size), then an interleaved grid over pm x max_children from 1 to twice tune's load (at
# most 64) within the memory limit: every size to 16, every second to 32, every fourth beyond (-full-grid: every
# size), at tune's load and trial length, with the recommendation as one more arm.
# Prints rec/best (goal >= 0.97) and tune/grid time (goal <= 0.25). When the grid's best cell is not the
# recommendation, rec/best is also measured head to head (10 interleaved pairs of 3 s or more on two warm
# stacks), since the best of many noisy cells reads high: the goal is judged on that one. Then tune twice on
# the demo app: does every better/worse verdict agree?
# Usage: bench/tune-quality.sh [-budget 3m] [-grid-rounds 10] [-full-grid] [-demo-budget 5m] [-demo=false]
#        [-apps io-20ms,memory-16MiB]
# Each grid cell gets its own stack only while it is measured, brought to its steady state under the same load
# first (a fresh pm=dynamic pool has few workers: loaded until it stops growing, as tune settles its arms; a
# static pool for 2 s). Takes about an hour with the defaults (the grid is
# most of it; -full-grid about twice that); run it on a quiet machine.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
make -s build GO="$GO"
exec "$GO" run ./bench/tunequality -phptune bin/phptune "$@"
