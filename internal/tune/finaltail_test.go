package tune

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// jitTailSim is the demo (the JIT +20% on goodput and CPU) with each goodput trial's p99 read, its log varying by
// 0.3 a trial, and the JIT's p99 tail times Debian's: the JIT's race is a CPU race, which no guard watches, so
// only the final can see what it does to the tail.
func jitTailSim(seed int64, tail float64, budget time.Duration) SimOptions {
	so := demoSim(seed, 0.04, budget)
	jit, _ := knob.ByName("jit")
	so.Tail = func(cfg knob.Config) float64 {
		if v := jit.Get(cfg); v != "off" && v != "" {
			return math.Log(tail)
		}
		return 0
	}
	return so
}

// tailShown runs so and says whether the final showed the recommendation's p99 worse than Debian's defaults',
// with the alpha it was judged at; a run that recommends no JIT, or judged no p99, fails t.
func tailShown(t *testing.T, so SimOptions) (bool, float64) {
	t.Helper()
	res, err := Simulate(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	h := res.Headline
	if h == nil || h.P99VsDebian == nil || h.P99VsDebian.N < 2 || h.RecommendationP99Us <= 0 || h.DebianP99Us <= 0 {
		t.Fatalf("recommendation %s, headline %+v: want the p99 judged against Debian's defaults", res.Recommendation, h)
	}
	return h.P99VsDebian.Verdict == stats.Worse, h.P99VsDebian.Alpha
}

// TestTheFinalShowsAWorseTail: the JIT adopted on CPU at a p99 twice Debian's is shown worse on its p99 by the
// final in at least 95% of 5-minute runs (at 3 minutes the final has too few rounds: about a third).
func TestTheFinalShowsAWorseTail(t *testing.T) {
	const runs = 200
	shown := 0
	for seed := int64(0); seed < runs; seed++ {
		if worse, _ := tailShown(t, jitTailSim(1000+seed, 2, 5*time.Minute)); worse {
			shown++
		}
	}
	t.Logf("a p99 2x Debian's shown worse in %d of %d runs", shown, runs)
	if shown < runs*95/100 {
		t.Errorf("shown worse in %d of %d runs, want at least 95%%", shown, runs)
	}
}

// TestTheFinalsTailAA: with no p99 effect planted (each trial's log p99 varying by 0.3 all the same), the final
// shows the recommendation's p99 worse in at most its share of alpha over 1,000 runs (with a margin for 1,000
// draws), and judges it at a quarter of a pair's share of the final's draw.
func TestTheFinalsTailAA(t *testing.T) {
	const runs = 1000
	falseWorse, sum := 0, 0.0
	for seed := int64(0); seed < runs; seed++ {
		worse, alpha := tailShown(t, jitTailSim(5000+seed, 1, 3*time.Minute))
		if worse {
			falseWorse++
		}
		sum += alpha
	}
	mean := sum / runs
	t.Logf("%d runs: a false worse p99 in %d; judged at alpha %.5f on average", runs, falseWorse, mean)
	if falseWorse > int(math.Ceil(2*sum))+1 {
		t.Errorf("a false worse p99 in %d of %d runs, judged at %.5f: more than its alpha allows", falseWorse, runs, mean)
	}
	if !(mean > 0 && mean < 0.05/8) {
		t.Errorf("the p99 judged at alpha %.5f on average: want a share of the final pair's", mean)
	}
}

// TestTheTailsShareOfTheFinal: a quarter of one pair's share of the final's draw, none where the recommendation is
// the starting point.
func TestTheTailsShareOfTheFinal(t *testing.T) {
	for _, c := range []struct {
		drawn float64
		arms  int
		same  bool
		want  float64
	}{{0.004, 3, false, 0.0005}, {0.004, 2, false, 0.001}, {0.004, 2, true, 0}, {0.004, 1, false, 0}} {
		if got := finalTailAlpha(c.drawn, c.arms, c.same); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("finalTailAlpha(%g, %d, %v) = %g, want %g", c.drawn, c.arms, c.same, got, c.want)
		}
	}
}
