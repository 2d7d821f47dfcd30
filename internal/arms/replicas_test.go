package arms

import (
	"context"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// TestArmsMoveToFreshStacks (real php-fpm and nginx): two arms of one configuration, as the final comparison
// of a configuration against itself has, run on stacks of their own from the first round, and both move to
// fresh stacks together, at most every perStackCPU rounds; the tuner's held stack serves one arm first; once the arms
// stop, only the held stack is left running; resumed, an arm does not go back to a stack it ran on.
func TestArmsMoveToFreshStacks(t *testing.T) {
	o := Config{Stack: stack.Config{App: writeApp(t, map[string]string{"index.php": `<?php echo "ok\n";`})}, Timeout: 5 * time.Second,
		URLs: []load.MixItem{{URI: "/", Weight: 1}}}
	var recs []TrialRecord
	s := newStackSet(o, &Lengths{Win: 200 * time.Millisecond, Warm: 50 * time.Millisecond, CPURequests: 20}, func(r TrialRecord) { recs = append(recs, r) },
		func(w string) { t.Log(w) })
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 2
	spec := TrialSpec{Phase: "final", Metric: MetricCPU, Conc: 2}
	held := s.shared(RunsOn(cfg, spec), TrialSpec{Conc: 2})
	if err := held.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s.Hold(RunsOn(cfg, spec))
	held.Stop()
	src := newReplicated(s)
	arms := []experiment.Arm{src.Arm(cfg, spec), src.Arm(cfg, spec)}
	if arms[0].(*replicaArm).Cold() {
		t.Error("the held stack is not free for an arm")
	}
	for _, a := range arms {
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rounds := 2*perStackCPU + 1
	var told []int // the stack each trial told the engine
	for r := 0; r < rounds; r++ {
		for _, a := range arms {
			obs, err := a.Trial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			told = append(told, obs.Stack)
		}
	}
	var seq [2][]int // each arm's stack, round by round
	for i, rec := range recs {
		seq[i%2] = append(seq[i%2], rec.Stack)
	}
	t.Logf("stacks round by round: %v", seq)
	for i, rec := range recs {
		if told[i] != rec.Stack {
			t.Errorf("trial %d ran on stack %d and told the engine %d", i+1, rec.Stack, told[i])
		}
	}
	// The arms move together, each stack serving at most perStackCPU rounds (fewer when the trials are steady
	// against what a start costs: stackRounds), and every stack but the last at least one.
	seen, moves, served := map[int]int{}, 0, 0
	for r := range seq[0] {
		moved := [2]bool{}
		for a := range seq {
			n := seq[a][r]
			moved[a] = r > 0 && n != seq[a][r-1]
			if b, ok := seen[n]; ok && b != a {
				t.Errorf("stack %d served both arms", n)
			}
			seen[n] = a
		}
		if moved[0] != moved[1] {
			t.Errorf("round %d: one arm moved and the other did not", r+1)
		}
		if moved[0] {
			moves, served = moves+1, 0
		}
		if served++; served > perStackCPU {
			t.Errorf("round %d: a stack served %d rounds, more than %d", r+1, served, perStackCPU)
		}
	}
	if moves < 2 {
		t.Errorf("%d moves in %d rounds, want 2 or more", moves, rounds)
	}
	if seq[0][0] != 1 {
		t.Errorf("the first arm began on stack %d, not the held one (1)", seq[0][0])
	}
	stopAll(arms)
	s.mu.Lock()
	if len(s.all) != 1 || !s.all[s.held] || s.warm[RunsOn(cfg, spec).Key()] != s.held {
		t.Errorf("%d stacks left after the arms stopped; want the held one alone, found by its configuration", len(s.all))
	}
	s.mu.Unlock()
	// Resumed (a second look), the arm that began on the held stack does not go back to it.
	a := arms[0].(*replicaArm)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if a.w == s.held {
		t.Error("a resumed arm went back to a stack it had run on")
	}
	a.Stop()
}
