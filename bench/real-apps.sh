#!/bin/sh
# Tune's value on real applications: each preset prepared (its Debian packages installed, provisioned once),
# tuned at the budget, and the recommendation's final interleaved comparison (fresh trials, inside the tune)
# against Debian's defaults and the "static, 2 x cores" rule read back: one table of the gain in capacity (requests
# per CPU-second) and in goodput, each with its interval and verdict, what changed and the time it took; where
# capacity is undecided, the rounds that would decide it against the rounds the whole budget could hold; then the
# stacks' own offsets the runs' trials show, pooled over the presets.
# Usage: bench/real-apps.sh [BUDGET] [PRESET...]   (default 10m; wordpress mediawiki dokuwiki laravel symfony)
# PHPTUNE=path picks the binary (default bin/phptune). OUT=DIR keeps each run's results (default a temp dir);
# a preset already run in OUT is not run again, so an interrupted run goes on where it stopped.
# About BUDGET + 1 minute per preset; WordPress and Laravel are tuned with their signed-in pages in the mix.
set -eu
BUDGET=${1:-10m}
[ $# -gt 0 ] && shift
PRESETS=${*:-wordpress mediawiki dokuwiki laravel symfony}
cd "$(dirname "$0")/.."
BIN=${PHPTUNE:-bin/phptune}
[ -x "$BIN" ] || { echo "real-apps: build first (make build)" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "real-apps: python3 missing" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d /tmp/phptune-real-apps-XXXXXX)}
mkdir -p "$OUT"
for p in $PRESETS; do
	[ -f "$OUT/$p.code" ] && continue
	"$BIN" workload prepare "$p" >"$OUT/$p-prepare.log" 2>&1 || { echo "real-apps: prepare $p failed: $OUT/$p-prepare.log" >&2; exit 1; }
	s=$(date +%s)
	code=0
	"$BIN" tune "$p" --budget "$BUDGET" --out "$OUT/$p" >"$OUT/$p.txt" 2>"$OUT/$p.err" || code=$?
	echo "$(( $(date +%s) - s ))" >"$OUT/$p.seconds"
	echo "$code" >"$OUT/$p.code"
done
python3 - "$OUT" $PRESETS <<'PY'
import json, os, sys
out, presets = sys.argv[1], sys.argv[2:]
def gain(c):
    if not c:
        return "-", "-"
    return "%+.1f%% [%+.1f, %+.1f]" % (100 * c["estimate"], 100 * c["lo"], 100 * c["hi"]), c.get("verdict", "")
print("Tune's recommendation against Debian's defaults (interleaved final): capacity (req per CPU-second) and goodput")
print("%-10s %-26s %-14s %-26s %-14s %6s" % ("preset", "capacity vs Debian", "verdict", "goodput vs Debian", "verdict", "time"))
for p in presets:
    seconds = open(os.path.join(out, p + ".seconds")).read().strip()
    code = open(os.path.join(out, p + ".code")).read().strip()
    path = os.path.join(out, p, "result.json")
    if not os.path.exists(path):
        err = open(os.path.join(out, p + ".err")).read().strip().splitlines()
        print("%-10s failed (exit %s): %s" % (p, code, err[-1] if err else "?"))
        continue
    r = json.load(open(path))
    h = r.get("headline") or {}
    c, cv = gain(h.get("capacity_vs_debian"))
    d, dv = gain(h.get("vs_debian"))
    if h.get("same_as_baseline"):  # nothing shown better: the recommendation is Debian's defaults, not raced
        c, cv, d, dv = "the same configuration", "no change", "the same configuration", "no change"
        if h.get("same_but"):  # but for a setting no worker reaches within a run: serves alike, not raced
            c, cv, d, dv = "the same in a run", "memory only", "the same in a run", "memory only"
    t, tv = gain(h.get("capacity_vs_rule_of_thumb"))
    base, rec = r.get("baseline") or {}, r.get("recommendation") or {}
    flat = lambda c: {("%s %s" % (k, s) if isinstance(v, dict) else k): (w if isinstance(v, dict) else v)
                      for k, v in c.items() for s, w in (v.items() if isinstance(v, dict) else [(None, v)])}
    base, rec = flat(base), flat(rec)
    changed = ["%s %s->%s" % (k, base.get(k, "-"), rec.get(k, "-")) for k in sorted(set(base) | set(rec)) if base.get(k) != rec.get(k)]
    print("%-10s %-26s %-14s %-26s %-14s %5ss" % (p, c, cv, d, dv, seconds))
    print("%-10s capacity vs static 2 x cores %s %s" % ("", t, tv))
    cc, rs = h.get("capacity_vs_debian") or {}, h.get("round_s") or 0
    fin = [x for x in r.get("trials") or [] if x.get("phase") == "final"]
    if not rs and fin and h.get("rounds"):  # results from before round_s: the final's span over its rounds
        rs = (max(x["at_s"] for x in fin) - min(x["at_s"] - x["wall_s"] for x in fin)) / h["rounds"]
    if cc.get("verdict") == "inconclusive" and rs > 0:
        # What deciding would take at this final's pace, against all the rounds the budget could have held.
        need = cc.get("rounds_needed", 0)
        about = "over" if need >= 1000 else "about"
        print("%-10s capacity undecided after %d rounds of %.1f s: deciding needs %s %d rounds (%s %.0f min); the"
              " whole budget holds %d" % ("", h.get("rounds", 0), rs, about, need, about, need * rs / 60,
                                          r.get("budget_s", 0) / rs))
    print("%-10s changed: %s" % ("", ", ".join(changed) or "nothing"))
# The stacks' offsets, pooled over the presets: each arm's deviation from its round's mean, differenced from
# round to round, on the same pair of stacks and across a move to fresh ones; a pair's spread a round both ways,
# and the offset a stack that the difference implies, sqrt((across^2 - on one^2) / 2), against the 2% tune allows
# for (DefaultStackSD). By kind of trial: the races' CPU trials, their goodput trials' two figures, the final's.
import math
def differences(trials, fig, acc):
    rounds, cur = [], {}
    for x in trials:  # a round ends when an arm runs again (spread.inRound)
        if x["config"] in cur:
            rounds.append(cur)
            cur = {}
        cur[x["config"]] = x
    rounds.append(cur)
    prev = None
    for rd in rounds:
        v = {k: math.log(x[fig]) for k, x in rd.items() if x.get(fig)}
        if len(v) < 2:
            prev = None
            continue
        m, mean = len(v), sum(v.values()) / len(v)
        dev = {k: (y - mean, rd[k].get("stack")) for k, y in v.items()}
        if prev and set(prev) == set(dev):
            moved = any(prev[k][1] != dev[k][1] for k in dev)
            acc[moved].append(sum((dev[k][0] - prev[k][0]) ** 2 for k in dev) / m / (1 - 1 / m))
        prev = dev
kinds = {}
for p in presets:
    path = os.path.join(out, p, "result.json")
    if not os.path.exists(path):
        continue
    phases = {}
    for x in sorted(json.load(open(path)).get("trials") or [], key=lambda x: x["at_s"]):
        phases.setdefault(x["phase"], []).append(x)
    for ph, ts in phases.items():
        if ph == "saturation" or len({x["config"] for x in ts}) < 2:
            continue
        who = "the final's" if ph == "final" else "the races'"
        metric = "goodput" if ts[0].get("metric") == "goodput" else "CPU"
        for fig, name in (("value", metric), ("req_per_cpu_s", "capacity")):
            if any(x.get(fig) for x in ts):
                differences(ts, fig, kinds.setdefault("%s %s" % (who, name), {False: [], True: []}))
def offset(on, across):
    return math.sqrt(max(0, (sum(across) / len(across) - sum(on) / len(on)) / 2))
import random
rng = random.Random(1)
print("Stacks' offsets: a pair's spread a round on one pair of stacks and across fresh ones (differences counted),")
print("and the offset a stack they imply with a 90% interval (2000 resamples of the differences)")
for k, acc in sorted(kinds.items()):
    on, across = acc[False], acc[True]
    if on and across:
        boot = sorted(offset(rng.choices(on, k=len(on)), rng.choices(across, k=len(across))) for _ in range(2000))
        print("  %-20s %5.1f%% (%4d)  %5.1f%% (%4d)  offsets about %.1f%% [%.1f, %.1f] a stack" % (
            k, 100 * math.sqrt(sum(on) / len(on)), len(on), 100 * math.sqrt(sum(across) / len(across)), len(across),
            100 * offset(on, across), 100 * boot[100], 100 * boot[1899]))
print("runs kept in", out)
PY
