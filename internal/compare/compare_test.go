package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
)

// fakeResult builds a result with n trials whose throughput is rps times lognormal noise and whose
// latency is its inverse, as in a closed loop.
func fakeResult(rng *rand.Rand, n int, rps, noise float64, interleave string) *load.Result {
	r := &load.Result{Target: "t", Interleave: interleave}
	for i := 0; i < n; i++ {
		x := rps * math.Exp(noise*rng.NormFloat64())
		lat := 1e6 / x
		r.Trials = append(r.Trials, load.Trial{Index: i + 1, RPS: x, Latency: load.Latency{P50: lat, P90: lat * 1.5, P99: lat * 3}})
		r.Requests += int64(x)
	}
	r.RPS, r.Latency = rps, load.Latency{P50: 1e6 / rps, P90: 1.5e6 / rps, P99: 3e6 / rps}
	return r
}

func TestVerdictsFromTrials(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := fakeResult(rng, 10, 1000, 0.01, "run1")
	b := fakeResult(rng, 10, 800, 0.01, "run1") // 20% slower
	rep, err := Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Paired {
		t.Error("results of one interleaved run must pair")
	}
	rows := rep.Arms[1].Rows
	if rows[0].Metric != "rps" || rows[0].Verdict != stats.Worse || rows[1].Verdict != stats.Worse {
		t.Errorf("rps %s, p50 %s: want worse and worse", rows[0].Verdict, rows[1].Verdict)
	}
	if s := rows[0].Stats; s.Lo > -0.2 || s.Hi < -0.2 {
		t.Errorf("rps CI [%.3f, %.3f] does not cover -20%%", s.Lo, s.Hi)
	}
	if s := rows[1].Stats; s.Lo > 0.25 || s.Hi < 0.25 {
		t.Errorf("p50 CI [%.3f, %.3f] does not cover +25%%", s.Lo, s.Hi)
	}
	if !rep.Worse() {
		t.Error("Worse() false")
	}
	// Not interleaved: independent samples, said so.
	b.Interleave = "run2"
	rep, _ = Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
	if rep.Paired || !strings.Contains(strings.Join(rep.Notes, " "), "independent") {
		t.Errorf("paired %v notes %v", rep.Paired, rep.Notes)
	}
}

func TestTooFewTrialsSaySo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Paired: a halving is decided in 6 rounds; a 2% change is not, and the row says what would decide it.
	a, b := fakeResult(rng, 6, 1000, 0.01, "x"), fakeResult(rng, 6, 500, 0.01, "x")
	rep, _ := Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
	if r := rep.Arms[1].Rows[0]; r.Verdict != stats.Worse || r.Stats.Method != "confidence-sequence" {
		t.Errorf("a halving in 6 paired rounds: %+v", r)
	}
	a, b = fakeResult(rng, 3, 1000, 0.05, "y"), fakeResult(rng, 3, 980, 0.05, "y")
	rep, _ = Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
	if r := rep.Arms[1].Rows[0]; r.Verdict != stats.Inconclusive || r.Stats.RoundsNeeded <= 3 {
		t.Errorf("2%% in 3 noisy rounds: %+v, want inconclusive with the rounds that would decide", r)
	}
	// Independent samples: 6 a side suffice for a halving (Mann-Whitney), and the report says they were not paired.
	a, b = fakeResult(rng, 6, 1000, 0.01, "x"), fakeResult(rng, 6, 500, 0.01, "z")
	rep, _ = Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
	if r := rep.Arms[1].Rows[0]; r.Verdict != stats.Worse || !strings.Contains(strings.Join(rep.Notes, " "), "independent") {
		t.Errorf("a halving in 6 independent trials: %s, notes %v", r.Verdict, rep.Notes)
	}
	// Without trials: figures side by side, no verdict.
	a, b = &load.Result{RPS: 100}, &load.Result{RPS: 110}
	rep, _ = Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
	if r := rep.Arms[1].Rows[0]; r.Verdict != "" || math.Abs(r.Diff-0.1) > 1e-9 {
		t.Errorf("row %+v", r)
	}
}

// TestFailuresMakeWorse: an arm that fails requests where the baseline fails none is worse in throughput,
// however fast its failures are.
func TestFailuresMakeWorse(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a, b := fakeResult(rng, 4, 1000, 0.01, "f"), fakeResult(rng, 4, 2000, 0.01, "f")
	b.Errors = 10
	rep, _ := Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
	if r := rep.Arms[1].Rows[0]; r.Verdict != stats.Worse {
		t.Errorf("fast failures: %s, want worse", r.Verdict)
	}
}

func TestIdenticalArmsRarelyDiffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	false_ := 0
	const runs = 400
	for i := 0; i < runs; i++ {
		a, b := fakeResult(rng, 10, 1000, 0.03, "r"), fakeResult(rng, 10, 1000, 0.03, "r")
		rep, _ := Results([]*load.Result{a, b}, []string{"A", "B"}, 0.01)
		for _, row := range rep.Arms[1].Rows {
			if row.Verdict == stats.Better || row.Verdict == stats.Worse {
				false_++
				break
			}
		}
	}
	if rate := float64(false_) / runs; rate > 0.06 {
		t.Errorf("identical arms got a verdict in %.1f%% of runs; want <= 5%% (one budget across the metrics)", 100*rate)
	}
}

// TestRuleShare: a comparison that is one experiment of a larger run spends only its share of the run's
// budget, split over its arms and metrics, and states adjusted p-values against the whole.
func TestRuleShare(t *testing.T) {
	r := Rule(3, 0.01, 0.01, 0.05)
	if want := 0.01 / float64(2*len(Metrics)); math.Abs(r.Alpha-want) > 1e-15 || r.RunAlpha != 0.05 {
		t.Errorf("share 0.01 of 0.05: %+v, want alpha %g", r, want)
	}
	if r := Rule(3, 0.01, 0, 0.05); math.Abs(r.Alpha-0.05/float64(2*len(Metrics))) > 1e-15 {
		t.Errorf("no share: %+v, want the whole budget", r)
	}
}

// TestLevels: every comparison a run may state gets one level: Versus spends a quarter of the share on req/s
// (its metrics' levels) and judges the metrics on all of it; a race of k arms also pays for its other pairs.
func TestLevels(t *testing.T) {
	e, m := levels(3, false, 0.05)
	if math.Abs(e-0.05/4) > 1e-15 || math.Abs(m-0.05) > 1e-15 {
		t.Errorf("versus: engine %g, metrics %g", e, m)
	}
	e, m = levels(3, true, 0.05)
	a := 0.05 / float64(2*len(Metrics)+1) // 8 arm-metric pairs and the one pair B-C
	if math.Abs(e-3*a) > 1e-15 || math.Abs(m-8*a) > 1e-15 || e+m-2*a > 0.05+1e-15 {
		t.Errorf("race: engine %g, metrics %g, want %g and %g", e, m, 3*a, 8*a)
	}
}
