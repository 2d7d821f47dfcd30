#!/bin/sh
# What duet rounds do to a CPU round's noise on the demo: two stacks of one configuration, alternating against
# at once (bench/duet). About 2 minutes; ROUNDS=n for more; BUSY=1 runs a busy loop on core 0 beside it;
# -preset NAME serves a prepared workload preset instead (phptune workload prepare NAME first), with fewer requests
# a trial for a slow app: sh bench/duet.sh -spread -preset wordpress -n 150 (or -preset mediawiki -n 150);
# -starts adds duet rounds with two fresh stacks starting beside them (as tune starts the next round's).
# -pin adds pinned duet rounds: each stack on a CPU share of its own, swapped every round (tune --duet-pin);
# -spread adds duet rounds with each stack's workers spread over the CPUs, one to each in turn (gate).
set -eu
cd "$(dirname "$0")/.."
. bench/internal/busyrun.sh
busyrun duet -rounds "${ROUNDS:-30}" "$@"
