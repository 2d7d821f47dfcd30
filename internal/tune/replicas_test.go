package tune

import (
	"testing"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// TestTuneTellsTheEngineItsStacks: a real run's races and final comparison allow for stacks' offsets of
// DefaultStackSD on both metrics (moving stacks alone leaves a 2% offset a false verdict in 10 to 12% of replayed
// runs), and result.json's plan says so.
func TestTuneTellsTheEngineItsStacks(t *testing.T) {
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("preload.php", nil), Budget: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tu.serve() // starts nothing until an arm does
	d := tu.decider()
	for _, m := range []string{MetricCPU, MetricGoodput} {
		if es, _ := d.tuned(experiment.Spec{}, m, "knob x"); es.StackSD != arms.DefaultStackSD {
			t.Errorf("%s races allow for stacks' offsets of %g, want arms.DefaultStackSD (%g)", m, es.StackSD, arms.DefaultStackSD)
		}
	}
	if p := tu.finish(nil).Plan; p.StackSD[MetricCPU] != arms.DefaultStackSD || p.StackSD[MetricGoodput] != arms.DefaultStackSD ||
		p.PerStack[MetricCPU] != arms.PerStack(MetricCPU) || p.PerStack[MetricGoodput] != arms.PerStack(MetricGoodput) {
		t.Errorf("the plan says stack_sd %v, rounds_per_stack %v", p.StackSD, p.PerStack)
	}
}
