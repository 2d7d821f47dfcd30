package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestTwoFiguresShareOneBudget: tune's final comparison, a recommendation against two baselines on goodput (15%
// noise a round) and on requests per CPU-second from the same trials (5%). With nothing to find, a better or
// worse verdict on either figure comes in at most alpha of the runs (the pair's alpha is split between them);
// with the recommendation 8% cheaper a request and as fast, capacity is decided in nearly every run while
// goodput mostly is not, and each figure states its own interval.
func TestTwoFiguresShareOneBudget(t *testing.T) {
	const runs, alpha = 1000, 0.05
	for _, capacity := range []float64{0, 0.08} {
		rng := rand.New(rand.NewSource(4))
		wrong, cheaper, faster := 0, 0, 0
		for i := 0; i < runs; i++ {
			f := arms(rng, 0.15, 0, 0, 0)
			f[0].second = []float64{math.Log1p(capacity), 0.05}
			f[1].second, f[2].second = []float64{0, 0.05}, []float64{0, 0.05}
			out, err := Run(context.Background(), Spec{Arms: asArms(f), Mode: Versus, HigherIsBetter: true, MinEffect: 0.03,
				Alpha: alpha, MaxRounds: 40, Second: &Figure{Name: "requests per CPU-second", HigherIsBetter: true}})
			if err != nil {
				t.Fatal(err)
			}
			bad := false
			for _, a := range out.Arms[1:] {
				if a.Vs == nil || a.Vs2 == nil {
					t.Fatalf("%s: comparisons %v and %v, want both figures stated", a.Name, a.Vs, a.Vs2)
				}
				if v := a.Vs.Verdict; v == stats.Better || v == stats.Worse {
					bad = true
				}
				switch v := a.Vs2.Verdict; {
				case capacity == 0 && (v == stats.Better || v == stats.Worse):
					bad = true
				case capacity > 0 && v == stats.Better:
					bad = true
				case capacity > 0 && v == stats.Worse && a.Name == "B":
					cheaper++ // a baseline worse than the recommendation
				}
				if a.Name == "B" && a.Vs.Verdict == stats.NoDifference {
					faster++
				}
			}
			if bad {
				wrong++
			}
		}
		t.Logf("capacity %+.0f%%: a wrong verdict in %d of %d runs; capacity decided against the first baseline in %d, goodput no_difference in %d",
			100*capacity, wrong, runs, cheaper, faster)
		if wrong > runs*alpha {
			t.Errorf("capacity %+.0f%%: %d of %d runs with a wrong verdict, want at most alpha", 100*capacity, wrong, runs)
		}
		if capacity > 0 && (cheaper < runs*95/100 || faster > runs/2) {
			t.Errorf("capacity decided in %d, goodput in %d of %d runs: want capacity nearly always, goodput seldom", cheaper, faster, runs)
		}
	}
}
