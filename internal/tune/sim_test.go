package tune

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// gaussNoise is noise of normal rounds whose pairs' log ratios have sd sd.
func gaussNoise(rng *rand.Rand, sd float64) experiment.Noise {
	n := experiment.Noise{Source: "gauss"}
	for i := 0; i < 2000; i++ {
		var r []float64
		for j := 0; j < 3; j++ {
			r = append(r, rng.NormFloat64()*sd/1.4142)
		}
		n.Rounds = append(n.Rounds, r)
	}
	return n
}

// demoKnobs are the knobs that apply to the demo app, with its measured effects planted: opcache off -44%,
// the JIT +20% (tracing) and +10% (function), nothing else.
func demoSim(seed int64, sd float64, budget time.Duration) SimOptions {
	rng := rand.New(rand.NewSource(seed))
	noise := gaussNoise(rng, sd)
	knobs := knob.All("preload.php", nil)
	return SimOptions{Knobs: knobs, Base: knob.Debian(), Budget: budget,
		Effect: Planted(map[string]map[string]float64{
			"opcache": {"off": LogEffect(-0.44)},
			"jit":     {"tracing": LogEffect(0.20), "function": LogEffect(0.10)},
		}),
		Noise:     map[string]*experiment.Replay{MetricGoodput: experiment.NewReplay(noise, rng)},
		TrialCost: map[string]time.Duration{MetricGoodput: 450 * time.Millisecond, MetricCPU: 400 * time.Millisecond},
		StartCost: time.Second, MinEffect: DefaultMinEffect, Alpha: 0.05, Conc: 4, Pool: 4,
		Facts: knob.Facts{THP: "madvise", MaxResponse: 16 << 10, Concurrency: 4, RealpathLimit: 4 << 20, RealpathUsed: 4 << 10}}
}

// keepaliveGains is effect with keep-alive on gaining rel more goodput.
func keepaliveGains(effect func(knob.Config, string) float64, rel float64) func(knob.Config, string) float64 {
	return func(cfg knob.Config, metric string) float64 {
		if metric == MetricGoodput && cfg.Keepalive {
			return effect(cfg, metric) + LogEffect(rel)
		}
		return effect(cfg, metric)
	}
}

// simulated is so's run, its rows by knob; a failed run fails t.
func simulated(t testing.TB, so SimOptions) (*Result, map[string]KnobRow) {
	res, err := Simulate(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	return res, rowsByName(res)
}

// secondLooked says whether row's race had rounds in a second look.
func secondLooked(row KnobRow) bool { return strings.Contains(row.Note, "in a second look") }

func rowsByName(r *Result) map[string]KnobRow {
	m := map[string]KnobRow{}
	for _, k := range r.Knobs {
		m[k.Name] = k
	}
	return m
}

func TestSimulatedDemoDecidesItsLargeEffects(t *testing.T) {
	res, err := Simulate(context.Background(), demoSim(1, 0.04, 3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsByName(res)
	for _, k := range res.Knobs {
		t.Logf("%-20s %-10s %-14s %+6.1f%% [%+.1f, %+.1f] n=%d %s %s", k.Name, k.Value, k.Verdict, k.EffectPct, k.CILowPct, k.CIHighPct, k.Rounds, k.Need, k.Note)
	}
	if r := rows["opcache"]; r.Value != "on" || r.Verdict != stats.Worse {
		t.Errorf("opcache: %+v", r)
	}
	if r := rows["jit"]; r.Value != "tracing" || r.Verdict != stats.Better {
		t.Errorf("jit: %+v", r)
	}
	for _, k := range res.Knobs {
		if (k.Verdict == stats.Better || k.Verdict == stats.Worse) && k.Name != "opcache" && k.Name != "jit" {
			t.Errorf("%s: %s on a knob with no effect", k.Name, k.Verdict)
		}
		if k.State == StateNotTried && strings.Contains(k.Reason, "budget") {
			t.Errorf("%s not tried for the budget: %s", k.Name, k.Note)
		}
	}
	if res.ElapsedS > 180 {
		t.Errorf("the run took %.0f s of a 180 s budget", res.ElapsedS)
	}
	if h := res.Headline; h == nil || h.VsDebian == nil || h.VsDebian.Estimate < 0.1 {
		t.Errorf("headline %+v: the JIT's gain should show against Debian's defaults", h)
	}
}

// TestSimulatedErrorRates: over many simulated demo runs with Gaussian noise, knobs without an effect get a
// false better or worse in few runs, and the planted effects are found.
func TestSimulatedErrorRates(t *testing.T) {
	runs, falseRuns, jitFound, opFound := 300, 0, 0, 0
	for seed := int64(0); seed < int64(runs); seed++ {
		res, err := Simulate(context.Background(), demoSim(100+seed, 0.04, 10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		bad := false
		for _, k := range res.Knobs {
			switch {
			case k.Name == "jit":
				if k.Value == "tracing" && k.Verdict == stats.Better {
					jitFound++
				}
			case k.Name == "opcache":
				if k.Value == "on" && k.Verdict == stats.Worse {
					opFound++
				}
			case k.Verdict == stats.Better || k.Verdict == stats.Worse:
				bad = true
			}
		}
		if bad {
			falseRuns++
		}
	}
	t.Logf("%d runs: a false better/worse in %d, JIT found in %d, opcache in %d", runs, falseRuns, jitFound, opFound)
	if falseRuns > runs*5/100 || jitFound < runs*90/100 || opFound < runs*99/100 {
		t.Errorf("false %d, jit %d, opcache %d of %d", falseRuns, jitFound, opFound, runs)
	}
}

// TestSweepSkipsOnlyWhereLinear: the sweep jumps four times only after two near-linear doublings.
func TestSweepSkipsOnlyWhereLinear(t *testing.T) {
	pts := func(c ...float64) []Point {
		var p []Point
		for i, m := range c {
			p = append(p, Point{Concurrency: 1 << i, Median: m})
		}
		return p
	}
	cases := []struct {
		points []Point
		c      int
		want   int
	}{
		{pts(40, 92), 2, 4},          // one step says nothing
		{pts(40, 92, 186), 4, 16},    // an app that waits: linear twice
		{pts(138, 309, 387), 4, 8},   // the demo: CPU-bound from 2 connections
		{pts(40, 92, 186), 100, 128}, // the pool's size is the last point
		{pts(40, 92, 186), 128, 512}, // beyond it: the sweep ends
	}
	for _, c := range cases {
		if got := nextConc(c.c, 128, c.points); got != c.want {
			t.Errorf("after %v at %d: next %d, want %d", c.points, c.c, got, c.want)
		}
	}
}
