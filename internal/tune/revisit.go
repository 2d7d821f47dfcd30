package tune

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// openRace is a race kept for a second look: where its row and comparisons are in the result.
type openRace struct {
	rc    *raced
	row   int // its index in res.Knobs
	comp  int // its first comparison's index in res.Comparisons
	looks int
}

// maxLooks bounds the second looks at one race: each is given time for the rounds its estimate needs, and one
// that is still undecided after that many is nearer the minimum effect than its spread showed.
const maxLooks = 2

// raceDone records what a race decided and keeps it for a second look.
func (t *tuner) raceDone(rc *raced) {
	rc.row.Note = strings.TrimSpace(strings.Join(append(t.screenNotes(rc.r.knob.Name), rc.row.Note), " "))
	t.open = append(t.open, &openRace{rc: rc, row: len(t.res.Knobs), comp: len(t.res.Comparisons)})
	t.res.Knobs = append(t.res.Knobs, rc.row)
	t.res.Comparisons = append(t.res.Comparisons, rc.comps...)
	t.setBest(rc.best)
}

// revisit spends the time the races left unused (the ones that decided early, or showed nothing and stopped)
// on the comparisons left undecided for want of time, the one nearest to a decision first: a race runs on,
// its pairs' confidence sequences carrying on from where they stopped (valid at any stopping time, so a pause
// changes nothing) and their alpha the share they were given. Only a race whose configurations are still
// the ones compared is resumed: its winner is still the best (no later knob changed anything), so its verdict
// speaks of the recommendation.
func (t *tuner) revisit(ctx context.Context) error {
	for {
		o, cost := t.nextLook()
		if o == nil {
			return nil
		}
		o.looks++
		allow := min(t.left()-t.finalLeast(), cost+cost/2)
		t.status("second look "+o.rc.r.knob.Name, fmt.Sprintf("%s left undecided; about %s to decide", o.rc.row.Compared, cost.Round(time.Second)))
		err := t.d.resume(ctx, o.rc, allow)
		o.rc.row.Note = strings.TrimSpace(strings.Join(append(t.screenNotes(o.rc.r.knob.Name), o.rc.row.Note), " "))
		t.res.Knobs[o.row] = o.rc.row
		copy(t.res.Comparisons[o.comp:], o.rc.comps)
		t.setBest(o.rc.best)
		if err != nil {
			return err
		}
	}
}

// nextLook is the undecided race whose decision is expected to cost the least and fits in the time left
// before the final comparison, with that cost; nil when none does.
func (t *tuner) nextLook() (*openRace, time.Duration) {
	spare := t.left() - t.finalLeast()
	var pick *openRace
	var best time.Duration
	for _, o := range t.open {
		rc := o.rc
		if o.looks >= maxLooks || rc.row.Verdict != stats.Inconclusive || !rc.x.Resumable() || rc.best.Key() != t.best.Key() {
			continue
		}
		l := rc.x.Look()
		if l.Needed <= l.Rounds || l.Needed >= experiment.MaxRoundsNeeded {
			continue
		}
		// The challengers still in start again; the incumbent is the best so far, held warm, unless CPU trials
		// run it as its static twin.
		cold := planned{arms: l.Live, metric: rc.spec.Metric}.coldArms()
		cost := startsCost(cold, t.costs.start(rc.spec.Metric)) + time.Duration((l.Needed-l.Rounds)*l.Live)*t.costs.trial(rc.spec.Metric)
		if cost <= spare && (pick == nil || cost < best) {
			pick, best = o, cost
		}
	}
	return pick, best
}
