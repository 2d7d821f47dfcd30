package experiment

import (
	"context"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestADuetReplayDrawsInTheRoundsOrder: in a duet round the arms' trials run at once, in goroutines, and the
// replay gives each the recorded slot of its place in the round's order (Prepare draws it, one arm after another),
// never the order the goroutines happen to run in; so a seed replays the same race every time.
func TestADuetReplayDrawsInTheRoundsOrder(t *testing.T) {
	// Round i's first trial ran 5% above its arm's mean, its second 5% below; i is kept in the third place.
	n := Noise{}
	for i := range 1000 {
		n.Rounds = append(n.Rounds, []float64{0.05, -0.05, float64(i)})
	}
	rep := NewReplay(n, rand.New(rand.NewSource(1)))
	out, err := Run(context.Background(), Spec{Arms: []Arm{rep.Arm("a", 0), rep.Arm("b", 0)}, Mode: Race,
		HigherIsBetter: true, MaxRounds: 300, Duet: true})
	if err != nil {
		t.Fatal(err)
	}
	// Williams: AB, BA, ...: a runs first, so takes the +5% slot, in odd rounds. Goroutines' order would match
	// that in every one of 300 rounds one time in 2^300.
	for i, b := range out.Arms[1].Trials {
		want := math.Exp(0.1)
		if i%2 == 1 {
			want = 1 / want
		}
		if got := out.Arms[0].Trials[i].Value / b.Value; math.Abs(got-want) > 1e-9 {
			t.Fatalf("round %d: a/b %.4f, want %.4f (the first slot to the arm first in the round's order)",
				i+1, got, want)
		}
	}
	o := ReplayOptions{StackSD: 0.02, NewStackEvery: 1, Bursts: Bursts{Rate: 0.1, Mean: 8, Requests: 180, Spill: true}}
	first, second := duetTrials(t, 7, o), duetTrials(t, 7, o)
	if !reflect.DeepEqual(first, second) {
		t.Errorf("two duet races of one seed differ: %v against %v", first[:4], second[:4])
	}
}

// duetTrials races three replayed arms of recorded CPU noise in duet rounds, drawn from seed, and gives their
// trials.
func duetTrials(t *testing.T, seed int64, o ReplayOptions) [][]Observation {
	noise, err := LoadNoise("testdata/noise-req_per_cpu_s.json")
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReplayWith(noise, rand.New(rand.NewSource(seed)), o)
	out, err := Run(context.Background(), Spec{Arms: []Arm{rep.Arm("a", 0), rep.Arm("b", 0), rep.Arm("c", 0)},
		Mode: Race, HigherIsBetter: true, MaxRounds: 40, Duet: true})
	if err != nil {
		t.Fatal(err)
	}
	var trials [][]Observation
	for _, a := range out.Arms {
		trials = append(trials, a.Trials)
	}
	return trials
}

// duetNoise is the noise of duet rounds recorded in tune runs of the demo (every arm on a fresh stack each
// round, so their residuals hold the stacks' offsets), alternating the noise of CPU trials run in turn.
const duetNoise, alternating = "req_per_cpu_s_duet", "req_per_cpu_s"

// TestDuetReplayKeepsTheErrorRate: A/A races in duet rounds on the recorded duet rounds' noise, every arm on a
// fresh stack each round (as tune runs them) whose offset is planted at 2% and at 4% on top of the recording's
// own, the engine told 2%, 2000 races at alpha 1% and at a pair's share of a tune run (0.25%). Were a race
// wrong at alpha exactly, more than 40 (at 1%) or 16 (at 0.25%) false verdicts would come one time in 40,000
// (binomial). Found: 3 and 4 at 1%, none at 0.25%. Alternating, on stacks of 5 trials, gave 0 and 35 at 1% with
// this seed (TestReplayShowsWhatTheModelLeavesOut shows the gap: 34 at 4%): offsets larger than told pass for
// effects where a stack serves several rounds, never where it serves one.
func TestDuetReplayKeepsTheErrorRate(t *testing.T) {
	const runs = 2000
	for _, c := range []struct {
		alpha float64
		most  int
	}{{0.01, 40}, {0.0025, 16}} {
		for _, sd := range []float64{0.02, 0.04} {
			o := ReplayOptions{StackSD: sd, NewStackEvery: 1}
			duet := replayRaces(t, 11, runs, replayRace{file: duetNoise, o: o, alpha: c.alpha, duet: true})
			t.Logf("alpha %.4f, offsets %.0f%%: duet %d better, %d worse of %d (median %.0f rounds)", c.alpha, 100*sd,
				duet.better, duet.worse, runs, stats.Median(duet.rounds))
			if w := duet.better + duet.worse; w > c.most {
				t.Errorf("alpha %.4f, offsets %.0f%%: %d false verdicts in %d duet races, want at most %d", c.alpha,
					100*sd, w, runs, c.most)
			}
		}
	}
}

// TestDuetReplayDecidesSmallEffects: effects of 1, 3 and 5% raced in duet rounds (recorded duet noise, a fresh
// stack every round, offsets of 2% planted on top of the recording's own: counted twice) and in turn (recorded
// alternating noise, a fresh stack every 5 trials, offsets of 2%), at a pair's share of a tune run (0.25%),
// minimum effect 3%, at most 200 rounds, 1000 races each. A duet round of two costs about half as much again as
// an alternating one (two trials of 0.8 s at once, the next stacks starting beside them: 1.6 s; two of 0.4 s and
// a start every 5 rounds: 1.05 s). Found: +5% better in all races both ways, in a median 18 duet rounds (29 s)
// against 67 (70 s); +3% in 862 against 612, in 38 rounds (61 s) against 170 (179 s); +1% no_difference in 997
// against 57; no race of a positive effect worse.
func TestDuetReplayDecidesSmallEffects(t *testing.T) {
	const runs, alpha = 1000, 0.0025
	for _, c := range []struct {
		effect                 float64
		better, nodiff, rounds int // the duet races' at the least, and their median rounds at the most
		turnBetter, turnNoDiff int // the alternating races' at the most
	}{
		{0.01, 0, 950, 100, 10, 200},
		{0.03, 800, 0, 60, 700, 0},
		{0.05, 990, 0, 30, 1000, 0},
	} {
		d := replayRaces(t, 12, runs, replayRace{file: duetNoise, o: ReplayOptions{StackSD: 0.02, NewStackEvery: 1},
			effect: math.Log1p(c.effect), alpha: alpha, duet: true})
		a := replayRaces(t, 12, runs, replayRace{file: alternating, o: ReplayOptions{StackSD: 0.02, NewStackEvery: 5},
			effect: math.Log1p(c.effect), alpha: alpha})
		t.Logf("%+.0f%%: duet better %d, worse %d, no_difference %d, median %.0f rounds; alternating %d, %d, %d, %.0f",
			100*c.effect, d.better, d.worse, d.nodiff, stats.Median(d.rounds), a.better, a.worse, a.nodiff,
			stats.Median(a.rounds))
		if d.worse > 0 || d.better < c.better || d.nodiff < c.nodiff || stats.Median(d.rounds) > float64(c.rounds) {
			t.Errorf("%+.0f%% in duet rounds: better %d (want %d at least), worse %d, no_difference %d (%d), "+
				"median %.0f rounds (%d at most)", 100*c.effect, d.better, c.better, d.worse, d.nodiff, c.nodiff,
				stats.Median(d.rounds), c.rounds)
		}
		if a.better > c.turnBetter || a.nodiff > c.turnNoDiff || stats.Median(a.rounds) <= stats.Median(d.rounds) {
			t.Errorf("%+.0f%% in turn: better %d, no_difference %d in a median %.0f rounds: want it to decide less, "+
				"in more rounds, than in duet rounds", 100*c.effect, a.better, a.nodiff, stats.Median(a.rounds))
		}
	}
}
