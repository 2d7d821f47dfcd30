#!/bin/sh
# The load generator's own cost: CPU microseconds per request (utime+stime of the generator's whole process over
# the requests it completed, as /usr/bin/time counts it) for phptune and wrk -t1, at each connection count, in
# interleaved rounds (each round runs every tool once, in a rotated order), and the ratio phptune/wrk with its
# 95% interval from the rounds' pairs (bench/loadgen, internal/stats).
#   HTTP: nginx `return 200` on loopback (phptune, wrk).
#   FastCGI: wrk cannot speak it, so the reference is wrk over HTTP to the same php-fpm pool through nginx
#   (wrk-php), a one-line script: the generator's cost a request depends on the server's pace (how many answers
#   each wake-up finds), and this reference faces the same PHP answer at the same connections. phptune-php is
#   phptune over that same HTTP path. FastCGI connections are capped at the pool's 8 workers (php-fpm keeps a
#   kept connection's worker, so connections beyond them would wait for good).
# Usage: bench/loadgen.sh [ROUNDS] [CONNECTIONS] [SECONDS]   (defaults 6, 1,16,64 and 3)
# PHPTUNE=path picks the binary (default bin/phptune); PHPTUNE_BASE=path adds a second build to every round
# (rows base and base-fcgi, and their ratios), to compare two builds side by side on a noisy machine.
# EXTRA="ab k6" adds ab -k and phptune bench --engine k6 (with bin/k6, or K6=path) on nginx's answer.
set -eu
ROUNDS=${1:-6}
CONNS=$(echo "${2:-1,16,64}" | tr ',' ' ')
SECS=${3:-3}
CHILDREN=8
cd "$(dirname "$0")/.."
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "loadgen: build first (make build)" >&2; exit 2; }
BASE=${PHPTUNE_BASE:-}
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "loadgen: PHPTUNE_BASE=$BASE is not executable" >&2; exit 2; }
K6=${K6:-bin/k6}
TOOLS="phptune wrk phptune-fcgi wrk-php phptune-php"
[ -z "$BASE" ] || TOOLS="$TOOLS base base-fcgi"
for t in ${EXTRA:-}; do
	case $t in
	ab | k6) TOOLS="$TOOLS $t" ;;
	*) echo "loadgen: EXTRA: $t: want ab or k6" >&2; exit 2 ;;
	esac
done
case " $TOOLS " in *" k6 "*) [ -x "$K6" ] || { echo "loadgen: $K6 missing: make k6" >&2; exit 2; } ;; esac
for p in wrk nginx; do
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
"$BIN" serve "$tmp" --front ok.php --env-file "$tmp/serve.env" --max-children $CHILDREN --pm static >/dev/null 2>&1 &
srv=$!
cleanup() { kill -QUIT $ngx 2>/dev/null || true; kill -INT $srv 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
i=0; while [ ! -s "$tmp/serve.env" ]; do i=$((i+1)); [ $i -lt 200 ] || { echo "serve did not start" >&2; exit 1; }; sleep 0.1; done
. "$tmp/serve.env"
sleep 0.5
URL="http://127.0.0.1:$port/"

# cpu_of CMD...: the command's CPU seconds (its whole process, children's rusage) on the first line, then its output.
cpu_of() { python3 - "$@" <<'PY'
import resource, subprocess, sys
before = resource.getrusage(resource.RUSAGE_CHILDREN)
out = subprocess.run(sys.argv[1:], capture_output=True, text=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
print((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
sys.stdout.write(out.stdout)
PY
}
per() { python3 -c "import sys; print('%.3f' % (float(sys.argv[1])*1e6/max(1,int(sys.argv[2]))))" "$1" "$2"; }
reqs_wrk() { awk '/requests in/ {print $1}'; }
reqs_ab() { awk '/Complete requests:/ {print $3}'; }
reqs_pt() { python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])'; }
# bench BINARY TARGET CONNECTIONS [FLAGS...]
bench() { b=$1 t=$2 c=$3; shift 3; cpu_of "$b" bench "$t" -c "$c" -d "${SECS}s" --warmup 0s --json "$@"; }

results="$tmp/results"
: >"$results"
for r in $(seq 1 "$ROUNDS"); do
	for c in $CONNS; do
		fc=$((c < CHILDREN ? c : CHILDREN))
		# rotate the order by one tool per round, so that none always runs first or after the same neighbour
		order=$(echo $TOOLS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }')
		for tool in $order; do
			case $tool in
			phptune) out=$(bench "$BIN" "$URL" "$c") ;;
			base) out=$(bench "$BASE" "$URL" "$c") ;;
			wrk) out=$(cpu_of wrk -t1 -c "$c" -d "${SECS}s" "$URL") ;;
			ab) out=$(cpu_of ab -k -c "$c" -t "$SECS" -n 100000000 "$URL") ;;
			k6) out=$(bench "$BIN" "$URL" "$c" --engine k6 --k6 "$K6") ;;
			phptune-fcgi) out=$(bench "$BIN" "$PHPTUNE_UNIX" "$fc") ;;
			base-fcgi) out=$(bench "$BASE" "$PHPTUNE_UNIX" "$fc") ;;
			wrk-php) out=$(cpu_of wrk -t1 -c "$fc" -d "${SECS}s" "$PHPTUNE_HTTP") ;;
			phptune-php) out=$(bench "$BIN" "$PHPTUNE_HTTP" "$fc") ;;
			esac
			case $tool in
			wrk*) n=$(echo "$out" | reqs_wrk) ;;
			ab) n=$(echo "$out" | reqs_ab) ;;
			*) n=$(echo "$out" | tail -n +2 | reqs_pt) ;;
			esac
			case $n in
			'' | *[!0-9]*) echo "loadgen: $tool: no request count in its output:" >&2; echo "$out" | tail -n +2 | head -20 >&2; exit 1 ;;
			esac
			echo "$c $tool $r $(per "$(echo "$out" | head -1)" "$n") $n" >>"$results"
		done
	done
	echo "loadgen: round $r of $ROUNDS done" >&2
done
[ -z "${LOADGEN_KEEP:-}" ] || cp "$results" "$LOADGEN_KEEP"
"$GO" run ./bench/loadgen "$results"
