package gate

import "testing"

// A page that computes keeps the connections it was timed with; one that waits gets as many as keep its workers
// on the CPU about half the time, at most four times as many.
func TestConnectionsFor(t *testing.T) {
	for _, c := range []struct {
		conc int
		busy float64
		want int
	}{
		{2, 0.9, 2},  // computes
		{2, 0.5, 2},  // at the aim
		{2, 0.25, 4}, // waits three quarters of the time
		{2, 0.2, 5},
		{2, 0.08, 8}, // the demo's /remote: capped
		{2, 0, 8},    // no CPU read at all
		{4, 0.3, 7},
	} {
		if got := connectionsFor(c.conc, c.busy); got != c.want {
			t.Errorf("connectionsFor(%d, %v) = %d, want %d", c.conc, c.busy, got, c.want)
		}
	}
}
