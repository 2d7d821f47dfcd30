#!/bin/sh
# The speedup over sync of each concurrency model on Tarantool select, with phptune clients (one run,
# interleaved iterations decided by the experiment engine: speedups with their confidence-sequence intervals),
# beside the 2019 study's figures: about 3x for 25 coroutines in one process, about 5x for 2 processes x 25
# coroutines. The wall time of the run is printed last.
# Usage: bench/clients.sh [ITERATIONS] [REVS]   (defaults 10 and 10000)
# PHPTUNE=path picks the binary (default bin/phptune). SWEEP=1 lets phptune sweep N, P and D (its defaults)
# instead of the study's 25 Fibers, 2 processes x 25 Fibers and a pipeline 25 deep.
set -eu
ITER=${1:-10}
REVS=${2:-10000}
cd "$(dirname "$0")/.."
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "clients bench: build first (make build)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "clients bench: python3 missing" >&2; exit 2; }
set -- --target tarantool --tarantool-ops select --iterations "$ITER" --revs "$REVS" --json
if [ "${SWEEP:-0}" != 1 ]; then
	set -- "$@" --fibers 25 --procs 2 --depth 25
fi
out=$(mktemp /tmp/phptune-clients-bench-XXXXXX.json)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
"$BIN" clients "$@" >"$out"
echo "wall time: $(( $(date +%s) - start )) s"
python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
study = {"fibers": ("25 coroutines (ext-async)", 3.0), "processes+fibers": ("2 x 25 (Swoole)", 5.0)}
print("phptune clients, Tarantool select: %d revs x %d iterations, %d CPUs, %s" % (
    r["settings"]["revs"], r["settings"]["iterations"], r["environment"]["cpus"], "; ".join(r["environment"]["servers"])))
print("%-22s %6s %10s %8s %13s %14s   %s" % ("model", "conc", "ops/s", "speedup", "interval", "verdict", "study (2019)"))
for row in r["results"]:
    if not row["available"]:
        print("%-22s %s" % (row["model"], row.get("note", "")))
        continue
    label = row["model"] + ("" if row["client"] == "phptune" else " (%s)" % row["client"])
    ci = "%.2f..%.2f" % (row["speedup_ci_low"], row["speedup_ci_high"]) if row.get("speedup_ci_low") else "-"
    s = study.get(row["model"])
    ref = "%s: %.1fx, ours/study %.2f" % (s[0], s[1], row["speedup"] / s[1]) if s and row["speedup"] else ""
    ref = ref or row.get("note", "")
    ops = "%.0f" % row["ops_per_s"] if row["ops_per_s"] else "-"
    sp = "%.2fx" % row["speedup"] if row["speedup"] else "-"
    verdict = (row.get("comparison") or {}).get("verdict", "")
    print("%-22s %6d %10s %8s %13s %14s   %s" % (label, row["concurrency"], ops, sp, ci, verdict, ref))
for c in r["ceilings"]:
    print("ceiling: client CPU %.1f us + server CPU %.1f us of %.1f us per sync op: one process <= %.1fx, this machine <= %.1fx" % (
        c["client_cpu_per_op_us"], c["server_cpu_per_op_us"], c["wall_per_op_us"], c["one_process_speedup"], c["machine_speedup"]))
for e in r.get("errors") or []:
    print("error:", e)
PY
