package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/bench/internal/capture"
)

// Three runs' results, as tune writes them: knob rows of both paths, and the final comparison.
var results = []string{
	// Run 1: html_errors no difference, max_requests a false better; the final covers zero on both figures.
	`{"elapsed_s": 100, "trials": [{"errors": 0}, {"errors": 2}],
	  "knobs": [{"name": "html_errors", "verdict": "no_difference", "rounds": 10, "ci_low_pct": -1, "ci_high_pct": 2},
	            {"name": "max_requests", "verdict": "better", "rounds": 20, "ci_low_pct": 1, "ci_high_pct": 5}],
	  "headline": {"rounds": 7, "vs_rule_of_thumb": {"lo": -0.01, "hi": 0.02, "verdict": "no_difference"},
	               "capacity_vs_rule_of_thumb": {"lo": -0.02, "hi": 0.01, "verdict": "no_difference"}}}`,
	// Run 2: stopped part-way: html_errors not tried, no max_requests row, no final.
	`{"elapsed_s": 50, "partial": true, "knobs": [{"name": "html_errors"}]}`,
	// Run 3: html_errors a false worse, max_requests inconclusive; the final a false better on goodput alone.
	`{"elapsed_s": 150, "trials": [{"errors": 0}],
	  "knobs": [{"name": "html_errors", "verdict": "worse", "rounds": 6, "ci_low_pct": -8, "ci_high_pct": -2},
	            {"name": "max_requests", "verdict": "inconclusive", "rounds": 30, "ci_low_pct": -3, "ci_high_pct": 3}],
	  "headline": {"rounds": 9, "vs_rule_of_thumb": {"lo": 0.01, "hi": 0.05, "verdict": "better"}}}`,
}

// writeRuns keeps results as an earlier run of the bench would under -out: run-NN/result.json.
func writeRuns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i, r := range results {
		run := filepath.Join(dir, fmt.Sprintf("run-%02d", i+1))
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, "result.json"), []byte(r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readAll(t *testing.T, dir string) []*result {
	t.Helper()
	var rs []*result
	for i := range results {
		r, err := readResult(filepath.Join(dir, fmt.Sprintf("run-%02d", i+1), "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// The tally counts each path's verdicts (a knob without a row apart from one not tried), the rounds and widths
// of the decided ones, the finals covering zero and those with a false verdict, and a run wrong anywhere once.
func TestTallyCounts(t *testing.T) {
	var tl tally
	for _, r := range readAll(t, writeRuns(t)) {
		tl.add(r)
	}
	if tl.runs != 3 || tl.partial != 1 || tl.elapsed != 300 || tl.trials != 3 || tl.failedTrials != 1 {
		t.Errorf("runs %d, partial %d, elapsed %g, trials %d (%d failed); want 3, 1, 300, 3 (1)",
			tl.runs, tl.partial, tl.elapsed, tl.trials, tl.failedTrials)
	}
	wantVerdicts := [2]map[string]int{
		{"no_difference": 1, "not tried": 1, "worse": 1},
		{"better": 1, "missing": 1, "inconclusive": 1},
	}
	for i := range paths {
		if fmt.Sprint(tl.verdicts[i]) != fmt.Sprint(wantVerdicts[i]) {
			t.Errorf("%s verdicts %v, want %v", paths[i].name, tl.verdicts[i], wantVerdicts[i])
		}
	}
	if tl.rounds != [2]int{16, 50} {
		t.Errorf("rounds %v, want [16 50]", tl.rounds)
	}
	near := func(got, want []float64) bool {
		return slices.EqualFunc(got, want, func(g, w float64) bool { return math.Abs(g-w) < 1e-9 })
	}
	if !near(tl.widths[0], []float64{3, 6}) || !near(tl.widths[1], []float64{4, 6}) {
		t.Errorf("widths %v, want [[3 6] [4 6]]", tl.widths)
	}
	if !near(tl.finalWidths, []float64{3, 4}) {
		t.Errorf("final widths %v, want [3 4]", tl.finalWidths)
	}
	if tl.finals != 2 || tl.covered != 1 || tl.finalWrong != 1 || tl.anyWrong != 2 {
		t.Errorf("finals %d, covered %d, final wrong %d, any wrong %d; want 2, 1, 1, 2",
			tl.finals, tl.covered, tl.finalWrong, tl.anyWrong)
	}
}

// The progress line names each knob's verdict and interval, "not tried" for a knob without a verdict, and the
// final's interval in percent.
func TestTallyLine(t *testing.T) {
	rs := readAll(t, writeRuns(t))
	var tl tally
	want := []string{
		"html_errors no_difference [-1.0%, +2.0%] in 10 rounds; max_requests better [+1.0%, +5.0%] in 20 rounds; " +
			"final no_difference [-1.0%, +2.0%] in 7 rounds",
		"html_errors not tried [+0.0%, +0.0%] in 0 rounds",
		"html_errors worse [-8.0%, -2.0%] in 6 rounds; max_requests inconclusive [-3.0%, +3.0%] in 30 rounds; " +
			"final better [+1.0%, +5.0%] in 9 rounds",
	}
	for i, r := range rs {
		if got := tl.line(r); got != want[i] {
			t.Errorf("run %d's line\n %s\nwant\n %s", i+1, got, want[i])
		}
	}
}

// -tally counts the kept runs again and prints the summary: shares of runs, mean rounds of the runs that raced
// the knob, quartiles of the widths.
func TestTallyAgainPrintsSummary(t *testing.T) {
	dir := writeRuns(t)
	var err error
	out := capture.Stdout(t, func() { err = tallyAgain(dir, 3*time.Minute, 0) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("A/A through tune: 3 runs of 3m0s (0 failed), the demo, pool static %d\n", 2*runtime.NumCPU()),
		"runs that stopped part-way: 1; mean run 100 s; trials with failed requests: 1/3 (33%)\n",
		"CPU      html_errors   better 0, worse 1, no_difference 1, inconclusive 0, not tried 1; mean rounds 8\n",
		"goodput  max_requests  better 1, worse 0, no_difference 0, inconclusive 1, not tried 1; mean rounds 25\n",
		"false better/worse in 1/3 (33%) of runs (target: at most 5%)",
		"intervals 6 points (median; quartiles 3 to 6) wide",
		"intervals 6 points (median; quartiles 4 to 6) wide",
		"intervals all covering zero in 1/2 (50%) of runs\n",
		"a false better/worse in 1/2 (50%)\n",
		"goodput against the rule of thumb: intervals 4 points (median; quartiles 3 to 4) wide\n",
		"a false better/worse anywhere in the run in 2/3 (67%) of runs\n",
		"(1 runs had no final comparison)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if err := tallyAgain(t.TempDir(), time.Minute, 0); err == nil {
		t.Error("-tally of a directory without runs: no error")
	}
}

func TestReadResultRejectsBadJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(path, []byte(`{"knobs": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readResult(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated result.json: %v, want an error naming the file", err)
	}
}

func TestQuartiles(t *testing.T) {
	w := []float64{5, 1, 4, 2, 3}
	if got, want := quartiles(w), "3 points (median; quartiles 2 to 4)"; got != want {
		t.Errorf("quartiles(%v) = %q, want %q", w, got, want)
	}
	if !slices.Equal(w, []float64{5, 1, 4, 2, 3}) {
		t.Errorf("quartiles sorted its input: %v", w)
	}
	if got := quartiles(nil); got != "-" {
		t.Errorf("quartiles(nil) = %q", got)
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want string
	}{{1, 4, "1/4 (25%)"}, {2, 3, "2/3 (67%)"}, {0, 5, "0/5 (0%)"}, {0, 0, "-"}} {
		if got := share(c.k, c.n); got != c.want {
			t.Errorf("share(%d, %d) = %q, want %q", c.k, c.n, got, c.want)
		}
	}
}

// The stalling app has one request in n stall, its format's %% written as PHP's %, and is valid PHP.
func TestWriteStallApp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "stall-app")
	if err := writeStallApp(dir, 400); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.php")
	src, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mt_rand(1, 400) === 1", "$x += $i % 7;", "usleep(3000000)"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("index.php lacks %q:\n%s", want, src)
		}
	}
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("no php CLI to lint the app with")
	}
	if out, err := exec.Command(php, "-l", index).CombinedOutput(); err != nil {
		t.Errorf("php -l: %v\n%s", err, out)
	}
}

func TestRunWantsTheBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "no-phptune")
	err := run(context.Background(), opts{runs: 1, budget: time.Minute, bin: bin})
	if err == nil || !strings.Contains(err.Error(), "build it first") {
		t.Errorf("run without the binary: %v, want a build-it-first error", err)
	}
}
