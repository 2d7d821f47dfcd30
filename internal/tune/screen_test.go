package tune

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
)

// TestTheScreenGivesUpACountThatCannotPay: a count of the starting point still running when counting every
// candidate could no longer fit in the screen's sixth of the budget is given up then, not waited for; a count that
// ends in time goes on to the candidates.
func TestTheScreenGivesUpACountThatCannotPay(t *testing.T) {
	for _, slow := range []bool{true, false} {
		tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("preload.php", nil), Budget: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		tu.sat = &Saturation{NoiseSD: 0.1}
		counts := 0
		count := func(ctx context.Context, _ knob.Config) (float64, error) {
			counts++
			if slow {
				<-ctx.Done() // a count that would run on: only the screen's own deadline ends it
				return 0, ctx.Err()
			}
			return 1000, nil
		}
		tu.o.Screen = &Screener{Instructions: count, Syscalls: count}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = tu.screen(ctx)
		cancel()
		switch {
		case err != nil:
			t.Fatalf("slow=%v: %v", slow, err)
		case slow && (counts != 1 || len(tu.log.screens) != 0 || !strings.Contains(tu.plan.ScreenNote, "took more than")):
			t.Errorf("slow count: %d counts, %d screens, note %q; want it given up after the first", counts,
				len(tu.log.screens), tu.plan.ScreenNote)
		case !slow && len(tu.log.screens) == 0:
			t.Errorf("quick count: no candidate screened (note %q)", tu.plan.ScreenNote)
		}
	}
}

// screenedAlike is a tuner of every knob, an hour's budget, whose screen counted every candidate doing the same
// work as the starting point.
func screenedAlike(t *testing.T) *tuner {
	t.Helper()
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("preload.php", nil), Budget: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tu.sat = &Saturation{NoiseSD: 0.1}
	same := func(context.Context, knob.Config) (float64, error) { return 1000, nil }
	tu.o.Screen = &Screener{Instructions: same, Syscalls: same}
	if err := tu.screen(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tu
}

// TestScreenedRowIsNoStatisticalVerdict: a CPU-only knob whose every candidate the screen counted doing the same
// work gets the row "screened" on metric work, with no interval and no rounds: a count, not a timed
// no_difference; its JSON says "screened".
func TestScreenedRowIsNoStatisticalVerdict(t *testing.T) {
	tu := screenedAlike(t)
	rows := 0
	for _, k := range tu.o.Knobs {
		if len(tu.screenNotes(k.Name)) == 0 {
			continue
		}
		row, ok := tu.notRaced(k)
		if !ok {
			continue // a candidate the screen did not take is left to a race
		}
		rows++
		if row.Verdict != Screened || row.Metric != MetricWork || row.Rounds != 0 || row.CILowPct != 0 || row.CIHighPct != 0 {
			t.Errorf("%s: %+v, want screened on work, no interval", k.Name, row)
		}
		b, _ := json.Marshal(row)
		if !strings.Contains(string(b), `"verdict":"screened"`) {
			t.Errorf("%s: JSON %s", k.Name, b)
		}
	}
	if rows == 0 {
		t.Fatalf("no knob screened whole (note %q, %d screens)", tu.plan.ScreenNote, len(tu.log.screens))
	}
}

// TestTheScreenBoundsACandidatesCount: a candidate's count that runs past the screen's sixth of the budget is
// given up at its end and the candidate left to the timed trials, saying so; the screen then stops (WordPress's
// candidates, counted unbounded, took 546 s of a 20-minute run's 200 s share).
func TestTheScreenBoundsACandidatesCount(t *testing.T) {
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knob.All("preload.php", nil), Budget: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tu.sat = &Saturation{NoiseSD: 0.5} // a no-op race long enough that the screen pays
	counts := 0
	count := func(ctx context.Context, _ knob.Config) (float64, error) {
		counts++
		if counts == 1 {
			return 1000, nil // the starting point's count: quick
		}
		<-ctx.Done() // a candidate's count that would run on
		return 0, ctx.Err()
	}
	tu.o.Screen = &Screener{Instructions: count, Syscalls: count}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	began := time.Now()
	if err := tu.screen(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 8*time.Second {
		t.Errorf("the screen took %s of a 5 s share", took)
	}
	if len(tu.log.screens) != 1 || !tu.log.screens[0].Survived ||
		!strings.Contains(tu.log.screens[0].Note, "ran past the screen's sixth of the budget") {
		t.Fatalf("screens %+v: want one candidate left to the trials, its count past the screen's share", tu.log.screens)
	}
}

// TestTheJITIsNeverScreened: where every count is alike, every CPU-only knob's candidates are counted and the
// JIT's are not: its instructions are neither its time nor, before its code is hot, its work (WordPress's tracing
// JIT counted +0.6% in the screen and was dropped; it saves 2.6% of CPU time a request).
func TestTheJITIsNeverScreened(t *testing.T) {
	tu := screenedAlike(t)
	counted := map[string]bool{}
	for _, sc := range tu.log.screens {
		counted[sc.Knob] = true
	}
	if counted["jit"] || !counted["opcache"] {
		t.Errorf("knobs counted: %v; want opcache's candidates, not the JIT's", counted)
	}
}
