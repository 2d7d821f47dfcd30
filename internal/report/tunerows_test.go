package report

import (
	"bytes"
	"context"
	"html"
	"math"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// simulatedTunes are tune runs decided by the engine on replayed noise, with effects planted both ways: opcache
// off and preload on worse (the incumbent kept), the JIT better (a candidate kept), and a pool of 8 where
// Debian has 5.
func simulatedTunes(t *testing.T, seeds int) []*tune.Result {
	t.Helper()
	var out []*tune.Result
	for seed := int64(1); seed <= int64(seeds); seed++ {
		rng := rand.New(rand.NewSource(seed))
		var noise experiment.Noise
		for i := 0; i < 500; i++ {
			noise.Rounds = append(noise.Rounds, []float64{rng.NormFloat64() * 0.03, rng.NormFloat64() * 0.03, rng.NormFloat64() * 0.03})
		}
		so := tune.SimOptions{Knobs: knob.All("preload.php", nil), Base: knob.Debian(), Budget: 3 * time.Minute,
			Effect: tune.Planted(map[string]map[string]float64{
				"opcache": {"off": tune.LogEffect(-0.44)},
				"jit":     {"tracing": tune.LogEffect(0.20), "function": tune.LogEffect(0.10)},
				"preload": {"on": tune.LogEffect(-0.15)},
			}),
			Noise:     map[string]*experiment.Replay{tune.MetricGoodput: experiment.NewReplay(noise, rng)},
			TrialCost: map[string]time.Duration{tune.MetricGoodput: 450 * time.Millisecond, tune.MetricCPU: 400 * time.Millisecond},
			StartCost: time.Second, MinEffect: tune.DefaultMinEffect, Alpha: 0.05, Conc: 8, Pool: 8,
			Facts: knob.Facts{THP: "madvise", MaxResponse: 16 << 10, Concurrency: 8, RealpathLimit: 4 << 20, RealpathUsed: 4 << 10}}
		r, err := tune.Simulate(context.Background(), so)
		if err != nil {
			t.Fatal(err)
		}
		r.Baseline = knob.Debian()
		out = append(out, r)
	}
	return out
}

// renderedRow is a knob's row as a person reads it off the terminal.
type renderedRow struct {
	name, start, kept, against, verdict string
	change, lo, hi                      float64
	compared                            bool
}

var cellSplit = regexp.MustCompile(`\s{2,}`)

// readRows reads the knob table back from tune's terminal output: the rows between its header and the first
// blank line, detail lines (indented further) skipped. A compared row has all eight cells.
func readRows(t *testing.T, out string) []renderedRow {
	t.Helper()
	var rows []renderedRow
	in := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  knob ") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if strings.TrimSpace(line) == "" {
			break
		}
		if strings.HasPrefix(line, "    ") {
			continue // a detail under the row
		}
		cells := cellSplit.Split(strings.TrimSpace(line), -1)
		row := renderedRow{name: cells[0]}
		row.kept = cells[1]
		if from, to, ok := strings.Cut(cells[1], " -> "); ok {
			row.start, row.kept = from, to
		}
		switch len(cells) {
		case 7, 8: // the rounds, when the result has them
			row.compared, row.against, row.verdict = true, cells[2], strings.TrimLeft(cells[5], "~? ")
			row.change = parsePct(t, cells[3])
			lo, hi, _ := strings.Cut(strings.Trim(cells[4], "[]"), ", ")
			row.lo, row.hi = parsePct(t, lo), parsePct(t, hi)
		case 3, 4: // not compared; a screened one with its metric
			row.verdict = strings.TrimLeft(cells[2], "~? ")
		default:
			t.Fatalf("a row of %d cells: %q", len(cells), line)
		}
		rows = append(rows, row)
	}
	return rows
}

func parsePct(t *testing.T, s string) float64 {
	t.Helper()
	if s == "+inf" {
		return math.Inf(1)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		t.Fatalf("not a change: %q", s)
	}
	return v
}

// checkRowsReadRight reads r's rendered rows and checks each against the run's own records, not the model:
// the kept value is the recommendation's, a start value is shown exactly where the starting configuration
// differs, and the change and verdict are the kept value's against the value named beside it, read off the
// engine's comparison of the two (whichever way round it was made).
func checkRowsReadRight(t *testing.T, name string, r *tune.Result) {
	t.Helper()
	var b bytes.Buffer
	Tune(&b, r)
	checkRows(t, name+" (terminal)", r, readRows(t, b.String()))
	for i, line := range strings.Split(b.String(), "\n") {
		if textLen(line) > termWidth {
			t.Errorf("%s: line %d is %d columns: %q", name, i+1, textLen(line), line)
		}
	}
	var page bytes.Buffer
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	checkRows(t, name+" (report.html)", r, readHTMLRows(t, page.String()))
}

// checkRows checks rows read off a rendering against the run's records.
func checkRows(t *testing.T, name string, r *tune.Result, rows []renderedRow) {
	t.Helper()
	if len(rows) != len(r.Knobs) {
		t.Fatalf("%s: %d rows read, %d knobs", name, len(rows), len(r.Knobs))
	}
	for _, row := range rows {
		k, ok := knob.ByName(row.name)
		if !ok {
			k = knob.INI(row.name)
		}
		if want := knob.Shown(row.name, k.Get(r.Recommendation)); row.kept != want {
			t.Errorf("%s: %s shows %q kept, the recommendation has %q", name, row.name, row.kept, want)
		}
		start := knob.Shown(row.name, k.Get(r.Baseline))
		if (row.start != "") != (start != row.kept) || (row.start != "" && row.start != start) {
			t.Errorf("%s: %s shows start %q, kept %q; the starting configuration has %q", name, row.name, row.start, row.kept, start)
		}
		if !row.compared {
			continue
		}
		est, verdict, found := keptAgainst(r, row)
		if !found {
			t.Errorf("%s: %s: no comparison of %s with %s in the run", name, row.name, row.kept, row.against)
			continue
		}
		if math.Abs(row.change-100*est) > 0.051*math.Max(1, math.Abs(100*est)/50) {
			t.Errorf("%s: %s %s against %s shows %+.1f%%, the run measured %+.2f%%", name, row.name, row.kept, row.against, row.change, 100*est)
		}
		if row.verdict == string(tune.NonInferior) {
			// The pool size's claim is the race's (within the margin of every size left), not the pair's verdict:
			// the interval shown must support it.
			if row.lo <= -100*r.Plan.PoolMarginOr() {
				t.Errorf("%s: %s reads %s with an interval [%+.1f%%, %+.1f%%] reaching past the margin", name, row.name, row.verdict, row.lo, row.hi)
			}
			continue
		}
		if row.verdict != string(verdict) {
			t.Errorf("%s: %s %s against %s reads %q, the run's verdict for it is %q", name, row.name, row.kept, row.against, row.verdict, verdict)
		}
		if (verdict == stats.Better && !(row.lo > 0 && row.change > 0)) || (verdict == stats.Worse && !(row.hi < 0 && row.change < 0)) {
			t.Errorf("%s: %s reads %s with %+.1f%% [%+.1f%%, %+.1f%%]", name, row.name, row.verdict, row.change, row.lo, row.hi)
		}
		if !(row.lo <= row.change && row.change <= row.hi) {
			t.Errorf("%s: %s's change %+.1f%% lies outside its interval [%+.1f%%, %+.1f%%]", name, row.name, row.change, row.lo, row.hi)
		}
	}
}

var (
	htmlRow  = regexp.MustCompile(`(?s)<tr class="knob" data-knob="([^"]+)">(.*?)</tr>`)
	htmlCell = regexp.MustCompile(`(?s)<td class="[^"]*\b(kept|against|change|interval)\b[^"]*">(.*?)</td>`)
	htmlTag  = regexp.MustCompile(`<[^>]+>`)
	badge    = regexp.MustCompile(`<span class="badge [^"]*">([^<]*)</span>`)
)

// readHTMLRows reads the settings table back from report.html, as the browser shows its cells' text.
func readHTMLRows(t *testing.T, page string) []renderedRow {
	t.Helper()
	text := func(s string) string {
		s = html.UnescapeString(htmlTag.ReplaceAllString(s, ""))
		return strings.TrimSpace(strings.NewReplacer("−", "-", "∞", "inf").Replace(s))
	}
	var rows []renderedRow
	for _, m := range htmlRow.FindAllStringSubmatch(page, -1) {
		row := renderedRow{name: html.UnescapeString(m[1])}
		cells := map[string]string{}
		for _, c := range htmlCell.FindAllStringSubmatch(m[2], -1) {
			cells[c[1]] = text(c[2])
		}
		row.kept = cells["kept"]
		if from, to, ok := strings.Cut(row.kept, " → "); ok {
			row.start, row.kept = from, to
		}
		if b := badge.FindStringSubmatch(m[2]); b != nil {
			row.verdict = html.UnescapeString(b[1])
		}
		if cells["change"] != "" {
			row.compared, row.against, row.change = true, cells["against"], parsePct(t, cells["change"])
			lo, hi, _ := strings.Cut(strings.Trim(cells["interval"], "[]"), ", ")
			row.lo, row.hi = parsePct(t, lo), parsePct(t, hi)
		}
		rows = append(rows, row)
	}
	return rows
}

// keptAgainst finds the engine's comparison of the row's two values and states it as the kept value's: its
// relative change and verdict.
func keptAgainst(r *tune.Result, row renderedRow) (float64, stats.Verdict, bool) {
	for i := len(r.Comparisons) - 1; i >= 0; i-- {
		c := r.Comparisons[i]
		if c.Knob != row.name || c.Stats.N == 0 {
			continue
		}
		a, b := knob.Shown(c.Knob, c.A), knob.Shown(c.Knob, c.B)
		switch {
		case b == row.kept && a == row.against:
			return math.Expm1(c.Stats.LogEstimate), c.Stats.Verdict, true
		case a == row.kept && b == row.against:
			v := c.Stats.Verdict
			switch v {
			case stats.Better:
				v = stats.Worse
			case stats.Worse:
				v = stats.Better
			}
			return math.Expm1(-c.Stats.LogEstimate), v, true
		}
	}
	return 0, "", false
}

// A person who reads only the table gets every kept value's direction right: in the engine's simulated runs
// (effects planted both ways) and in the recorded real runs.
func TestRowsReadRight(t *testing.T) {
	kinds := map[string]int{}
	for i, r := range simulatedTunes(t, 12) {
		checkRowsReadRight(t, "simulated run "+strconv.Itoa(i+1), r)
		for _, l := range knobLines(r) {
			if l.Change != nil {
				kinds[l.Name+" "+string(l.Verdict)]++
			}
		}
	}
	// The simulations must have made the cases the check is about: an incumbent kept against a worse
	// challenger, and a challenger kept.
	if kinds["opcache better"] == 0 || kinds["jit better"] == 0 {
		t.Errorf("the simulations decided neither opcache nor the JIT: %v", kinds)
	}
	checkRowsReadRight(t, "recorded", recordedTune(t))
	checkRowsReadRight(t, "recorded 3", recordedTune3(t))
}

// The rows the issue reported read right: opcache on +88% better against off, preload off better against on,
// the pool 5 -> 8, backlog 0 as php-fpm's 511.
func TestReportedRowsReadRight(t *testing.T) {
	r := &tune.Result{Baseline: knob.Debian(), Recommendation: knob.Debian(), Plan: tune.Plan{Alpha: 0.05}}
	r.Recommendation.MaxChildren = 8
	cs := func(knobName, a, b string, est, lo, hi float64, v stats.Verdict) tune.Comparison {
		return tune.Comparison{Knob: knobName, A: a, B: b, Stats: stats.Comparison{N: 4, Estimate: est, Lo: lo, Hi: hi, LogEstimate: math.Log1p(est),
			LogLo: math.Log1p(lo), LogHi: math.Log1p(hi), Conf: 0.9972, Method: "confidence-sequence", Verdict: v}}
	}
	r.Comparisons = []tune.Comparison{
		cs("opcache", "on", "off", -0.467, -0.619, -0.255, stats.Worse),
		cs("preload", "off", "on", -0.133, -0.2, -0.05, stats.Worse),
		cs("max_children", "8", "12", 0.01, -0.02, 0.03, stats.NoDifference),
	}
	r.Knobs = []tune.KnobRow{
		{Name: "opcache", Value: "on", From: "on", Metric: tune.MetricCPU, EffectPct: -46.7, CILowPct: -61.9, CIHighPct: -25.5, Verdict: stats.Worse, Vs: &tune.Versus{Knob: "opcache", B: "off", A: "on"}, Rounds: 4},
		{Name: "preload", Value: "off", From: "off", Metric: tune.MetricCPU, EffectPct: -13.3, CILowPct: -20, CIHighPct: -5, Verdict: stats.Worse, Vs: &tune.Versus{Knob: "preload", B: "on", A: "off"}, Rounds: 6},
		{Name: "max_children", Value: "8", From: "8", Metric: tune.MetricGoodput, EffectPct: 1, CILowPct: -2, CIHighPct: 3, Verdict: stats.NoDifference, Vs: &tune.Versus{Knob: "max_children", B: "12", A: "8"}, Rounds: 9},
		{Name: "backlog", Value: "0", From: "0", Note: "not tried: at most 8 connections wait for a worker, within php-fpm's default backlog (511)"},
		{Name: "realpath_cache_size", Metric: tune.MetricWork, Verdict: tune.Screened, Note: "realpath_cache_size=16M: instructions per request -0.1%, screened out"},
		{Name: "listen", Value: "unix", From: "unix", Verdict: stats.Error, Note: "listen=tcp failed: php-fpm did not start"},
	}
	checkRowsReadRight(t, "reported", r)
	var b bytes.Buffer
	Tune(&b, r)
	out := b.String()
	var page bytes.Buffer
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="badge screened">screened</span>`, "work per request counted, not timed",
		"none of the error budget was spent"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, row := range readRows(t, out) {
		if row.name == "realpath_cache_size" && row.verdict != "screened" {
			t.Errorf("realpath_cache_size reads %+v, want screened (counted, never a statistical verdict)", row)
		}
		if row.name == "opcache" && (row.kept != "on" || row.against != "off" || row.change != 87.6 || row.lo != 34.2 || row.hi != 162 || row.verdict != "better") {
			t.Errorf("opcache reads %+v, want on against off, +87.6%% [+34.2%%, +162%%], better", row)
		}
	}
	for _, want := range []string{"5 -> 8", "default (511)",
		"others failed", "listen=tcp failed", "screened: every candidate was counted doing the same work", "none of the error budget was spent",
		"req/CPU-s: requests served per second of php-fpm's CPU time", "All verdicts of the run hold together at 95% confidence"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// recordedTune3 is a real run on the code of the rows' model (phptune tune --budget 3m --out /tmp/demo on the
// demo app, on a 2-CPU machine shared with other work): CPU-only knobs on requests per CPU-second, races with
// rounds, the pool sized among sizes within the margin, the apply plan.
func recordedTune3(t testing.TB) *tune.Result {
	return recordedTuneFile(t, "testdata/tune-result-3.json")
}

// A comparison of tune runs words each run's value as the kept value's, within a terminal's width.
func TestCompareTunesRowsReadRight(t *testing.T) {
	r1, r3 := recordedTune(t), recordedTune3(t)
	tr, err := compare.Tunes([]*tune.Result{r1, r3}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	CompareTunes(&b, tr)
	out := b.String()
	t.Logf("\n%s", out)
	// Both runs kept opcache on; the engine showed off worse than on in both.
	if strings.Count(out, "on (better than off)") != 2 {
		t.Errorf("opcache is not read as on, better than off, in both runs:\n%s", out)
	}
	if strings.Contains(out, "off vs on") || strings.Contains(out, "on (worse") {
		t.Errorf("a cell reads backwards:\n%s", out)
	}
	for i, line := range strings.Split(out, "\n") {
		if textLen(line) > termWidth {
			t.Errorf("line %d is %d columns: %q", i+1, textLen(line), line)
		}
	}
}

// TestAPoolSizeNotRaced: a pool size whose race the budget could not decide says which size it kept and why.
func TestAPoolSizeNotRaced(t *testing.T) {
	p := &tune.PoolSize{Knee: 128, Initial: 128, Chosen: 5, Note: tune.NotRaced}
	if got := poolSizeText(p, 0.03)[0]; !strings.Contains(got, "chosen 5 (the starting size kept: the budget could not decide the sizes' race)") {
		t.Errorf("starting size kept: %q", got)
	}
	p.Chosen = 128
	if got := poolSizeText(p, 0.03)[0]; !strings.Contains(got, "chosen 128 from that load (not raced: the budget could not decide it)") {
		t.Errorf("the knee's size kept: %q", got)
	}
}

// A screened row, compared across tune runs, reads "screened", not "not compared": it was counted.
func TestCompareTunesCellOfAScreenedRow(t *testing.T) {
	k := compare.KnobAgreement{Name: "realpath_cache_size", Values: []string{""}, Verdicts: []stats.Verdict{""}, Present: []bool{true},
		Decided: []bool{false}, Compared: []string{""}, Notes: []string{"screened out (realpath_cache_size=16M: instructions/request +0.0%): no timed trial"}}
	if got := runCell(k, 0); got != "screened" {
		t.Errorf("cell %q, want screened", got)
	}
}
