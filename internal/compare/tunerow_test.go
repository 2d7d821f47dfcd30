package compare

import (
	"encoding/json"
	"testing"

	"github.com/phptune/phptune/internal/tune"
)

// A run's row carries its comparison as data into the comparison, and a compare.json written before it did is
// read back from its words.
func TestAKnobsRowKeepsItsComparisonAsData(t *testing.T) {
	a, b := readTune(t, "tune-result.json"), readTune(t, "tune-result.json")
	for i := range b.Knobs { // a run written with the data only
		b.Knobs[i].Vs, b.Knobs[i].Compared = b.Knobs[i].Versus(), ""
	}
	rep, err := Tunes([]*tune.Result{a, b}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rep.Knobs {
		want := k.Row(0).Versus()
		if got := k.Row(1).Versus(); want == nil || got == nil || *got != *want || k.Compared[1] != k.Compared[0] || !k.Decided[1] {
			t.Fatalf("%s: run B compared %+v %q, run A %+v %q", k.Name, got, k.Compared[1], want, k.Compared[0])
		}
	}
	old := rep.Knobs[0]
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "vs") // as an older compare.json has it
	data, _ = json.Marshal(m)
	var back KnobAgreement
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Row(1).Versus(), old.Row(1).Versus(); got == nil || *got != *want {
		t.Fatalf("read back without vs: %+v, want %+v", got, want)
	}
}
