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
	tu.trials, tu.trialExtra = 10, 15*time.Second // 1.5 s a trial beyond its 2.5 s of load
	tu.starts, tu.startWall = 2, 6*time.Second
	if got, want := tu.comparisonTime(), 12*4*time.Second+3*time.Second+time.Second; got != want {
		t.Errorf("after slow trials and starts: %v, want %v", got, want)
	}
	tu.trials, tu.trialExtra = 10, 0 // less overhead than planned: the plan's 100 ms stands
	if got := tu.perTrial(); got != 2600*time.Millisecond {
		t.Errorf("fast trials: per trial %v, want the planned 2.6 s", got)
	}
}

// replan fits the comparisons left into the time left: longer trials when there is time, shorter ones (to
// minShorten of the plan at most) when starts cost more than planned.
func TestReplanFitsTheRemainingComparisons(t *testing.T) {
	tu := &tuner{o: Options{Pairs: 10, Budget: 10 * time.Minute}, warm: 250 * time.Millisecond, win: 750 * time.Millisecond,
		plannedPer: time.Second, starts: 2, startWall: 4 * time.Second, settleWall: time.Second, res: &Result{}}
	// 5 comparisons and the final: 130 trials and 7 starts (2 s each, settling included). Much time left:
	// longer trials.
	tu.end = time.Now().Add(8 * time.Minute)
	tu.replan(5)
	long := tu.warm + tu.win
	if long <= time.Second {
		t.Fatalf("8 minutes for 5 comparisons: trials of %v, want longer than the planned 1 s", long)
	}
	if want := (8*time.Minute - 7*2*time.Second - 2*time.Second - 48*time.Second - 130*perTrialOverhead) / 130; long < want-50*time.Millisecond || long > want+50*time.Millisecond {
		t.Errorf("trial %v, want about %v", long, want)
	}
	// Too little time: shortened, but never below minShorten of the plan.
	tu.end = time.Now().Add(2 * time.Minute)
	tu.replan(5)
	if got := tu.warm + tu.win; got != time.Duration(minShorten*float64(time.Second)) {
		t.Errorf("2 minutes for 5 comparisons: trials of %v, want %v", got, time.Duration(minShorten*float64(time.Second)))
	}
	// Slightly short: shortened to fit.
	tu.end = time.Now().Add(150 * time.Second)
	tu.replan(5)
	if got := tu.warm + tu.win; got >= time.Second || got <= 700*time.Millisecond {
		t.Errorf("2.5 minutes for 5 comparisons: trials of %v, want between 0.7 and 1 s", got)
	}
	if tu.warm < minWarm {
		t.Errorf("warm-up %v below %v", tu.warm, minWarm)
	}
}
