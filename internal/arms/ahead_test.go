package arms

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// TestDuetStartsTheNextStacksAhead (real php-fpm and nginx): the arms of a duet race move to fresh stacks every
// round, and those stacks start while the round before runs its trials, so a round's Prepare finds them in; a
// memory limit that would not hold them beside the running ones leaves the starts to Prepare; once the arms stop,
// no stack is left running, the ones started ahead included.
func TestDuetStartsTheNextStacksAhead(t *testing.T) {
	o := Config{Stack: stack.Config{App: writeApp(t, map[string]string{"index.php": `<?php echo "ok\n";`})}, Timeout: 5 * time.Second,
		URLs: []load.MixItem{{URI: "/", Weight: 1}}}
	s := newStackSet(o, &Lengths{Win: 200 * time.Millisecond, Warm: 50 * time.Millisecond, CPURequests: 20}, func(TrialRecord) {},
		func(w string) { t.Log(w) })
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 1
	spec := TrialSpec{Phase: "duet", Metric: MetricCPU, Conc: 1, Duet: true}
	src := newReplicated(s)
	arms := []experiment.Arm{src.Arm(cfg, spec), src.Arm(cfg, spec)}
	for _, a := range arms {
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	round := func() (stacks [2]int) {
		for _, a := range arms {
			if err := a.(experiment.Preparer).Prepare(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for i, a := range arms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				obs, err := a.Trial(ctx)
				if err != nil {
					t.Error(err)
				}
				stacks[i] = obs.Stack
			}()
		}
		wg.Wait()
		return stacks
	}
	g := arms[0].(*replicaArm).g
	seen := map[int]bool{}
	for r := range 3 {
		st := round()
		t.Logf("round %d on %v", r+1, st)
		for _, n := range st {
			if seen[n] {
				t.Errorf("round %d ran on stack %d again: duet arms move every round", r+1, n)
			}
			seen[n] = true
		}
		g.waitAhead()
		for i, a := range arms {
			if a.(*replicaArm).next == nil {
				t.Errorf("round %d: arm %d's next stack was not started beside the trials", r+1, i)
			}
		}
	}
	// Too little memory for four stacks: the next ones start in Prepare, not beside the trials.
	s.gate.limit(1<<30, func(knob.Config) int64 { return 300 << 20 })
	t.Logf("limited round on %v", round())
	g.waitAhead()
	for i, a := range arms {
		if a.(*replicaArm).next != nil {
			t.Logf("arm %d next %d n %d", i, a.(*replicaArm).next.serial, a.(*replicaArm).n)
			t.Errorf("arm %d's next stack started beside the trials where the memory does not hold it", i)
		}
	}
	s.gate.limit(1<<40, func(knob.Config) int64 { return 300 << 20 })
	round() // and one started ahead again, which the stop must cancel or stop
	stopAll(arms)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) != 0 {
		t.Errorf("%d stacks left running after the arms stopped, want none", len(s.all))
	}
}
