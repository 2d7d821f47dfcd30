package tune

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// splitSim is a simulated run of the demo's knobs on recorded rounds (offsetSim, stacks offset by 2% planted,
// the engine told the run's bound), its goodput trials replaying the six runs of the demo that ran split rounds
// (testdata/split, bench/engine -extract): the trials in turn, or where tune runs split rounds (split), their
// figures, with 2% offsets planted on top of the recording's own.
func splitSim(t testing.TB, seed int64, split bool, effects map[string]map[string]float64, budget time.Duration) SimOptions {
	so := offsetSim(t, seed, 0.02, effects, false, budget)
	keys := []string{MetricGoodput, NoiseKey(MetricGoodput, "static", false)}
	if split {
		keys = append(keys, NoiseKey(MetricGoodput, "", true))
	}
	for i, key := range keys {
		n, err := experiment.LoadNoise("../experiment/testdata/split/noise-" + key + ".json")
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(seed*31 + 3 + int64(i)))
		so.Noise[key] = experiment.NewReplayWith(n, rng, experiment.ReplayOptions{StackSD: 0.02, NewStackEvery: 1})
	}
	so.Split = split
	return so
}

// TestASplitSimulationReplaysSplitNoise: split races replay the figures of split rounds; a simulation without
// them is refused, rather than replaying trials in turn as split rounds.
func TestASplitSimulationReplaysSplitNoise(t *testing.T) {
	so := splitSim(t, 1, true, nil, 3*time.Minute)
	delete(so.Noise, NoiseKey(MetricGoodput, "", true))
	if _, err := Simulate(context.Background(), so); err == nil {
		t.Error("a split simulation without split rounds' noise ran")
	}
}

// TestASimulatedSplitRaceRunsSplitRounds: the pm and listen races of a simulated run run split rounds, on split
// rounds' noise (here 0.2% a round), and keep-alive's alternates, on goodput's (20%): with 6% planted on each,
// the first two are decided in a 3-minute run and keep-alive is not. A seed's run is the same run twice, though
// a split round's duet trials run at once.
func TestASimulatedSplitRaceRunsSplitRounds(t *testing.T) {
	effects := map[string]map[string]float64{"pm": {"static": LogEffect(0.06)}, "listen": {"tcp": LogEffect(-0.06)},
		"keepalive": {"on": LogEffect(0.06)}}
	sim := func() SimOptions {
		so := demoSim(7, 0.2, 3*time.Minute)
		rng := rand.New(rand.NewSource(8))
		so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rng, 0.01), rng)
		so.Noise[NoiseKey(MetricGoodput, "", true)] = experiment.NewReplay(gaussNoise(rng, 0.002), rng)
		so.Effect, so.Split = Planted(effects), true
		so.RoundSD = map[string]float64{MetricGoodput: 0.02} // the planner races them
		return so
	}
	res, rows := simulated(t, sim())
	again, _ := simulated(t, sim())
	if res.ElapsedS != again.ElapsedS || len(res.Knobs) != len(again.Knobs) {
		t.Errorf("one seed, two runs: %.3f s and %.3f s", res.ElapsedS, again.ElapsedS)
	}
	for i := range min(len(res.Knobs), len(again.Knobs)) {
		if a, b := res.Knobs[i], again.Knobs[i]; a.Rounds != b.Rounds || a.EffectPct != b.EffectPct {
			t.Errorf("one seed, two runs: %s %d rounds %+.3f%%, then %d rounds %+.3f%%", a.Name, a.Rounds,
				a.EffectPct, b.Rounds, b.EffectPct)
		}
	}
	for name, want := range map[string]stats.Verdict{"pm": stats.Better, "listen": stats.Worse} {
		if r := rows[name]; r.Verdict != want {
			t.Errorf("%s: %s in %d rounds (%s), want %s on split rounds' noise", name, r.Verdict, r.Rounds, r.Note, want)
		}
	}
	if r := rows["keepalive"]; r.Verdict == stats.Better {
		t.Errorf("keepalive: better in %d rounds on goodput's noise of 20%% a round: its race ran split rounds", r.Rounds)
	}
}

// TestSimulatedSplitRacesKeepTheErrorRate: A/A runs of the demo's knobs (no effect planted) for 3 and 10
// minutes, the goodput races in split rounds: false better/worse verdicts of the goodput races, at most 1% of
// them, as the duet races' (TestSimulatedDuetRacesKeepTheErrorRate). Found: none of 386 and of 470 races.
func TestSimulatedSplitRacesKeepTheErrorRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	for _, b := range []struct {
		budget time.Duration
		runs   int
	}{{3 * time.Minute, 200}, {10 * time.Minute, 100}} {
		tl := offsetRuns(t, seedsFrom(49000, b.runs), nil, func(seed int64) SimOptions {
			return splitSim(t, seed, true, nil, b.budget)
		})
		t.Logf("A/A, %s: goodput races %d false of %d, %d decided; CPU %d false of %d", b.budget,
			tl.wrong[MetricGoodput], tl.races[MetricGoodput], tl.decided[MetricGoodput], tl.wrong[MetricCPU],
			tl.races[MetricCPU])
		if tl.races[MetricGoodput] < 3*b.runs/2 {
			t.Fatalf("%s: %d goodput races in %d runs: pm and listen were not raced", b.budget,
				tl.races[MetricGoodput], b.runs)
		}
		if w := tl.wrong[MetricGoodput]; w > 10*tl.races[MetricGoodput]/1000 {
			t.Errorf("%s: %d false verdicts in %d split races, want at most 1%%", b.budget, w, tl.races[MetricGoodput])
		}
	}
}

// TestSimulatedSplitRacesDecide: the demo's knobs with effects planted on the goodput path (a static pool +6%,
// listen on TCP -6%) in 10-minute runs, 100 each way: split rounds find at least as many as rounds in turn.
// Found: 126 of 200 in split rounds, 64 in turn, no false verdict (a split round costs 0.45 s in turn and 0.33 s
// of duet an arm: its noise, 8.1% a round against 10.7 to 12.1% in turn, buys more than its time).
func TestSimulatedSplitRacesDecide(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	effects := map[string]map[string]float64{
		"pm":     {"static": LogEffect(0.06)},
		"listen": {"tcp": LogEffect(-0.06)},
	}
	const runs = 100
	found := map[bool]int{}
	for _, split := range []bool{false, true} {
		tl := offsetRuns(t, seedsFrom(50000, runs), effects, func(seed int64) SimOptions {
			return splitSim(t, seed, split, effects, 10*time.Minute)
		})
		t.Logf("split %v: found %d of %d; goodput races %d decided of %d, %d false", split, tl.found, 2*runs,
			tl.decided[MetricGoodput], tl.races[MetricGoodput], tl.wrong[MetricGoodput])
		found[split] = tl.found
		if w := tl.wrong[MetricGoodput]; w > 10*tl.races[MetricGoodput]/1000 {
			t.Errorf("split %v: %d false verdicts in %d goodput races", split, w, tl.races[MetricGoodput])
		}
	}
	if found[true] < found[false] {
		t.Errorf("split rounds found %d of %d planted effects, rounds in turn %d", found[true], 2*runs, found[false])
	}
}
