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

// A page that computes sends trialSeconds of its rate; one that waits, as many requests as make the CPU work of
// one that computes: the demo's /remote, 0.57 ms of CPU a request at 1,400 a second, about 1,400 where its rate
// alone would send 560.
func TestTrialRequests(t *testing.T) {
	cases := []struct {
		least       int
		rate, cpu   float64
		conc0, want int
	}{
		{2, 360, 2.0 / 360, 2, 144},
		{8, 1400, 0.1 * 8 / 1400, 2, 1400},
		{8, 1400, 0, 2, 560},
		{500, 100, 0.02, 2, 500},
		{2, 1e6, 1e-7, 2, maxTrialRequests},
	}
	for _, c := range cases {
		if got := trialRequests(c.least, c.rate, c.cpu, c.conc0); got != c.want {
			t.Errorf("trialRequests(%d, %g, %g, %d) = %d, want %d", c.least, c.rate, c.cpu, c.conc0, got, c.want)
		}
	}
}
