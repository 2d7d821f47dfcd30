package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestReplayedErrorRates: on rounds recorded in a real tune run of the demo (heavy tails and all), races with no
// effect give a false verdict at most at their alpha, intervals cover the planted effect, and large effects are
// decided in a few rounds. Deterministic: the replay's seed is fixed.
func TestReplayedErrorRates(t *testing.T) {
	for _, metric := range []string{"goodput", "req_per_cpu_s"} {
		noise, err := LoadNoise("testdata/noise-" + metric + ".json")
		if err != nil {
			t.Fatal(err)
		}
		const runs, alpha = 2000, 0.01
		rng := rand.New(rand.NewSource(1))
		for _, effect := range []float64{0, 0.4} {
			false_, covered := 0, 0
			var rounds []float64
			for i := 0; i < runs; i++ {
				rep := NewReplay(noise, rng, 2)
				out, err := Run(context.Background(), Spec{Arms: []Arm{rep.Arm("a", 0), rep.Arm("b", math.Log1p(effect))},
					Mode: Race, HigherIsBetter: true, MinEffect: 0.03, Alpha: alpha, MaxRounds: 60})
				if err != nil {
					t.Fatal(err)
				}
				c := out.Arms[1].Vs
				if effect == 0 && (c.Verdict == stats.Better || c.Verdict == stats.Worse) {
					false_++
				}
				if c.LogLo <= math.Log1p(effect) && math.Log1p(effect) <= c.LogHi {
					covered++
				}
				rounds = append(rounds, float64(out.Rounds))
			}
			med := stats.Median(rounds)
			t.Logf("%s, effect %+.0f%%: false %d, covered %d of %d, median rounds %.0f", metric, 100*effect, false_, covered, runs, med)
			// alpha is 1%: 2000 runs give about 20 at most by chance; the sequences are conservative, so far fewer.
			if false_ > runs/50 || covered < runs*97/100 {
				t.Errorf("%s, effect %+.0f%%: %d false verdicts, %d covered of %d", metric, 100*effect, false_, covered, runs)
			}
			if effect == 0.4 && med > 10 {
				t.Errorf("%s: a 40%% effect took %.0f rounds (median)", metric, med)
			}
		}
	}
}
