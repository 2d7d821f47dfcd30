package tune

import (
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
)

// A short budget keeps the first knobs and leaves out the last, saying which budget would cover them all.
func TestPlanDropsTheLastKnobsWhenTheBudgetIsShort(t *testing.T) {
	knobs := knob.All("preload.php", nil)
	tr, err := newTuner(Options{Base: knob.Debian(), Knobs: knobs, Budget: 2 * time.Minute, Pins: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	tr.facts = knob.Facts{THP: "madvise", Concurrency: 16, MaxResponse: 100 << 10}
	if err := tr.planBudget(); err != nil {
		t.Fatal(err)
	}
	if tr.win+tr.warm < minWindow+minWarm {
		t.Errorf("trials of %s, below the shortest useful", tr.win+tr.warm)
	}
	var dropped, kept []string
	for _, k := range knobs {
		why := tr.skip[k.Name]
		switch {
		case strings.Contains(why, "--budget"):
			dropped = append(dropped, k.Name)
		case why == "":
			kept = append(kept, k.Name)
		}
	}
	if len(dropped) == 0 || len(kept) == 0 {
		t.Fatalf("kept %v, dropped %v: want some of each in 2 minutes", kept, dropped)
	}
	// Importance order: nothing kept comes after something dropped.
	pos := map[string]int{}
	for i, k := range knobs {
		pos[k.Name] = i
	}
	for _, d := range dropped {
		for _, k := range kept {
			if pos[k] > pos[d] {
				t.Errorf("%s kept though %s, before it, was dropped", k, d)
			}
		}
	}
	if !strings.Contains(tr.skip[dropped[0]], "would cover every knob") {
		t.Errorf("reason %q does not say which budget would do", tr.skip[dropped[0]])
	}
	// The same knobs in 30 minutes: nothing dropped.
	tr2, _ := newTuner(Options{Base: knob.Debian(), Knobs: knobs, Budget: 30 * time.Minute, Pins: map[string]string{}})
	tr2.facts = tr.facts
	if err := tr2.planBudget(); err != nil {
		t.Fatal(err)
	}
	for name, why := range tr2.skip {
		if strings.Contains(why, "budget") {
			t.Errorf("%s dropped in 30 minutes: %s", name, why)
		}
	}
}

// With opcache off at the start, the knobs that need it are still planned: the opcache knob may turn it on.
func TestPlanKeepsKnobsAnEarlierDecisionCanEnable(t *testing.T) {
	base := knob.Debian()
	base.SetINI("opcache.enable", "0")
	tr, _ := newTuner(Options{Base: base, Knobs: []knob.Knob{knob.Opcache(), knob.JIT()}, Budget: 30 * time.Minute, Pins: map[string]string{}})
	if err := tr.planBudget(); err != nil {
		t.Fatal(err)
	}
	if why := tr.skip["jit"]; why != "" {
		t.Errorf("jit skipped: %s", why)
	}
	tr, _ = newTuner(Options{Base: base, Knobs: []knob.Knob{knob.JIT()}, Budget: 30 * time.Minute, Pins: map[string]string{}})
	if err := tr.planBudget(); err != nil {
		t.Fatal(err)
	}
	if why := tr.skip["jit"]; !strings.Contains(why, "opcache is off") {
		t.Errorf("jit without the opcache knob, opcache off: skip %q", why)
	}
}
