package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/tune"
)

// memoryModel is what the run met of its memory cgroup's limit, in the figures every renderer prints: the most
// the cgroup held and the OOM killer's kills (zero is the aim). Whole MiB, as the sentence says them, so that
// result.json's answer holds the figures the terminal and report.html print.
type memoryModel struct {
	Cgroup   string `json:"cgroup"`
	LimitMiB int64  `json:"limit_mib,omitempty"`
	PeakMiB  int64  `json:"peak_mib,omitempty"`
	OOMKills int64  `json:"oom_kills"`
}

// memoryOf is the model of m; nil outside a limited cgroup that met no kill, where there is nothing to say.
func memoryOf(m *tune.MemoryUse) *memoryModel {
	if m == nil || m.Limit == 0 && m.OOMKills == 0 {
		return nil
	}
	return &memoryModel{Cgroup: m.Cgroup, LimitMiB: m.Limit >> 20, PeakMiB: m.PeakBytes >> 20, OOMKills: m.OOMKills}
}

// memoryUse is the answer's memory sentence for the terminal ("" when it has none).
func memoryUse(a *Answer) string {
	if a.Memory == nil {
		return ""
	}
	return "Memory: " + a.Memory.text()
}

// text says what the run met of the limit, without a heading: the cgroup, its limit, the most it held, the kills.
func (m *memoryModel) text() string {
	s := "the cgroup " + m.Cgroup
	if m.LimitMiB > 0 {
		s += fmt.Sprintf(" (limit %d MiB)", m.LimitMiB)
	}
	if m.PeakMiB > 0 {
		s += fmt.Sprintf(" held at most %d MiB during the run", m.PeakMiB)
	}
	if m.OOMKills == 0 {
		return s + "; the OOM killer never struck."
	}
	return s + fmt.Sprintf("; the OOM killer killed %d process(es): each trial it struck in was measured again, "+
		"and a race whose trials kept meeting it ended undecided.", m.OOMKills)
}

// memoryText is m's text for report.html's environment ("" without one: the row is left out).
func memoryText(m *memoryModel) string {
	if m == nil {
		return ""
	}
	return m.text()
}
