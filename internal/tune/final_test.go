package tune

import (
	"context"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
)

// TestAFinalWithNothingToChange: where no knob beats its starting value, the recommendation is the starting
// point; the final races it against the rule of thumb alone and says so, not against itself.
func TestAFinalWithNothingToChange(t *testing.T) {
	so := demoSim(7, 0.04, 3*time.Minute)
	so.Effect = Planted(nil)
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
	for _, c := range []struct {
		in   []knob.Config
		n    int
		want []int
	}{
		{[]knob.Config{deb, deb, rule}, 2, []int{0, 0, 1}},
		{[]knob.Config{rule, deb, rule}, 2, []int{0, 1, 0}},
		{[]knob.Config{rule, deb, deb}, 2, []int{0, 1, 1}},
		{[]knob.Config{rule, rule, rule}, 1, []int{0, 0, 0}},
		{[]knob.Config{deb.Clone(), rule, knob.RuleOfThumb(4)}, 3, []int{0, 1, 2}},
	} {
		out, at := distinct(c.in)
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
