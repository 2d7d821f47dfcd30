package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cpuCgroup makes a v1 cpu cgroup whose CFS quota allows cpus CPUs (a period of 100 ms) and removes it when the
// test ends. It skips, saying why, where there is no v1 cpu controller or the test is not root.
func cpuCgroup(t *testing.T, cpus int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a cpu cgroup")
	}
	var base string
	for _, b := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"} {
		if _, err := os.Stat(filepath.Join(b, "cpu.cfs_quota_us")); err == nil {
			base = b
			break
		}
	}
	if base == "" {
		t.Skip("no v1 cpu controller at /sys/fs/cgroup/cpu or /sys/fs/cgroup/cpu,cpuacct")
	}
	dir := filepath.Join(base, fmt.Sprintf("phptune-test-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever is left in it (nothing, when the run cleaned up) is moved out before the cgroup goes.
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
			for _, pid := range strings.Fields(string(b)) {
				os.WriteFile(filepath.Join(base, "cgroup.procs"), []byte(pid), 0o644)
			}
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove the test's cgroup: %v", err)
		}
	})
	for name, v := range map[string]string{"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": fmt.Sprint(cpus * 100000)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return dir
}

// TestTuneInACPUCgroup: run inside a container's CPU quota of 1 CPU on a machine of more, tune says the limit and
// sizes everything that follows the CPUs from it: the rule of thumb's pool (2 a CPU), the CPU trials' load (2
// connections a CPU) and nginx's workers (one a CPU), in the stacks and in the files it writes.
func TestTuneInACPUCgroup(t *testing.T) {
	dir := cpuCgroup(t, 1)
	out := t.TempDir()
	wrap := []string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir}
	stop, most := watchNginxWorkers(dir)
	r := phptuneVia(t, wrap, "tune", "--verbose", "--budget", "1m", "--out", out)
	stop()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("\n%s", r.stdout)
	res := readTuneFile(t, filepath.Join(out, "result.json"))
	lim := res.Environment.Limits
	if lim == nil || lim.CPUQuota != 1 || lim.CPUs() != 1 {
		t.Fatalf("result.json's limits: %+v, want the cgroup's quota of 1 CPU", lim)
	}
	said := strings.Join(strings.Fields(r.stdout), " ") // lines wrap
	if !strings.Contains(said, "1 CPU for the pool: the cgroup") || !strings.Contains(said, filepath.Base(dir)) {
		t.Errorf("the output does not name the cgroup's CPU limit:\n%s", r.stdout)
	}
	if h := res.Headline; h == nil {
		t.Error("no final comparison: the rule of thumb's pool was not shown")
	} else if !strings.Contains(h.RuleOfThumb, "max_children=2 ") {
		t.Errorf("the rule of thumb %q: want a pool of 2 children for 1 CPU", h.RuleOfThumb)
	}
	// 2 connections a CPU, whatever the knee's load (TestSizedForTheCPUQuota has a knee above it).
	if c := res.Plan.CPUConcurrency; c != 2 {
		t.Errorf("the CPU trials' load: %d connections, want 2 for 1 CPU", c)
	}
	if w := res.Facts.NginxWorkers; w != 1 {
		t.Errorf("nginx's workers in the stacks: %d, want 1 for 1 CPU", w)
	}
	if n := most(); n != 1 {
		t.Errorf("the stacks' nginx ran %d workers at most, want 1 for 1 CPU", n)
	}
}

// watchNginxWorkers counts, every 100 ms until stop, the workers of each nginx master in the cgroup dir; most is
// the largest count seen (0: no nginx seen).
func watchNginxWorkers(dir string) (stop func(), most func() int) {
	done, finished := make(chan struct{}), make(chan struct{})
	n := 0
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			n = max(n, nginxWorkersIn(dir))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }, func() int { return n }
}

// nginxWorkersIn is the most workers any nginx master in cgroup dir has now.
func nginxWorkersIn(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return 0
	}
	masters := map[string]int{}
	parent := map[string]string{}
	for _, pid := range strings.Fields(string(b)) {
		cmd, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		switch {
		case strings.HasPrefix(string(cmd), "nginx: master process"):
			masters[pid] += 0
		case strings.HasPrefix(string(cmd), "nginx: worker process"):
			parent[pid] = ppidOf(pid)
		}
	}
	most := 0
	for _, pp := range parent {
		if _, ok := masters[pp]; ok {
			masters[pp]++
			most = max(most, masters[pp])
		}
	}
	return most
}

// ppidOf reads a process's parent from /proc/PID/stat ("" when it is gone).
func ppidOf(pid string) string {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return ""
	}
	return f[1]
}
