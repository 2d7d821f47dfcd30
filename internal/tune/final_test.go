package tune

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// TestAFinalWithNothingToChange: where no knob beats its starting value, the recommendation is the starting
// point; the final races it against the rule of thumb alone and says so, not against itself.
func TestAFinalWithNothingToChange(t *testing.T) {
	so := demoSim(7, 0.04, 3*time.Minute)
	// No pool-size race: on the simulator's flat curve its second look decides the smallest size (3), a change.
	so.Effect, so.Pool = Planted(nil), 0
	res, err := Simulate(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	h := res.Headline
	if res.Recommendation.Key() != knob.Debian().Key() {
		t.Fatalf("recommendation %s, want Debian's defaults (no planted effect)", res.Recommendation)
	}
	if h == nil || !h.Same || h.RuleSame || h.VsDebian != nil || h.CapacityVsDebian != nil || h.VsRuleOfThumb == nil || h.Rounds == 0 {
		t.Fatalf("headline %+v: want the recommendation the same as Debian's defaults, compared with the rule of thumb alone", h)
	}
	if h.DebianRPS != h.RecommendationRPS {
		t.Errorf("Debian's figure %g, the recommendation's %g: one configuration, one figure", h.DebianRPS, h.RecommendationRPS)
	}
}

func TestDistinctConfigurations(t *testing.T) {
	deb, rule := knob.Debian(), knob.RuleOfThumb(2)
	recycled := func(c knob.Config, n int) knob.Config {
		c.MaxRequests = n
		return c
	}
	for _, c := range []struct {
		in    []knob.Config
		reach int64
		n     int
		want  []int
	}{
		// A max_requests beyond what a worker could serve in the run acts as none; one within it is a difference.
		{[]knob.Config{recycled(deb, 230000), deb, rule}, 100000, 2, []int{0, 0, 1}},
		{[]knob.Config{recycled(deb, 230000), deb, rule}, 300000, 3, []int{0, 1, 2}},
		{[]knob.Config{recycled(deb, 230000), recycled(deb, 500), rule}, 100000, 3, []int{0, 1, 2}},
		{[]knob.Config{recycled(rule, 230000), deb, recycled(rule, 400000)}, 100000, 2, []int{0, 1, 0}},
		{[]knob.Config{deb, deb, rule}, math.MaxInt64, 2, []int{0, 0, 1}},
		{[]knob.Config{rule, deb, rule}, math.MaxInt64, 2, []int{0, 1, 0}},
		{[]knob.Config{rule, deb, deb}, math.MaxInt64, 2, []int{0, 1, 1}},
		{[]knob.Config{rule, rule, rule}, math.MaxInt64, 1, []int{0, 0, 0}},
		{[]knob.Config{deb.Clone(), rule, knob.RuleOfThumb(4)}, math.MaxInt64, 3, []int{0, 1, 2}},
	} {
		out, at := distinct(c.in, c.reach)
		if len(out) != c.n || len(at) != len(c.want) {
			t.Fatalf("%v: %d configurations, %v", c.in, len(out), at)
		}
		for i := range at {
			if at[i] != c.want[i] {
				t.Errorf("%v: at %v, want %v", c.in, at, c.want)
				break
			}
		}
	}
}

// dueArm is an arm whose next trial does (or does not) first move it to a fresh stack.
type dueArm struct {
	experiment.Arm
	due bool
}

func (a dueArm) Due() bool { return a.due }

// TestTheFinalsNextRoundCountsItsMoves: the final goes on to another round only where its live arms' trials and
// the starts of the stacks they first move to end within the budget.
func TestTheFinalsNextRoundCountsItsMoves(t *testing.T) {
	tu := &tuner{costs: newCosts()}
	tu.costs.guess[MetricGoodput] = 1600 * time.Millisecond
	tu.costs.startGuess[MetricGoodput] = 5 * time.Second
	race := []experiment.Arm{&timedArm{Arm: dueArm{}}, &timedArm{Arm: dueArm{due: true}}, dueArm{due: true}, dueArm{}}
	if n := movesDue(race); n != 2 {
		t.Errorf("%d arms due to move, want 2", n)
	}
	if got, want := tu.finalRound(3, movesDue(race)), 3*1600*time.Millisecond+2*5*time.Second; got != want {
		t.Errorf("the next round foreseen at %s, want %s (three trials, two starts)", got, want)
	}
}
