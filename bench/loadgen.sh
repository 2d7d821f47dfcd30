#!/bin/sh
# The load generator's own cost: CPU microseconds per request (utime+stime of the generator process over the
# requests it completed) for phptune, wrk -t1 and ab -k, same connections, against nginx `return 200` on
# loopback, in one run, interleaved rounds; then phptune's FastCGI mode against php-fpm (a one-line script).
# Prints the medians and the ratios phptune/wrk and phptune/ab.
# Usage: bench/loadgen.sh [ROUNDS] [CONNECTIONS] [SECONDS]
# PHPTUNE=path picks the binary (default bin/phptune); PHPTUNE_BASE=path adds a second build to every round
# (rows base and base-fcgi, and their ratios), to compare two builds side by side on a noisy machine.
# With bin/k6 (make k6; K6=path picks another), the row k6 is phptune bench --engine k6: k6's CPU and phptune's
# reading of its points together, the whole cost of a request under the k6 engine.
# Each round runs the tools in a rotated order, so that none always runs first or after the same neighbour.
set -eu
ROUNDS=${1:-3}
CONNS=${2:-16}
SECS=${3:-5}
cd "$(dirname "$0")/.."
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "loadgen: build first (make build)" >&2; exit 2; }
BASE=${PHPTUNE_BASE:-}
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "loadgen: PHPTUNE_BASE=$BASE is not executable" >&2; exit 2; }
TOOLS="phptune wrk ab phptune-fcgi"
[ -z "$BASE" ] || TOOLS="phptune base wrk ab phptune-fcgi base-fcgi"
K6=${K6:-bin/k6}
[ -x "$K6" ] && TOOLS="$TOOLS k6"
for p in wrk ab nginx; do
	command -v $p >/dev/null 2>&1 || [ -x /usr/sbin/$p ] || { echo "loadgen: $p missing: make deps" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/phptune-loadgen-XXXXXX)
chmod 755 "$tmp"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cat >"$tmp/nginx.conf" <<EOC
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/error.log warn;
daemon off;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $tmp/cb; proxy_temp_path $tmp/p; fastcgi_temp_path $tmp/f; uwsgi_temp_path $tmp/u; scgi_temp_path $tmp/s;
    server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } }
}
EOC
/usr/sbin/nginx -e "$tmp/error.log" -p "$tmp" -c "$tmp/nginx.conf" &
ngx=$!
echo "<?php echo 'ok';" >"$tmp/ok.php"
chmod 644 "$tmp/ok.php"
"$BIN" serve "$tmp" --front ok.php --env-file "$tmp/serve.env" --max-children 4 --pm static >/dev/null 2>&1 &
srv=$!
cleanup() { kill -QUIT $ngx 2>/dev/null || true; kill -INT $srv 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
i=0; while [ ! -s "$tmp/serve.env" ]; do i=$((i+1)); [ $i -lt 200 ] || { echo "serve did not start" >&2; exit 1; }; sleep 0.1; done
. "$tmp/serve.env"
sleep 0.5
URL="http://127.0.0.1:$port/"

# cpu_us_per_req CPU_SECONDS REQUESTS
per() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1])*1e6/max(1,int(sys.argv[2]))))" "$1" "$2"; }
# run CMD...: runs it under /usr/bin/time-like accounting via /proc: we use bash's times through python.
cpu_of() { python3 - "$@" <<'PY'
import os, resource, subprocess, sys
before = resource.getrusage(resource.RUSAGE_CHILDREN)
out = subprocess.run(sys.argv[1:], capture_output=True, text=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(cpu)
sys.stdout.write(out.stdout)
PY
}
reqs_wrk() { awk '/requests in/ {print $1}'; }
reqs_ab() { awk '/Complete requests:/ {print $3}'; }
reqs_pt() { python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])'; }

results="$tmp/results"
: >"$results"
for r in $(seq 1 "$ROUNDS"); do
	# rotate the order by one tool per round
	order=$(echo $TOOLS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }')
	for tool in $order; do
		case $tool in
		phptune | base)
			b=$BIN; [ $tool = phptune ] || b=$BASE
			out=$(cpu_of "$b" bench "$URL" -c "$CONNS" -d "${SECS}s" --warmup 0s --json); n=$(echo "$out" | tail -n +2 | reqs_pt) ;;
		k6) out=$(cpu_of "$BIN" bench "$URL" --engine k6 --k6 "$K6" -c "$CONNS" -d "${SECS}s" --warmup 0s --json); n=$(echo "$out" | tail -n +2 | reqs_pt) ;;
		wrk) out=$(cpu_of wrk -t1 -c "$CONNS" -d "${SECS}s" "$URL"); n=$(echo "$out" | reqs_wrk) ;;
		ab) out=$(cpu_of ab -k -c "$CONNS" -t "$SECS" -n 100000000 "$URL"); n=$(echo "$out" | reqs_ab) ;;
		phptune-fcgi | base-fcgi)
			b=$BIN; [ $tool = phptune-fcgi ] || b=$BASE
			out=$(cpu_of "$b" bench "$PHPTUNE_UNIX" -c 4 -d "${SECS}s" --warmup 0s --json); n=$(echo "$out" | tail -n +2 | reqs_pt) ;;
		esac
		cpu=$(echo "$out" | head -1)
		case $n in
		'' | *[!0-9]*) echo "loadgen: $tool: no request count in its output:" >&2; echo "$out" | tail -n +2 | head -20 >&2; exit 1 ;;
		esac
		echo "$tool $(per "$cpu" "$n") $n" >>"$results"
	done
done
python3 - "$results" "$CONNS" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    tool, us, n = line.split()
    rows.setdefault(tool, []).append((float(us), int(n)))
print("generator CPU per request, %s connections, median of %d rounds (us/request, requests/round):" % (sys.argv[2], len(rows["wrk"])))
med = {}
for tool in ["phptune", "base", "wrk", "ab", "k6", "phptune-fcgi", "base-fcgi"]:
    v = rows.get(tool)
    if not v:
        continue
    med[tool] = statistics.median(u for u, _ in v)
    print("  %-14s %7.2f us   (%s)" % (tool, med[tool], ", ".join("%.2f" % u for u, _ in v)))
print("ratio phptune/wrk %.2f" % (med["phptune"] / med["wrk"]))
print("ratio phptune/ab  %.2f" % (med["phptune"] / med["ab"]))
if "k6" in med:
    print("ratio k6/phptune %.2f" % (med["k6"] / med["phptune"]))
if "base" in med:
    print("ratio base/wrk    %.2f" % (med["base"] / med["wrk"]))
    print("ratio phptune/base %.3f, fcgi %.3f" % (med["phptune"] / med["base"], med["phptune-fcgi"] / med["base-fcgi"]))
PY
