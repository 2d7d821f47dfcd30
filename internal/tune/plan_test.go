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

// The budget checks go by what trials and stack starts cost here: on a loaded machine, more than planned.
func TestComparisonTimeFollowsMeasuredCost(t *testing.T) {
	tu := &tuner{o: Options{Pairs: 6}, warm: 500 * time.Millisecond, win: 2 * time.Second}
	planned := tu.comparisonTime()
	if want := 12*(2600*time.Millisecond) + 2*time.Second; planned != want {
		t.Errorf("before any trial: %v, want %v", planned, want)
	}
	tu.trials, tu.trialWall = 3, 30*time.Second
	if got := tu.comparisonTime(); got != planned {
		t.Errorf("after 3 trials (too few to go by): %v, want %v", got, planned)
	}
	tu.trials, tu.trialWall = 10, 40*time.Second // 4 s a trial
	tu.starts, tu.startWall = 2, 6*time.Second
	if got, want := tu.comparisonTime(), 12*4*time.Second+3*time.Second+time.Second; got != want {
		t.Errorf("after slow trials and starts: %v, want %v", got, want)
	}
	tu.trials, tu.trialWall = 10, 10*time.Second // faster than planned: the plan stands
	if got := tu.perTrial(); got != 2600*time.Millisecond {
		t.Errorf("fast trials: per trial %v, want the planned 2.6 s", got)
	}
}
