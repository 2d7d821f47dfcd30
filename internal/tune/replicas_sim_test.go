package tune

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// offsetArm is an arm of no effect whose stacks each carry a lasting offset (normal, sd stack) and whose trials
// vary about it (sd trial); it moves to a fresh stack every per trials (0: never), as replicaArm does, and says
// which stack each trial ran on, as tune's trials do.
type offsetArm struct {
	name          string
	rng           *rand.Rand
	stack, trial  float64
	per, n, start int // start: the serial of its first stack (the arms' serials never meet)
	offset        float64
}

func (a *offsetArm) Name() string                    { return a.name }
func (a *offsetArm) Start(ctx context.Context) error { return nil }
func (a *offsetArm) Stop()                           {}
func (a *offsetArm) Trial(ctx context.Context) (experiment.Observation, error) {
	if a.n == 0 || a.per > 0 && a.n%a.per == 0 {
		a.offset = a.stack * a.rng.NormFloat64()
	}
	serial := a.start
	if a.per > 0 {
		serial += a.n / a.per
	}
	a.n++
	return experiment.Observation{Value: 100 * math.Exp(a.offset+a.trial*a.rng.NormFloat64()), Requests: 100, Stack: serial}, nil
}

// falseVerdicts races two arms of no effect runs times, at a knob's share of alpha (0.25% a pair) and the
// default minimum effect, for at most 300 rounds, the engine told a spread of stacks' offsets of told (0: none):
// the share of races with a better or worse verdict, and the mean rounds a race took.
func falseVerdicts(t *testing.T, runs, per int, stack, trial, told float64) (share, rounds float64) {
	rng := rand.New(rand.NewPCG(31, uint64(per)))
	wrong, total := 0, 0
	for range runs {
		arms := []experiment.Arm{&offsetArm{name: "a", rng: rng, stack: stack, trial: trial, per: per, start: 1},
			&offsetArm{name: "b", rng: rng, stack: stack, trial: trial, per: per, start: 1 << 20}}
		out, err := experiment.Run(context.Background(), experiment.Spec{Name: "aa", Arms: arms, Mode: experiment.Race,
			HigherIsBetter: true, MinEffect: DefaultMinEffect, Alpha: 0.0025, RunAlpha: 0.05, MaxRounds: 300, StackSD: told})
		if err != nil {
			t.Fatal(err)
		}
		if _, c := out.Decisive(); c != nil && (c.Verdict == stats.Better || c.Verdict == stats.Worse) {
			wrong++
		}
		total += out.Rounds
	}
	return float64(wrong) / float64(runs), float64(total) / float64(runs)
}

// TestReplicasKeepTheErrorRate: stacks of one configuration differ by a lasting offset (bench/stackspread.sh
// measured its sd at about a fifth to a third of a trial's own noise: docs/engine.md). On one stack an arm, the
// offset is read as an effect that every round makes more certain; moving each arm to a fresh stack every few
// rounds makes it noise that averages out, and the engine told of the offsets' spread (DefaultStackSD, as tune
// tells it) allows for what is left. Simulated at a third, with a trial's noise as on CPU trials (3.5%: a pair's
// round 5%) and goodput trials on steady twins (7%) here, in A/A races of at most 300 rounds at a knob's share of
// alpha (0.25% a pair).
func TestReplicasKeepTheErrorRate(t *testing.T) {
	const runs, ratio = 1500, 1.0 / 3
	for _, c := range []struct {
		name  string
		trial float64
		per   int
	}{
		{"CPU", 0.035, arms.PerStack(MetricCPU)},
		{"goodput", 0.07, arms.PerStack(MetricGoodput)},
	} {
		stack := ratio * c.trial
		one, r1 := falseVerdicts(t, runs, 0, stack, c.trial, 0)
		moved, r2 := falseVerdicts(t, runs, c.per, stack, c.trial, 0)
		told, r3 := falseVerdicts(t, runs, c.per, stack, c.trial, arms.DefaultStackSD)
		t.Logf("%s: stack sd %.1f%%, trial sd %.1f%%: false better/worse %.1f%% on one stack an arm (%.0f rounds), "+
			"%.2f%% moving every %d rounds (%.0f rounds), %.2f%% moving and allowing for %.0f%% (%.0f rounds)",
			c.name, 100*stack, 100*c.trial, 100*one, r1, 100*moved, c.per, r2, 100*told, 100*arms.DefaultStackSD, r3)
		if one < 0.05 {
			t.Errorf("%s: one stack an arm gave false verdicts in %.1f%% of races: the offset planted is too small to tell anything", c.name, 100*one)
		}
		if moved > 0.01 {
			t.Errorf("%s: moving every %d rounds gave false verdicts in %.2f%% of races, want at most 1%% (0.25%% planned)", c.name, c.per, 100*moved)
		}
		if told > 0.005 {
			t.Errorf("%s: moving and allowing for the offsets gave false verdicts in %.2f%% of races, want at most 0.5%% (0.25%% planned)", c.name, 100*told)
		}
		// Steady trials move more often (stackRounds, down to a stack a round): the allowance holds there too.
		for _, k := range []int{1, 2} {
			told, r := falseVerdicts(t, runs, k, stack, c.trial, arms.DefaultStackSD)
			t.Logf("%s: %.2f%% moving every %d rounds and allowing for %.0f%% (%.0f rounds)", c.name, 100*told, k, 100*arms.DefaultStackSD, r)
			if told > 0.005 {
				t.Errorf("%s: moving every %d rounds and allowing for the offsets gave false verdicts in %.2f%% of races, want at most 0.5%%", c.name, k, 100*told)
			}
		}
	}
}
