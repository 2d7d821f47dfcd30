package measure

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeTree writes files (path relative to root -> content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const meminfo = "MemTotal:       16384000 kB\nMemFree:         1000000 kB\nMemAvailable:    8192000 kB\n"

// A v2 host (files as a Debian 12 host with systemd shows them): php-fpm's service has memory.max of 600 MiB
// under a slice with memory.high of 1 GiB, a quota of 1.5 CPUs and a cpuset of 4.
func v2Host(t *testing.T) string {
	root := t.TempDir()
	svc := "sys/fs/cgroup/system.slice/php8.2-fpm.service/"
	writeTree(t, root, map[string]string{
		"proc/meminfo":     meminfo,
		"proc/self/cgroup": "0::/system.slice/php8.2-fpm.service\n",
		"proc/self/mountinfo": "22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n" +
			"26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
		"sys/fs/cgroup/cgroup.controllers":                 "cpuset cpu io memory hugetlb pids rdma misc\n",
		"sys/fs/cgroup/system.slice/memory.max":            "max\n",
		"sys/fs/cgroup/system.slice/memory.high":           "1073741824\n",
		"sys/fs/cgroup/system.slice/cpu.max":               "max 100000\n",
		svc + "memory.max":                                 "629145600\n",
		svc + "memory.high":                                "max\n",
		svc + "memory.current":                             "115343360\n",
		svc + "memory.stat":                                "anon 73400320\nfile 41943040\nactive_file 10485760\ninactive_file 31457280\n",
		svc + "memory.events":                              "low 0\nhigh 0\nmax 41\noom 3\noom_kill 3\noom_group_kill 0\n",
		svc + "cpu.max":                                    "150000 100000\n",
		svc + "cpuset.cpus.effective":                      "0-3\n",
		"sys/fs/cgroup/system.slice/cpuset.cpus.effective": "0-7\n",
	})
	return root
}

func TestLimitsV2(t *testing.T) {
	root := v2Host(t)
	l, err := sysfs{root: root}.limits("self", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Version != 2 || l.Cgroup != "/system.slice/php8.2-fpm.service" {
		t.Fatalf("version %d cgroup %q", l.Version, l.Cgroup)
	}
	if l.MemoryMax != 600<<20 || !strings.HasSuffix(l.MemoryMaxFile, "php8.2-fpm.service/memory.max") {
		t.Errorf("memory max %d from %s, want 600 MiB from the service's memory.max", l.MemoryMax, l.MemoryMaxFile)
	}
	if l.MemoryHigh != 1<<30 {
		t.Errorf("memory.high %d, want the slice's 1 GiB", l.MemoryHigh)
	}
	if want := int64(115343360 - 31457280); l.MemoryUsed != want {
		t.Errorf("used %d, want %d (current less inactive file pages)", l.MemoryUsed, want)
	}
	if l.CPUQuota != 1.5 || l.CPUSet != 4 {
		t.Errorf("quota %g cpuset %d, want 1.5 and 4", l.CPUQuota, l.CPUSet)
	}
	if got := l.CPUs(); got != math.Min(1.5, float64(l.HostCPUs)) {
		t.Errorf("CPUs %g", got)
	}
	mem, bound := l.Memory()
	// 600 MiB less 80 MiB in use less a reserve of 30 MiB (a twentieth).
	if want := int64(600<<20) - l.MemoryUsed - (600<<20)/20; mem != want {
		t.Errorf("memory %d MiB, want %d MiB", mem>>20, want>>20)
	}
	if !strings.Contains(bound, "/system.slice/php8.2-fpm.service") || !strings.Contains(bound, "600 MiB") {
		t.Errorf("bound %q does not name the cgroup and its limit", bound)
	}
	if n, ok := l.OOMKills(); !ok || n != 3 {
		t.Errorf("oom kills %d %v, want 3 from memory.events", n, ok)
	}
}

// A container's view: its own cgroup is the v2 mount's root ("0::/"), memory.max set there.
func TestLimitsV2Container(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/meminfo":                     meminfo,
		"proc/self/cgroup":                 "0::/\n",
		"proc/self/mountinfo":              "620 610 0:52 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate\n",
		"sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
		"sys/fs/cgroup/memory.max":         "268435456\n",
		"sys/fs/cgroup/memory.current":     "10485760\n",
		"sys/fs/cgroup/cpu.max":            "max 100000\n",
	})
	l, err := sysfs{root: root}.limits("self", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.MemoryMax != 256<<20 || l.CPUQuota != 0 {
		t.Fatalf("max %d quota %g", l.MemoryMax, l.CPUQuota)
	}
	if _, ok := l.OOMKills(); ok {
		t.Error("no memory.events: the count must say it is unknown")
	}
}

// A v1 host with a quota, and a named cgroup given as a hierarchy path and as a directory.
func TestLimitsV1Named(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/meminfo":     meminfo,
		"proc/self/cgroup": "4:memory:/\n3:cpu,cpuacct:/\n2:cpuset:/\n0::/\n",
		"proc/self/mountinfo": "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
			"31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n" +
			"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n" +
			"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
			"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
		"sys/fs/cgroup/unified/cgroup.controllers":           "\n",
		"sys/fs/cgroup/memory/memory.limit_in_bytes":         "9223372036854771712\n",
		"sys/fs/cgroup/memory/app/memory.limit_in_bytes":     "629145600\n",
		"sys/fs/cgroup/memory/app/memory.usage_in_bytes":     "52428800\n",
		"sys/fs/cgroup/memory/app/memory.stat":               "cache 0\ninactive_file 1048576\ntotal_inactive_file 2097152\n",
		"sys/fs/cgroup/memory/app/memory.oom_control":        "oom_kill_disable 0\nunder_oom 0\noom_kill 332\n",
		"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":         "-1\n",
		"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us":        "100000\n",
		"sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_quota_us":     "50000\n",
		"sys/fs/cgroup/cpu,cpuacct/app/cpu.cfs_period_us":    "100000\n",
		"sys/fs/cgroup/cpuset/app/cpuset.cpus":               "0,2-3\n",
		"sys/fs/cgroup/cpuset/cpuset.cpus":                   "0-3\n",
		"sys/fs/cgroup/memory/app/sub/memory.limit_in_bytes": "9223372036854771712\n",
	})
	for _, named := range []string{"/app", "/sys/fs/cgroup/memory/app", "/app/sub"} {
		l, err := sysfs{root: root}.limits("self", named)
		if err != nil {
			t.Fatalf("%s: %v", named, err)
		}
		if l.Version != 1 || l.MemoryMax != 600<<20 {
			t.Errorf("%s: version %d max %d, want v1 600 MiB (a parent's limit binds its children)", named, l.Version, l.MemoryMax)
		}
		if named == "/app/sub" {
			continue // no cpu files of its own in the capture
		}
		if l.MemoryUsed != 50<<20-2<<20 {
			t.Errorf("%s: used %d", named, l.MemoryUsed)
		}
		if l.CPUQuota != 0.5 || l.CPUSet != 3 {
			t.Errorf("%s: quota %g cpuset %d, want 0.5 and 3", named, l.CPUQuota, l.CPUSet)
		}
		if l.WholeCPUs() != 1 {
			t.Errorf("%s: whole CPUs %d", named, l.WholeCPUs())
		}
		if n, ok := l.OOMKills(); !ok || n != 332 {
			t.Errorf("%s: oom kills %d %v", named, n, ok)
		}
	}
	if _, err := (sysfs{root: root}).limits("self", "/nosuch"); err == nil || !strings.Contains(err.Error(), "/nosuch") {
		t.Errorf("a cgroup that does not exist: %v", err)
	}
}

// No limit anywhere: the host's memory bounds, with its reserve.
func TestLimitsHostOnly(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/meminfo":                            meminfo,
		"proc/self/cgroup":                        "0::/user.slice\n",
		"proc/self/mountinfo":                     "26 22 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		"sys/fs/cgroup/cgroup.controllers":        "memory cpu\n",
		"sys/fs/cgroup/user.slice/memory.max":     "max\n",
		"sys/fs/cgroup/user.slice/memory.current": "1000\n",
	})
	l, err := sysfs{root: root}.limits("self", "")
	if err != nil {
		t.Fatal(err)
	}
	mem, bound := l.Memory()
	avail := int64(8192000 << 10)
	if want := avail - max(avail/10, 512<<20); mem != want || !strings.Contains(bound, "host") {
		t.Errorf("memory %d (%s), want %d bound by the host", mem, bound, want)
	}
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0-1": 2, "0": 1, "0-3,8,10-11": 7, "": 0, "x": 0, "3-1": 0} {
		if got := countCPUList(s); got != want {
			t.Errorf("%q: %d, want %d", s, got, want)
		}
	}
}

// A real v1 memory cgroup (root on a host that mounts v1's memory controller, as the test machines do): its
// limit is read for a process put in it, and an OOM kill in it is counted.
func TestLimitsRealV1Cgroup(t *testing.T) {
	base := "/sys/fs/cgroup/memory"
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a memory cgroup")
	}
	if _, err := os.Stat(filepath.Join(base, "cgroup.procs")); err != nil {
		t.Skip("no v1 memory controller mounted at " + base + " (a v2-only host: the v2 reading is covered by TestLimitsV2)")
	}
	dir := filepath.Join(base, fmt.Sprintf("phptune-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dir)
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte("33554432"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The child sleeps in the cgroup; a second one then eats memory until the kernel kills it.
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLimitsOf(sleep.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if l.Version != 1 || l.MemoryMax != 32<<20 || l.Cgroup != "/"+filepath.Base(dir) {
		t.Fatalf("read %+v, want v1, 32 MiB, cgroup /%s", l, filepath.Base(dir))
	}
	named, err := ReadLimits(dir)
	if err != nil || named.MemoryMax != 32<<20 {
		t.Fatalf("by name: %+v %v", named, err)
	}
	before, ok := l.OOMKills()
	if !ok {
		t.Skip("this kernel keeps no oom_kill count in memory.oom_control")
	}
	eat := exec.Command("sh", "-c", fmt.Sprintf("echo $$ > %s/cgroup.procs && exec tail /dev/zero", dir))
	err = eat.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the memory eater was not killed: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, _ := l.OOMKills()
		if n > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("oom kills %d after the eater was killed (%v), want more than %d", n, err, before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
