package tune

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/clock"
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
	o := Options{Stack: stack.Config{App: writeApp(t, map[string]string{"index.php": `<?php echo "ok\n";`})}, Timeout: 5 * time.Second,
		URLs: []load.MixItem{{URI: "/", Weight: 1}}}
	s := newStacks(&o, &lengths{win: 200 * time.Millisecond, warm: 50 * time.Millisecond, cpuN: 20}, func(TrialRecord) {},
		func(w string) { t.Log(w) })
	defer s.stopAll()
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

// specSource records the specs its arms were made with.
type specSource struct{ specs []TrialSpec }

func (s *specSource) Arm(cfg knob.Config, spec TrialSpec) experiment.Arm {
	s.specs = append(s.specs, spec)
	return nil
}

// TestDuetOnlyWhereTheArmsFitTogether: a CPU race runs duet rounds only where its arms' stacks fit the memory
// loaded at once (a 600 MiB container whose pool is sized to fill it would meet the OOM killer): the gate's
// weights decide, and a goodput race never runs duets.
func TestDuetOnlyWhereTheArmsFitTogether(t *testing.T) {
	var g startGate
	g.limit(600<<20, func(c knob.Config) int64 { return int64(c.MaxChildren) * 80 << 20 })
	for _, c := range []struct {
		children int
		metric   string
		want     bool
	}{{2, MetricCPU, true}, {3, MetricCPU, true}, {4, MetricCPU, false}, {2, MetricGoodput, false}} {
		src := &specSource{}
		d := &decider{src: src, costs: newCosts(), clock: clock.Wall{}, duet: true,
			fit: func(cfgs []knob.Config) bool { return g.holds(cfgs, 1) }}
		from := knob.Debian()
		from.MaxChildren = c.children
		if _, err := d.arms(race{knob: knob.MaxRequests(), from: from, values: []string{"100"}, spec: TrialSpec{Metric: c.metric}}); err != nil {
			t.Fatal(err)
		}
		for _, s := range src.specs {
			if s.Duet != c.want {
				t.Errorf("%d children of 80 MiB, two arms in 600 MiB, %s: duet %v, want %v", c.children, c.metric, s.Duet, c.want)
			}
		}
	}
}
