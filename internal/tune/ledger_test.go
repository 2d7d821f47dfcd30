package tune

import (
	"fmt"
	"testing"
)

// The result lists the knobs in the order they were recorded, each row with its comparisons: a second look's
// replace the race's (fewer or more of them), and a race raced again keeps its first comparisons before the new.
func TestTheLedgerKeepsEachRowWithItsComparisons(t *testing.T) {
	var l ledger
	a := l.addKnob(KnobRow{Name: "a"}, Comparison{Config: "a=1"}, Comparison{Config: "a=2"})
	l.addKnob(KnobRow{Name: "b"})
	c := l.addKnob(KnobRow{Name: "c"}, Comparison{Config: "c=1"})
	a.row.Value, a.comps = "2", []Comparison{{Config: "a=2"}}
	c.earlier, c.comps = append(c.earlier, c.comps...), []Comparison{{Config: "c=2"}, {Config: "c=3"}}
	var res Result
	l.into(&res)
	rows, comps := "", ""
	for _, r := range res.Knobs {
		rows += r.Name + r.Value + " "
	}
	for _, cm := range res.Comparisons {
		comps += cm.Config + " "
	}
	if got := fmt.Sprint(rows, "| ", comps); got != "a2 b c | a=2 c=1 c=2 c=3 " {
		t.Errorf("rows and comparisons %q", got)
	}
}
