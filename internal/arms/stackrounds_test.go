package arms

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestStackRoundsFollowTheSpread: the rounds a stack serves are k* = (σ/s) sqrt(c_s/(2 c_r)) rounded, within
// [1, most]: steady CPU trials move often, noisy goodput ones seldom.
func TestStackRoundsFollowTheSpread(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name         string
		sigma        float64
		start, round time.Duration
		most, want   int
	}{
		{"steady CPU trials", 0.04, 1500 * time.Millisecond, 1200 * time.Millisecond, 5, 2}, // 2 x 0.79 = 1.58
		{"very steady", 0.01, s, s, 5, 1},
		{"noisy goodput, slow start", 0.15, 6 * s, 6 * s, 8, 5}, // 7.5 x 0.71 = 5.3
		{"noisier than the most", 0.30, 6 * s, 6 * s, 8, 8},
		{"nothing measured", 0, s, s, 5, 5},
	} {
		if got := StackRounds(c.sigma, c.start, c.round, c.most, 0); got != c.want {
			t.Errorf("%s: %d rounds a stack, want %d", c.name, got, c.want)
		}
	}
}

// TestSpreadReadsTheTrialsNoise: the Spread a round is a pair's: arms' trials of sd 4% give about 5.7%, whatever
// each stack's offset (10% here) and whatever the rounds share (a drift of 10% a round, which cancels in a pair's
// ratio); a round with a stack's first trial gives none.
func TestSpreadReadsTheTrialsNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, arms := range []int{2, 3} {
		var sp Spread
		keys := make([]any, arms)
		for i := range keys {
			keys[i] = new(int)
		}
		for st := 0; st < 300; st++ {
			offsets := make([]float64, arms)
			for i := range offsets {
				offsets[i] = 0.1 * rng.NormFloat64()
			}
			for r := 0; r < 5; r++ {
				shared := 0.1 * rng.NormFloat64()
				for i, k := range keys {
					sp.Trial(k, math.Exp(shared+offsets[i]+0.04*rng.NormFloat64()), 0, time.Second, r == 0, 5)
				}
				sp.roundEnd()
			}
		}
		sp.Start(3 * time.Second)
		f := sp.figs[0]
		sigma := math.Sqrt(f.sqDiff / float64(f.diffs))
		if math.Abs(sigma-0.04*math.Sqrt2) > 0.004 || f.diffs != 300*4 || sp.figs[1].diffs != 0 {
			t.Errorf("%d arms: a pair's Spread read as %.4f from %d rounds (%d of a second figure never read), want about %.4f from %d", arms, sigma, f.diffs, sp.figs[1].diffs, 0.04*math.Sqrt2, 300*4)
		}
		// 5.7% / 2% x sqrt(3 s / (2 x arms x 1 s)): 2.4 for two arms, 2.0 for three.
		if k := sp.rounds(arms, 5); k != 2 {
			t.Errorf("%d arms: %d rounds a stack, want 2", arms, k)
		}
	}
	var none Spread
	if k := none.rounds(2, 5); k != 5 {
		t.Errorf("before any trial, %d rounds a stack, want the most (5)", k)
	}
}

// TestTheSteadierFigureSetsTheMoves: an experiment that decides on a second figure too (the final's capacity)
// moves its stacks as often as the steadier of the two pays for: goodput trials of sd 10% alone give 5 rounds a
// stack (14% / 2% x sqrt(6 s / (2 x 2 x 3 s)) = 4.9); beside a capacity of sd 4%, 2 (5.7 / 2 x 0.71 = 2.0). A
// second figure read but not decided on (a goodput race's capacity, read for the final's foreseen moves) moves
// nothing.
func TestTheSteadierFigureSetsTheMoves(t *testing.T) {
	for _, c := range []struct {
		second  float64 // the second figure's sd (0: not read)
		decides bool    // the experiment decides on it
		lo, hi  int
	}{{0, true, 4, 6}, {0.04, true, 1, 2}, {0.2, true, 4, 6}, {0.04, false, 4, 6}} {
		rng := rand.New(rand.NewPCG(3, 4))
		sp := Spread{second: c.decides}
		a, b := new(int), new(int)
		for r := 0; r < 400; r++ {
			for _, k := range []any{a, b} {
				second := 0.0
				if c.second > 0 {
					second = math.Exp(c.second * rng.NormFloat64())
				}
				sp.Trial(k, math.Exp(0.1*rng.NormFloat64()), second, 3*time.Second, r%8 == 0, 8)
			}
			sp.roundEnd()
		}
		sp.Start(6 * time.Second)
		if k := sp.rounds(2, 8); k < c.lo || k > c.hi {
			t.Errorf("goodput sd 10%%, second figure sd %.0f%% (decided on: %v): %d rounds a stack, want %d to %d",
				100*c.second, c.decides, k, c.lo, c.hi)
		}
	}
}

// TestABenchedArmDoesNotStopTheRounds: an experiment's arm that stops running trials without being stopped (the
// final's rule of thumb, benched once it yields its rounds) must not keep the others' rounds from ending: they
// set the rounds a stack serves from their own Spread (trials of sd 4%, starts of 3 s, trials of 1 s: 2.5), where
// waiting for the benched arm left them at the most.
func TestABenchedArmDoesNotStopTheRounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := &moves{most: 8, arms: map[*replicaArm]bool{}}
	arms := []*replicaArm{{g: g}, {g: g}, {g: g}}
	for _, a := range arms {
		g.arms[a] = true
	}
	g.sp.Start(3 * time.Second)
	for r := 0; r < 60; r++ {
		live := arms
		if r >= 4 {
			live = arms[:2] // the third yielded: benched, not stopped
		}
		for _, a := range live {
			g.tally(a, math.Exp(0.04*rng.NormFloat64()), 0, time.Second)
		}
	}
	if k := g.per(); k < 2 || k > 3 {
		t.Errorf("%d rounds a stack after 56 rounds of two arms beside a benched third, want 2 or 3", k)
	}
}

// TestTheFinalsSpreadIsForeseen: the final's moves are foreseen from the goodput race that read capacity most
// rounds, at its steadier figure; before any has, from the CPU race that read most.
func TestTheFinalsSpreadIsForeseen(t *testing.T) {
	fig := func(sd float64, diffs int) deviations {
		return deviations{sqDiff: sd * sd * float64(diffs), diffs: diffs}
	}
	cpu := &Spread{metric: MetricCPU, figs: [2]deviations{fig(0.03, 10)}}
	if _, ok := FinalSpread(nil); ok {
		t.Errorf("nothing run: want no spread")
	}
	if s, ok := FinalSpread([]*Spread{cpu}); !ok || s < 0.0299 || s > 0.0301 {
		t.Errorf("a CPU race alone: %v %v, want its 3%%", s, ok)
	}
	young := &Spread{metric: MetricGoodput, figs: [2]deviations{fig(0.2, 3), fig(0.05, 3)}}
	if s, _ := FinalSpread([]*Spread{cpu, young}); s < 0.0299 || s > 0.0301 {
		t.Errorf("a goodput race of 3 rounds: %v, want the CPU race's 3%%", s)
	}
	good := &Spread{metric: MetricGoodput, figs: [2]deviations{fig(0.2, 12), fig(0.08, 12)}}
	if s, _ := FinalSpread([]*Spread{cpu, young, good}); s < 0.0799 || s > 0.0801 {
		t.Errorf("a goodput race of 12 rounds: %v, want its capacity's 8%%", s)
	}
}
