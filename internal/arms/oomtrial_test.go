package arms

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// TestAnOOMKillIsAFaultOfTheTrial (real php-fpm and nginx, the kernel's counter faked): a trial during which the
// OOM killer struck is recorded as a fault and measured again, and the trial succeeds; a trial that meets it every
// try fails with ErrOOM, which ends a race and not the run.
func TestAnOOMKillIsAFaultOfTheTrial(t *testing.T) {
	o := Config{Stack: stack.Config{App: writeApp(t, map[string]string{"index.php": `<?php echo "ok\n";`})}, Timeout: 5 * time.Second,
		URLs: []load.MixItem{{URI: "/", Weight: 1}}}
	var recs []TrialRecord
	var warns []string
	s := newStackSet(o, &Lengths{Win: 200 * time.Millisecond, Warm: 50 * time.Millisecond, CPURequests: 20}, func(r TrialRecord) { recs = append(recs, r) },
		func(w string) { warns = append(warns, w) })
	defer s.StopAll()
	// The kernel's count as a trial reads it: at its start, for the record's fault, and at its end.
	seq, calls := []int64{0}, 0
	s.oom = &oomWatch{cgroup: "/test", limit: 600 << 20, kills: func() (int64, bool) {
		calls++
		return seq[min(calls-1, len(seq)-1)], true
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 1
	w, err := s.acquire(ctx, cfg, TrialSpec{Conc: 1}, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer s.release(w, fresh)
	spec := TrialSpec{Phase: "oom", Metric: MetricCPU, Conc: 1}
	seq, calls = []int64{0, 1, 1, 1}, 0 // a kill during the first try
	obs, err := s.trial(ctx, spec, w)
	if err != nil || obs.Value <= 0 {
		t.Fatalf("a trial the OOM killer struck once: %v, value %v; want it measured again", err, obs.Value)
	}
	if len(recs) != 2 || recs[0].Fault == "" || recs[1].Fault != "" {
		t.Errorf("records %+v: want two, the first marked as a fault, the second not", recs)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "measured again") {
		t.Errorf("warnings %q: want one saying the trial is measured again", warns)
	}
	seq, calls = []int64{1, 2, 2, 2, 3, 3, 3, 4, 4}, 0 // a kill during every try
	if _, err := s.trial(ctx, spec, w); !errors.Is(err, ErrOOM) {
		t.Errorf("a trial the OOM killer struck in every try: %v, want ErrOOM", err)
	}
	if m := s.oom.use(0); m.OOMKills != int64(1+oomTries) {
		t.Errorf("the run's kills: %d, want %d", m.OOMKills, 1+oomTries)
	}
}
