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

// TestASplitRoundsDuetRunsOnItsTurnsStack (real php-fpm and nginx): in split rounds of two goodput arms each arm's
// duet trial runs on the stack its trial in turn just ran on, serves the split round's requests, and is recorded as
// a duet trial; every trial reads capacity, which the round's figure is made of; and a stack's rounds count the
// trials in turn alone.
func TestASplitRoundsDuetRunsOnItsTurnsStack(t *testing.T) {
	o := Config{Stack: stack.Config{App: writeApp(t, map[string]string{"index.php": `<?php echo "ok\n";`})}, Timeout: 5 * time.Second,
		URLs: []load.MixItem{{URI: "/", Weight: 1}}}
	var mu sync.Mutex
	var recs []TrialRecord
	s := newStackSet(o, &Lengths{Win: 200 * time.Millisecond, Warm: 50 * time.Millisecond, SplitRequests: 20},
		func(r TrialRecord) { mu.Lock(); recs = append(recs, r); mu.Unlock() }, func(w string) { t.Log(w) })
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 2
	other := cfg.Clone()
	other.Listen = "tcp"
	spec := TrialSpec{Phase: "knob listen", Metric: MetricGoodput, Conc: 2, Split: true}
	src := newReplicated(s)
	arms := []experiment.Arm{src.Arm(cfg, spec), src.Arm(other, spec)}
	defer stopAll(arms)
	const rounds = 3
	out, err := experiment.Run(ctx, experiment.Spec{Name: "listen", Arms: arms, Mode: experiment.Versus, HigherIsBetter: true,
		MinEffect: 0.03, Alpha: 0.01, Split: true, MaxRounds: rounds})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rounds != rounds {
		t.Fatalf("%d rounds, want %d", out.Rounds, rounds)
	}
	for _, a := range out.Arms {
		for _, o := range a.Trials {
			if !(o.Capacity > 0 && o.Value > 0) {
				t.Errorf("%s: a round's figures %+v, want its goodput and capacity", a.Name, o)
			}
		}
	}
	if len(recs) != 2*2*rounds {
		t.Fatalf("%d trials recorded, want %d", len(recs), 2*2*rounds)
	}
	// Each round records the two trials in turn, then the two duet trials, each on its arm's stack of the round.
	for r := range rounds {
		round := recs[4*r : 4*r+4]
		turn := map[string]int{}
		for _, rec := range round[:2] {
			if rec.Duet {
				t.Errorf("round %d: a trial in turn recorded as a duet trial", r+1)
			}
			turn[rec.Config] = rec.Stack
		}
		for _, rec := range round[2:] {
			if !rec.Duet || rec.Stack != turn[rec.Config] || rec.ReqPerCPUS <= 0 || rec.Requests != 20 {
				t.Errorf("round %d: duet trial of %s on stack %d (duet %v, capacity %.0f, %d requests), want a duet "+
					"trial of 20 on %d", r+1, rec.Config, rec.Stack, rec.Duet, rec.ReqPerCPUS, rec.Requests, turn[rec.Config])
			}
		}
	}
	for _, a := range arms {
		ra := a.(*replicaArm)
		ra.g.mu.Lock()
		n := ra.n
		ra.g.mu.Unlock()
		if n != rounds { // perStackGoodput rounds a stack at the most: no move in these
			t.Errorf("%s: its stack counted %d trials, want the %d in turn", a.Name(), n, rounds)
		}
	}
}
