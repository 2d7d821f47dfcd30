#!/bin/sh
# What opcache's JIT saves a request of a preset's app, block by block from a cold start: two static pools, the
# JIT off and on, loaded at once (bench/jitwarm). About 2 minutes on WordPress (phptune workload prepare wordpress
# first); -preset NAME for another, -jit function, -anonymous for the anonymous pages alone, -blocks and -n for
# more or longer blocks; BUSY=1 runs a busy loop on core 0 beside it.
set -eu
cd "$(dirname "$0")/.."
. bench/internal/busyrun.sh
busyrun jitwarm "$@"
