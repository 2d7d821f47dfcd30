package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// The pool's row says whether the pool holds the log's peak, with the figures, in the terminal and in
// report.html; a pinned pool (no row) says it on a line of its own.
func TestPeakOnThePoolsRow(t *testing.T) {
	r := &tune.Result{Baseline: knob.Debian(), Recommendation: knob.Debian()}
	r.Recommendation.MaxChildren = 8
	r.Knobs = []tune.KnobRow{
		{Name: "max_children", Value: "8", From: "5", Metric: tune.MetricGoodput, EffectPct: 1, CILowPct: -2, CIHighPct: 3,
			Verdict: stats.NoDifference, Vs: &tune.Versus{Knob: "max_children", B: "12", A: "8"}, Rounds: 9},
		{Name: "backlog", Value: "0", From: "0", Note: "not tried: at most 8 connections wait for a worker"},
	}
	r.PeakCheck = &tune.PeakCheck{PeakRPS: 212, LogConcurrency: 13.94, ServiceUs: 66e3, Workers: 14, MaxChildren: 8, CapacityRPS: 150}
	want := "the log's peak: 212 req/s (13.9 in flight in the log), about 14 workers at 66.00ms a request; " +
		"the pool of 8 serves 150 req/s: CANNOT hold it"
	var b bytes.Buffer
	Tune(&b, r)
	out := b.String()
	t.Logf("\n%s", out)
	lines := strings.Split(out, "\n")
	pool := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "  max_children ") {
			pool = i
		}
		if textLen(l) > termWidth {
			t.Errorf("line %d is %d columns: %q", i+1, textLen(l), l)
		}
	}
	// The detail wraps: read the lines under the row up to the next row as one.
	var detail []string
	for i := pool + 1; pool >= 0 && i < len(lines) && strings.HasPrefix(lines[i], "    "); i++ {
		detail = append(detail, strings.TrimSpace(lines[i]))
	}
	if got := strings.Join(detail, " "); !strings.Contains(got, want) || strings.Count(out, "the log's peak") != 1 {
		t.Errorf("the pool's row lacks %q (once):\n%s", want, out)
	}
	var h bytes.Buffer
	if err := TuneHTML(&h, r, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "CANNOT hold it") {
		t.Errorf("report.html lacks the peak check")
	}
	// Pinned: no pool row, the check on its own line; a pool that holds it says so.
	r.Knobs = r.Knobs[1:]
	r.PeakCheck = &tune.PeakCheck{PeakRPS: 100, Workers: 7, ServiceUs: 66e3, MaxChildren: 8, CapacityRPS: 150, Holds: true}
	b.Reset()
	Tune(&b, r)
	if !strings.Contains(b.String(), "  the log's peak: 100 req/s, about 7 workers at 66.00ms a request; the pool of 8 serves 150 req/s: holds it") {
		t.Errorf("no line of the peak check:\n%s", b.String())
	}
}
