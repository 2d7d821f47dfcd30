package measure

import (
	"strings"
	"testing"
)

func TestCPUsFrom(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want []string
	}{
		{Limits{HostCPUs: 2, CPUQuota: 1, CPUCgroup: "/app", CPUQuotaFile: "/sys/fs/cgroup/cpu/app/cpu.cfs_quota_us"},
			[]string{"the cgroup /app's CPU quota (/sys/fs/cgroup/cpu/app/cpu.cfs_quota_us)"}},
		{Limits{HostCPUs: 4, CPUQuota: 1.5, CPUCgroup: "/app", CPUQuotaFile: "/x/cpu.max"},
			[]string{"CPU quota (/x/cpu.max); sized as 2 CPUs"}},
		{Limits{HostCPUs: 8, CPUSet: 3, CPUQuota: 4}, []string{"the cgroup's cpuset (3 of the host's 8 CPUs)"}},
		{Limits{HostCPUs: 2, CPUQuota: 3}, []string{"the host's processors"}},
	} {
		got := c.l.CPUsFrom()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q, want %q in it", c.l, got, w)
			}
		}
		if strings.Contains(got, "sized as") != (c.l.CPUs() != float64(c.l.WholeCPUs())) {
			t.Errorf("%+v: %q: says it is sized otherwise only where the CPUs are not whole", c.l, got)
		}
	}
	if got := CPUCount(1.0 / 3); got != "0.33 CPUs" {
		t.Errorf("CPUCount(1/3) = %q", got)
	}
}

// A hybrid host with memory on a v1 hierarchy and cpu on the v2 one: the quota is read as v2's cpu.max, whatever
// the memory controller's version.
func TestLimitsCPUOnV2MemoryOnV1(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/meminfo":     meminfo,
		"proc/self/cgroup": "4:memory:/app\n0::/app\n",
		"proc/self/mountinfo": "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
			"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
			"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
		"sys/fs/cgroup/unified/cgroup.controllers":       "cpu\n",
		"sys/fs/cgroup/unified/app/cpu.max":              "50000 100000\n",
		"sys/fs/cgroup/memory/app/memory.limit_in_bytes": "629145600\n",
	})
	l, err := sysfs{root: root}.limits("self", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Version != 1 || l.CPUQuota != 0.5 || l.CPUCgroup != "/app" || !strings.HasSuffix(l.CPUQuotaFile, "unified/app/cpu.max") {
		t.Errorf("version %d, quota %g from %q in %q: want memory on v1 and 0.5 CPU from v2's cpu.max", l.Version, l.CPUQuota,
			l.CPUQuotaFile, l.CPUCgroup)
	}
}
