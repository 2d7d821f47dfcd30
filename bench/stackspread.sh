#!/bin/sh
# How far independently started stacks of ONE configuration differ beyond a round's noise (CPU and goodput
# trials, as tune runs them), and what a stack start in the background costs the trials it overlaps: the
# figures behind tune's replicated stacks (docs/engine.md). About 8 minutes at the defaults; BATCHES=n,
# STACKS=n, ROUNDS=n, OVERLAP=n (rounds with starts in the background) for other sizes.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
exec "$GO" run ./bench/stackspread -batches "${BATCHES:-3}" -stacks "${STACKS:-6}" -rounds "${ROUNDS:-20}" \
	-overlap-rounds "${OVERLAP:-20}" "$@"
