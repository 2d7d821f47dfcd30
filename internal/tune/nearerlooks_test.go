package tune

import (
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
)

// TestARaceAtItsTurnYieldsToTheLooks: a 3-minute demo whose CPU races run duets of 2.6 s rounds varying by 2%
// often leaves validate_timestamps or huge_code_pages (no effect planted) some rounds from a decision, and its
// goodput races, taken to make +-25%, then run at their turns on the time the others leave. Where the looks at
// the open races fit beside the final, such a race does not run; its row names the looks; the time goes to them.
func TestARaceAtItsTurnYieldsToTheLooks(t *testing.T) {
	const runs = 100
	const words = "kept for the final comparison and second looks at "
	yielded, looked := 0, 0
	for seed := int64(0); seed < runs; seed++ {
		so := demoSim(4000+seed, 0.10, 3*time.Minute)
		so.Plausible = 0.25
		so.Duet = true
		so.TrialCost[MetricCPU] = 1300 * time.Millisecond
		so.Noise[NoiseKey(MetricCPU, "", true)] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+5)), 0.02),
			rand.New(rand.NewSource(seed+6)))
		_, rows := simulated(t, so)
		for _, r := range rows {
			_, named, ok := strings.Cut(r.Note, words)
			if !ok {
				continue
			}
			yielded++
			if r.Rounds != 0 || !strings.HasPrefix(r.Note, "not raced: ") {
				t.Errorf("seed %d, %s: %d rounds, %q; want it not raced", seed, r.Name, r.Rounds, r.Note)
			}
			named, _, _ = strings.Cut(named, ":")
			if slices.ContainsFunc(strings.Split(named, ", "), func(n string) bool { return secondLooked(rows[n]) }) {
				looked++
			}
		}
	}
	t.Logf("%d runs: a race yielded to the looks %d times, and a look it named was taken in %d", runs, yielded, looked)
	if yielded < runs/10 || looked < yielded*3/4 {
		t.Errorf("want races yielding to nearer looks in a tenth of the runs, and the looks they name taken in 3 of 4")
	}
}
