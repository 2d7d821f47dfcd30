package arms

import (
	"context"
	"maps"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
)

// What tune's phases other than the races take of the stacks: an arm on a configuration's warm stack (the check,
// the sweep, the p99 goal's), a stack held for a phase's own load (the soak), the memory limit's gate, and what
// the run met.

// Shared is an arm that runs cfg's trials on its warm stack, or its twin's (RunsOn), shared with whoever uses it:
// it never moves.
func (r *Stacks) Shared(cfg knob.Config, spec TrialSpec) experiment.Arm { return r.shared(cfg, spec) }

// Warm says whether a stack of cfg is running for an arm to take without a start.
func (s *stackSet) Warm(cfg knob.Config) bool { return s.WarmOf(cfg) != nil }

// Acquire gives a reference to cfg's warm stack, starting it first when there is none; Release lets go of it.
func (s *stackSet) Acquire(ctx context.Context, cfg knob.Config, spec TrialSpec) (*Stack, error) {
	return s.acquire(ctx, cfg, spec, share)
}

// Release lets go of a reference Acquire gave; the last one stops the stack.
func (s *stackSet) Release(w *Stack) { s.release(w, share) }

// Limit gates the stacks' starts within size bytes of memory, each weighing need(cfg) (startGate).
func (s *stackSet) Limit(size int64, need func(knob.Config) int64) { s.gate.limit(size, need) }

// Fit says whether the stacks of cfgs fit the memory limit loaded all at once (a duet round): always before Limit.
func (s *stackSet) Fit(cfgs []knob.Config) bool { return s.gate.holds(cfgs, 1) }

// URLs are the mix as checked: the login's, less the optional URLs that failed on the first stack. Only that
// first check, which runs alone, writes them; every trial after reads them.
func (s *stackSet) URLs() []load.MixItem { return s.o.URLs }

// Starts are what the stacks' starts took so far: how many, all their time, and the part settling took.
type Starts struct {
	N             int
	Wall, Settled time.Duration
}

// Starts is what the stacks' starts took so far.
func (s *stackSet) Starts() Starts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Starts{N: s.starts, Wall: s.startWall, Settled: s.settleWall}
}

// Pins says, by phase, how each duet experiment's arms were pinned to CPUs.
func (s *stackSet) Pins() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.pins)
}

// MemoryUse is what the stacks met of their memory cgroup so far (nil without one to read).
func (s *stackSet) MemoryUse() *MemoryUse { return s.oom.use(s.kills0) }
