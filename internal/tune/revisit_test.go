package tune

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// TestSecondLookSpendsTheTimeLeft: races that showed nothing stop early (futility) or at their share; the time
// they leave goes to second looks at the undecided ones nearest to a decision, which go on from where they
// stopped, and the row and its comparison say so with the whole race's rounds.
func TestSecondLookSpendsTheTimeLeft(t *testing.T) {
	looked, decided := 0, 0
	for seed := int64(0); seed < 20; seed++ {
		res, err := Simulate(context.Background(), demoSim(500+seed, 0.04, 10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range res.Knobs {
			if !strings.Contains(k.Note, "in a second look") {
				continue
			}
			looked++
			if k.Verdict == stats.NoDifference {
				decided++
			}
			// The challenger still in when the race went on ran every round of it (one dropped earlier, fewer).
			whole := false
			for _, c := range res.Comparisons {
				whole = whole || c.Knob == k.Name && c.Rounds == k.Rounds && c.Stats.N == k.Rounds
			}
			if !whole {
				t.Errorf("%s: row of %d rounds, no comparison of them all", k.Name, k.Rounds)
			}
		}
		if res.ElapsedS > 600 {
			t.Errorf("seed %d: %.0f s of a 600 s budget", seed, res.ElapsedS)
		}
	}
	t.Logf("20 runs: %d second looks, %d of them shown no_difference", looked, decided)
	if looked < 20 || decided < looked/2 {
		t.Errorf("%d second looks, %d decided: want time left over spent, mostly to a decision", looked, decided)
	}
}

// TestSecondLookKeepsLaterChoices: a race looked at again after later knobs changed the best configuration
// runs in its own configuration, and what it decides is set in the best as it stands: the later choices stay.
func TestSecondLookKeepsLaterChoices(t *testing.T) {
	looked := 0
	for seed := int64(0); seed < 10; seed++ {
		so := demoSim(700+seed, 0.04, 10*time.Minute)
		base := so.Effect
		// The last knob raced is worth 40%: the best changes at the very end, after every CPU knob's race.
		so.Effect = func(cfg knob.Config, metric string) float64 {
			e := base(cfg, metric)
			if cfg.MaxRequests == 500 {
				e += LogEffect(0.4)
			}
			return e
		}
		res, err := Simulate(context.Background(), so)
		if err != nil {
			t.Fatal(err)
		}
		rows := rowsByName(res)
		if r := rows["max_requests"]; r.Value != "500" || r.Verdict != stats.Better {
			t.Fatalf("max_requests: %+v", r)
		}
		for _, k := range res.Knobs {
			if strings.Contains(k.Note, "in a second look") {
				looked++
			}
		}
		if rec := res.Recommendation; rec.MaxRequests != 500 || rec.INI["opcache.jit"] != "tracing" {
			t.Errorf("seed %d: recommendation %s: want max_requests=500 and the JIT kept", seed, rec)
		}
	}
	if looked == 0 {
		t.Error("no second look in 10 runs: nothing was tested")
	}
}
