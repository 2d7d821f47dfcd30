package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// runSmallest runs a Smallest experiment on arms of the given log effects for at most rounds rounds.
func runSmallest(t *testing.T, rng *rand.Rand, sigma float64, rounds int, effects ...float64) *Outcome {
	t.Helper()
	out, err := Run(context.Background(), Spec{Name: "size", Arms: asArms(arms(rng, sigma, effects...)), Mode: Smallest,
		HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01, MaxRounds: rounds})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// plausible are the arms a Smallest outcome leaves in the margin of the best: the winner, those shown within and
// those still open.
func plausible(o *Outcome) map[int]bool {
	m := map[int]bool{}
	for i, a := range o.Arms {
		switch a.Status {
		case StatusWinner, StatusWithin, StatusOpen:
			m[i] = true
		}
	}
	return m
}

// A flat curve (a pool of 4 within half a percent of 8 and 16) and a clearly worse small size (2: -33%): the pick
// is 4 once shown, never 2.
func TestSmallestPicksTheFirstWithinTheMargin(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	picks, decided, wrong := map[int]int{}, 0, 0
	const runs = 400
	for r := 0; r < runs; r++ {
		o := runSmallest(t, rng, 0.04, 300, math.Log(0.67), math.Log(0.995), 0, 0)
		picks[o.Winner]++
		if o.Ended == EndDecided {
			decided++
		}
		if o.Winner == 0 {
			wrong++
		}
		if o.Arms[0].Status != StatusDropped {
			t.Fatalf("run %d: the size 33%% worse was not dropped: %+v", r, o.Arms[0])
		}
	}
	if picks[1] < runs*9/10 || decided < runs*9/10 {
		t.Errorf("picks %v, decided %d of %d: want the first size within the margin (1) in nine runs of ten", picks, decided, runs)
	}
	if wrong > runs/100 {
		t.Errorf("the worse size picked in %d of %d runs", wrong, runs)
	}
}

// A size truly 6% worse than the best is not shown within a 3% margin more often than alpha, however long the
// experiment runs.
func TestSmallestNeverShowsAWorseSizeWithin(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	shown := 0
	const runs = 1000
	for r := 0; r < runs; r++ {
		o := runSmallest(t, rng, 0.08, 200, math.Log(0.94), 0)
		if o.Winner == 0 && o.Arms[0].Status == StatusWinner && o.Arms[0].Note == "" {
			shown++
		}
	}
	if shown > runs/50 {
		t.Errorf("a size 6%% worse shown within 3%% of the best in %d of %d runs (alpha 1%%)", shown, runs)
	}
}

// Runs of different lengths on one flat curve (noise as a pool's goodput on this machine, 10% a round) each pick a
// size inside the other's plausible range: the pool size holds from a 3-minute run to a 10-minute one.
func TestSmallestIsStableAcrossBudgets(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	effects := []float64{math.Log(0.55), math.Log(0.84), math.Log(0.95), 0, math.Log(0.99)}
	agree := 0
	const runs = 300
	for r := 0; r < runs; r++ {
		short := runSmallest(t, rng, 0.10, 15, effects...)
		long := runSmallest(t, rng, 0.10, 120, effects...)
		if plausible(long)[short.Winner] && plausible(short)[long.Winner] {
			agree++
		}
	}
	if agree < runs*95/100 {
		t.Errorf("short and long runs picked sizes inside each other's ranges in %d of %d pairs, want 95%%", agree, runs)
	}
	if testing.Verbose() {
		t.Logf("short and long runs inside each other's ranges: %d of %d pairs", agree, runs)
	}
}

// Each arm is stated against the best, in the value's own terms, both for arms before and after it.
func TestSmallestStatesEachAgainstTheBest(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	o := runSmallest(t, rng, 0.02, 40, math.Log(0.5), 0, math.Log(0.8))
	if o.Best != 1 {
		t.Fatalf("best %d, want 1", o.Best)
	}
	for _, i := range []int{0, 2} {
		c := o.Arms[i].Vs
		if c == nil || c.Estimate > -0.1 || c.Verdict != stats.Worse {
			t.Errorf("arm %d against the best: %+v, want worse by a fifth or more", i, c)
		}
	}
	if o.Arms[1].Vs != nil {
		t.Errorf("the best against itself: %+v", o.Arms[1].Vs)
	}
}

// An undecided race's winner always carries a note: the best shown within the others while a size before it is
// still open is the first shown within, not the first arm within (tune states it with the sizes still open).
func TestSmallestUndecidedWinnerSaysSo(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	bestWithin := 0
	for r := 0; r < 400; r++ {
		o := runSmallest(t, rng, 0.03, 20, math.Log(0.978), math.Log(0.982), 0)
		w := o.Arms[o.Winner]
		if (o.Ended == EndDecided) != (w.Note == "") {
			t.Fatalf("run %d: ended %s, winner %d's note %q: a note exactly when undecided", r, o.Ended, o.Winner, w.Note)
		}
		if o.Ended != EndDecided && o.Winner == 2 && w.Note == NoteOpenBefore && w.Within {
			bestWithin++
		}
	}
	if bestWithin == 0 {
		t.Error("no undecided run whose best was shown within: the case is not exercised")
	}
}

// TestIdenticalRoundsShowNothingWithin: two pool sizes whose counts never vary (100 requests every trial, a step
// of 1%) give log ratios all exactly 0. Such rounds say nothing of a difference within a step, so the first is
// never shown within the margin on them, as no verdict of a pair rests on them (Rule.Judge); once the half steps'
// allowance and the steps' spread narrowed enough (5 rounds), Smallest called it within.
func TestIdenticalRoundsShowNothingWithin(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	out, err := Run(context.Background(), Spec{Name: "size", Arms: []Arm{&countArm{name: "4", n: 100, rng: rng},
		&countArm{name: "8", n: 100, rng: rng}}, Mode: Smallest, HigherIsBetter: true, MinEffect: 0.03, Alpha: 0.01, MaxRounds: 100})
	if err != nil {
		t.Fatal(err)
	}
	if out.Ended == EndDecided || out.Arms[0].Note == "" {
		t.Errorf("identical counts: ended %s after %d rounds, the first's note %q: want undecided", out.Ended, out.Rounds, out.Arms[0].Note)
	}
}

// TestSmallestResumedStatesNoneAgainstItself: three alike sizes, the race paused after 4 rounds and resumed to
// 30: where the resumed race's best is another arm than the paused one's, the new best states no comparison
// (it kept the one against the old best) and every other arm is stated against it.
func TestSmallestResumedStatesNoneAgainstItself(t *testing.T) {
	moved := 0
	for seed := int64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := Spec{Name: "size", Arms: asArms(arms(rng, 0.05, 0, 0, 0)), Mode: Smallest, HigherIsBetter: true,
			MinEffect: 0.03, Alpha: 0.01, Continue: func(l Look) bool { return l.Rounds < 4 }}
		x, out := runPaused(t, s)
		if !x.Resumable() {
			continue
		}
		first := out.Best
		out, err := x.Resume(context.Background(), func(l Look) bool { return l.Rounds < 30 })
		if err != nil {
			t.Fatal(err)
		}
		if out.Best == first {
			continue
		}
		moved++
		for i, a := range out.Arms {
			if (i == out.Best) != (a.Vs == nil) {
				t.Errorf("seed %d: arm %d (best %d, before %d) states %+v", seed, i, out.Best, first, a.Vs)
			}
		}
	}
	if moved == 0 {
		t.Fatal("no resumed race moved its best: the test shows nothing")
	}
}
