package tune

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
)

// TestSizesSecondLook: the sizes' race, left open, gets a second look once the other knobs are done; where a
// knob adopted after it (keep-alive, 25% better) changed what its sizes run, it is raced again from the best as
// it stands. Either way the row, the sizes' comparisons and the recommendation agree, and the other races'
// comparisons stay theirs.
func TestSizesSecondLook(t *testing.T) {
	looked, again := 0, 0
	for seed := int64(0); seed < 20; seed++ {
		so := demoSim(900+seed, 0.04, 3*time.Minute)
		so.PoolMargin = 0.03 // at 5% the race decides in its first rounds at this noise, and there is no look to test
		so.Knobs = []knob.Knob{knob.Opcache(), knob.PM(), knob.Listen(), knob.Keepalive(), knob.MaxRequests()}
		so.Effect = Planted(map[string]map[string]float64{"keepalive": {"on": LogEffect(0.25)}})
		res, err := Simulate(context.Background(), so)
		if err != nil {
			t.Fatal(err)
		}
		row := rowsByName(res)["max_children"]
		if secondLooked(row) {
			looked++
		}
		if strings.Contains(row.Note, "raced again") {
			again++
		}
		if got := strconv.Itoa(res.Recommendation.MaxChildren); got != row.Value {
			t.Errorf("seed %d: max_children row %s, recommendation %s", seed, row.Value, got)
		}
		for _, k := range res.Knobs {
			if k.Rounds == 0 || k.Verdict == "" {
				continue
			}
			// The row's rounds are its race's: some comparison of that knob ran as many (a size or value that
			// left early ran fewer).
			whole, accepted := false, 0
			for _, c := range res.Comparisons {
				if c.Knob == k.Name {
					whole = whole || c.Rounds == k.Rounds
					if c.Accepted {
						accepted++
					}
				}
			}
			if !whole || accepted > 1 {
				t.Errorf("seed %d: %s (%d rounds): a comparison of them all %v, %d accepted", seed, k.Name, k.Rounds, whole, accepted)
			}
		}
	}
	t.Logf("20 runs: the sizes' race had a second look in %d, raced again in %d", looked, again)
	if looked < 10 || again < 5 {
		t.Errorf("second looks at the sizes' race in %d of 20 runs, raced again in %d: want most, and some", looked, again)
	}
}
