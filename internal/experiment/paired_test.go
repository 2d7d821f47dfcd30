package experiment

import (
	"math"
	"testing"
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
