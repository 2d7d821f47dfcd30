package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestStacksOffsetsAreNotEffects: two arms of one configuration, each on a stack of its own whose offset (sd 2%,
// as two stacks of the demo differed) lasts its life, at 3% noise a round: told nothing of stacks, races of up
// to 100 rounds read the offsets as effects in about a third of them; told their spread, in at most alpha. When the
// arms' rounds run on fresh stacks as they go (one every 5 trials), a 10% effect is still found.
func TestStacksOffsetsAreNotEffects(t *testing.T) {
	const runs, alpha = 400, 0.01
	for _, c := range []struct {
		told         bool
		every        int
		effect, want float64 // the share of races decided better (a false verdict when effect is 0)
	}{{false, 0, 0, 0.2}, {true, 0, 0, alpha}, {true, 5, 0, alpha}, {true, 5, 0.1, 0.9}} {
		told := 0.0
		if c.told {
			told = 0.02
		}
		better, worse := offsetRaces(t, rand.New(rand.NewSource(5)), runs, offsetRace{noise: 0.03, effect: c.effect,
			planted: 0.02, every: c.every, told: told, alpha: alpha, minEffect: 0.03, rounds: 100})
		t.Logf("told %v, a fresh stack every %d trials, effect %+.0f%%: better in %d, worse in %d of %d races", c.told, c.every, 100*c.effect, better, worse, runs)
		switch share := float64(better+worse) / runs; {
		case c.effect == 0 && !c.told && share < c.want:
			t.Errorf("untold: %.3f of races decided: want the offsets to show (at least %.2f), or the test plants nothing", share, c.want)
		case c.effect == 0 && c.told && share > c.want:
			t.Errorf("told, every %d: %.3f of races decided where nothing differs but stacks: want at most alpha", c.every, share)
		case c.effect > 0 && float64(better)/runs < c.want:
			t.Errorf("a 10%% effect on fresh stacks found in %d of %d races", better, runs)
		}
	}
}

// TestFreshStacksEveryRoundNeedNoAllowance: arms that move to a fresh stack every round (as duet rounds of small
// noise do) have independent rounds, offsets and all, so the rounds' own spread already holds the offsets. Told
// an upper bound of their spread (2%) where they are 0.5% (as the noise is), a 3% effect is decided in 20 rounds
// (allowing 2% on top of the rounds' spread, as the engine did, decided it in 3 of 400); offsets of the spread
// told (2%, four times the noise) keep A/A races within alpha.
func TestFreshStacksEveryRoundNeedNoAllowance(t *testing.T) {
	const runs, alpha = 400, 0.01
	for _, c := range []struct{ effect, planted float64 }{{0, 0.02}, {0.03, 0.005}} {
		effect := c.effect
		better, worse := offsetRaces(t, rand.New(rand.NewSource(9)), runs, offsetRace{noise: 0.005, effect: effect,
			planted: c.planted, every: 1, told: 0.02, alpha: alpha, minEffect: 0.02, rounds: 20})
		t.Logf("effect %+.0f%%, offsets %.1f%%: better in %d, worse in %d of %d races of at most 20 rounds", 100*effect, 100*c.planted, better, worse, runs)
		if effect == 0 && float64(better+worse)/runs > alpha {
			t.Errorf("A/A: %d false verdicts in %d races: want at most alpha", better+worse, runs)
		}
		if effect > 0 && better < runs*9/10 {
			t.Errorf("+3%%: better in %d of %d races: want at least 90%%", better, runs)
		}
	}
}

// offsetRace is a race of two arms whose stacks carry offsets: the planted offsets' spread, a fresh stack every
// trials (0: one for life), the spread the engine is told.
type offsetRace struct {
	noise, effect, planted, told, alpha, minEffect float64
	every, rounds                                  int
}

// offsetRaces runs c's race runs times and counts the second arm's better and worse verdicts.
func offsetRaces(t *testing.T, rng *rand.Rand, runs int, c offsetRace) (better, worse int) {
	t.Helper()
	for range runs {
		f := arms(rng, c.noise, 0, math.Log1p(c.effect))
		for _, a := range f {
			a.stackSD, a.every = c.planted, c.every
		}
		s := race(f, c.alpha, c.minEffect)
		s.MaxRounds, s.StackSD = c.rounds, c.told
		out, err := Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		switch out.Arms[1].Vs.Verdict {
		case stats.Better:
			better++
		case stats.Worse:
			worse++
		}
	}
	return better, worse
}
