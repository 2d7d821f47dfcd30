package tune

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// TestLastLookGoesToAGain: when no undecided race's decision fits in the time left, the rest goes to one whose
// estimate leans to a gain: a small real effect, too dear to decide in its own race's share, gets that time.
func TestLastLookGoesToAGain(t *testing.T) {
	const runs = 200
	looked, found, spent := 0, 0, 0
	for seed := int64(0); seed < runs; seed++ {
		so := demoSim(900+seed, 0.18, 10*time.Minute)
		so.Effect = Planted(map[string]map[string]float64{
			"opcache":   {"off": LogEffect(-0.44)},
			"jit":       {"tracing": LogEffect(0.20), "function": LogEffect(0.10)},
			"keepalive": {"on": LogEffect(0.05)},
		})
		res, rows := simulated(t, so)
		k := rows["keepalive"]
		if secondLooked(k) {
			looked++
		}
		if k.Verdict == stats.Better {
			found++
		}
		if res.ElapsedS >= 570 || finalDecided(res.Headline) {
			spent++
		}
	}
	t.Logf("%d runs: keepalive looked at again in %d, found better in %d; %d used 95%% of the budget or ended with the final decided",
		runs, looked, found, spent)
	// Taking only the looks whose decision fitted, 11 of 40 runs used 95% of the budget and none looked again at
	// keepalive (found better in 11, against 15 with the last look). Leaving the final its foreseen need (finalKeep)
	// ends some runs early, with the final decided: 14 found. Over 200 runs (40 left a find of 11 to 13 to the
	// draw): 63 found with the pool's sizes judged within 5%, 64 within 3%.
	if spent < runs*9/10 || looked == 0 || found < runs/4 {
		t.Errorf("want the time left spent (95%% of the budget, or the final decided, in 9 runs of 10) and the small gain looked at again")
	}
}

// TestSecondLookRacesInteractionsAgain: the demo's preload gains with the JIT off and loses with it on. When a
// second look would set one of them beside the other, changed since its first race, it is raced again in the
// configuration as it stands instead, so the recommendation never pairs them on races that did not measure them
// together. A JIT of +10% and CPU rounds varying by 10% leave both undecided by their first races often.
func TestSecondLookRacesInteractionsAgain(t *testing.T) {
	const runs = 60
	jit, _ := knob.ByName("jit")
	preload, _ := knob.ByName("preload")
	paired, again := 0, 0
	for seed := int64(0); seed < runs; seed++ {
		so := demoSim(700+seed, 0.15, 3*time.Minute)
		so.Plausible = 0.25 // the goodput races raced at +-25%, which leaves the CPU races short of time
		so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed)), 0.10), rand.New(rand.NewSource(seed+1)))
		base := Planted(map[string]map[string]float64{
			"opcache": {"off": LogEffect(-0.44)},
			"jit":     {"tracing": LogEffect(0.10), "function": LogEffect(0.05)},
		})
		so.Effect = func(cfg knob.Config, metric string) float64 {
			e := base(cfg, metric)
			if preload.Get(cfg) == "on" {
				if jit.Get(cfg) != "off" {
					e += LogEffect(-0.12)
				} else {
					e += LogEffect(0.09)
				}
			}
			return e
		}
		res, err := Simulate(context.Background(), so)
		if err != nil {
			t.Fatal(err)
		}
		rows := rowsByName(res)
		if jit.Get(res.Recommendation) != "off" && preload.Get(res.Recommendation) == "on" {
			paired++
		}
		if strings.Contains(rows["preload"].Note+rows["jit"].Note, "Raced again") {
			again++
		}
	}
	t.Logf("%d runs: the JIT or preload raced again in %d, JIT and preload recommended together in %d", runs, again, paired)
	// Second looks going on in the configuration first raced in: JIT and preload together in 9 runs of 60.
	if again == 0 || paired > 1 {
		t.Errorf("want a race run again, and JIT and preload together in at most 1 run")
	}
}

// finalDecided says whether h's comparisons all ended decided: a final that ends before the budget for that has
// no time to give back.
func finalDecided(h *Headline) bool {
	if h == nil {
		return false
	}
	for _, c := range []*stats.Comparison{h.VsDebian, h.CapacityVsDebian, h.VsRuleOfThumb, h.CapacityVsRuleOfThumb} {
		if c != nil && c.Verdict == stats.Inconclusive {
			return false
		}
	}
	return true
}

// TestARaceRunAgainLeavesNoTraces: where a change found later (keepalive, on goodput) sends the JIT's undecided
// race to run again, and the JIT stays off, the recommendation does not carry the knob's traces: setting jit off
// on a configuration whose JIT is off wrote opcache.jit=disable, a difference from Debian's defaults that changes
// nothing (Symfony, ra40).
func TestARaceRunAgainLeavesNoTraces(t *testing.T) {
	const runs = 40
	jit, _ := knob.ByName("jit")
	again := 0
	for seed := int64(0); seed < runs; seed++ {
		so := demoSim(900+seed, 0.15, 3*time.Minute)
		so.Noise[MetricCPU] = experiment.NewReplay(gaussNoise(rand.New(rand.NewSource(seed)), 0.10), rand.New(rand.NewSource(seed+1)))
		so.Effect = Planted(map[string]map[string]float64{
			"opcache": {"off": LogEffect(-0.44)},
			"jit":     {"tracing": LogEffect(0.04), "function": LogEffect(0.02)},
		})
		so.Effect = keepaliveGains(so.Effect, 0.25)
		res, rows := simulated(t, so)
		if strings.Contains(rows["jit"].Note, "Raced again") {
			again++
		}
		if rec := res.Recommendation; jit.Get(rec) == "off" && rec.INI["opcache.jit"] != "" {
			t.Errorf("seed %d: the JIT off, recommended with opcache.jit=%s (%s)", seed, rec.INI["opcache.jit"], rows["jit"].Note)
		}
	}
	t.Logf("%d runs: the JIT's race run again in %d", runs, again)
	if again == 0 {
		t.Errorf("want the JIT's race run again in some runs")
	}
}
