package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestPairedPairsTheRoundsBothRan: rounds one arm missed, a figure not read and a round run again are left out or
// paired by the last trial, and the ratio is oriented by which way the figure points.
func TestPairedPairsTheRoundsBothRan(t *testing.T) {
	p99 := func(o Observation) float64 { return o.P99 }
	a := ArmResult{Trials: []Observation{{P99: 10}, {P99: 10}, {P99: 99}, {P99: 10}, {P99: 10}},
		Round: []int{1, 2, 3, 3, 4}}
	b := ArmResult{Trials: []Observation{{P99: 20}, {P99: 0}, {P99: 40}, {P99: 20}}, Round: []int{1, 2, 3, 5}}
	s := Paired(a, b, p99, false, 0, 0)
	// Round 1 (20 against 10) and round 3 (40 against the last 10) pair; 2 read nothing, 4 and 5 one arm each.
	want := []float64{-math.Log(2), -math.Log(4)}
	got := s.Values()
	if len(got) != len(want) {
		t.Fatalf("paired %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("round %d: %g, want %g (a higher p99 is the worse)", i, got[i], want[i])
		}
	}
	if up := Paired(a, b, p99, true, 0, 0).Values(); math.Abs(up[0]-math.Log(2)) > 1e-12 {
		t.Errorf("higher is better: %v, want log 2 first", up)
	}
}

// TestHoldKeepsADecidedArm: a Versus arm decided in a few rounds (+30% at 2% noise) leaves them at once without
// Hold, and stays in while Hold says so, its rounds paired with the reference's all the while.
func TestHoldKeepsADecidedArm(t *testing.T) {
	run := func(hold func(int, ArmResult, ArmResult) bool) *Outcome {
		f := arms(rand.New(rand.NewSource(3)), 0.02, 0, math.Log(1.3))
		out, err := Run(context.Background(), Spec{Arms: asArms(f), Mode: Versus, HigherIsBetter: true, MinEffect: 0.03,
			Alpha: 0.01, MaxRounds: 40, Hold: hold})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	free := run(nil)
	if free.Ended != EndDecided || free.Rounds >= 12 || free.Arms[1].Vs.Verdict != stats.Better {
		t.Fatalf("without Hold: ended %s after %d rounds, %+v: want +30%% decided early", free.Ended, free.Rounds,
			free.Arms[1].Vs)
	}
	held := run(func(j int, ref, a ArmResult) bool { return j == 1 && len(a.Trials) < 20 })
	paired := Paired(held.Arms[0], held.Arms[1], value, true, 0, 0).N()
	if held.Rounds != 20 || held.Arms[1].Status != StatusDecided || paired != 20 {
		t.Errorf("held until 20 trials: %d rounds (%d paired), status %s: want 20 rounds, all paired, decided",
			held.Rounds, paired, held.Arms[1].Status)
	}
}

func value(o Observation) float64 { return o.Value }
