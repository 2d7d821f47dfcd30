package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/bench/internal/capture"
)

func TestParseModes(t *testing.T) {
	got, err := parseModes("4x0.4,1x0.1w,16x2")
	if err != nil {
		t.Fatal(err)
	}
	want := []mode{{conc: 4, seconds: 0.4}, {conc: 1, seconds: 0.1, warm: true}, {conc: 16, seconds: 2}}
	if !slices.Equal(got, want) {
		t.Errorf("parseModes = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "4", "4x", "x0.4", "0x0.4", "4x0", "4x-1", "ax0.4", "4x0.4,", "4x0.4ww", "4y0.4"} {
		if ms, err := parseModes(bad); err == nil {
			t.Errorf("parseModes(%q) = %+v, want an error", bad, ms)
		}
	}
}

// sd is the sample standard deviation: 1, 2, 3, 4 lie 1.5, 0.5, 0.5, 1.5 from their mean, so sqrt(5/3).
func TestSD(t *testing.T) {
	if got, want := sd([]float64{1, 2, 3, 4}), math.Sqrt(5.0/3); math.Abs(got-want) > 1e-12 {
		t.Errorf("sd = %v, want %v", got, want)
	}
}

func TestMeanCPU(t *testing.T) {
	g := [2][]trial{{{cpuUs: 10}, {cpuUs: 20}}, {{cpuUs: 30}}}
	if got := meanCPU(g); got != 20 {
		t.Errorf("meanCPU = %v, want 20 (every trial of both stacks)", got)
	}
}

// Two modes: the first's log ratios are +-0.1 (sd 0.1 x sqrt 2) at 1 s a trial, the second's +-0.2 (sd twice
// that, the variance four times) at 0.5 s: a race costs 4 x 0.5 = 2 times the first mode's for a given precision.
func TestReport(t *testing.T) {
	ms := []mode{{conc: 4, seconds: 0.4, n: 100}, {conc: 1, seconds: 0.1, warm: true, n: 25}}
	pair := func(level, d, wall float64) (a, b []trial) {
		for _, s := range []float64{1, -1} {
			a = append(a, trial{cpuUs: level, latUs: 900, wallS: wall})
			b = append(b, trial{cpuUs: level * math.Exp(-s*d), latUs: 900, wallS: wall})
		}
		return a, b
	}
	var got [][2][]trial
	for _, p := range []struct{ level, d, wall float64 }{{100, 0.1, 1}, {50, 0.2, 0.5}} {
		a, b := pair(p.level, p.d, p.wall)
		got = append(got, [2][]trial{a, b})
	}
	out := capture.Stdout(t, func() { report(ms, got) })
	if !strings.HasPrefix(out, "2 rounds;") {
		t.Errorf("first line: %q", strings.SplitN(out, "\n", 2)[0])
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 8 {
			rows[f[0]] = f[1:]
		}
	}
	want := map[string][]string{
		// requests, wall s, CPU us/req (the mean of all four trials: level x (1 + cosh d) / 2), sd CPU, cost CPU,
		// sd latency, cost latency.
		"4x0.4s": {"100", "1.000", fmt.Sprintf("%.0f", 100*(1+math.Cosh(0.1))/2),
			fmt.Sprintf("%.1f%%", 100*0.1*math.Sqrt2), "1.00", "0.0%", "0.00"},
		"1x0.1sw": {"25", "0.500", fmt.Sprintf("%.0f", 50*(1+math.Cosh(0.2))/2),
			fmt.Sprintf("%.1f%%", 100*0.2*math.Sqrt2), "2.00", "0.0%", "0.00"},
	}
	for m, w := range want {
		if !slices.Equal(rows[m], w) {
			t.Errorf("mode %s: %v, want %v\n%s", m, rows[m], w, out)
		}
	}
}
