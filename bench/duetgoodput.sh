#!/bin/sh
# Would duet rounds serve a throughput knob's race? Two static pools of the demo, a knob at -a and -b (an A/A by
# default), tune's goodput trials in turn and at once (bench/duetgoodput). About 2 minutes; ROUNDS=n for more;
# BUSY=1 runs a busy loop on core 0 beside it. Example: sh bench/duetgoodput.sh -knob keepalive -a off -b on
set -eu
cd "$(dirname "$0")/.."
. bench/internal/busyrun.sh
busyrun duetgoodput -rounds "${ROUNDS:-30}" "$@"
