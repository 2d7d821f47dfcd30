package arms

import (
	"fmt"

	"github.com/phptune/phptune/internal/measure"
)

// oomWatch counts the kernel's OOM kills in the memory cgroup this process (and so every stack it starts) runs
// in; nil when there is none to read.
type oomWatch struct {
	cgroup string
	limit  int64
	kills  func() (int64, bool) // measure.Limits.OOMKills, or a test's
	peakOf func() (int64, bool) // measure.Limits.MemoryPeak
}

func newOOMWatch() *oomWatch {
	lim, err := measure.ReadLimits("")
	if err != nil {
		return nil
	}
	if _, ok := lim.OOMKills(); !ok {
		return nil
	}
	return &oomWatch{cgroup: lim.Cgroup, limit: lim.MemoryMax, kills: lim.OOMKills, peakOf: lim.MemoryPeak}
}

// count is the kills so far (0 when unknown).
func (w *oomWatch) count() int64 {
	if w == nil {
		return 0
	}
	n, _ := w.kills()
	return n
}

// check says, as an error, that the OOM killer struck since before: the trial measured its kills, not the
// configuration.
func (w *oomWatch) check(before int64) error {
	if w == nil {
		return nil
	}
	if n := w.count() - before; n > 0 {
		limit := "no limit of its own: the host ran out of memory"
		if w.limit > 0 {
			limit = fmt.Sprintf("limit %d MiB", w.limit>>20)
		}
		return fmt.Errorf("%w: the kernel's OOM killer killed %d process(es) in cgroup %s (%s) during the trial; "+
			"give a smaller --memory or run where the pool fits", ErrOOM, n, w.cgroup, limit)
	}
	return nil
}

// peak is the most the stacks' memory cgroup has held so far (0 when unknown).
func (w *oomWatch) peak() int64 {
	if w == nil || w.peakOf == nil {
		return 0
	}
	n, _ := w.peakOf()
	return n
}

// MemoryUse is what the run's stacks met of their memory cgroup: the OOM killer's kills during the run (each
// trial they struck in was measured again, or ended its race) and the most the cgroup held.
type MemoryUse struct {
	Cgroup    string `json:"cgroup"`
	Limit     int64  `json:"limit_bytes,omitempty"`
	OOMKills  int64  `json:"oom_kills"`
	PeakBytes int64  `json:"peak_bytes,omitempty"`
}

// use is what the run met, read at its end (nil without a cgroup to read). Kills before the run began are not
// its own.
func (w *oomWatch) use(before int64) *MemoryUse {
	if w == nil {
		return nil
	}
	return &MemoryUse{Cgroup: w.cgroup, Limit: w.limit, OOMKills: w.count() - before, PeakBytes: w.peak()}
}
