package main

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/bench/internal/capture"
)

func TestRMS(t *testing.T) {
	if got, want := rms([]float64{3, 4}), math.Sqrt(12.5); math.Abs(got-want) > 1e-12 {
		t.Errorf("rms(3, 4) = %v, want sqrt(25/2)", got)
	}
	// About zero, not the mean: a constant offset counts.
	if got := rms([]float64{0.1, 0.1}); math.Abs(got-0.1) > 1e-12 {
		t.Errorf("rms(0.1, 0.1) = %v, want 0.1", got)
	}
}

// Pearson's correlation: 1 and -1 for lines; 1, 2, 3, 4 against 1, 3, 2, 4 lie -1.5, -0.5, 0.5, 1.5 and -1.5,
// 0.5, -0.5, 1.5 from their means: 4 / sqrt(5 x 5) = 0.8.
func TestCorr(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{2, 4, 6}, 1},
		{[]float64{1, 2, 3}, []float64{5, 3, 1}, -1},
		{[]float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.8},
	} {
		if got := corr(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("corr(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// Two rounds of four stacks: each kind's second stack lies e^+-0.1 (static) and e^+-0.3 (dynamic) from its
// first in goodput, so their levels are the first's (100 and 80) and the spreads 10% and 30%; the probe moves with
// the static pair's goodput and against the dynamic pair's.
func TestReport(t *testing.T) {
	stack := func(goodput, cpu, probe float64, d, dp []float64) []trial {
		var ts []trial
		for r := range d {
			ts = append(ts, trial{goodput: goodput * math.Exp(d[r]), cpuUs: cpu, probeNs: probe * math.Exp(dp[r])})
		}
		return ts
	}
	zero := []float64{0, 0}
	got := [][]trial{
		stack(100, 50, 10, zero, zero),
		stack(100, 50, 10, []float64{0.1, -0.1}, []float64{0.2, -0.2}),
		stack(80, 60, 10, zero, zero),
		stack(80, 60, 10, []float64{0.3, -0.3}, []float64{-0.1, 0.1}),
	}
	out := capture.Stdout(t, func() { report(got, []string{"static", "static", "dynamic", "dynamic"}) })
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 5 {
			rows[f[0]] = f[1:]
		}
	}
	for kind, want := range map[string][]string{
		"static":  {"100.0", "50", "10.0%", "1.00"},
		"dynamic": {"80.0", "60", "30.0%", "-1.00"},
	} {
		if !slices.Equal(rows[kind], want) {
			t.Errorf("%s: %v, want %v\n%s", kind, rows[kind], want, out)
		}
	}
	if want := "dynamic / static: goodput 0.800, php-fpm CPU a request 1.200\n"; !strings.HasSuffix(out, want) {
		t.Errorf("want %q in\n%s", want, out)
	}
}
