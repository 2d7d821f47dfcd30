package tune

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// wordpressSim is WordPress at 10 minutes as ra16 measured it: goodput trials of 3.4 s that vary by 22% a round,
// CPU rounds by 9%, the JIT +12% on CPU, and knobs of a few percent whose second looks could take all the time
// left (huge_code_pages -3% needed 145 rounds more).
func wordpressSim(seed int64) SimOptions {
	so := demoSim(seed, 0.22, 10*time.Minute)
	so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+7)), 0.09), rand.New(rand.NewSource(seed+8)))
	so.TrialCost = map[string]time.Duration{MetricGoodput: 3400 * time.Millisecond, MetricCPU: 1200 * time.Millisecond}
	so.StartCost, so.TwinStartCost = 4*time.Second, 2*time.Second
	so.Effect = Planted(map[string]map[string]float64{
		"opcache":             {"off": LogEffect(-0.70)},
		"jit":                 {"tracing": LogEffect(0.12), "function": LogEffect(0.06)},
		"huge_code_pages":     {"on": LogEffect(-0.03)},
		"validate_timestamps": {"off": LogEffect(0.04)},
	})
	return so
}

// TestTheFinalKeepsWhatItIsForeseenToNeed: second looks and deferred races leave the final comparison the rounds
// that the adopted (or leaning) CPU races' gain and spread say it needs to decide the recommendation against the
// starting point on capacity, and the rule of thumb, which the time left cannot decide, yields its rounds to the
// starting point's. Decided in 8 runs of 100 with none of it, 77 with the foreseen need in second looks alone, 87
// with yielding too, 90 with all of it.
func TestTheFinalKeepsWhatItIsForeseenToNeed(t *testing.T) {
	const runs = 100
	raced, decided := 0, 0
	for seed := int64(0); seed < runs; seed++ {
		res, err := Simulate(context.Background(), wordpressSim(3000+seed))
		if err != nil {
			t.Fatal(err)
		}
		h := res.Headline
		if h == nil || h.CapacityVsDebian == nil {
			continue
		}
		raced++
		if h.CapacityVsDebian.Verdict != stats.Inconclusive {
			decided++
		}
	}
	t.Logf("%d runs: the recommendation raced against Debian's defaults in %d, decided on capacity in %d", runs, raced, decided)
	if raced < runs*3/4 || decided < raced*3/4 {
		t.Errorf("want the final's capacity against Debian's defaults decided in 3 runs of 4 where it is raced")
	}
}

// TestALeaningRaceKeepsItsLook: where the JIT's first race ends undecided, leaning to its gain, the final's
// foreseen need stands on it but leaves room for the second look that would adopt it: the JIT is still found,
// and the final still decides.
func TestALeaningRaceKeepsItsLook(t *testing.T) {
	const runs = 100
	looked, found, decided := 0, 0, 0
	for seed := int64(0); seed < runs; seed++ {
		so := wordpressSim(5000 + seed)
		so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+9)), 0.16), rand.New(rand.NewSource(seed+10)))
		res, rows := simulated(t, so)
		jit := rows["jit"]
		if secondLooked(jit) {
			looked++
		}
		if jit.Verdict == stats.Better {
			found++
			if h := res.Headline; h != nil && h.CapacityVsDebian != nil && h.CapacityVsDebian.Verdict != stats.Inconclusive {
				decided++
			}
		}
	}
	t.Logf("%d runs: the JIT looked at again in %d, found better in %d; the final decided on capacity in %d of those", runs, looked, found, decided)
	// With the leaning race left out of the foreseen need: looked at again in 8, found in 84, decided in 26. This
	// simulation seldom leaves the JIT to a second look as the real WordPress runs did (ra19 to ra23), so it
	// guards what the lean must not cost, the look and the find, more than it shows what it gains.
	if looked == 0 || found < runs*3/4 || decided < found/5 {
		t.Errorf("want the JIT looked at again, found in 3 runs of 4, and the final decided in a fifth of those")
	}
}
