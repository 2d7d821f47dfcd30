#!/bin/sh
# PGO's verified gain: `phptune build` of Debian's php8.2 source (lean), baseline and PGO, each app trained on
# itself and verified on its training URLs, a held-out set and the guard (Zend/bench.php): time per request with
# php-cgi -T pinned to one CPU, interleaved rounds, median ratio with 95% CI, plus instructions per request.
# Goals (the issue): PGO at least 15% less time per request on the app it was trained on, held-out no worse than
# 3% slower, guard reported. Prints the table, one line per app and variant with the gains, and whether pgo met
# the goals.
# Usage: bench/pgo.sh [ROUNDS]   (default 10)
# WordPress is included when its preset is prepared (phptune workload prepare wordpress; WORDPRESS=DIR names a
# prepared workload directory, WORDPRESS= leaves it out): trained on the preset's URLs with their content checks,
# its MariaDB running, held out on the demo app's routes.
# PHPTUNE=path picks the binary (default bin/phptune); VARIANTS=baseline,pgo,pgo+lto,pgo+bolt adds the reach
# variants (each is a build of its own: LTO takes about twice PGO's build time, BOLT needs bolt-16 and
# libbolt-16-dev). Builds land in the build cache: a rerun only measures.
set -eu
ROUNDS=${1:-10}
VARIANTS=${VARIANTS:-baseline,pgo}
cd "$(dirname "$0")/.."
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "pgo: build first (make build)" >&2; exit 2; }
out=$(mktemp -d /tmp/phptune-pgo-XXXXXX)
summary() { # $1 app name, $2 result.json
	python3 - "$1" "$2" <<'EOP'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
for v in r["variants"]:
    if v["name"] == "baseline":
        continue
    if not v.get("available"):
        print(f"{name:10} {v['name']:19} unavailable: {v.get('reason','').splitlines()[0]}")
        continue
    parts = []
    for s in ("train", "holdout", "guard"):
        g = v.get("gain_pct", {}).get(s)
        if g is None:
            parts.append(f"{s} -")
            continue
        lo, hi = v["gain_ci_pct"][s]
        parts.append(f"{s} {g:+.1f}% [{lo:+.1f},{hi:+.1f}] {v['verdict'][s]}")
    print(f"{name:10} {v['name']:19} " + "  ".join(parts))
    g = v.get("gain_pct", {})
    if v["name"] == "pgo" and "train" in g and "holdout" in g:
        met = lambda ok: "met" if ok else "NOT met"
        print(f"{name:10} {'goals':19} train at least 15% faster: {met(g['train'] >= 15)} ({g['train']:+.1f}%)"
              f"  holdout no worse than 3% slower: {met(g['holdout'] >= -3)} ({g['holdout']:+.1f}%)")
EOP
}
echo "== demo app (trained on its HTML pages; held out: its API and form)"
"$BIN" build --variants "$VARIANTS" --rounds "$ROUNDS" --out "$out/demo"
set -- demo "$out/demo/result.json"
lines=$(summary "$@")
if [ "${WORDPRESS-auto}" = auto ] && "$BIN" workload list | grep -Eq '^wordpress +yes'; then
	WORDPRESS=wordpress
fi
if [ -n "${WORDPRESS:-}" ] && [ "$WORDPRESS" != auto ]; then
	echo "== WordPress ($WORDPRESS; trained on its URLs, held out on the demo app's)"
	"$BIN" build --train "$WORDPRESS" --variants "$VARIANTS" --rounds "$ROUNDS" --out "$out/wordpress"
	lines="$lines
$(summary wordpress "$out/wordpress/result.json")"
else
	echo "== WordPress: skipped (phptune workload prepare wordpress, or WORDPRESS=DIR, to include it)"
fi
echo
echo "gain = time per request saved against the baseline (positive = faster), 95% CI, verdict"
echo "$lines"
echo "results: $out"
