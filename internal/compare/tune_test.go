package compare

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// Two real tune runs of the demo app, recorded (see internal/report/testdata).
func readTune(t *testing.T, name string) *tune.Result {
	t.Helper()
	b, err := os.ReadFile("../report/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var r tune.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestTunesAgreeWithItself(t *testing.T) {
	a := readTune(t, "tune-result.json")
	rep, err := Tunes([]*tune.Result{a, a}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Agree || !rep.SameRecommendation || len(rep.Knobs) != len(a.Knobs) {
		t.Fatalf("a run against itself: agree %v, same %v, %d knobs", rep.Agree, rep.SameRecommendation, len(rep.Knobs))
	}
	rps := rep.Throughput.Arms[1].Rows[0]
	if rps.Metric != "rps" || rps.Stats == nil || rps.Stats.Paired || rps.Verdict != stats.NoDifference || rps.Stats.Estimate != 0 {
		t.Errorf("a run against itself: %+v", rps)
	}
}

func TestTunesDisagree(t *testing.T) {
	a, b := readTune(t, "tune-result.json"), readTune(t, "tune-result-2.json")
	rep, err := Tunes([]*tune.Result{a, b}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	differ := false
	for i, k := range rep.Knobs {
		want := a.Knobs[i].Value == valueOf(b, k.Name)
		differ = differ || !want
		if k.Agree != want {
			t.Errorf("%s: agree %v with values %v", k.Name, k.Agree, k.Values)
		}
		// A knob the run kept without a comparison carries no verdict.
		for ri, r := range []*tune.Result{a, b} {
			for _, row := range r.Knobs {
				if row.Name == k.Name && (row.Compared != "") != k.Decided[ri] {
					t.Errorf("%s in run %d: decided %v, compared %q", k.Name, ri, k.Decided[ri], row.Compared)
				}
			}
		}
	}
	if rep.Agree == differ {
		t.Errorf("agree %v though knobs differ: %v", rep.Agree, differ)
	}
	for _, n := range rep.Throughput.Notes {
		if strings.Contains(n, "--interleave") {
			t.Errorf("advice that does not apply to tune runs: %s", n)
		}
	}
	// An interrupted run without final trials: knobs still compared, throughput not.
	p := *b
	p.Trials, p.Partial = nil, true
	rep, err = Tunes([]*tune.Result{a, &p}, []string{"A", "B"}, 0.01)
	if err != nil || rep.Throughput != nil || len(rep.Notes) == 0 {
		t.Errorf("partial run: %v, throughput %v, notes %v", err, rep.Throughput, rep.Notes)
	}
	if _, err := Tunes([]*tune.Result{a}, []string{"A"}, 0.01); err == nil {
		t.Error("one result compared")
	}
}

func valueOf(r *tune.Result, name string) string {
	for _, k := range r.Knobs {
		if k.Name == name {
			return k.Value
		}
	}
	return "(none)"
}
