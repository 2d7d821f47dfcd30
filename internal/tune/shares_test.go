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

// The final's least: a sixth of the budget in rounds of three goodput trials, at least minRounds, at most ten or
// four a minute of the budget, whichever is more; and its starts.
func TestFinalLeast(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		budget, round, starts, want time.Duration
	}{
		{3 * time.Minute, 3 * s, 5 * s, 5*s + 10*3*s},                   // 30 s / 3 s = 10 rounds, within 12 (4 a minute)
		{10 * time.Minute, 3 * s, 5 * s, 5*s + 33*3*s},                  // 100 s / 3 s = 33, within 40
		{10 * time.Minute, 33 * s, 5 * s, 5*s + 4*33*s},                 // 100 s / 33 s = 3: minRounds
		{60 * time.Minute, 1 * s, 0, 240 * s},                           // 600 rounds: at most 240
		{time.Minute, 30 * time.Millisecond, 0, 300 * time.Millisecond}, // 333 rounds: at most 10
	} {
		if got := finalLeastOf(c.budget, c.round, c.starts); got != c.want {
			t.Errorf("budget %s, rounds of %s, starts %s: %s, want %s", c.budget, c.round, c.starts, got, c.want)
		}
	}
}
