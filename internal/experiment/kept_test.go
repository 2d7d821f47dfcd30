package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// A figure decided stays decided while the pair races on for its other figure: a later round's outlier, which
// judged on every round leaves it inconclusive, does not take the verdict back (kept.go). The second figure's
// noise (30% a round) keeps the pair racing to MaxRounds.
func TestADecidedFigureIsKept(t *testing.T) {
	const rounds = 13
	a := &fakeArm{name: "A", sigma: 0.002, rng: rand.New(rand.NewSource(1)), second: []float64{0, 0.3}}
	b := &fakeArm{name: "B", sigma: 0.002, rng: rand.New(rand.NewSource(2)), second: []float64{0, 0.3}}
	b.onTrial = func() {
		b.effect = 0
		if b.trials == rounds {
			b.effect = -0.15 // the last round's outlier
		}
	}
	out, err := Run(context.Background(), Spec{Arms: []Arm{a, b}, Mode: Versus, HigherIsBetter: true, MinEffect: 0.03,
		Alpha: 0.05, MaxRounds: rounds, Second: &Figure{Name: "p99", HigherIsBetter: true}})
	if err != nil {
		t.Fatal(err)
	}
	vs, vs2 := out.Arms[1].Vs, out.Arms[1].Vs2
	if vs2 == nil || vs2.Verdict != stats.Inconclusive || out.Rounds != rounds {
		t.Fatalf("the second figure %+v after %d rounds: want it open to the end, %d rounds", vs2, out.Rounds, rounds)
	}
	if vs == nil || vs.Verdict != stats.NoDifference || vs.N >= rounds {
		t.Errorf("the first figure %+v: want no_difference as an earlier look stated it", vs)
	}
	all := NewSequence(0)
	for i, tr := range out.Arms[1].Trials {
		all.Add(math.Log(tr.Value / out.Arms[0].Trials[i].Value))
	}
	if v := (Rule{MinEffect: 0.03, Alpha: vs.Alpha}).Judge(all); v != "" {
		t.Errorf("judged on all %d rounds the first figure reads %q: the outlier does not open it, nothing to see",
			all.N(), v)
	}
}
