#!/bin/sh
# The pool size's model beside the goodput it stands for: static pools of 1, 2, 3, 4, 6 and 8 of the demo under
# one load, interleaved (bench/poolmodel). About 5 minutes; ROUNDS=n for more; BUSY=1 runs a busy loop on core 0
# beside it; -sizes and -c choose the sizes and the load, -d the window, -preset NAME a prepared preset's app
# (phptune workload prepare NAME first), such as -preset wordpress -sizes 1,2,4 -c 8 -d 900ms.
set -eu
cd "$(dirname "$0")/.."
. bench/internal/busyrun.sh
busyrun poolmodel -rounds "${ROUNDS:-15}" "$@"
