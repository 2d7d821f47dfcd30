package tune

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// wordpressSim is WordPress at 10 minutes as ra16 measured it: goodput trials of 3.4 s that vary by 22% a round,
// CPU rounds by 9%, the JIT +12% on CPU, and knobs of a few percent whose second looks could take all the time
// left (huge_code_pages -3% needed 145 rounds more).
func wordpressSim(seed int64) SimOptions {
	so := demoSim(seed, 0.22, 10*time.Minute)
	so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+7)), 0.09), rand.New(rand.NewSource(seed+8)))
	so.TrialCost = map[string]time.Duration{MetricGoodput: 3400 * time.Millisecond, MetricCPU: 1200 * time.Millisecond}
	so.StartCost, so.TwinStartCost = 4*time.Second, 2*time.Second
	so.Effect = Planted(map[string]map[string]float64{
		"opcache":             {"off": LogEffect(-0.70)},
		"jit":                 {"tracing": LogEffect(0.12), "function": LogEffect(0.06)},
		"huge_code_pages":     {"on": LogEffect(-0.03)},
		"validate_timestamps": {"off": LogEffect(0.04)},
	})
	return so
}

// TestTheFinalKeepsWhatItIsForeseenToNeed: second looks and deferred races leave the final comparison the rounds
// that the adopted (or leaning) CPU races' gain and spread say it needs to decide the recommendation against the
// starting point on capacity, and the rule of thumb, which the time left cannot decide, yields its rounds to the
// starting point's. Decided in 8 runs of 100 with none of it, 77 with the foreseen need in second looks alone, 87
// with yielding too, 90 with all of it.
func TestTheFinalKeepsWhatItIsForeseenToNeed(t *testing.T) {
	const runs = 100
	raced, decided := 0, 0
	for seed := int64(0); seed < runs; seed++ {
		res, err := Simulate(context.Background(), wordpressSim(3000+seed))
		if err != nil {
			t.Fatal(err)
		}
		h := res.Headline
		if h == nil || h.CapacityVsDebian == nil {
			continue
		}
		raced++
		if h.CapacityVsDebian.Verdict != stats.Inconclusive {
			decided++
		}
	}
	t.Logf("%d runs: the recommendation raced against Debian's defaults in %d, decided on capacity in %d", runs, raced, decided)
	if raced < runs*3/4 || decided < raced*3/4 {
		t.Errorf("want the final's capacity against Debian's defaults decided in 3 runs of 4 where it is raced")
	}
}

// TestALeaningRaceKeepsItsLook: where the JIT's first race ends undecided, leaning to its gain, the final's
// foreseen need stands on it but leaves room for the second look that would adopt it: the JIT is still found,
// and the final still decides.
func TestALeaningRaceKeepsItsLook(t *testing.T) {
	const runs = 100
	looked, found, decided := 0, 0, 0
	for seed := int64(0); seed < runs; seed++ {
		so := wordpressSim(5000 + seed)
		so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+9)), 0.16), rand.New(rand.NewSource(seed+10)))
		res, rows := simulated(t, so)
		jit := rows["jit"]
		if secondLooked(jit) {
			looked++
		}
		if jit.Verdict == stats.Better {
			found++
			if h := res.Headline; h != nil && h.CapacityVsDebian != nil && h.CapacityVsDebian.Verdict != stats.Inconclusive {
				decided++
			}
		}
	}
	t.Logf("%d runs: the JIT looked at again in %d, found better in %d; the final decided on capacity in %d of those", runs, looked, found, decided)
	// With the leaning race left out of the foreseen need: looked at again in 8, found in 84, decided in 26. This
	// simulation seldom leaves the JIT to a second look as the real WordPress runs did (ra19 to ra23), so it
	// guards what the lean must not cost, the look and the find, more than it shows what it gains.
	if looked == 0 || found < runs*3/4 || decided < found/5 {
		t.Errorf("want the JIT looked at again, found in 3 runs of 4, and the final decided in a fifth of those")
	}
}

// TestRacesLeaveTheFinalItsNeed: WordPress at 10 minutes with goodput rounds of 12% (ra30), where listen's race
// took 64 s for an inconclusive +-27% and the final ended a round short. Once the final is foreseen to need more
// than its least, a goodput race runs only on what the final's need leaves, and only if that can decide it; its
// row says so. Over 200 runs the final decided on capacity in 167 so, 162 with the races on their own shares,
// where keepalive and max_requests (nothing planted) raced in every run, now in 121 and 97. A knob the user asked
// for races all the same.
func TestRacesLeaveTheFinalItsNeed(t *testing.T) {
	const runs = 200
	sim := func(seed int64, asked ...string) *Result {
		so := wordpressSim(3000 + seed)
		so.Plausible = 0.25 // the goodput races raced as in ra30, at +-25%
		so.Noise[MetricGoodput] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+11)), 0.12/math.Sqrt2), rand.New(rand.NewSource(seed+12)))
		so.RoundSD = map[string]float64{MetricGoodput: 0.12}
		so.Asked = map[string]bool{}
		for _, name := range asked {
			so.Asked[name] = true
		}
		res, _ := simulated(t, so)
		return res
	}
	const claim = "the final comparison is kept"
	claimed, decided, asked := 0, 0, 0
	for seed := int64(0); seed < runs; seed++ {
		res := sim(seed)
		for _, r := range res.Knobs {
			if strings.Contains(r.Note, claim) {
				claimed++
				if r.Rounds != 0 || !strings.HasPrefix(r.Note, "not raced: ") {
					t.Errorf("seed %d, %s: %d rounds, %q; want it not raced", seed, r.Name, r.Rounds, r.Note)
				}
			}
		}
		if h := res.Headline; h != nil && h.CapacityVsDebian != nil && h.CapacityVsDebian.Verdict != stats.Inconclusive {
			decided++
		}
		if seed < 20 {
			if r := rowsByName(sim(seed, "keepalive"))["keepalive"]; r.Rounds > 0 {
				asked++
			}
		}
	}
	t.Logf("%d runs: a race left to the final's need %d times; the final decided on capacity in %d; keepalive asked for raced in %d of 20",
		runs, claimed, decided, asked)
	if claimed < runs/4 || decided < runs*3/4 || asked < 20 {
		t.Errorf("want races left to the final's need in a quarter of runs, the final decided in 3 of 4, an asked knob raced every time")
	}
}

// TestTheLookIsClaimedOnAClockThatMoves: WordPress as ra31 ran it (the JIT's first race +11.7% at a CPU round's
// 16%, goodput rounds of 12%, listen +10%). Where the final's need is capped to leave room for the leaning
// race's look, the two fit the time left exactly; the simulated clock moves a microsecond at each reading, as a
// real one does, and the claim must still hold the look. Read twice, it never did (137 turns of 100 runs dropped
// it, the JIT found in 85 runs); read once, 160 turns held it and the JIT was found in 91.
func TestTheLookIsClaimedOnAClockThatMoves(t *testing.T) {
	const runs = 100
	held, dropped, found := 0, 0, 0
	for seed := int64(0); seed < runs; seed++ {
		so := wordpressSim(7000 + seed)
		so.Plausible = 0.25 // listen raced as in ra31, at +-25%
		so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+9)), 0.16/math.Sqrt2), rand.New(rand.NewSource(seed+10)))
		so.Noise[MetricGoodput] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed+11)), 0.12/math.Sqrt2), rand.New(rand.NewSource(seed+12)))
		so.RoundSD = map[string]float64{MetricGoodput: 0.12}
		so.TrialCost = map[string]time.Duration{MetricGoodput: 3200 * time.Millisecond, MetricCPU: 1650 * time.Millisecond}
		so.Effect = Planted(map[string]map[string]float64{"opcache": {"off": LogEffect(-0.70)},
			"jit": {"tracing": LogEffect(0.117), "function": LogEffect(0.087)}, "listen": {"tcp": LogEffect(0.10)}})
		res, rows := simulated(t, so)
		for _, tu := range res.Turns {
			if tu.LookS > 0 && tu.KeepS+tu.LookS <= tu.LeftS+1e-3 {
				if tu.ClaimS >= tu.KeepS+tu.LookS-1e-3 {
					held++
				} else {
					dropped++
				}
			}
		}
		if rows["jit"].Verdict == stats.Better {
			found++
		}
	}
	t.Logf("%d runs: a look that fits held by the claim at %d turns, dropped at %d; the JIT found in %d", runs, held, dropped, found)
	if dropped > 0 || held < runs/2 || found < runs*4/5 {
		t.Errorf("want every look that fits held by the claim, at half as many turns as runs or more, and the JIT found in 4 of 5")
	}
}

// TestTheFinalMovesOnceItsSpreadIsRead: the final's first stacks serve the rounds that read its own spread before
// any move; counted from the first round, a final of 8 rounds moving every round was foreseen 7 moves where it
// made 3.
func TestTheFinalMovesOnceItsSpreadIsRead(t *testing.T) {
	for _, c := range []struct{ n, per, want int }{{5, 1, 0}, {8, 1, 3}, {12, 8, 1}, {20, 4, 4}, {6, 0, 1}} {
		if got := finalMoves(c.n, c.per); got != c.want {
			t.Errorf("%d rounds at %d a stack: %d moves, want %d", c.n, c.per, got, c.want)
		}
	}
}

// TestTheServersRaceTellsTheFinalOnlyWhenAdopted: the final's foreseen moves are read from the races whose arms
// it will run like: the server's race (other runtimes beside php-fpm) tells them only when the recommendation
// runs another runtime.
func TestTheServersRaceTellsTheFinalOnlyWhenAdopted(t *testing.T) {
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("", nil), Budget: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !tu.tellsTheFinal("knob jit") || tu.tellsTheFinal("knob "+knob.ServerName) {
		t.Errorf("php-fpm recommended: the JIT's race tells the final %v, the server's %v; want true, false",
			tu.tellsTheFinal("knob jit"), tu.tellsTheFinal("knob "+knob.ServerName))
	}
	tu.best.Server = knob.ApacheModPHP
	if !tu.tellsTheFinal("knob " + knob.ServerName) {
		t.Errorf("mod_php recommended: the server's race does not tell the final; want it to")
	}
}

// TestTheFinalGivesBackWhatItWillNotNeed: the 10-minute demo (the JIT +20%, trials varying 4%) with keep-alive at
// +2.5% on goodput, about the minimum effect, which its race seldom decides in the time. Once the changes found
// foresee the final's need, the final is kept that and tailRounds at the least, not a sixth of the budget: the
// time it would not have used goes to the race left open. In the runs of 40 that left it open, the final was left
// a median of 55 s kept a sixth, 28 s kept so; it decided on capacity in every run either way.
func TestTheFinalGivesBackWhatItWillNotNeed(t *testing.T) {
	const runs = 40
	var kept []float64
	decided := 0
	for seed := int64(0); seed < runs; seed++ {
		so := demoSim(7000+seed, 0.04, 10*time.Minute)
		so.Effect = keepaliveGains(so.Effect, 0.025)
		res, rows := simulated(t, so)
		h := res.Headline
		if h == nil {
			t.Fatalf("seed %d: no final comparison", seed)
		}
		if h.CapacityVsDebian != nil && h.CapacityVsDebian.Verdict != stats.Inconclusive {
			decided++
		}
		if rows["keepalive"].Verdict == stats.Inconclusive {
			kept = append(kept, h.KeptS)
		}
	}
	if len(kept) < runs/4 {
		t.Fatalf("keep-alive left open in %d runs of %d: too few to judge the final's keep", len(kept), runs)
	}
	slices.Sort(kept)
	median := kept[len(kept)/2]
	t.Logf("%d runs: keep-alive open in %d, the final left a median of %.0f s there (%.0f to %.0f); decided on "+
		"capacity in %d", runs, len(kept), median, kept[0], kept[len(kept)-1], decided)
	if median > 40 || decided < runs*9/10 {
		t.Errorf("the final left a median of %.0f s, decided in %d of %d runs: want at most 40 s, and 9 runs of 10",
			median, decided, runs)
	}
}
