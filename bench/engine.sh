#!/bin/sh
# The engine's error rates, power and interval coverage, by simulation on rounds recorded in real tune runs
# (internal/experiment/testdata/noise-*.json), replayed the way real runs are hard (blocks of consecutive rounds,
# trials in their recorded order, stacks' own offsets, failure bursts): pairwise races, then whole simulated
# tune runs of the demo app at 10 and 3 minutes, scored per run over every verdict, on the recorded runs that
# did not choose the engine's parameters. Takes a few minutes (RUNS=100 for a quick look).
#   sh bench/engine.sh -choose      choose g and minRounds on the other recorded runs
#   sh bench/engine.sh -stack-sd 0.01 -new-stack-every 10
#   sh bench/engine.sh -duet        duet rounds beside alternating ones only (CPU races' noise recorded in duet rounds)
#   sh bench/engine.sh -split-only  goodput races in split rounds beside in turn, on runs that ran split rounds
#                                   (internal/experiment/testdata/split; -split DIR for others')
# To replay other runs' noise:
#   go run ./bench/engine -extract DIR phptune-results/*/result.json && go run ./bench/engine -noise DIR
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
exec "$GO" run ./bench/engine -runs "${RUNS:-500}" "$@"
