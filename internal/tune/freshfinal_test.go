package tune

import (
	"context"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/knob"
)

// TestTheFinalStartsOnFreshStacks: an arm of the final never starts on the stack tune holds warm (the best so
// far's, on which it won its last race), where a race's arm takes it; the simulation's arms do as the real ones.
func TestTheFinalStartsOnFreshStacks(t *testing.T) {
	so := demoSim(1, 0.04, time.Minute)
	src := &simSource{o: so, clock: clock.NewSim(time.Microsecond), warm: map[string]int{}, offsets: map[int]map[string]float64{},
		warmStack: map[string]int{}, busy: map[int]bool{}}
	cfg := knob.Debian()
	src.Hold(cfg)
	held := src.warmStack[cfg.Key()]
	for _, c := range []struct {
		spec  arms.TrialSpec
		fresh bool
	}{
		{arms.TrialSpec{Phase: "knob pm", Metric: MetricGoodput}, false},
		{arms.TrialSpec{Phase: "final", Metric: MetricGoodput, Capacity: true, Fresh: true}, true},
	} {
		a := src.Arm(cfg, c.spec).(*simArm)
		if a.Cold() != c.fresh {
			t.Errorf("%s: cold %v, want %v", c.spec.Phase, a.Cold(), c.fresh)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if (a.cur != held) != c.fresh {
			t.Errorf("%s: started on stack %d, the held one is %d: want fresh %v", c.spec.Phase, a.cur, held, c.fresh)
		}
		a.Stop()
	}
}
