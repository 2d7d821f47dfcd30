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

// The final's share in plain numbers: its need where the time holds it beside the looks claimed, never below its
// least; the claim adds the looks only where they fit beside the keep.
func TestFinalShare(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name        string
		fs          finalShare
		keep, claim time.Duration
	}{
		{"its need, no look", finalShare{left: 200 * s, least: 30 * s, need: 100 * s}, 100 * s, 100 * s},
		{"its least over a smaller need", finalShare{left: 200 * s, least: 30 * s, need: 10 * s}, 30 * s, 30 * s},
		{"the need and a look both fit", finalShare{left: 200 * s, least: 30 * s, need: 100 * s, looks: 60 * s}, 100 * s, 160 * s},
		{"the need yields to the look", finalShare{left: 140 * s, least: 30 * s, need: 100 * s, looks: 60 * s}, 80 * s, 140 * s},
		{"down to its least", finalShare{left: 80 * s, least: 30 * s, need: 100 * s, looks: 60 * s}, 30 * s, 30 * s},
		{"a look that cannot fit is no claim", finalShare{left: 50 * s, least: 30 * s, need: 100 * s, looks: 60 * s}, 30 * s, 30 * s},
	} {
		if got := c.fs.keep(); got != c.keep {
			t.Errorf("%s: keep %s, want %s", c.name, got, c.keep)
		}
		if got := c.fs.claim(); got != c.claim {
			t.Errorf("%s: claim %s, want %s", c.name, got, c.claim)
		}
	}
	// The sizes' first look: at most half of what the final's least leaves, and a sixth of the budget; a look
	// again, what the final's least leaves.
	for _, c := range []struct {
		cost, left  time.Duration
		again, fits bool
	}{{40 * s, 200 * s, false, true}, {91 * s, 200 * s, false, false}, {100 * s, 300 * s, false, true},
		{101 * s, 300 * s, false, false}, {180 * s, 200 * s, true, true}, {181 * s, 200 * s, true, false}} {
		if got := sizesLookFits(c.cost, c.left, 20*s, 10*time.Minute, c.again); got != c.fits {
			t.Errorf("a sizes' look (again: %v) of %s with %s left (the final's least 20s, a 10m budget): fits %v, want %v",
				c.again, c.cost, c.left, got, c.fits)
		}
	}
}
