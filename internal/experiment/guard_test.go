package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"
)

// guardRace races the incumbent A against challengers of the given goodput gains and p99 ratios (goodput varying
// by 5% a trial, the p99 by 30%), the p99 a guard unless off, at most rounds rounds, and returns the winner's name
// and the outcome.
func guardRace(t *testing.T, seed int64, guard bool, rounds int, gains, p99s []float64) (string, *Outcome) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	f := arms(rng, 0.05, append([]float64{0}, gains...)...)
	f[0].second = []float64{0, 0.3}
	for i, r := range p99s {
		f[i+1].second = []float64{math.Log(r), 0.3}
	}
	out, err := Run(context.Background(), Spec{Arms: asArms(f), Mode: Race, HigherIsBetter: true, MinEffect: 0.03,
		Alpha: 0.01, MaxRounds: rounds, Second: &Figure{Name: "p99", Guard: guard}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Arms[out.Winner].Name, out
}

// TestAGuardKeepsTheIncumbent: a challenger 8% better on goodput at a p99 24 times worse (the held-out memory
// case under mod_php) never wins a race whose p99 is a guard, and leaves it saying why; without the guard it
// wins nearly every race. A third value as good on goodput at the same p99 wins in its place.
func TestAGuardKeepsTheIncumbent(t *testing.T) {
	const runs = 200
	won, unguarded, third := 0, 0, 0
	for seed := int64(0); seed < runs; seed++ {
		w, out := guardRace(t, seed, true, 100, []float64{0.08}, []float64{24})
		if w == "B" {
			won++
		}
		if b := out.Arms[1]; w != "B" && (b.Note != "p99 worse than A" || b.Vs2 == nil || b.Vs2.Estimate < 5) {
			t.Fatalf("seed %d: B %s (%q), p99 %+v: want it out for its p99", seed, b.Status, b.Note, b.Vs2)
		}
		if w, _ := guardRace(t, seed, false, 100, []float64{0.08}, []float64{24}); w == "B" {
			unguarded++
		}
		if w, _ := guardRace(t, seed, true, 100, []float64{0.08, 0.08}, []float64{24, 1}); w == "C" {
			third++
		}
	}
	t.Logf("%d races: B won %d guarded, %d unguarded; with C beside it, C won %d", runs, won, unguarded, third)
	if won > 0 || unguarded < runs*9/10 || third < runs*9/10 {
		t.Errorf("want B never to win guarded, and B unguarded and C guarded in nine races of ten")
	}
}

// TestAGuardLetsAnEqualTailThrough: at the same p99 the goodput winner wins about as often as without the guard,
// and the guard takes it out in at most alpha of the races (the guard's share of it).
func TestAGuardLetsAnEqualTailThrough(t *testing.T) {
	const runs = 400
	won, unguarded, out, rounds, rounds0 := 0, 0, 0, 0, 0
	for seed := int64(0); seed < runs; seed++ {
		w, o := guardRace(t, seed, true, 100, []float64{0.08}, []float64{1})
		if w == "B" {
			won++
		}
		if o.Arms[1].Note == "p99 worse than A" {
			out++
		}
		w, o0 := guardRace(t, seed, false, 100, []float64{0.08}, []float64{1})
		if w == "B" {
			unguarded++
		}
		rounds, rounds0 = rounds+o.Rounds, rounds0+o0.Rounds
	}
	t.Logf("%d races: B won %d guarded, %d unguarded; out on its p99 in %d; %.1f rounds a race guarded, %.1f unguarded",
		runs, won, unguarded, out, float64(rounds)/runs, float64(rounds0)/runs)
	if out > runs/100 || won < unguarded*95/100 {
		t.Errorf("want B out on its p99 in at most 1%% of races, and winning about as often as unguarded")
	}
}

// TestAGuardDecidedLateStillCounts: a challenger 30% better on goodput (decided in about 4 rounds) at a p99
// twice the incumbent's, which takes longer to show: the incumbent stays the reference while the guard leans against the
// challenger, so the guard is decided before the challenger can win.
func TestAGuardDecidedLateStillCounts(t *testing.T) {
	const runs = 200
	won, unguarded := 0, 0
	for seed := int64(0); seed < runs; seed++ {
		if w, _ := guardRace(t, seed, true, 200, []float64{0.30}, []float64{2}); w == "B" {
			won++
		}
		if w, _ := guardRace(t, seed, false, 200, []float64{0.30}, []float64{2}); w == "B" {
			unguarded++
		}
	}
	t.Logf("%d races: B won %d guarded, %d unguarded", runs, won, unguarded)
	if won > runs/10 || unguarded < runs*9/10 {
		t.Errorf("want B to win at most one race in ten guarded, nine in ten unguarded")
	}
}

// SecondLeans says a Versus experiment's second figure, undecided, leans against an arm by the minimum effect
// and a standard error: a p99 30% higher on noisy trials does after a few rounds, the same p99 does not.
func TestTheSecondFigureLeans(t *testing.T) {
	leans := func(p99 float64) (bool, *Outcome) {
		rng := rand.New(rand.NewSource(7))
		f := arms(rng, 0.02, 0, 0)
		f[0].second, f[1].second = []float64{0, 0.2}, []float64{math.Log(p99), 0.2}
		x, err := New(Spec{Arms: asArms(f), Mode: Versus, HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01,
			MaxRounds: 6, Second: &Figure{Name: "p99"}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := x.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return x.SecondLeans(1, 1), out
	}
	if got, out := leans(1.3); !got || out.Arms[1].Vs2.Verdict != "inconclusive" {
		t.Errorf("a p99 30%% higher: leans %v, %+v; want it leaning, undecided", got, out.Arms[1].Vs2)
	}
	if got, out := leans(1); got {
		t.Errorf("the same p99: leans, %+v", out.Arms[1].Vs2)
	}
}
