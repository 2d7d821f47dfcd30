package arms

import (
	"bufio"
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/cpuset"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
)

// TestPinnedDuetSwapsTheArmsCPUs (real php-fpm and nginx, at least 2 CPUs): with DuetPin a duet round pins every
// process of each arm's stack (php-fpm's master and workers, nginx's) to a CPU share of its own, the shares swapped
// the next round; a worker php-fpm respawns inherits its master's share; each trial's record names its share; once
// its trial is over a stack is back on all CPUs; unpinned duet rounds leave the stacks on all CPUs; and more arms
// than CPUs are not pinned, the plan saying why.
func TestPinnedDuetSwapsTheArmsCPUs(t *testing.T) {
	all, err := cpuset.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 {
		t.Skipf("%d CPU(s): two arms cannot have one each", len(all))
	}
	o := Config{Stack: stack.Config{App: writeApp(t, map[string]string{"index.php": `<?php echo "ok\n";`})}, Timeout: 5 * time.Second,
		URLs: []load.MixItem{{URI: "/", Weight: 1}}, DuetPin: true}
	var mu sync.Mutex
	var recs []TrialRecord
	s := newStackSet(o, &Lengths{Win: 200 * time.Millisecond, Warm: 50 * time.Millisecond, CPURequests: 20},
		func(r TrialRecord) { mu.Lock(); recs = append(recs, r); mu.Unlock() }, func(w string) { t.Log(w) })
	defer s.StopAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", 2
	shares := cpuset.Shares(all, 2)
	arms := duetArms(ctx, t, newReplicated(s), cfg, "pinned", 2)
	var prev [2]string
	for r := range 3 {
		prepare(ctx, t, arms)
		for i, a := range arms {
			want := shares[cpuset.Rotated(i, r, 2)].String()
			if r > 0 && want == prev[i] {
				t.Fatalf("round %d: arm %d expected on %s again: the rotation does not swap", r+1, i, want)
			}
			prev[i] = want
			if r == 0 && i == 0 {
				respawnWorker(t, a.(*replicaArm).w.Server)
			}
			checkCPUs(t, a.(*replicaArm).w.Server, want, "round %d, arm %d", r+1, i)
		}
		recs = nil
		runTrials(ctx, t, arms)
		for _, rec := range recs {
			if !slices.ContainsFunc(shares, func(sh cpuset.Set) bool { return sh.String() == rec.CPUs }) {
				t.Errorf("round %d: a trial on stack %d recorded CPUs %q, want one arm's share", r+1, rec.Stack, rec.CPUs)
			}
		}
		if len(recs) != 2 || recs[0].CPUs == recs[1].CPUs {
			t.Errorf("round %d: records %+v, want two trials on two shares", r+1, recs)
		}
		for i, a := range arms {
			checkCPUs(t, a.(*replicaArm).w.Server, all.String(), "round %d, arm %d, after its trial", r+1, i)
		}
	}
	stopAll(arms)
	if n := s.pins["pinned"]; !strings.HasPrefix(n, "pinned: 2 arms") {
		t.Errorf("plan's note %q, want it pinned", n)
	}

	s.o.DuetPin = false
	arms = duetArms(ctx, t, newReplicated(s), cfg, "unpinned", 2)
	prepare(ctx, t, arms)
	for i, a := range arms {
		checkCPUs(t, a.(*replicaArm).w.Server, all.String(), "unpinned, arm %d", i)
	}
	stopAll(arms)

	// Spread: each arm's php-fpm workers one to each CPU in turn for the trial, its master and nginx on all.
	s.o.DuetSpread = true
	arms = duetArms(ctx, t, newReplicated(s), cfg, "spread", 2)
	prepare(ctx, t, arms)
	for i, a := range arms {
		checkSpread(t, a.(*replicaArm).w.Server, all, i)
	}
	recs = nil
	runTrials(ctx, t, arms)
	for i, a := range arms {
		checkCPUs(t, a.(*replicaArm).w.Server, all.String(), "spread, arm %d, after its trial", i)
	}
	if len(recs) != 2 || recs[0].CPUs != "spread" || recs[1].CPUs != "spread" {
		t.Errorf("spread: records %+v, want two trials recorded spread", recs)
	}
	stopAll(arms)
	s.o.DuetSpread = false

	if len(all) >= 3 {
		noneLeft(t, s)
		return
	}
	s.o.DuetPin = true
	arms = duetArms(ctx, t, newReplicated(s), cfg, "three", 3)
	prepare(ctx, t, arms)
	for i, a := range arms {
		checkCPUs(t, a.(*replicaArm).w.Server, all.String(), "three arms on %d CPUs, arm %d", len(all), i)
	}
	stopAll(arms)
	if n := s.pins["three"]; !strings.HasPrefix(n, "not pinned: 3 arms and 2 CPUs") {
		t.Errorf("plan's note %q, want it to say why three arms were not pinned", n)
	}
	noneLeft(t, s)
}

// noneLeft fails when a stack is still running once every arm stopped.
func noneLeft(t *testing.T, s *stackSet) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) != 0 {
		t.Errorf("%d stacks left running after the arms stopped, want none", len(s.all))
	}
}

// duetArms starts n duet arms of cfg, a CPU race's, in phase.
func duetArms(ctx context.Context, t *testing.T, src *Stacks, cfg knob.Config, phase string, n int) []experiment.Arm {
	t.Helper()
	spec := TrialSpec{Phase: phase, Metric: MetricCPU, Conc: 2, Duet: true}
	var arms []experiment.Arm
	for range n {
		a := src.Arm(cfg, spec)
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		arms = append(arms, a)
	}
	return arms
}

// prepare prepares a duet round's arms, in order, as the engine does.
func prepare(ctx context.Context, t *testing.T, arms []experiment.Arm) {
	t.Helper()
	for _, a := range arms {
		if err := a.(experiment.Preparer).Prepare(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// runTrials runs the arms' trials at once.
func runTrials(ctx context.Context, t *testing.T, arms []experiment.Arm) {
	var wg sync.WaitGroup
	for _, a := range arms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.Trial(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// checkCPUs fails unless every live process of st's php-fpm and nginx groups, workers included, may run on want
// alone (/proc/PID/status's Cpus_allowed_list).
// checkSpread checks that st's php-fpm workers are one to each CPU of all in turn, in pid order, and its master
// and nginx on all of them.
func checkSpread(t *testing.T, st *stack.Stack, all cpuset.Set, arm int) {
	t.Helper()
	pg := st.PID(st.PHP())
	pids, err := measure.ProcessGroup(pg)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pids)
	i := 0
	for _, pid := range pids {
		want := all.String()
		if pid != pg {
			want = cpuset.Set{all[i%len(all)]}.String()
			i++
		}
		if got, state := allowedList(t, pid); state != "" && state != "Z" && got != want {
			t.Errorf("spread, arm %d: php-fpm process %d (master %d) on CPUs %s, want %s", arm, pid, pg, got, want)
		}
	}
	if i < 2 {
		t.Errorf("spread, arm %d: %d workers, want 2", arm, i)
	}
}

func checkCPUs(t *testing.T, st *stack.Stack, want, format string, args ...any) {
	t.Helper()
	for _, name := range []string{"php-fpm", "nginx"} {
		pids, err := measure.ProcessGroup(st.PID(name))
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, pid := range pids {
			got, state := allowedList(t, pid)
			if state == "Z" || state == "" {
				continue
			}
			live++
			if got != want {
				t.Errorf(format+": %s process %d on CPUs %s, want %s", append(args, name, pid, got, want)...)
			}
		}
		if live < 2 {
			t.Errorf(format+": %s has %d live processes, want a master and workers", append(args, name, live)...)
		}
	}
}

// allowedList is pid's Cpus_allowed_list and state ("": gone).
func allowedList(t *testing.T, pid int) (cpus, state string) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch k {
		case "Cpus_allowed_list":
			cpus = strings.TrimSpace(v)
		case "State":
			state, _, _ = strings.Cut(strings.TrimSpace(v), " ")
		}
	}
	if err := sc.Err(); errors.Is(err, syscall.ESRCH) {
		return "", "" // it exited between the open and the read
	} else if err != nil {
		t.Fatal(err)
	}
	return cpus, state
}

// respawnWorker ends one of st's php-fpm workers and waits until php-fpm has forked its replacement.
func respawnWorker(t *testing.T, st *stack.Stack) {
	t.Helper()
	master := st.PID("php-fpm")
	workers := func() []int {
		pids, err := measure.ProcessGroup(master)
		if err != nil {
			t.Fatal(err)
		}
		var live []int
		for _, pid := range pids {
			if _, state := allowedList(t, pid); pid != master && state != "Z" && state != "" {
				live = append(live, pid)
			}
		}
		return live
	}
	before := workers()
	if len(before) == 0 {
		t.Fatal("php-fpm has no worker")
	}
	if err := syscall.Kill(before[0], syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		now := workers()
		if len(now) == len(before) && !slices.Contains(now, before[0]) {
			return
		}
	}
	t.Fatalf("php-fpm did not respawn worker %d within 10 s", before[0])
}
