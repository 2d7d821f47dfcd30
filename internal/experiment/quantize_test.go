package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// countArm is a goodput trial of a slow app: the requests served in a one-second window, about n, a count that
// moves in steps of 1/n; its rate varies from trial to trial by sigma (log scale). unstepped leaves its step
// out, as before figures had one.
type countArm struct {
	name          string
	n             float64
	effect, sigma float64
	rng           *rand.Rand
	unstepped     bool
}

func (a *countArm) Name() string                    { return a.name }
func (a *countArm) Start(ctx context.Context) error { return nil }
func (a *countArm) Stop()                           {}
func (a *countArm) Trial(ctx context.Context) (Observation, error) {
	c := math.Max(1, math.Round(a.n*math.Exp(a.effect+a.sigma*a.rng.NormFloat64())))
	o := Observation{Value: c, Requests: int64(c), Step: 1 / c}
	if a.unstepped {
		o.Step = 0
	}
	return o, nil
}

// TestIdenticalRoundsShowNothing: tune wordpress once read listen=tcp against unix as no_difference [+0.0%,
// +0.0%] after 3 rounds: about 30 requests a trial, the same counts for both arms, log ratios all exactly 0 and
// an estimated spread of 0. A count of 30 moves in steps of 3%, the minimum effect: such rounds say nothing of
// a difference within a step.
func TestIdenticalRoundsShowNothing(t *testing.T) {
	rule := Rule{MinEffect: 0.03, Alpha: 0.01}
	s := NewSequence(0)
	for i := 0; i < 3; i++ {
		s.add(0, reading{log: math.Log(28), step: 1 / 28.0}, reading{log: math.Log(28), step: 1 / 28.0})
	}
	if v := rule.Judge(s); v != "" {
		t.Errorf("three identical ratios of counts of 28: %s, want no verdict", v)
	}
	c := rule.Comparison(s, true)
	if c.Verdict != stats.Inconclusive || c.Lo > -0.03 || c.Hi < 0.03 || c.P < 1 {
		t.Errorf("%+v: want inconclusive, an interval wider than the steps, and no evidence (p 1)", c)
	}
	// Counts that never vary, whatever their number of rounds, decide nothing either.
	rng := rand.New(rand.NewSource(1))
	out, err := Run(context.Background(), Spec{Arms: []Arm{&countArm{name: "unix", n: 28, rng: rng}, &countArm{name: "tcp", n: 28, rng: rng}},
		Mode: Race, HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01, MaxRounds: 100})
	if err != nil {
		t.Fatal(err)
	}
	if v := out.Arms[1].Vs.Verdict; v != stats.Inconclusive || out.Rounds != 100 {
		t.Errorf("100 rounds of the same counts: %s after %d rounds, want inconclusive", v, out.Rounds)
	}
}

// TestQuantizedCountsDoNotShowNoDifference: counts of 28 to 32 a trial, a true difference of 3.2% (beyond the
// minimum effect of 3%, about a step), trial-to-trial variation from a fifteenth of a step to two thirds of
// one: no difference is shown in at most alpha of the races. Where the counts vary by less than a step, rounding
// biases their mean (28.5 rounds to 28 or 29, 29.4 always to 29) and no number of rounds averages it out: from
// the rounds' own spread alone, no_difference came in 180 of 200 races of counts of 28.5 varying by 0.2%.
func TestQuantizedCountsDoNotShowNoDifference(t *testing.T) {
	const runs, alpha = 200, 0.01
	unstepped := 0
	for _, sigma := range []float64{0.002, 0.005, 0.01, 0.02} {
		for _, n := range []float64{28.5, 29, 30, 31.5} {
			nodiff := map[bool]int{}
			for _, unstepped := range []bool{false, true} {
				rng := rand.New(rand.NewSource(2))
				for i := 0; i < runs; i++ {
					a := &countArm{name: "a", n: n, sigma: sigma, rng: rng, unstepped: unstepped}
					b := &countArm{name: "b", n: n, effect: math.Log(1.032), sigma: sigma, rng: rng, unstepped: unstepped}
					out, err := Run(context.Background(), Spec{Arms: []Arm{a, b}, Mode: Race, HigherIsBetter: true, MinEffect: 0.03,
						Alpha: alpha, MaxRounds: 200})
					if err != nil {
						t.Fatal(err)
					}
					if out.Arms[1].Vs.Verdict == stats.NoDifference {
						nodiff[unstepped]++
					}
				}
			}
			unstepped += nodiff[true]
			if nodiff[false] > 0 || nodiff[true] > 0 {
				t.Logf("counts of %.1f, +3.2%%, variation %.1f%%: no_difference in %d of %d races (%d without the steps)", n, 100*sigma, nodiff[false], runs, nodiff[true])
			}
			if nodiff[false] > int(runs*alpha) {
				t.Errorf("counts of %.1f, variation %.1f%%: no_difference in %d of %d races where the arms differ by 3.2%%, want at most %.0f",
					n, 100*sigma, nodiff[false], runs, runs*alpha)
			}
		}
	}
	if unstepped < runs/2 {
		t.Errorf("without the steps, no_difference in %d races in all: the test no longer plants what it is about", unstepped)
	}
}

// TestCountsThatBarelyVaryKeepTheirHalfStep: counts of 27.55 and 28.45 a trial (+3.2%, beyond the minimum effect
// of 3%) that vary by a twentieth to a tenth of a step both round to 28 nearly always: their mean ratio reads
// about 0 and no number of rounds averages the bias out. Rounding makes two adjacent values spread by up to half
// a step whatever the true variation, so a spread that small does not show the figure varies; the allowance
// shrank to about 0.18 of a step where the bias is 0.29, and no_difference came in 45% of races by 300 rounds.
func TestCountsThatBarelyVaryKeepTheirHalfStep(t *testing.T) {
	const runs, alpha = 1000, 0.01
	for _, vary := range []float64{0.05, 0.1} {
		rng := rand.New(rand.NewSource(int64(100 * vary)))
		nodiff := 0
		for range runs {
			a := &countArm{name: "a", n: 27.55, sigma: vary / 28, rng: rng}
			b := &countArm{name: "b", n: 27.55, effect: math.Log(28.45 / 27.55), sigma: vary / 28, rng: rng}
			out, err := Run(context.Background(), Spec{Arms: []Arm{a, b}, Mode: Race, HigherIsBetter: true, MinEffect: 0.03,
				Alpha: alpha, MaxRounds: 300})
			if err != nil {
				t.Fatal(err)
			}
			if out.Arms[1].Vs.Verdict == stats.NoDifference {
				nodiff++
			}
		}
		t.Logf("counts of 27.55 and 28.45 varying by %.2f of a step: no_difference in %d of %d races", vary, nodiff, runs)
		// Expected at most runs*alpha = 10: twice that by chance has a chance below 1e-3.
		if nodiff > 2*runs*alpha {
			t.Errorf("varying by %.2f of a step: no_difference in %d of %d races where the arms differ by 3.2%%, want at most %.0f (twice alpha)",
				vary, nodiff, runs, 2*runs*alpha)
		}
	}
}
