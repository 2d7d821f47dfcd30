#!/bin/sh
# Reading access logs: the time `phptune mix --from-access-log` takes to read a log of N lines (default 100,000;
# nginx combined with $request_time, a PHP site's mix of pages, assets, searches, health checks, posts and
# errors, over about five and a half hours with a minute of ten times the rate), plain and gzipped, and print
# the mix and the load over time (peak, 99th percentile second, busiest minute, concurrency), which one read
# gives together. Target: 100,000 lines, the mix and the load, in under 2 s. Prints each time, its ratio to the
# target, the mix's first lines and the load.
# Usage: bench/accesslog.sh [LINES] [REPEATS]
set -eu
LINES=${1:-100000}
REPEATS=${2:-3}
cd "$(dirname "$0")/.."
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "accesslog: build first (make build)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/phptune-bench-accesslog.XXXXXX)
trap 'rm -rf "$DIR"' EXIT INT TERM
awk -v n="$LINES" 'BEGIN {
	srand(1)
	t = 0 # seconds since midnight: 5 requests a second on average, 100 in the minute from 9000 s
	for (i = 0; i < n; i++) {
		t += rand() * 2 * (t >= 9000 && t < 9060 ? 0.01 : 0.2)
		k = int(rand() * 100); m = "GET"; s = 200
		if (k < 30) u = "/post/" int(rand() * 5000)
		else if (k < 45) u = "/blog/some-article-title-" int(rand() * 300)
		else if (k < 55) u = "/search?q=term" int(rand() * 1000) "&page=" int(rand() * 5)
		else if (k < 75) u = sprintf("/assets/app.%x.js", int(rand() * 50))
		else if (k < 80) u = "/healthz"
		else if (k < 85) { m = "POST"; u = "/wp-admin/admin-ajax.php" }
		else if (k < 90) { u = "/missing/" i; s = 404 }
		else u = "/"
		printf "203.0.113.%d - - [10/Oct/2024:%02d:%02d:%02d +0000] \"%s %s HTTP/1.1\" %d %d \"https://example.com/\" \"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36\" %.3f\n", int(rand() * 256), int(t / 3600), int(t % 3600 / 60), int(t % 60), m, u, s, int(rand() * 50000), rand() / 10
	}
}' > "$DIR/access.log"
gzip -k "$DIR/access.log"
best() { # the fastest of REPEATS runs, in seconds
	b=""
	for _ in $(seq "$REPEATS"); do
		t0=$(date +%s.%N)
		"$BIN" mix --from-access-log "$1" > "$DIR/mix.out" 2> "$DIR/mix.err"
		t1=$(date +%s.%N)
		b=$(echo "$t0 $t1 $b" | awk '{ d = $2 - $1; if ($3 == "" || d < $3) d = d; else d = $3; printf "%.3f", d }')
	done
	echo "$b"
}
plain=$(best "$DIR/access.log")
gz=$(best "$DIR/access.log.gz")
echo "access log of $LINES lines ($(du -h "$DIR/access.log" | cut -f1) plain, $(du -h "$DIR/access.log.gz" | cut -f1) gzipped), best of $REPEATS:"
echo "$plain $gz" | awk -v n="$LINES" '{ printf "  plain %.3f s (%.0f lines/s, %.3f of the 2 s target)\n  gzip  %.3f s (%.0f lines/s, %.3f of the 2 s target)\n", $1, n / $1, $1 / 2, $2, n / $2, $2 / 2 }'
echo "the mix and its load:"
head -4 "$DIR/mix.err"
sed -n '/^load: /,$p' "$DIR/mix.err"
