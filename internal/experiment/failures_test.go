package experiment

import (
	"context"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestBurstsAreNoArmsOwn: two arms with the same bursty failures (a burst in 2% of trials, of a mean of 4 or 8
// requests, 180 requests a trial) and the same figure: races of 300 rounds at a pair's alpha of 1% call one of
// them better or worse, on failures or on the figure, in at most that share of races. Counting failed requests
// as independent coins called one worse in 15.8% (mean 4) and 38.8% (mean 8) of such races at 0.25%.
func TestBurstsAreNoArmsOwn(t *testing.T) {
	const runs, alpha = 1000, 0.01
	for _, mean := range []float64{4, 8} {
		rng := rand.New(rand.NewSource(int64(mean)))
		onFailures, wrong, bursty := 0, 0, 0
		for i := 0; i < runs; i++ {
			f := arms(rng, 0.05, 0, 0)
			for _, a := range f {
				a.burstRate, a.burstMean, a.requests = 0.02, mean, 180
			}
			s := race(f, alpha, 0)
			s.MaxRounds = 300
			out, err := Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			c := out.Arms[1].Vs
			if c.Verdict == stats.Better || c.Verdict == stats.Worse {
				wrong++
				if c.OnErrors {
					onFailures++
				}
			}
			if out.Arms[0].Errors > 0 && out.Arms[1].Errors > 0 && out.Arms[0].Errors != out.Arms[1].Errors {
				bursty++
			}
		}
		t.Logf("bursts of a mean of %.0f: %d of %d races called one arm better or worse (%d on failures); %d had bursts on both", mean, wrong, runs, onFailures, bursty)
		if wrong > runs*alpha || bursty < runs/2 {
			t.Errorf("bursts of a mean of %.0f: %d false verdicts in %d races, want at most %.0f (alpha); %d races with bursts on both", mean, wrong, runs, runs*alpha, bursty)
		}
	}
}

// TestABrokenValueIsShownAtOnce: a value that fails every request is shown worse in its first two trials at a
// knob's share of alpha (three at a hundredth of it), whatever its figure says.
func TestABrokenValueIsShownAtOnce(t *testing.T) {
	for _, c := range []struct {
		alpha  float64
		rounds int
	}{{0.0025, 2}, {0.00002, 3}} {
		rng := rand.New(rand.NewSource(1))
		f := arms(rng, 0.02, 0, math.Log(1e3)) // instant failures read as a thousand times the requests per CPU-second
		f[1].broken = true
		out, err := Run(context.Background(), race(f, c.alpha, 0.03))
		if err != nil {
			t.Fatal(err)
		}
		r := out.Arms[1]
		if r.Vs.Verdict != stats.Worse || !r.Vs.OnErrors || out.Rounds != c.rounds || out.Winner != 0 ||
			!strings.Contains(r.Note, "served none of its requests in each of its") {
			t.Errorf("alpha %g: %s after %d rounds (on failures %v), winner %d, note %q: want worse on failures in %d",
				c.alpha, r.Vs.Verdict, out.Rounds, r.Vs.OnErrors, out.Winner, r.Note, c.rounds)
		}
	}
}

// TestAnArmThatFailsOftenIsShownWorse: an arm with bursts in 30% of its trials, where the other has none, is
// shown worse on them in nearly every race; when its figure is 10% better, its verdict is held while it fails
// more, and it is shown worse in most races all the same.
func TestAnArmThatFailsOftenIsShownWorse(t *testing.T) {
	const runs = 1000
	for _, c := range []struct{ effect, want float64 }{{0, 0.98}, {0.1, 0.9}} {
		rng := rand.New(rand.NewSource(3))
		shown, better := 0, 0
		var rounds []float64
		for i := 0; i < runs; i++ {
			f := arms(rng, 0.05, 0, math.Log1p(c.effect))
			f[1].burstRate, f[1].burstMean, f[1].requests = 0.3, 4, 180
			out, err := Run(context.Background(), race(f, 0.0025, 0.03))
			if err != nil {
				t.Fatal(err)
			}
			switch v := out.Arms[1].Vs; {
			case v.Verdict == stats.Worse && v.OnErrors:
				shown++
				rounds = append(rounds, float64(out.Rounds))
			case v.Verdict == stats.Better:
				better++
			}
		}
		t.Logf("failing in 30%% of trials, figure %+.0f%%: shown worse on failures in %d of %d races (median %.0f rounds), better in %d",
			100*c.effect, shown, runs, stats.Median(rounds), better)
		if shown < int(c.want*runs) {
			t.Errorf("figure %+.0f%%: shown worse in %d of %d races, want %.0f%%", 100*c.effect, shown, runs, 100*c.want)
		}
	}
}
