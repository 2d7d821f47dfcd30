package measure

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/procgroup"
)

// TestHelperProcess is not a test: the group tests run this binary as workers.
//
//	burn FILE D   wait for FILE to exist, use D of CPU time, exit
//	alloc MB      allocate and touch MB MiB of private memory, then sleep until killed
func TestHelperProcess(t *testing.T) {
	if os.Getenv("MEASURE_HELPER") != "1" {
		t.Skip("helper process")
	}
	args := os.Args
	for len(args) > 0 && args[0] != "--" {
		args = args[1:]
	}
	args = args[1:]
	switch args[0] {
	case "burn":
		d, _ := time.ParseDuration(args[2])
		for {
			if _, err := os.Stat(args[1]); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		burnCPU(t, d)
	case "alloc":
		var mb int
		for _, c := range args[1] {
			mb = mb*10 + int(c-'0')
		}
		b := make([]byte, mb<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		os.WriteFile(args[2], nil, 0o644)
		time.Sleep(60 * time.Second)
		runtime.KeepAlive(b)
	}
	os.Exit(0)
}

// startGroup runs `sh -c script` as the leader of a new process group whose other members are this test binary
// in helper mode ("$0" -- args) and sleep. It waits until the group has want members past their exec, and
// arranges to end them all and check that none is left.
func startGroup(t *testing.T, script string, want map[string]int) (pgid int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", script, self)
	cmd.Env = append(os.Environ(), "MEASURE_HELPER=1")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid = cmd.Process.Pid
	t.Cleanup(func() { endGroup(t, cmd, pgid) })

	deadline := time.Now().Add(10 * time.Second)
	for {
		pids, err := ProcessGroup(pgid)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, pid := range pids {
			if st, err := ReadProc(pid); err == nil {
				got[st.Comm]++
			}
		}
		if equalCounts(got, want) {
			return pgid
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %d: members %v, want %v", pgid, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// endGroup kills the workers, lets sh reap them and exit, reaps sh, and checks that the group is empty. Killing
// the whole group at once would orphan the workers' zombies to pid 1, which may never reap them.
func endGroup(t *testing.T, cmd *exec.Cmd, pgid int) {
	pids, _ := ProcessGroup(pgid)
	for _, pid := range pids {
		if pid != pgid {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		procgroup.Kill(pgid)
		<-exited
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left, err := ProcessGroup(pgid)
		if err == nil && len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left in group %d: %v (%v)", pgid, left, err)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSamplerCountsExitedWorkers(t *testing.T) {
	dir := t.TempDir()
	trigger, allocated := filepath.Join(dir, "go"), filepath.Join(dir, "allocated")
	const burn = 400 * time.Millisecond
	script := `"$0" -test.run='^TestHelperProcess$' -- burn ` + trigger + ` ` + burn.String() + ` &
"$0" -test.run='^TestHelperProcess$' -- alloc 50 ` + allocated + ` &
sleep 60 &
wait`
	test := filepath.Base(os.Args[0])
	if len(test) > 15 {
		test = test[:15] // TASK_COMM_LEN
	}
	pgid := startGroup(t, script, map[string]int{"sh": 1, test: 2, "sleep": 1})
	pids, err := ProcessGroup(pgid)
	if err != nil || len(pids) != 4 || !slices.Contains(pids, pgid) {
		t.Fatalf("ProcessGroup(%d) = %v, %v: want the leader and 3 workers", pgid, pids, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(allocated); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the alloc helper never finished")
		}
	}
	leader0, _, err := readStat(pgid, nil)
	if err != nil {
		t.Fatal(err)
	}

	goroutines := runtime.NumGoroutine()
	s := NewSampler(map[string]int{"g": pgid}, 50*time.Millisecond)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trigger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Wait for the burner to exit and be reaped: the group shrinks to 3.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pids, _ := ProcessGroup(pgid); len(pids) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the burner never exited")
		}
	}
	time.Sleep(100 * time.Millisecond)
	sample, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", sample)

	// The burner's CPU now lives only in its reaper's cutime+cstime.
	leader1, _, err := readStat(pgid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reaped := ticksToDuration(leader1.childTicks - leader0.childTicks); reaped < burn-20*time.Millisecond {
		t.Errorf("sh's cutime+cstime grew by %v only", reaped)
	}
	if cpu := sample.CPU["g"]; cpu < burn-20*time.Millisecond || cpu > burn+300*time.Millisecond {
		t.Errorf("group CPU %v, want about %v (the exited burner's)", cpu, burn)
	}
	if sample.Elapsed < burn {
		t.Errorf("elapsed %v", sample.Elapsed)
	}

	w := sample.Workers["g"]
	if w.Count != 3 {
		t.Errorf("%d workers seen, want 3 (burn, alloc, sleep)", w.Count)
	}
	if w.PeakUSS < 45<<20 {
		t.Errorf("peak USS %d, want >= 45 MiB", w.PeakUSS)
	}
	if w.MeanUSS <= 0 || w.MeanUSS > w.PeakUSS || w.MeanPSS <= 0 || w.MeanPSS > w.PeakPSS || w.PeakPSS < w.PeakUSS {
		t.Errorf("implausible %+v", w)
	}
	if w.Shared <= 0 {
		t.Errorf("shared %d", w.Shared)
	}
	if g := sample.GroupPSS["g"]; g < w.PeakUSS {
		t.Errorf("group PSS %d below a worker's USS %d", g, w.PeakUSS)
	}
	if sample.SamplerCPU <= 0 || sample.SamplerCPU > sample.Elapsed/2 {
		t.Errorf("sampler CPU %v", sample.SamplerCPU)
	}
	if sample.Samples < 3 {
		t.Errorf("%d memory samples", sample.Samples)
	}

	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > goroutines; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("goroutines: %d after Stop, %d before Start", runtime.NumGoroutine(), goroutines)
			break
		}
	}
}

func TestSamplerLifecycle(t *testing.T) {
	if err := NewSampler(map[string]int{"none": 1 << 30}, 0).Start(context.Background()); err == nil {
		t.Error("Start on an empty group succeeded")
	}
	if _, err := NewSampler(map[string]int{"self": syscall.Getpgrp()}, 0).Stop(); err == nil {
		t.Error("Stop before Start succeeded")
	}

	goroutines := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	s := NewSampler(map[string]int{"self": syscall.Getpgrp()}, 10*time.Millisecond)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("second Start succeeded")
	}
	burnCPU(t, 100*time.Millisecond)
	cancel() // the sampling stops; Stop still reports
	sample, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if sample.CPU["self"] < 80*time.Millisecond {
		t.Errorf("CPU of our own group %v after burning 100 ms", sample.CPU["self"])
	}
	if _, err := s.Stop(); err == nil {
		t.Error("second Stop succeeded")
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("goroutines: %d after Stop, %d before Start", n, goroutines)
	}
}

func BenchmarkSampleMemory(b *testing.B) {
	s := NewSampler(map[string]int{"self": syscall.Getpgrp()}, 0)
	for i := 0; i < b.N; i++ {
		s.sampleMemory()
	}
	if s.err != nil {
		b.Fatal(s.err)
	}
}
