#!/bin/sh
# compare --interleave of a target against itself, RUNS times: the verdicts it gives (req/s and p50; a wrong
# better or worse is what the error budget bounds), the rounds each run took, and the run time. The target is
# the demo app served by phptune serve (nginx + php-fpm in a private dir), the same URL for both arms.
# Usage: bench/compare-self.sh [RUNS] [MAX_ROUNDS] [TRIAL]   (defaults 20, 20 and 0.5s)
# PHPTUNE=path picks the binary (default bin/phptune).
set -eu
RUNS=${1:-20}
ROUNDS=${2:-20}
TRIAL=${3:-0.5s}
cd "$(dirname "$0")/.."
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "compare-self: build first (make build)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "compare-self: python3 missing" >&2; exit 2; }
tmp=$(mktemp -d /tmp/phptune-compare-self-XXXXXX)
fifo="$tmp/serve"
mkfifo "$fifo"
"$BIN" serve --json --for 2h >"$fifo" 2>"$tmp/serve.err" &
serve=$!
trap 'kill -INT $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
# serve --json prints one indented object, then stays up: read lines until they parse, keep the pipe open.
exec 3<"$fifo"
url=$(python3 -c '
import json, os
buf = b""
while True:
    line = b""
    while not line.endswith(b"\n"):
        c = os.read(3, 1)
        if not c:
            raise SystemExit(1)
        line += c
    buf += line
    try:
        print(json.loads(buf)["http"]); break
    except ValueError:
        pass
' 3<&3) || true
[ -n "$url" ] || { echo "compare-self: serve did not start: $(cat "$tmp/serve.err")" >&2; exit 1; }
i=0
while [ $i -lt "$RUNS" ]; do
	i=$((i + 1))
	s=$(date +%s%N)
	"$BIN" compare --interleave --rounds "$ROUNDS" -c 4 -d "$TRIAL" --warmup 200ms --json "$url" "$url" >"$tmp/run-$i.json"
	echo $(( ($(date +%s%N) - s) / 1000000 )) >"$tmp/ms-$i"
done
python3 - "$tmp" "$RUNS" <<'PY'
import json, sys, os, collections
tmp, runs = sys.argv[1], int(sys.argv[2])
count = collections.defaultdict(collections.Counter)
rounds, ms = [], []
for i in range(1, runs + 1):
    r = json.load(open(os.path.join(tmp, "run-%d.json" % i)))
    ms.append(int(open(os.path.join(tmp, "ms-%d" % i)).read()))
    rounds.append(r["arms"][1]["trials"])
    for row in r["arms"][1]["rows"]:
        count[row["metric"]][row["verdict"]] += 1
print("compare --interleave of a target against itself, %d runs:" % runs)
for m in ("rps", "p50", "p90", "p99"):
    c = count[m]
    print("  %-4s better %2d  worse %2d  no_difference %2d  inconclusive %2d" % (
        m, c["better"], c["worse"], c["no_difference"], c["inconclusive"]))
wrong = sum(count[m]["better"] + count[m]["worse"] for m in ("rps", "p50"))
rounds.sort(); ms.sort()
print("  rounds per run: median %d (min %d, max %d); run time median %.1f s" % (
    rounds[len(rounds) // 2], rounds[0], rounds[-1], ms[len(ms) // 2] / 1000))
print("  better/worse on req/s or p50: %d of %d (target: at most 1)" % (wrong, runs))
PY
