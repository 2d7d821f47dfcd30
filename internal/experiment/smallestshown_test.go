package experiment

import (
	"math"
	"math/rand"
	"testing"
)

// TestSmallestDecidesPastAnOpenSize: the demo's sizes as measured quietly (bench/poolmodel.sh, 16 connections: 2,
// 3, 4, 6 and 8 at -18.6, -7.6, -3.8, -1.9 and 0%, a round's log ratio varying by about 3%). Sizes 4 and 6 lie a
// percent or two from the 3% margin: the first live size is shown neither within nor worse for hundreds of rounds,
// so the race ended undecided in all but a few runs and tune kept the starting size. The first size shown within
// the margin of every size left is a claim at the pairs' level all the same: within 40 rounds it is decided in
// most runs, and never on a size worse than the best by more than the margin.
func TestSmallestDecidesPastAnOpenSize(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	effects := []float64{math.Log(0.814), math.Log(0.924), math.Log(0.962), math.Log(0.981), 0}
	const runs = 400
	decided, wrong, picks := 0, 0, map[int]int{}
	for r := 0; r < runs; r++ {
		o := runSmallest(t, rng, 0.021, 40, effects...)
		w := o.Arms[o.Winner]
		if !w.Within {
			continue
		}
		decided++
		picks[o.Winner]++
		if effects[o.Winner] < -math.Log1p(0.03) {
			wrong++
		}
	}
	t.Logf("decided %d of %d; picks by arm %v; %d worse than the margin", decided, runs, picks, wrong)
	if decided < runs*8/10 {
		t.Errorf("decided %d of %d runs in 40 rounds, want 80%%", decided, runs)
	}
	if wrong > runs/100 {
		t.Errorf("%d of %d runs picked a size worse than the best by more than the margin, want at most 1%%", wrong, runs)
	}
}

// TestSmallestShowsNoneWithinOnTheEdge: a first size 4% worse than the second, outside the 3% margin, by a little:
// never shown within (at most the pairs' alpha, 1%, with margin), however long the race runs.
func TestSmallestShowsNoneWithinOnTheEdge(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	const runs = 2000
	wrong := 0
	for r := 0; r < runs; r++ {
		o := runSmallest(t, rng, 0.021, 100, math.Log(0.97), 0)
		if o.Arms[0].Within {
			wrong++
		}
	}
	t.Logf("a size 3%% worse shown within the 3%% margin in %d of %d runs", wrong, runs)
	if wrong > runs/50 {
		t.Errorf("a size on the margin's edge shown within in %d of %d runs, want at most 2%% (alpha 1%%)", wrong, runs)
	}
}
