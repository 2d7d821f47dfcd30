package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/measure"
)

// The text answer says the CPUs the run was sized for beside the memory: a cgroup's quota by its cgroup and file.
func TestTuneSaysTheCPULimit(t *testing.T) {
	r := recordedTune(t)
	r.Environment.Limits = &measure.Limits{HostCPUs: 2, CPUQuota: 1, CPUCgroup: "/box",
		CPUQuotaFile: "/sys/fs/cgroup/cpu/box/cpu.cfs_quota_us"}
	var b bytes.Buffer
	Tune(&b, r)
	said := strings.Join(strings.Fields(b.String()), " ")
	if !strings.Contains(said, "1 CPU for the pool: the cgroup /box's CPU quota (/sys/fs/cgroup/cpu/box/cpu.cfs_quota_us)") {
		t.Errorf("the answer does not say the CPU limit:\n%s", b.String())
	}
	r.Environment.Limits = nil
	b.Reset()
	Tune(&b, r)
	if strings.Contains(b.String(), "CPU for the pool") || strings.Contains(b.String(), "CPUs for the pool") {
		t.Errorf("a result without limits says CPUs all the same:\n%s", b.String())
	}
}
