package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/measure"
)

// cpuLines says the CPUs the run was sized for and what set them (a cgroup's quota or cpuset, or the host's), as
// the pool size's lines say its memory: nginx's workers, the rule of thumb and the CPU trials' load follow them.
// None when the result does not have the place's limits.
func cpuLines(l *measure.Limits) []string {
	if l == nil || l.HostCPUs <= 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s for the pool: %s", measure.CPUCount(l.CPUs()), l.CPUsFrom())}
}
