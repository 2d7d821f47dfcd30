#!/bin/sh
# The slow part of the fault suite (the fast part, TestFaults, is in `make test`): workers killed again and again
# during a run, and a soak of ten tune runs back to back (no leaked processes, descriptors or private dirs; the
# tenth run as fast as the first). About 8 minutes. Also reruns TestFaults with its per-case table.
set -eu
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
PATH="$(dirname "$GO"):$PATH" exec "$GO" test -tags faults -count=1 -timeout 30m -v -run 'TestFaults|TestSoak' ./cmd/phptune "$@"
