package arms

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/phptune/phptune/internal/knob"
)

// startGate keeps stacks from starting side by side when their starts together would not fit the memory the
// pool may use: a start's check and settling load every worker at once, so races, moves and the final, which
// start their arms' stacks side by side, could draw the OOM killer in a container where each stack alone fits
// (sizes 1, 2, 4 and 8 of a 42 MiB page did, in 600 MiB: TestTuneInAMemoryCgroup). A start holds its weight,
// the pool's shared memory plus its children at their peak, until it has settled; one that alone exceeds the
// limit starts alone.
type startGate struct {
	mu   sync.Mutex
	sem  *semaphore.Weighted
	size int64
	need func(knob.Config) int64 // a start's weight (0: unknown, not gated)
}

// limit gates starts within size bytes, each weighing need(cfg). Before it is called nothing is gated: the
// sweep's stacks start one at a time, and what a worker takes is not known until the sweep has run.
func (g *startGate) limit(size int64, need func(knob.Config) int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if size <= 0 {
		return
	}
	g.sem, g.size, g.need = semaphore.NewWeighted(size), size, need
}

// enter waits until cfg's start fits beside those in progress, and returns what leaves it (nil and ctx's
// error when cancelled first).
func (g *startGate) enter(ctx context.Context, cfg knob.Config) (func(), error) {
	g.mu.Lock()
	sem, size, need := g.sem, g.size, g.need
	g.mu.Unlock()
	if sem == nil {
		return func() {}, nil
	}
	n := min(max(need(cfg), 0), size) // a start larger than the limit waits for all others, then runs alone
	if n == 0 {
		return func() {}, nil
	}
	if err := sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { sem.Release(n) }, nil
}

// holds says whether copies of the stacks of cfgs fit the limit all loaded at once: always when starts are not
// gated. A duet round loads its arms' stacks together (1 copy), and starts the next round's beside them (2).
func (g *startGate) holds(cfgs []knob.Config, copies int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sem == nil {
		return true
	}
	var n int64
	for _, c := range cfgs {
		n += int64(copies) * max(g.need(c), 0)
	}
	return n <= g.size
}
