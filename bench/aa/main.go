// Command aa runs A/A tunes through the whole tool: `phptune tune` of the demo, -runs times, racing two knobs
// whose values cannot differ, each on stacks of its own: html_errors 0 against off (an ini setting, the CPU
// path: no error is ever shown) and max_requests 0 against 100000 (the goodput path, on steady twins: no worker
// serves 100000 requests in a run). The pool is pinned to the rule of thumb's (static, 2 x cores) and the listen
// backlog to php-fpm's default (511), so the recommendation is the starting point and, in all but name, the rule of
// thumb: tune does not race the recommendation against the starting point it is, and the final comparison sets it
// against the rule of thumb, the same pool. It prints, for each path, the share of runs with a false better or
// worse, and for the final comparison, the share of runs whose intervals all cover zero and of those with a false
// verdict.
// bench/aa.sh runs it (20 runs of 3 minutes: about 70 minutes).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/bench/internal/heavylock"
)

func main() {
	runs := flag.Int("runs", 20, "tune runs")
	budget := flag.Duration("budget", 3*time.Minute, "each run's --budget")
	bin := flag.String("bin", "bin/phptune", "the phptune binary")
	out := flag.String("out", "", "keep each run's result.json under this directory (default: a temporary one, removed)")
	lock := flag.String("lock", "", "take this lock file (flock) for each run, so that measuring neighbours take turns")
	stall := flag.Int("stall", 0, "tune an app whose requests all wait, 3 s, on one in this many (0: the demo), with --timeout 2s")
	again := flag.String("tally", "", "count the runs kept under this -out directory again, and run nothing")
	flag.Parse()
	if *again != "" {
		if err := tallyAgain(*again, *budget, *stall); err != nil {
			fmt.Fprintln(os.Stderr, "aa:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts{runs: *runs, budget: *budget, bin: *bin, out: *out, lock: *lock, stall: *stall}); err != nil {
		fmt.Fprintln(os.Stderr, "aa:", err)
		os.Exit(1)
	}
}

// The no-op knobs, by path.
var paths = []struct{ name, knob, values string }{
	{"CPU", "html_errors", "ini:html_errors=0,off"},
	{"goodput", "max_requests", "max_requests=0,100000"},
}

type result struct {
	ElapsedS float64 `json:"elapsed_s"`
	Partial  bool    `json:"partial"`
	Trials   []struct {
		Errors int64 `json:"errors"`
	} `json:"trials"`
	Knobs    []row `json:"knobs"`
	Headline *struct {
		Rounds        int   `json:"rounds"`
		VsRuleOfThumb *comp `json:"vs_rule_of_thumb"`
		// The final's second figure, requests per CPU-second, where the servers' CPU was read.
		CapacityVsRuleOfThumb *comp `json:"capacity_vs_rule_of_thumb"`
	} `json:"headline"`
}

type row struct {
	Name      string  `json:"name"`
	Verdict   string  `json:"verdict"`
	Rounds    int     `json:"rounds"`
	CILowPct  float64 `json:"ci_low_pct"`
	CIHighPct float64 `json:"ci_high_pct"`
}

type comp struct {
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Verdict string  `json:"verdict"`
}

type opts struct {
	runs           int
	budget         time.Duration
	bin, out, lock string
	stall          int
	app            string // the stalling app's directory
}

func run(ctx context.Context, o opts) error {
	if _, err := os.Stat(o.bin); err != nil {
		return fmt.Errorf("%s: build it first (make build): %w", o.bin, err)
	}
	if o.out == "" {
		dir, err := os.MkdirTemp("", "phptune-aa-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.out = dir
	}
	if o.stall > 0 {
		o.app = filepath.Join(o.out, "stall-app")
		if err := writeStallApp(o.app, o.stall); err != nil {
			return err
		}
	}
	var t tally
	for i := 1; i <= o.runs && ctx.Err() == nil; i++ {
		dir := filepath.Join(o.out, fmt.Sprintf("run-%02d", i))
		r, err := tuneOnce(ctx, o, dir)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "run %d: %v\n", i, err)
			t.failed++
			continue
		}
		t.add(r)
		fmt.Fprintf(os.Stderr, "run %d of %d: %s\n", i, o.runs, t.line(r))
	}
	t.print(o)
	return ctx.Err()
}

// stallPHP makes one request in N hold every other for 3 s: each takes a lock on the served copy's own
// index.php (shared), the unlucky one takes it exclusively and sleeps, as requests queue behind a session
// lock or a cache stampede. Every request computes for about 50 ms first (about 40 a second on 2 cores: a
// stall every 10 s of load, at one in 400).
const stallPHP = `<?php
$x = 0;
for ($i = 0; $i < 2000000; $i++) { $x += $i %% 7; }
$f = fopen(__FILE__, 'r');
if (mt_rand(1, %d) === 1) { flock($f, LOCK_EX); usleep(3000000); } else { flock($f, LOCK_SH); }
flock($f, LOCK_UN);
echo "ok $x\n";
`

func writeStallApp(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.php"), []byte(fmt.Sprintf(stallPHP, n)), 0o644)
}

// tallyAgain counts the results kept under dir by an earlier run of the bench.
func tallyAgain(dir string, budget time.Duration, stall int) error {
	files, err := filepath.Glob(filepath.Join(dir, "run-*", "result.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no run-*/result.json under %s", dir)
	}
	var t tally
	for _, f := range files {
		r, err := readResult(f)
		if err != nil {
			return err
		}
		t.add(r)
		fmt.Fprintf(os.Stderr, "%s: %s\n", filepath.Base(filepath.Dir(f)), t.line(r))
	}
	t.print(opts{runs: len(files), budget: budget, stall: stall})
	return nil
}

func readResult(path string) (*result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// tuneOnce runs one tune into dir and reads its result.
func tuneOnce(ctx context.Context, o opts, dir string) (*result, error) {
	if o.lock != "" {
		unlock, err := heavylock.Take(ctx, o.lock)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	args := []string{"tune"}
	if o.app != "" {
		args = append(args, o.app, "--timeout", "2s")
	}
	args = append(args, "--budget", o.budget.String(), "--only", "none", "--no-screen", "--out", dir,
		"--knob", "pm=static", "--knob", fmt.Sprintf("max_children=%d", 2*runtime.NumCPU()), "--knob", "backlog=511")
	for _, p := range paths {
		args = append(args, "--knob", p.values)
	}
	cmd := exec.CommandContext(ctx, o.bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, heavylock.LastLine(stderr.String()))
	}
	return readResult(filepath.Join(dir, "result.json"))
}

// tally counts the verdicts of the runs.
type tally struct {
	runs, failed int
	verdicts     [2]map[string]int
	rounds       [2]int
	finals       int     // runs with a final comparison
	covered      int     // runs whose final intervals all cover zero
	finalWrong   int     // runs with a better or worse in the final
	anyWrong     int     // runs with a better or worse anywhere: either knob or the final
	partial      int     // runs whose result is partial (the run stopped)
	elapsed      float64 // seconds, summed
	failedTrials int     // trials with failed requests
	trials       int
	// The intervals' widths (percentage points), by path and for the final's goodput against the rule of thumb: an
	// interval that covers zero says little when it is wide.
	widths      [2][]float64
	finalWidths []float64
}

func (t *tally) add(r *result) {
	t.runs++
	if r.Partial {
		t.partial++
	}
	t.elapsed += r.ElapsedS
	for _, tr := range r.Trials {
		t.trials++
		if tr.Errors > 0 {
			t.failedTrials++
		}
	}
	wrongHere := false
	defer func() {
		if wrongHere {
			t.anyWrong++
		}
	}()
	for i, p := range paths {
		if t.verdicts[i] == nil {
			t.verdicts[i] = map[string]int{}
		}
		k, ok := rowOf(r, p.knob)
		wrongHere = wrongHere || k.Verdict == "better" || k.Verdict == "worse"
		switch {
		case !ok:
			t.verdicts[i]["missing"]++
		case k.Verdict == "":
			t.verdicts[i]["not tried"]++
		default:
			t.verdicts[i][k.Verdict]++
			t.rounds[i] += k.Rounds
			t.widths[i] = append(t.widths[i], k.CIHighPct-k.CILowPct)
		}
	}
	if h := r.Headline; h != nil && h.VsRuleOfThumb != nil {
		t.finals++
		t.finalWidths = append(t.finalWidths, 100*(h.VsRuleOfThumb.Hi-h.VsRuleOfThumb.Lo))
		covers, wrong := true, false
		for _, c := range []*comp{h.VsRuleOfThumb, h.CapacityVsRuleOfThumb} {
			if c == nil {
				continue
			}
			covers = covers && c.Lo <= 0 && c.Hi >= 0
			wrong = wrong || c.Verdict == "better" || c.Verdict == "worse"
		}
		if covers {
			t.covered++
		}
		if wrong {
			t.finalWrong++
			wrongHere = true
		}
	}
}

func rowOf(r *result, name string) (row, bool) {
	for _, k := range r.Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return row{}, false
}

// line is one run's verdicts, for the progress.
func (t *tally) line(r *result) string {
	var parts []string
	for _, p := range paths {
		if k, ok := rowOf(r, p.knob); ok {
			parts = append(parts, fmt.Sprintf("%s %s [%+.1f%%, %+.1f%%] in %d rounds", p.knob, orNone(k.Verdict), k.CILowPct, k.CIHighPct, k.Rounds))
		}
	}
	if h := r.Headline; h != nil && h.VsRuleOfThumb != nil {
		parts = append(parts, fmt.Sprintf("final %s [%+.1f%%, %+.1f%%] in %d rounds",
			h.VsRuleOfThumb.Verdict, 100*h.VsRuleOfThumb.Lo, 100*h.VsRuleOfThumb.Hi, h.Rounds))
	}
	return strings.Join(parts, "; ")
}

func orNone(v string) string {
	if v == "" {
		return "not tried"
	}
	return v
}

func (t *tally) print(o opts) {
	what := "the demo"
	if o.stall > 0 {
		what = fmt.Sprintf("an app stalling 3 s on one request in %d, --timeout 2s", o.stall)
	}
	fmt.Printf("A/A through tune: %d runs of %s (%d failed), %s, pool static %d\n", t.runs+t.failed, o.budget, t.failed, what, 2*runtime.NumCPU())
	fmt.Printf("runs that stopped part-way: %d; mean run %.0f s; trials with failed requests: %s\n", t.partial,
		t.elapsed/float64(max(t.runs, 1)), share(t.failedTrials, t.trials))
	for i, p := range paths {
		v := t.verdicts[i]
		wrong := v["better"] + v["worse"]
		fmt.Printf("%-8s %-13s better %d, worse %d, no_difference %d, inconclusive %d, not tried %d; mean rounds %.0f\n",
			p.name, p.knob, v["better"], v["worse"], v["no_difference"], v["inconclusive"], v["not tried"]+v["missing"],
			float64(t.rounds[i])/float64(max(t.runs-v["not tried"]-v["missing"], 1)))
		fmt.Printf("%-8s %-13s false better/worse in %s of runs (target: at most 5%%)\n", "", "", share(wrong, t.runs))
		fmt.Printf("%-8s %-13s intervals %s wide\n", "", "", quartiles(t.widths[i]))
	}
	fmt.Printf("final    against itself (goodput, and capacity where read): intervals all covering zero in %s of runs\n"+
		"         (target: at least 95%%), a false better/worse in %s\n",
		share(t.covered, t.finals), share(t.finalWrong, t.finals))
	fmt.Printf("         goodput against the rule of thumb: intervals %s wide\n", quartiles(t.finalWidths))
	fmt.Printf("any      a false better/worse anywhere in the run in %s of runs\n", share(t.anyWrong, t.runs))
	if t.finals < t.runs {
		fmt.Printf("         (%d runs had no final comparison)\n", t.runs-t.finals)
	}
}

// quartiles says how wide intervals were: their median and quartiles, in percentage points.
func quartiles(w []float64) string {
	if len(w) == 0 {
		return "-"
	}
	v := slices.Clone(w)
	slices.Sort(v)
	at := func(q float64) float64 { return v[int(q*float64(len(v)-1)+0.5)] }
	return fmt.Sprintf("%.0f points (median; quartiles %.0f to %.0f)", at(0.5), at(0.25), at(0.75))
}

func share(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", k, n, 100*float64(k)/float64(n))
}
