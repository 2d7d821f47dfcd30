package tune

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
)

// duetRun is a simulated run of the demo's knobs on recorded rounds (offsetSim): stacks' offsets planted at
// planted, the CPU races in duet rounds or in turn, and in duet rounds the offsets planted on top of the duet
// recording's own (its rounds ran on fresh stacks, so their residuals hold offsets at the machine's spread).
type duetRun struct {
	planted, duetPlanted float64
	duet                 bool
	budget               time.Duration
}

// duetSim is c's run for seed, effects planted: the CPU races in duet rounds as tune runs them by default, on the
// recorded noise of duet rounds, a duet trial of cpuDuetSeconds at the app's rate alone.
func duetSim(t testing.TB, seed int64, c duetRun, effects map[string]map[string]float64) SimOptions {
	so := offsetSim(t, seed, c.planted, effects, true, c.budget)
	if !c.duet {
		return so
	}
	key := NoiseKey(MetricCPU, "", true)
	n, err := experiment.LoadNoise("../experiment/testdata/noise-" + key + ".json")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed*31 + 2))
	so.Noise[key] = experiment.NewReplayWith(n, rng, experiment.ReplayOptions{StackSD: c.duetPlanted, NewStackEvery: 1})
	so.Duet = true
	so.TrialCost[MetricCPU] = time.Duration(cpuDuetSeconds * float64(time.Second))
	return so
}

// TestADuetSimulationReplaysDuetNoise: duet races replay the noise of duet rounds; a simulation without it is
// refused, rather than replaying alternating rounds' noise as a duet's.
func TestADuetSimulationReplaysDuetNoise(t *testing.T) {
	so := duetSim(t, 1, duetRun{planted: 0.02, duet: true, budget: 3 * time.Minute}, nil)
	delete(so.Noise, NoiseKey(MetricCPU, "", true))
	if _, err := Simulate(context.Background(), so); err == nil {
		t.Error("a duet simulation without duet rounds' noise ran")
	}
}

// TestSimulatedDuetRacesKeepTheErrorRate: A/A runs of the demo's knobs for 3 minutes (no effect planted), the CPU
// races in duet rounds on recorded duet rounds, the engine told DefaultStackSD, offsets planted at 2% and at 4%
// a stack on top of the recording's own (and on the goodput races' stacks): false better/worse verdicts of the
// CPU races. Their 1200 pairs (in 1000 races) are each decided at 0.21%, their share of the run's 5%: were each
// wrong at its alpha, 2.5 would be expected, and more than 10 would come one time in 16,000 (Poisson). Found:
// one at 2%, none at 4% (the same runs alternating: none).
func TestSimulatedDuetRacesKeepTheErrorRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const runs = 200
	for _, sd := range []float64{0.02, 0.04} {
		c := duetRun{planted: sd, duetPlanted: sd, duet: true, budget: 3 * time.Minute}
		tl := offsetRuns(t, seedsFrom(47000, runs), nil, func(seed int64) SimOptions {
			return duetSim(t, seed, c, nil)
		})
		t.Logf("A/A, offsets %.0f%%: CPU races %d false of %d, %d no_difference; goodput %d false of %d", 100*sd,
			tl.wrong[MetricCPU], tl.races[MetricCPU], tl.decided[MetricCPU], tl.wrong[MetricGoodput],
			tl.races[MetricGoodput])
		if tl.races[MetricCPU] < 4*runs {
			t.Fatalf("%d CPU races in %d runs: the demo's five CPU knobs were not raced", tl.races[MetricCPU], runs)
		}
		if w := tl.wrong[MetricCPU]; w > 10*tl.races[MetricCPU]/1000 {
			t.Errorf("offsets %.0f%%: %d false verdicts in %d duet races, want at most 1%%", 100*sd, w,
				tl.races[MetricCPU])
		}
	}
}

// TestSimulatedDuetRacesDecide: the demo's knobs with effects planted on the CPU path (the JIT +8/+4%,
// validate_timestamps +5%, huge_code_pages -5%) in 3-minute (200 runs) and 10-minute runs (100), offsets of 2% a
// stack: the planted effects found with the CPU races in turn (alternating CPU rounds, 2% planted) and in duet
// rounds (the duet recording's rounds ran on fresh stacks and hold their own offsets: with none planted, and with
// 2% more, counted twice). Found: 3 minutes, 205 of 600 in turn, 598 and 508 in duet rounds (CPU races decided:
// 205, 649 and 509 of 1000); 10 minutes, 274, 300 and 300 of 300 (277, 487 and 424 of 500); one false verdict
// (of 1000 CPU races, in duet rounds, 3 minutes, offsets counted twice).
func TestSimulatedDuetRacesDecide(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	effects := map[string]map[string]float64{
		"jit":                 {"tracing": LogEffect(0.08), "function": LogEffect(0.04)},
		"validate_timestamps": {"off": LogEffect(0.05)},
		"huge_code_pages":     {"on": LogEffect(-0.05)},
	}
	for _, b := range []struct {
		budget time.Duration
		runs   int
		least  float64 // the share of planted effects duet races find at the least, offsets counted twice
	}{{3 * time.Minute, 200, 0.75}, {10 * time.Minute, 100, 0.95}} {
		var found [3]int // in turn, duet, duet with offsets counted twice
		runs := []duetRun{{0.02, 0, false, b.budget}, {0.02, 0, true, b.budget}, {0.02, 0.02, true, b.budget}}
		for i, c := range runs {
			tl := offsetRuns(t, seedsFrom(48000, b.runs), effects, func(seed int64) SimOptions {
				return duetSim(t, seed, c, effects)
			})
			t.Logf("%s, duet %v, offsets %.0f%% more in duet rounds: found %d of %d; CPU races %d decided of %d, "+
				"%d false", b.budget, c.duet, 100*c.duetPlanted, tl.found, 3*tl.runs, tl.decided[MetricCPU],
				tl.races[MetricCPU], tl.wrong[MetricCPU])
			found[i] = tl.found
			// At most 1% of the CPU races, as in TestSimulatedDuetRacesKeepTheErrorRate.
			if w := tl.wrong[MetricCPU]; w > 10*tl.races[MetricCPU]/1000 {
				t.Errorf("%s, %+v: %d false verdicts in %d CPU races", b.budget, c, w, tl.races[MetricCPU])
			}
		}
		if float64(found[2]) < b.least*float64(3*b.runs) || found[2] < found[0] || found[1] < found[2] {
			t.Errorf("%s: found %d in turn, %d in duet rounds, %d with offsets counted twice: want duet rounds to "+
				"find at least %.0f%% and no fewer than races in turn", b.budget, found[0], found[1], found[2], 100*b.least)
		}
	}
}
