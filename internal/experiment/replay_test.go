package experiment

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestReplayedErrorRates: on rounds recorded in a real tune run of the demo (heavy tails and all), races with no
// effect give a false verdict at most at their alpha, intervals cover the planted effect, and large effects are
// decided in a few rounds. Deterministic: the replay's seed is fixed.
func TestReplayedErrorRates(t *testing.T) {
	for _, metric := range []string{"goodput", "req_per_cpu_s"} {
		noise, err := LoadNoise("testdata/noise-" + metric + ".json")
		if err != nil {
			t.Fatal(err)
		}
		const runs, alpha = 2000, 0.01
		rng := rand.New(rand.NewSource(1))
		for _, effect := range []float64{0, 0.4} {
			false_, covered := 0, 0
			var rounds []float64
			for i := 0; i < runs; i++ {
				rep := NewReplay(noise, rng)
				out, err := Run(context.Background(), Spec{Arms: []Arm{rep.Arm("a", 0), rep.Arm("b", math.Log1p(effect))},
					Mode: Race, HigherIsBetter: true, MinEffect: 0.03, Alpha: alpha, MaxRounds: 60})
				if err != nil {
					t.Fatal(err)
				}
				c := out.Arms[1].Vs
				if effect == 0 && (c.Verdict == stats.Better || c.Verdict == stats.Worse) {
					false_++
				}
				if c.LogLo <= math.Log1p(effect) && math.Log1p(effect) <= c.LogHi {
					covered++
				}
				rounds = append(rounds, float64(out.Rounds))
			}
			med := stats.Median(rounds)
			t.Logf("%s, effect %+.0f%%: false %d, covered %d of %d, median rounds %.0f", metric, 100*effect, false_, covered, runs, med)
			// alpha is 1%: 2000 runs give about 20 at most by chance; the sequences are conservative, so far fewer.
			if false_ > runs/50 || covered < runs*97/100 {
				t.Errorf("%s, effect %+.0f%%: %d false verdicts, %d covered of %d", metric, 100*effect, false_, covered, runs)
			}
			if effect == 0.4 && med > 10 {
				t.Errorf("%s: a 40%% effect took %.0f rounds (median)", metric, med)
			}
		}
	}
}

// TestReplayKeepsWhatRealRunsHave: the replay keeps a recorded round's order (its first trial's residual goes to
// whichever arm runs first), runs through the record in blocks of consecutive rounds, plants each stack's own
// offset and failure bursts, and splits the record into the runs that chose the engine's parameters and the
// others.
func TestReplayKeepsWhatRealRunsHave(t *testing.T) {
	// Round i's first trial ran 5% above its arm's mean, its second 5% below; i is kept in the third place.
	n := Noise{Runs: []NoiseRun{{Source: "tuning", From: 0, Tuning: true}, {Source: "held", From: 600}}}
	for i := 0; i < 1000; i++ {
		n.Rounds = append(n.Rounds, []float64{0.05, -0.05, float64(i)})
	}
	if h, tu := n.Held(), n.Tuning(); len(h.Rounds) != 400 || len(tu.Rounds) != 600 || h.Rounds[0][2] != 600 || h.Source != "held" {
		t.Fatalf("held %d rounds from %v (%s), tuning %d: want 400 from round 600, 600", len(h.Rounds), h.Rounds[0], h.Source, len(tu.Rounds))
	}
	rng := rand.New(rand.NewSource(1))
	rep := NewReplay(n, rng)
	a, b := rep.Arm("a", 0), rep.Arm("b", 0)
	out, err := Run(context.Background(), Spec{Arms: []Arm{a, b}, Mode: Race, HigherIsBetter: true, MaxRounds: 400})
	if err != nil {
		t.Fatal(err)
	}
	// The first trial of a round is a's in odd rounds (Williams: AB, BA, ...): a's log ratio alternates +-10%.
	for i, d := range out.Arms[1].Trials[:6] {
		want := math.Exp(0.1)
		if i%2 == 1 {
			want = 1 / want
		}
		if got := out.Arms[0].Trials[i].Value / d.Value; math.Abs(got-want) > 1e-9 {
			t.Fatalf("round %d: a/b %.4f, want %.4f (the first trial's residual to the arm that ran first)", i+1, got, want)
		}
	}
	// Blocks: consecutive replayed rounds are consecutive recorded ones but at a block's end (mean 20).
	breaks := 0
	for i := 1; i < len(rep.draws); i++ {
		if rep.draws[i][2] != rep.draws[i-1][2]+1 {
			breaks++
		}
	}
	if blocks := float64(len(rep.draws)) / float64(breaks+1); blocks < 12 || blocks > 30 {
		t.Errorf("%d replayed rounds in %d blocks: want blocks of about %d", len(rep.draws), breaks+1, DefaultBlock)
	}
	// Stacks' offsets: one an arm for its life, spread as asked; bursts as asked.
	rep = NewReplayWith(Noise{Rounds: [][]float64{{0, 0}}}, rng, ReplayOptions{StackSD: 0.02, Bursts: Bursts{Rate: 0.1, Mean: 8, Requests: 180}})
	offsets := NewSequence(0)
	trials, failing, failed := 0, 0, int64(0)
	for i := 0; i < 2000; i++ {
		arm := rep.Arm("x", 0)
		first, _ := arm.Trial(context.Background())
		for j := 0; j < 4; j++ {
			o, _ := arm.Trial(context.Background())
			trials++
			if o.Errors > 0 {
				failing++
				failed += o.Errors
				continue
			}
			if first.Errors == 0 && o.Value != first.Value {
				t.Fatalf("an arm's trials %v and %v: want one stack's offset for its life", first.Value, o.Value)
			}
		}
		if first.Errors == 0 {
			offsets.Add(math.Log(first.Value / 1000))
		}
	}
	if sd := offsets.SD(); math.Abs(sd-0.02) > 0.002 {
		t.Errorf("stacks' offsets spread %.4f, want 0.02", sd)
	}
	if share, mean := float64(failing)/float64(trials), float64(failed)/float64(failing); math.Abs(share-0.1) > 0.02 || math.Abs(mean-8) > 1 {
		t.Errorf("bursts in %.3f of trials, of %.1f requests: want 0.1 and 8", share, mean)
	}
}

// replayRace is a race of two replayed arms: the rounds of testdata/noise-FILE.json as o replays them, the
// second arm's effect (a log ratio), in duet rounds or in turn, at alpha, minimum effect 3%, the engine told of
// stacks' offsets of 2%, at most 200 rounds.
type replayRace struct {
	file   string
	o      ReplayOptions
	effect float64
	alpha  float64
	duet   bool
}

// replayTally is what races of a replayRace decided: the second arm's better, worse and no_difference verdicts,
// the better or worse on failures, and the rounds each race took.
type replayTally struct {
	better, worse, nodiff, onFailures int
	rounds                            []float64
}

// replayRaces runs c runs times, the replays drawn from seed.
func replayRaces(t *testing.T, seed int64, runs int, c replayRace) replayTally {
	t.Helper()
	noise, err := LoadNoise("testdata/noise-" + c.file + ".json")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(seed))
	var tl replayTally
	for range runs {
		rep := NewReplayWith(noise, rng, c.o)
		out, err := Run(context.Background(), Spec{Arms: []Arm{rep.Arm("a", 0), rep.Arm("b", c.effect)}, Mode: Race,
			HigherIsBetter: true, MinEffect: 0.03, Alpha: c.alpha, MaxRounds: 200, StackSD: 0.02, Duet: c.duet})
		if err != nil {
			t.Fatal(err)
		}
		switch v := out.Arms[1].Vs; v.Verdict {
		case stats.Better:
			tl.better++
		case stats.Worse:
			tl.worse++
		case stats.NoDifference:
			tl.nodiff++
		}
		if v := out.Arms[1].Vs; v.OnErrors && (v.Verdict == stats.Better || v.Verdict == stats.Worse) {
			tl.onFailures++
		}
		tl.rounds = append(tl.rounds, float64(out.Rounds))
	}
	return tl
}

// replayFalse runs A/A races of two replayed arms (noise recorded on CPU trials, arms on a fresh stack every 5
// trials, the engine told of offsets of 2%, at most 200 rounds) as o plants them, and counts the better or worse
// verdicts, and of them on failures.
func replayFalse(t *testing.T, seed int64, runs int, alpha float64, o ReplayOptions) (wrong, onFailures int) {
	o.NewStackEvery = 5
	tl := replayRaces(t, seed, runs, replayRace{file: "req_per_cpu_s", o: o, alpha: alpha})
	return tl.better + tl.worse, tl.onFailures
}

// TestReplayShowsWhatTheModelLeavesOut: the replay plants what the engine is not told. Stacks' offsets larger
// than the spread the engine allows for (4% planted, 2% told) are a known gap, reported, not held to alpha: the
// engine can only allow for the spread it is given. Clustered failures (a tenth of the stacks failing in half
// their trials, stalls that fail the next trial too) stay within alpha.
func TestReplayShowsWhatTheModelLeavesOut(t *testing.T) {
	const runs, alpha = 2000, 0.01
	told, _ := replayFalse(t, 1, runs, alpha, ReplayOptions{StackSD: 0.02})
	twice, _ := replayFalse(t, 1, runs, alpha, ReplayOptions{StackSD: 0.04})
	thrice, _ := replayFalse(t, 1, runs, alpha, ReplayOptions{StackSD: 0.06})
	t.Logf("stacks' offsets of 2%% planted, 2%% told: %d of %d A/A races gave a false verdict; 4%% planted: %d; 6%%: %d",
		told, runs, twice, thrice)
	if told > 2*runs*alpha {
		t.Errorf("offsets as told: %d false verdicts in %d races, want at most %.0f (twice alpha)", told, runs, 2*runs*alpha)
	}
	clustered := Bursts{Rate: 0.02, Mean: 8, Requests: 180, Prone: 0.1, ProneRate: 0.5, Spill: true}
	wrong, onFailures := replayFalse(t, 2, runs, alpha, ReplayOptions{StackSD: 0.02, Bursts: clustered})
	t.Logf("clustered failures: %d of %d A/A races gave a false verdict, %d on failures", wrong, runs, onFailures)
	if wrong > 2*runs*alpha {
		t.Errorf("clustered failures: %d false verdicts in %d races, want at most %.0f (twice alpha)", wrong, runs, 2*runs*alpha)
	}
}

// TestReplayPlantsClusteredFailures: failure-prone stacks fail as a whole (Prone of them, in every trial at a
// ProneRate of 1), and a spilling burst fails the next trial run too.
func TestReplayPlantsClusteredFailures(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n := Noise{Rounds: [][]float64{{0, 0}}}
	rep := NewReplayWith(n, rng, ReplayOptions{NewStackEvery: 5, Bursts: Bursts{Mean: 8, Requests: 180, Prone: 0.1, ProneRate: 1}})
	arm, failing := rep.Arm("x", 0), 0
	for s := 0; s < 2000; s++ {
		var fails int
		for range 5 {
			if o, _ := arm.Trial(context.Background()); o.Errors > 0 {
				fails++
			}
		}
		if fails != 0 && fails != 5 {
			t.Fatalf("stack %d: %d of its 5 trials failed, want all or none", s, fails)
		}
		failing += fails / 5
	}
	if share := float64(failing) / 2000; math.Abs(share-0.1) > 0.02 {
		t.Errorf("%.3f of the stacks failed, want 0.1", share)
	}
	rep = NewReplayWith(n, rng, ReplayOptions{Bursts: Bursts{Rate: 0.05, Mean: 8, Requests: 180, Spill: true}})
	arm = rep.Arm("x", 0)
	var prev, pairs, runs int
	for range 20000 {
		o, _ := arm.Trial(context.Background())
		cur := min(int(o.Errors), 1)
		if cur == 1 && prev == 0 {
			runs++
		}
		if cur == 1 && prev == 1 {
			pairs++
		}
		prev = cur
	}
	if float64(pairs) < 0.9*float64(runs) {
		t.Errorf("%d runs of failing trials, %d of them spilling into the next: want every burst to spill", runs, pairs)
	}
}
