package tune

import (
	"testing"
	"time"
)

// The sharing rule in plain numbers: what is left once the starts and the final's least are kept goes to each
// race by what a round of it costs; a race with nothing left still gets its starts; a promising one may stretch
// down to the later races' starts and reserves.
func TestTimeShares(t *testing.T) {
	s := time.Second
	ts := timeShares{left: 100 * s, finalLeast: 20 * s, finalRound: 3 * s}
	for _, c := range []struct {
		name           string
		ts             timeShares
		this           raceShare
		later          []raceShare
		allow, stretch time.Duration
	}{
		// 100 - 2 - 20 = 78 s shared 2 : 3 (the final's round): 31.2 s, and its starts.
		{"alone with the final", ts, raceShare{round: 2 * s, starts: 2 * s}, nil, 2*s + 31200*time.Millisecond, 80 * s},
		// 100 - (2 + 4) - 20 = 74 s shared 2 : (2 + 5 + 3).
		{"with a later race", ts, raceShare{round: 2 * s, starts: 2 * s},
			[]raceShare{{round: 5 * s, starts: 4 * s, reserve: 60 * s}}, 2*s + 14800*time.Millisecond, 16 * s},
		{"nothing left", timeShares{left: 10 * s, finalLeast: 20 * s, finalRound: 3 * s}, raceShare{round: 2 * s, starts: 2 * s},
			nil, 2 * s, -10 * s},
	} {
		if got := c.ts.allowance(c.this, c.later); got != c.allow {
			t.Errorf("%s: allowance %s, want %s", c.name, got, c.allow)
		}
		if got := c.ts.stretch(c.later); got != c.stretch {
			t.Errorf("%s: stretch %s, want %s", c.name, got, c.stretch)
		}
	}
}
