package arms

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
)

// TestSettleGrowsAFreshDynamicPool: a fresh pm=dynamic arm is brought up to the workers the load keeps busy
// before anything measures it (real php-fpm; every request waits 20 ms, so 16 connections keep 16 workers busy).
func TestSettleGrowsAFreshDynamicPool(t *testing.T) {
	o := onePage(t, "<?php usleep(20000); echo \"ok\\n\";\n")
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "dynamic", 16
	l := &Lengths{Win: 300 * time.Millisecond, Warm: 100 * time.Millisecond, CPURequests: 20}
	s := newStackSet(o, l, func(TrialRecord) {}, func(string) {})
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	total := func(a *stackArm) int {
		st, err := measure.ReadFPMStatus(ctx, a.w.Pool.Network, a.w.Pool.Address, a.w.Pool.StatusPath)
		if err != nil {
			t.Fatal(err)
		}
		return st.TotalProcesses
	}
	cold := s.shared(cfg, TrialSpec{Conc: 0}).(*stackArm) // no load: no settling
	if err := cold.Start(ctx); err != nil {
		t.Fatal(err)
	}
	before := total(cold)
	cold.Stop()
	if len(s.warm) != 0 {
		t.Fatalf("the stack of an arm nobody holds is still warm")
	}
	began := time.Now()
	warm := s.shared(cfg, TrialSpec{Conc: 16}).(*stackArm)
	if err := warm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer warm.Stop()
	after := total(warm)
	t.Logf("workers: %d fresh, %d after settling for %s", before, after, time.Since(began).Round(time.Millisecond))
	// At least half: on a busy machine (CI's neighbours) the load once kept only 8 of its 16 requests in flight.
	if after < 8 || after <= before {
		t.Errorf("%d workers after settling (%d fresh): want about the 16 the load keeps busy", after, before)
	}
	if d := time.Since(began); d > MaxSettle+5*time.Second {
		t.Errorf("settling took %s, beyond its bound", d)
	}
}

// TestACPUTrialsStackIsWarmedByRequests: a CPU arm's static pool is warmed with a sixth of a CPU trial's
// requests, not a step of load (real php-fpm, its status page's count of accepted requests).
func TestACPUTrialsStackIsWarmedByRequests(t *testing.T) {
	o := onePage(t, "<?php echo \"ok\\n\";\n")
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 2
	l := &Lengths{Win: 300 * time.Millisecond, Warm: 100 * time.Millisecond, CPURequests: 600}
	s := newStackSet(o, l, func(TrialRecord) {}, func(string) {})
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := s.shared(cfg, TrialSpec{Conc: 2, Metric: MetricCPU}).(*stackArm)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	st, err := measure.ReadFPMStatus(ctx, a.w.Pool.Network, a.w.Pool.Address, a.w.Pool.StatusPath)
	if err != nil {
		t.Fatal(err)
	}
	// The warm-up's 100, the check's few requests and the status pages read until the workers were up (more on
	// a busy machine: 113 beside a busy loop); a step of 0.4 s of load sent 1,434 here.
	want := int64(l.CPURequests / cpuWarmShare)
	if st.AcceptedConn < want || st.AcceptedConn > 2*want {
		t.Errorf("the pool accepted %d requests: want the warm-up's %d and the check's few", st.AcceptedConn, want)
	}
}

// TestAStartIsCheckedBeforeItsURLs: a configuration whose Check fails is started again, and a start that fails
// it sends the app nothing (real php-fpm; the app counts its requests in a file).
func TestAStartIsCheckedBeforeItsURLs(t *testing.T) {
	// In /tmp itself: the workers' user cannot enter the test's own directories.
	f, err := os.CreateTemp("", "phptune-hits-")
	if err != nil {
		t.Fatal(err)
	}
	hits := f.Name()
	f.Close()
	t.Cleanup(func() { os.Remove(hits) })
	if err := os.Chmod(hits, 0o602); err != nil { // the workers' user appends; nobody else reads it
		t.Fatal(err)
	}
	o := onePage(t, "<?php file_put_contents('"+hits+"', \"x\\n\", FILE_APPEND); echo \"ok\\n\";\n")
	s := newStackSet(o, &Lengths{Win: 300 * time.Millisecond, CPURequests: 20}, func(TrialRecord) {}, func(string) {})
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	count := func() int {
		b, err := os.ReadFile(hits)
		if err != nil {
			t.Fatal(err)
		}
		return len(b) / 2
	}
	// started starts an arm of a static pool of children workers, with the requests the app saw meanwhile.
	started := func(children int, spec TrialSpec) (*stackArm, int, error) {
		before := count()
		cfg := knob.Debian()
		cfg.PM, cfg.MaxChildren = "static", children
		a := s.shared(cfg, spec).(*stackArm)
		err := a.Start(ctx)
		return a, count() - before, err
	}
	var once int
	for _, children := range []int{2, 3} { // the run's first check sends memory probes of its own: the second counts
		a, n, err := started(children, TrialSpec{})
		if err != nil {
			t.Fatal(err)
		}
		a.Stop()
		once = n
	}
	if once == 0 {
		t.Fatal("a plain start sent the app no request: the test counts nothing")
	}
	tries := 0
	flaky := func(int) (string, error) {
		if tries++; tries < 3 {
			return "", errors.New("not yet")
		}
		return "in effect", nil
	}
	a, n, err := started(4, TrialSpec{Check: flaky})
	if err != nil {
		t.Fatal(err)
	}
	if a.w.note != "in effect; php-fpm start 3" {
		t.Errorf("a check passing on the third start: the stack's note is %q", a.w.note)
	}
	a.Stop()
	if n != once {
		t.Errorf("a start checked three times sent the app %d requests, where a plain one sent %d", n, once)
	}
	never := func(int) (string, error) { return "", errors.New("never") }
	_, n, err = started(5, TrialSpec{Check: never})
	if !errors.Is(err, ErrNotInEffect) || !strings.Contains(fmt.Sprint(err), "never in 6 starts") || n != 0 {
		t.Errorf("a check that never passes: %v, and the app saw %d requests", err, n)
	}
}

// TestADuetArmFillsUntilCancelled: a duet arm's Fill loads its stack until its context ends, and returns then
// (real php-fpm; the pool's accepted count).
func TestADuetArmFillsUntilCancelled(t *testing.T) {
	o := onePage(t, "<?php usleep(2000); echo \"ok\\n\";\n")
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 2
	r := New(o, &Lengths{Win: 300 * time.Millisecond, CPURequests: 20}, func(TrialRecord) {}, func(string) {})
	defer r.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := r.Arm(cfg, TrialSpec{Phase: "fill", Metric: MetricCPU, Conc: 2, Duet: true})
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	w := a.(*replicaArm).w
	accepted := func() int64 {
		st, err := measure.ReadFPMStatus(ctx, w.Pool.Network, w.Pool.Address, w.Pool.StatusPath)
		if err != nil {
			t.Fatal(err)
		}
		return st.AcceptedConn
	}
	before := accepted()
	fill, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	began := time.Now()
	a.(experiment.Filler).Fill(fill)
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("Fill returned %s after its context began, %s after it ended", d, d-300*time.Millisecond)
	}
	if n := accepted() - before; n < 10 {
		t.Errorf("the pool accepted %d requests while the arm filled for 0.3 s", n)
	}
}

// onePage is arms' Config for an app of one page, index.php of php, served from a fresh docroot.
func onePage(t *testing.T, php string) Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(php), 0o644); err != nil {
		t.Fatal(err)
	}
	return Config{Stack: stack.Config{App: dir}, Timeout: 10 * time.Second, URLs: []load.MixItem{{URI: "/", Weight: 1}}}
}
