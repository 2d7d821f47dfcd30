package tune

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
		if got := stackRounds(c.sigma, c.start, c.round, c.most); got != c.want {
			t.Errorf("%s: %d rounds a stack, want %d", c.name, got, c.want)
		}
	}
}

// TestSpreadReadsTheTrialsNoise: the spread a round, read from successive trials of each arm on one stack, is a
// pair's: an arm's trials of sd 4% give about 5.7% whatever each stack's offset (a 10% one here), and the
// stack's first trial is never differenced against the last stack's.
func TestSpreadReadsTheTrialsNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sp spread
	a, b := new(int), new(int)
	for st := 0; st < 200; st++ {
		offset := 0.1 * rng.NormFloat64()
		for i := 0; i < 5; i++ {
			for _, arm := range []any{a, b} {
				sp.trial(arm, math.Exp(offset+0.04*rng.NormFloat64()), time.Second, i == 0)
			}
		}
	}
	sp.start(time.Second)
	if sigma := math.Sqrt(sp.sqDiff / float64(sp.diffs)); math.Abs(sigma-0.04*math.Sqrt2) > 0.004 || sp.diffs != 200*4*2 {
		t.Errorf("a pair's spread read as %.4f from %d differences, want about %.4f from %d", sigma, sp.diffs, 0.04*math.Sqrt2, 200*4*2)
	}
	// 5.7% / 2% x sqrt(1 s / (2 x 2 s)) = 1.4: a stack a round.
	if k := sp.rounds(2, 5); k != 1 {
		t.Errorf("%d rounds a stack, want 1", k)
	}
	var none spread
	if k := none.rounds(2, 5); k != 5 {
		t.Errorf("before any trial, %d rounds a stack, want the most (5)", k)
	}
}
