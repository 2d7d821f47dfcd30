#!/bin/sh
# Start-up cost of serving a prepared preset: its files hard-linked into the served copy (as phptune serve NAME
# does) against the same docroot copied (phptune serve DOCROOT), interleaved, medians and their ratio.
# Usage: bench/workload-serve.sh [PRESET] [ROUNDS]   (the preset must be prepared; default mediawiki, 5 rounds)
set -eu
PRESET="${1:-mediawiki}"
ROUNDS="${2:-5}"
BIN="${PHPTUNE:-bin/phptune}"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}/phptune/workloads/$PRESET"
[ -f "$DATA/phptune-workload.json" ] || { echo "prepare it first: $BIN workload prepare $PRESET" >&2; exit 2; }
# Wall time of a serve that stops as soon as it is up (--for 1ms), in milliseconds.
t() { s=$(date +%s%N); "$BIN" serve "$@" --for 1ms --json >/dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
linked=""; copied=""
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		linked="$linked $(t "$PRESET")"; copied="$copied $(t "$DATA/docroot")"
	else
		copied="$copied $(t "$DATA/docroot")"; linked="$linked $(t "$PRESET")"
	fi
	i=$((i + 1))
done
median() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ml=$(median $linked); mc=$(median $copied)
echo "$PRESET serve start+stop, $ROUNDS interleaved rounds: linked median ${ml} ms, copied median ${mc} ms, copied/linked $(awk "BEGIN {printf \"%.2f\", $mc/$ml}")"
