package experiment

import (
	"context"
	"math"
	"math/rand"
	"sort"
	"testing"
)

// neededAt runs a Smallest experiment of the given log effects and returns Look.Needed at round at, and the
// rounds the experiment took to end (maxRounds when undecided).
func neededAt(t *testing.T, rng *rand.Rand, sigma float64, at, maxRounds int, effects ...float64) (needed, ended int) {
	t.Helper()
	out, err := Run(context.Background(), Spec{Name: "size", Arms: asArms(arms(rng, sigma, effects...)), Mode: Smallest,
		HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01, MaxRounds: maxRounds,
		Continue: func(l Look) bool {
			if l.Rounds == at {
				needed = l.Needed
			}
			return true
		}})
	if err != nil {
		t.Fatal(err)
	}
	return needed, out.Rounds
}

// TestSmallestForeseesItsEnd: Look.Needed in Smallest estimates the rounds after which the first size left is
// shown within the margin or worse: near what a quiet race took, and far off where the rounds vary as much as
// WordPress's (12%) and the sizes serve alike (there its median is about 150 rounds at round 6, and WordPress's
// sizes' race had time for 16).
func TestSmallestForeseesItsEnd(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var ratios []float64
	for r := 0; r < 200; r++ {
		need, ended := neededAt(t, rng, 0.02, 6, 1000, math.Log(0.67), math.Log(0.995), 0, 0)
		if need > 0 && ended > 6 {
			ratios = append(ratios, float64(ended)/float64(need))
		}
	}
	sort.Float64s(ratios)
	if len(ratios) < 100 {
		t.Fatalf("a quiet race's end foreseen in %d runs of 200 that went past round 6", len(ratios))
	}
	if med := ratios[len(ratios)/2]; med < 0.5 || med > 2 {
		t.Errorf("a quiet race ended at %.2f times the rounds foreseen at round 6 (median of %d runs): want 0.5 to 2",
			med, len(ratios))
	}
	far := 0
	for r := 0; r < 200; r++ {
		if need, _ := neededAt(t, rng, 0.085, 6, 7, math.Log(0.6), 0, 0, 0); need > 2*6 {
			far++
		}
	}
	if far < 190 {
		t.Errorf("alike sizes at 12%% a round: the end foreseen past twice the rounds run in %d runs of 200, want 190", far)
	}
}

// TestAnOpenRaceSaysWhatItsAnswerNeeds: WordPress's sizes as a tune run measured them (1 at -68%, 2 and 4 about
// alike, a round varying 9%), stopped after 4 rounds. Size 1 is a round or two from being shown worse, which
// answers nothing; the race's answer (a size shown within the margin of the rest) is much further. The outcome
// says the latter (Outcome.Needed), which the row's "would need" states: it said "6s more" of a race that needed
// minutes.
func TestAnOpenRaceSaysWhatItsAnswerNeeds(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	further, open := 0, 0
	const runs = 200
	for r := 0; r < runs; r++ {
		// tune's pool margin and about a pair's alpha in its sizes' race
		sizes := asArms(arms(rng, 0.065, math.Log(0.32), 0, math.Log(0.99)))
		out, err := Run(context.Background(), Spec{Name: "size", Arms: sizes, Mode: Smallest, HigherIsBetter: true,
			MinEffect: 0.05, Alpha: 0.002, MaxRounds: 4})
		if err != nil {
			t.Fatal(err)
		}
		if within := plausible(out); out.Arms[0].Status == StatusDropped || !within[1] {
			continue // decided, or the small size already out: not the case under test
		}
		open++
		if out.Needed == 0 {
			t.Fatalf("run %d: an open race after 4 rounds with no rounds needed said", r)
		}
		if v := out.Arms[0].Vs; v != nil && out.Needed > v.RoundsNeeded {
			further++
		}
	}
	t.Logf("open in %d runs of %d; the answer foreseen past size 1's verdict in %d", open, runs, further)
	if open < runs/4 || further < open*9/10 {
		t.Errorf("open in %d runs of %d (want a quarter), the answer foreseen past size 1's verdict in %d (want 90%%)",
			open, runs, further)
	}
}
