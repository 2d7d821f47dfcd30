package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/tune"
)

// memoryUse says what the run met of its memory cgroup's limit: the OOM killer's kills (zero is the aim) and the
// most the cgroup held. Empty outside a limited cgroup that met no kill.
func memoryUse(r *tune.Result) string {
	m := r.Memory
	if m == nil || m.Limit == 0 && m.OOMKills == 0 {
		return ""
	}
	s := fmt.Sprintf("Memory: the cgroup %s", m.Cgroup)
	if m.Limit > 0 {
		s += fmt.Sprintf(" (limit %d MiB)", m.Limit>>20)
	}
	if m.PeakBytes > 0 {
		s += fmt.Sprintf(" held at most %d MiB during the run", m.PeakBytes>>20)
	}
	if m.OOMKills == 0 {
		return s + "; the OOM killer never struck."
	}
	return s + fmt.Sprintf("; the OOM killer killed %d process(es): each trial it struck in was measured again, "+
		"and a race whose trials kept meeting it ended undecided.", m.OOMKills)
}
