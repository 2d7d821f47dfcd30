#!/bin/sh
# The runtimes raced on real apps: each preset tuned at the budget with Apache installed, so that the knob server
# races nginx + php-fpm, Apache event + php-fpm and Apache prefork + mod_php, each sized by the one memory rule;
# prints each runtime's workers, memory, goodput, requests per CPU-second, latency and its change against the
# incumbent with its interval and verdict, and the runtime tune picked.
# Usage: bench/runtimes.sh [BUDGET] [PRESET...]   (default 10m; demo wordpress)
# PHPTUNE=path picks the binary (default bin/phptune); OUT=DIR keeps each run (default a temp dir; a preset
# already run there is not run again). Needs apache2 and libapache2-mod-php8.2 (make test installs them).
# Run it alone: flock /tmp/phptune-heavy.lock sh bench/runtimes.sh
set -eu
BUDGET=${1:-10m}
[ $# -gt 0 ] && shift
PRESETS=${*:-demo wordpress}
cd "$(dirname "$0")/.."
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "runtimes: build first (make build)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "runtimes: python3 missing" >&2; exit 2; }
[ -x /usr/sbin/apache2 ] || { echo "runtimes: apt-get install apache2 libapache2-mod-php8.2" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d /tmp/phptune-runtimes-XXXXXX)}
mkdir -p "$OUT"
for p in $PRESETS; do
	[ -f "$OUT/$p.code" ] && continue
	if [ "$p" != demo ]; then
		"$BIN" workload prepare "$p" >"$OUT/$p-prepare.log" 2>&1 || { echo "runtimes: prepare $p failed: $OUT/$p-prepare.log" >&2; exit 1; }
	fi
	app=$p
	[ "$p" = demo ] && app=
	code=0
	# shellcheck disable=SC2086
	"$BIN" tune $app --budget "$BUDGET" --out "$OUT/$p" >"$OUT/$p.txt" 2>"$OUT/$p.err" || code=$?
	echo "$code" >"$OUT/$p.code"
done
python3 - "$OUT" $PRESETS <<'PY'
import json, os, sys
out, presets = sys.argv[1], sys.argv[2:]
mib = lambda b: "%.1f" % (b / 2**20)
print("The runtimes raced by tune, each at its size by one memory rule (race trials; latency from every request)")
print("%-10s %-14s %7s %9s %8s %8s %8s %9s %8s %8s  %s" % ("preset", "runtime", "workers", "MiB/wkr", "shared",
      "total", "req/s", "req/CPU-s", "p50 ms", "p99 ms", "vs incumbent"))
for p in presets:
    code = open(os.path.join(out, p + ".code")).read().strip()
    path = os.path.join(out, p, "result.json")
    if not os.path.exists(path):
        print("%-10s run failed (exit %s): %s" % (p, code, os.path.join(out, p + ".err")))
        continue
    r = json.load(open(path))
    rt = r.get("runtimes")
    if not rt:
        row = [k for k in r["knobs"] if k["name"] == "server"]
        print("%-10s no server race: %s" % (p, row[0].get("note", "") if row else "the knob was not in the run"))
        continue
    for x in rt["runtimes"]:
        vs = x.get("vs_incumbent")
        v = "%+.1f%% [%+.1f, %+.1f] %s" % (100 * vs["estimate"], 100 * vs["lo"], 100 * vs["hi"], vs["verdict"]) if vs else x["status"]
        print("%-10s %-14s %7d %9s %8s %8s %8.0f %9.0f %8.1f %8.1f  %s" % (p, x["server"], x["size"], mib(x["per_worker_bytes"]),
              mib(x["shared_bytes"]), mib(x["total_bytes"]), x["rps"], x.get("req_per_cpu_s", 0), x["p50_us"] / 1000,
              x["p99_us"] / 1000, v))
    row = [k for k in r["knobs"] if k["name"] == "server"][0]
    print("%-10s picked %s (%s, %d rounds; target %d workers in %s MiB); exit %s, %s of %s" % ("", row["value"],
          row.get("verdict") or "-", row.get("rounds", 0), rt["target"], mib(rt["memory_bytes"]), code,
          "%.0fs" % r["elapsed_s"], "%.0fs" % r["budget_s"]))
PY
echo "runs in $OUT"
