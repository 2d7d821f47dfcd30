package tune

import (
	"context"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/experiment"
)

// sizesLook is a second look at the sizes' race, as at any race (revisit): it runs on with the same sizes, or
// from the best configuration as it now stands where a knob decided after it changed what its sizes run
// (keep-alive, the listen socket...). The 10-minute demo's sizes race stopped itself after 4 or 5 rounds, its
// estimate needing more than its share, and the runs then ended a minute or two early with the size open
// (2026-11-26). Decided, the pick is set in the best configuration and the final loads it.
func (t *tuner) sizesLook(ctx context.Context, o *openRace, allow time.Duration) error {
	rc, again := o.rc, t.moved(o.rc)
	first, before := rc.row, rc.x.Look().Rounds
	var out *experiment.Outcome
	var err error
	if again {
		t.status("second look "+rc.r.knob.Name, "raced again: the configuration it was raced in has changed since")
		t.budget.Plan(experiment.Pairs(experiment.Smallest, len(o.sizes)))
		cont := t.d.within(t.clock.Now(), allow, 0, len(o.sizes), rc.spec.CostKind())
		if rc, out, err = t.runSizes(ctx, t.best, o.sizes, rc.spec, cont); out == nil {
			return err
		}
		before = 0
	} else {
		l := rc.x.Look()
		out, err = rc.x.Resume(ctx, t.d.within(t.clock.Now(), allow, 0, l.Live, rc.spec.CostKind()))
		err = t.sizesErr(ctx, rc, out, err)
	}
	rc.second += out.Rounds - before
	saved := *t.pool
	pick, row, comps := t.sizesRow(o.sizes, rc.spec, out)
	if first.Verdict == NonInferior && row.Verdict != NonInferior {
		// A look at a decided race's smaller sizes that ended with no size shown within: the claim made before
		// stands (a confidence sequence holds at every look, and so at the one that decided), as do its row and
		// pick; the rounds after it are said.
		*t.pool = saved
		if o.decidedNote == "" {
			o.decidedNote = first.Note
		}
		o.e.row.Note = fmt.Sprintf("%s; %s more in a second look at the smaller sizes showed nothing more",
			o.decidedNote, plural(out.Rounds-first.Rounds, "round", "rounds"))
		rc.row = o.e.row
		t.sizesPicked(rc, t.best)
		return err
	}
	if again {
		o.again = fmt.Sprintf("raced again in a second look, once the configuration it was first raced in had changed "+
			"(then: %s, %s in %s)", orUnset(first.Value), first.Verdict, plural(first.Rounds, "round", "rounds"))
	}
	row.Note = fmt.Sprintf("%s; %s of them in a second look, once the other knobs were done", row.Note,
		plural(rc.second, "round", "rounds"))
	if o.again != "" {
		row.Note += "; " + o.again
	}
	rc.row, rc.comps, o.rc = row, comps, rc
	o.e.row, o.e.comps = row, comps
	// The pick is set in the best as it stands: the knobs decided after the race keep their choices.
	next := t.best.Clone()
	next.MaxChildren = pick
	t.sizesPicked(rc, next)
	return err
}
