package arms

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// measuredOffsets is stackOffset of experiments runs of two arms, rounds rounds each, moving every k rounds, their
// trials varying by trial about their stacks' offsets (sd stack).
func measuredOffsets(rng *rand.Rand, runs, rounds, k int, stack, trial float64) StackOffset {
	var sps []*Spread
	for range runs {
		s := &Spread{metric: MetricCPU}
		arms := []any{"a", "b"}
		off := map[any]float64{}
		for r := range rounds {
			for _, a := range arms {
				first := r%k == 0
				if first {
					off[a] = stack * rng.NormFloat64()
				}
				s.Trial(a, math.Exp(off[a]+trial*rng.NormFloat64()), 0, time.Second, first, k)
			}
		}
		s.roundEnd()
		sps = append(sps, s)
	}
	return OffsetOf(sps, MetricCPU)
}

// TestTheRunMeasuresItsOffsets: the rounds across moves against those on the same stacks estimate the offsets'
// Spread, and the 90% bound is above the planted Spread in about 9 runs of 10 (CPU-like trials of 3.5%, 6
// experiments of 30 rounds moving every 5: 30 moves).
func TestTheRunMeasuresItsOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 2))
	for _, stack := range []float64{0, 0.02, 0.065} {
		const runs = 400
		covered, sum := 0, 0.0
		for range runs {
			o := measuredOffsets(rng, 6, 30, 5, stack, 0.035)
			if o.Upper >= stack {
				covered++
			}
			sum += o.SD * o.SD
		}
		rms, share := math.Sqrt(sum/runs), float64(covered)/runs
		t.Logf("planted %.1f%%: estimate %.2f%% (root mean square), the bound above it in %.1f%% of runs", 100*stack, 100*rms, 100*share)
		if stack > 0 && (share < 0.85 || math.Abs(rms-stack) > stack/4) {
			t.Errorf("planted %.1f%%: estimate %.2f%%, bound above it in %.1f%%: want within a quarter, and 85%% or more", 100*stack, 100*rms, 100*share)
		}
	}
	if o := measuredOffsets(rng, 1, 12, 5, 0.05, 0.035); o.Measured() || o.Upper != 0 {
		t.Errorf("one experiment of 2 moves: %+v, want no estimate", o)
	}
}
