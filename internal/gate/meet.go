package gate

import (
	"context"
	"sync"
)

// meeting is where a comparison's two trials of a round meet between their CPU trials and their latency trials.
// The CPU trials of a duet round end apart (the same requests, at each version's speed); the latency trials must
// start together, so that each runs beside the other's latency trial and never beside its CPU trial, whose load
// would read as the version's latency. Each round's two trials meet once.
type meeting struct {
	mu  sync.Mutex
	cur *gathering // the round's, until both have come
}

// gathering is one round's meeting: the CPU trials' rates (requests a second), complete when done is closed.
type gathering struct {
	done  chan struct{}
	rates [2]float64
	n     int
}

// meet brings version v's trial to the round's meeting with its CPU trial's rate (0: it failed) and returns both
// versions' rates once the other has come too; the context's error when it ends first. Both trials of a round
// always come: a trial comes whatever its CPU trial did.
func (m *meeting) meet(ctx context.Context, v int, rate float64) ([2]float64, error) {
	m.mu.Lock()
	if m.cur == nil {
		m.cur = &gathering{done: make(chan struct{})}
	}
	g := m.cur
	g.rates[v] = rate
	g.n++
	if g.n == 2 {
		m.cur = nil
		close(g.done)
		m.mu.Unlock()
		return g.rates, nil
	}
	m.mu.Unlock()
	select {
	case <-g.done:
		return g.rates, nil
	case <-ctx.Done():
		return [2]float64{}, ctx.Err()
	}
}
