package tune

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/experiment"
)

// TestHopelessRacesGiveTheirTime: in a short budget where goodput varies by 15% a round and a goodput trial
// costs five CPU trials, the goodput races could get only a few rounds each, which decide nothing under +-15%:
// they are not raced, their rows say why and what would race them, and their time goes to the CPU races. With a
// budget that can decide them, they race.
func TestHopelessRacesGiveTheirTime(t *testing.T) {
	sim := func(budget time.Duration, asked ...string) *Result {
		return simWith(t, budget, 0.15, asked...)
	}
	short := rowsByName(sim(3 * time.Minute))
	for _, name := range []string{"max_children", "pm", "listen", "keepalive"} {
		r := short[name]
		if !strings.HasPrefix(r.Note, "not raced: the budget leaves it about") || !strings.Contains(r.Note, "a larger --budget races it") || r.Rounds != 0 {
			t.Errorf("3 minutes, %s: %q after %d rounds; want it not raced, saying why", name, r.Note, r.Rounds)
		}
	}
	if r := short["max_children"]; r.Value != "5" || !strings.Contains(r.Note, "the starting size is kept") {
		t.Errorf("3 minutes, the pool: %s (%q), want the starting 5 kept", r.Value, r.Note)
	}
	if r := short["jit"]; r.Value != "tracing" {
		t.Errorf("3 minutes: the JIT kept %s (%s after %d rounds), want its planted +20%% found with the time", r.Value, r.Verdict, r.Rounds)
	}
	// A knob the user named (--only, --knob with values) races whatever its share.
	if r := rowsByName(sim(3*time.Minute, "listen"))["listen"]; r.Rounds == 0 {
		t.Errorf("3 minutes, listen asked for: not raced (%q)", r.Note)
	}
	long := rowsByName(sim(30 * time.Minute))
	for _, name := range []string{"pm", "listen", "keepalive"} {
		if r := long[name]; r.Rounds == 0 {
			t.Errorf("30 minutes, %s not raced: %q", name, r.Note)
		}
	}
	// Goodput varying by 60% a round (MediaWiki's sweep, 2026-11-26): the pool's race, deferred, keeps the starting
	// size, even where the time is gone by its turn (it had kept the knee's 32 as if the budget had merely run out).
	for _, budget := range []time.Duration{60 * time.Second, 3 * time.Minute} {
		r := rowsByName(simWith(t, budget, 0.6))["max_children"]
		if r.Value != "5" || !strings.HasPrefix(r.Note, "not raced: ") || !strings.Contains(r.Note, "the starting size is kept") {
			t.Errorf("%s, goodput +-60%% a round: the pool %s (%q), want the starting 5 kept, not raced", budget, r.Value, r.Note)
		}
	}
}

// simWith is the demo simulated at budget, with goodput trials costing five CPU ones and varying by goodputSD a
// round, the knobs asked named, and the sweep's knee at 8 (the starting size is Debian's 5).
func simWith(t testing.TB, budget time.Duration, goodputSD float64, asked ...string) *Result {
	so := demoSim(3, 0.06, budget)
	so.Asked = map[string]bool{}
	for _, name := range asked {
		so.Asked[name] = true
	}
	so.TrialCost = map[string]time.Duration{MetricGoodput: 2 * time.Second, MetricCPU: 400 * time.Millisecond}
	so.RoundSD = map[string]float64{MetricGoodput: goodputSD}
	so.Pool = 8
	res, err := Simulate(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHalfWidthAtMatchesTheSequence: what the planner expects of n rounds is what a sequence of n rounds of that
// spread gives.
func TestHalfWidthAtMatchesTheSequence(t *testing.T) {
	s := experiment.NewSequence(0)
	for i := range 13 {
		s.Add(0.1 * float64(i%2*2-1)) // +-0.1: sd about 0.104
	}
	got, want := experiment.HalfWidthAt(13, s.SD(), 0.002, 0), s.HalfWidth(0.002)
	if d := got - want; d > 1e-12 || d < -1e-12 {
		t.Errorf("HalfWidthAt %g, the sequence's %g", got, want)
	}
}
