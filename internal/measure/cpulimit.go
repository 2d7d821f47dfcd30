package measure

import (
	"fmt"
	"math"
	"strconv"
)

// CPUsFrom says what sets CPUs, as the memory's line says what sets Memory: a cgroup's CPU quota (and its file),
// its cpuset, or the host's processors. A quota that is not whole CPUs says how many CPUs it is sized as.
func (l Limits) CPUsFrom() string {
	n := l.CPUs()
	var from string
	switch {
	case l.CPUQuota > 0 && l.CPUQuota == n:
		from = fmt.Sprintf("the cgroup %s's CPU quota (%s)", l.CPUCgroup, l.CPUQuotaFile)
	case l.CPUSet > 0 && float64(l.CPUSet) == n && l.CPUSet < l.HostCPUs:
		from = fmt.Sprintf("the cgroup's cpuset (%d of the host's %d CPUs)", l.CPUSet, l.HostCPUs)
	default:
		from = "the host's processors"
	}
	if w := l.WholeCPUs(); float64(w) != n {
		from += fmt.Sprintf("; sized as %s (nginx's workers, the rule of thumb, the CPU trials' load)", CPUCount(float64(w)))
	}
	return from
}

// CPUCount writes a number of CPUs as a person says it, to two decimals: "1 CPU", "1.5 CPUs", "4 CPUs".
func CPUCount(n float64) string {
	s := strconv.FormatFloat(math.Round(n*100)/100, 'f', -1, 64)
	if n == 1 {
		return s + " CPU"
	}
	return s + " CPUs"
}
