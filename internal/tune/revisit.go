package tune

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// openRace is a race kept for a second look, with its entry in the ledger, which each look updates.
type openRace struct {
	rc    *raced
	e     *knobEntry
	looks int
	// sizes are the pool's sizes, smallest first, when it is the sizes' race (sizesLook takes its second look).
	sizes []int
	// again says what the sizes' race showed before it was raced again (sizesLook).
	again string
	// decidedNote is a decided sizes' race's note before a look at its smaller sizes that showed nothing more.
	decidedNote string
}

// maxLooks bounds the second looks at one race: each is given time for the rounds its estimate needs, and one
// that is still undecided after that many is nearer the minimum effect than its spread showed.
const maxLooks = 2

// raceDone records what a race decided and keeps it for a second look.
func (t *tuner) raceDone(rc *raced) {
	rc.row.screenFirst(t.screenNotes(rc.r.knob.Name))
	t.open = append(t.open, &openRace{rc: rc, e: t.log.addKnob(rc.row, rc.comps...)})
	t.setBest(rc.best)
}

// revisit spends the time the races left unused (the ones that decided early, or showed nothing and stopped)
// on the comparisons left undecided for want of time, the one nearest to a decision first: a race runs on with
// the same arms, its pairs' confidence sequences carrying on from where they stopped (valid at any stopping
// time, so a pause changes nothing) and their alpha the share they were given. Its verdict, like its first
// rounds', is about the configuration it was raced in; a value it now shows better is set in the best
// configuration as it stands (later knobs' choices kept), as any knob's winner is (coordinate ascent), and the
// final comparison measures the result.
func (t *tuner) revisit(ctx context.Context) error {
	for looks := 0; ; looks++ {
		o, cost := t.nextLook()
		if o == nil {
			t.plan.SecondLooks = t.looksNote(looks)
			return nil
		}
		// What the final keeps is read before the look is counted: counted, the sizes' look no longer claims its
		// time (sizesOpen), and the final's keep would take it back from the look it was kept for.
		spare := t.left() - t.finalKeep()
		o.looks++
		allow := min(spare, cost+cost/2)
		t.status("second look "+o.rc.r.knob.Name, fmt.Sprintf("%s left undecided; about %s to decide", o.rc.row.Versus(), cost.Round(time.Second)))
		k := o.rc.r.knob
		if o.sizes != nil {
			if err := t.sizesLook(ctx, o, allow); err != nil {
				return err
			}
			continue
		}
		if t.moved(o.rc) {
			if err := t.raceAgain(ctx, o, spare); err != nil {
				return err
			}
			continue
		}
		err := t.d.resume(ctx, o.rc, allow, func(winner knob.Config) {
			if v := k.Get(winner); v != k.Get(t.best) {
				next := t.best.Clone()
				if k.Set(&next, v) == nil {
					next.MaxChildren = t.sizeKept(k.Name, v, next.MaxChildren)
					t.setBest(next) // kept warm when it is the winner's own configuration
				}
			}
		})
		o.rc.row.screenFirst(t.screenNotes(k.Name))
		o.e.row, o.e.comps = o.rc.row, o.rc.comps
		if err != nil {
			return err
		}
	}
}

// sizeKept is the pool's size once a second look sets the server v, which set size: the server's race gives each
// runtime its size (sizeRuntimes), but the pool sizes' race came after it, and its size is a later knob's choice,
// kept (within the runtime's memory). A 3-minute demo's look adopted mod_php at the 4 workers it was raced at,
// where the sizes' race had kept 5: the row said 5, the files 4 (2026-11-27).
func (t *tuner) sizeKept(name, v string, size int) int {
	if name != knob.ServerName || t.runtimes == nil {
		return size
	}
	n := t.best.MaxChildren
	for _, r := range t.runtimes.table.List {
		if r.Server == v && r.MemoryLimit > 0 {
			n = min(n, r.MemoryLimit)
		}
	}
	return n
}

// moved says whether what rc's race measured has changed since: a knob adopted after it, which its arms would
// now run with (the JIT, say, under a race of preload: the demo's preload gains 9% with the JIT off and loses
// 12% with it on).
func (t *tuner) moved(rc *raced) bool {
	// Both with the knob set by Set, which may leave its own traces (jit=off writes opcache.jit=disable).
	k, v := rc.r.knob, rc.r.knob.Get(rc.r.from)
	now, was := t.best.Clone(), rc.r.from.Clone()
	if k.Set(&now, v) != nil || k.Set(&was, v) != nil {
		return true
	}
	return measures(now, rc.spec) != measures(was, rc.spec)
}

// measures is what a race's arms measure of cfg: the configuration they run, less what cannot move their figure.
// A CPU race's figure is what a request costs a worker, whatever the pool's size: the pool-size race, which
// comes after the CPU races, must not send them back to race again (WordPress's JIT, raced on a twin of 4 and
// the pool then sized 2, lost its 16 rounds to a fresh race).
func measures(cfg knob.Config, spec arms.TrialSpec) string {
	c := arms.RunsOn(cfg, spec)
	if spec.Metric == MetricCPU {
		c.MaxChildren = 0
	}
	return c.Key()
}

// raceAgain runs o's race again from the best configuration as it now stands, in the time spare the final
// leaves, in place of a second look that would go on in the configuration it was raced in: a value shown better there would be set beside changes it
// was never measured with. It is a new race with a share of the error budget of its own; its row replaces o's,
// and says what the first race showed.
func (t *tuner) raceAgain(ctx context.Context, o *openRace, spare time.Duration) error {
	k, first := o.rc.r.knob, o.rc.row
	from := t.best.Clone()
	// Set only where the value differs: setting the value a configuration has leaves the knob's traces (jit off
	// writes opcache.jit=disable), and a recommendation that differed from Debian's defaults by them alone (Symfony,
	// ra40: "opcache.jit unset -> disable").
	if v := k.Get(o.rc.r.from); k.Get(from) != v {
		if err := k.Set(&from, v); err != nil {
			return err
		}
	}
	nArms, spec := len(o.rc.r.values)+1, o.rc.spec
	// As a second look's: the rounds the first race's estimate needed, and half as many again.
	need := startsCost(nArms, t.costs.start(spec.StartKind())) + time.Duration(o.rc.x.Look().Needed*nArms)*t.costs.trial(spec.CostKind())
	allow := min(spare, need+need/2)
	t.status("second look "+k.Name, "raced again: the configuration it was raced in has changed since")
	t.budget.Plan(experiment.Pairs(experiment.Race, nArms))
	r, err := t.d.race(ctx, race{knob: k, from: from, values: o.rc.r.values, allowance: allow, spec: spec})
	if r == nil {
		return err
	}
	again := fmt.Sprintf("Raced again in a second look, once the configuration it was first raced in had changed (then: %s %s %+.1f%% [%+.1f%%, %+.1f%%] in %d rounds).",
		first.Versus(), first.Verdict, first.EffectPct, first.CILowPct, first.CIHighPct, first.Rounds)
	r.row.Note = strings.TrimSpace(r.row.Note + " " + again)
	if r.row.Reason != "" {
		r.row.Reason += " " + again // a race again that compared nothing: its reason is what a reader is shown
	}
	o.rc = r
	o.e.earlier = append(o.e.earlier, o.e.comps...)
	o.e.row, o.e.comps = r.row, r.comps
	t.setBest(r.best)
	return err
}

// lookable says whether o may have another look: undecided for want of time, and not yet looked at maxLooks
// times.
func (o *openRace) lookable() bool {
	return o.looks < maxLooks && o.rc.row.Verdict == stats.Inconclusive && o.rc.x.Resumable()
}

// narrowable says whether o is the sizes' race, decided on a size shown within the margin while a smaller one is
// still open for want of time, with a look left: a look may show the smaller one within too (less memory for the
// same service) or worse. Only where nothing it runs has changed since: raced again, a decided size could end
// open. The 10-minute demo decided 8 with 4 open and ended 4 minutes early (2026-11-27, runs 7 and 8).
func (t *tuner) narrowable(o *openRace) bool {
	return o.sizes != nil && o.looks < maxLooks && o.rc.row.Verdict == NonInferior && o.rc.x.Resumable() && !t.moved(o.rc)
}

// nextLook is the undecided race whose decision is expected to cost the least and fits in the time left
// before the final comparison, with that cost. When none fits, the time left goes to the nearest one that can
// run at least minRounds more rounds in it, even one whose estimate says a thousand rounds (the estimate is
// rough, more rounds can only help: the sequence holds at any stopping time, and the budget is the user's to
// spend), with the time left as its cost; nil when none can. With no undecided race to look at, the sizes' race
// decided with a smaller size open (narrowable) is looked at by the same rule.
func (t *tuner) nextLook() (*openRace, time.Duration) {
	// The sizes' look first where the final's keep left it room (sizesOpen): a cheaper look would take that room.
	left := t.left()
	if o, cost := t.sizesOpen(left); o != nil {
		if cost <= left-t.finalShareAt(left).keep() {
			return o, cost
		}
	}
	if o, cost := t.cheapestLook((*openRace).lookable); o != nil {
		return o, cost
	}
	// Every undecided race first: a decided pool made smaller is a refinement, an undecided knob a missing answer.
	return t.cheapestLook(t.narrowable)
}

// cheapestLook is nextLook's choice among the open races that may take a look.
func (t *tuner) cheapestLook(may func(*openRace) bool) (*openRace, time.Duration) {
	spare := t.left() - t.finalKeep()
	var pick, near *openRace
	var best, nearCost time.Duration
	nearPromising := false
	for _, o := range t.open {
		rc := o.rc
		if !may(o) {
			continue
		}
		l := rc.x.Look()
		if l.Needed <= l.Rounds {
			continue
		}
		starts, trial := t.lookCosts(o, l)
		cost := starts + time.Duration(l.Needed-l.Rounds)*trial
		if l.Needed < experiment.MaxRoundsNeeded && cost <= spare && (pick == nil || cost < best) {
			pick, best = o, cost
		}
		if starts+time.Duration(t.d.least())*trial <= spare && (near == nil || l.Promising && !nearPromising ||
			l.Promising == nearPromising && cost < nearCost) {
			near, nearCost, nearPromising = o, cost, l.Promising
		}
	}
	if pick == nil && near != nil {
		return near, spare
	}
	return pick, best
}

// lookCosts is what a second look at o costs to start its arms and to run one round: the challengers still in
// start again, the incumbent too unless it is the best so far, held warm (a CPU trial's static twin never is).
func (t *tuner) lookCosts(o *openRace, l experiment.Look) (starts, round time.Duration) {
	rc := o.rc
	cold := planned{arms: l.Live, spec: rc.spec}.coldArms()
	if !rc.spec.Twin() && rc.best.Key() != t.best.Key() {
		cold++
	}
	return startsCost(cold, t.costs.start(rc.spec.StartKind())), time.Duration(l.Live) * t.costs.trial(rc.spec.CostKind())
}

// looksNote says what the second looks did once none is left to take: how many were taken, the time left and
// what the final was kept, and the nearest open race's cost.
func (t *tuner) looksNote(looks int) string {
	left, keep := t.left(), t.finalKeep()
	note := fmt.Sprintf("%d taken; then %s left, %s of it kept for the final", looks, left.Round(time.Second), keep.Round(time.Second))
	var near *openRace
	var nearCost time.Duration
	for _, o := range t.open {
		if !o.lookable() {
			continue
		}
		l := o.rc.x.Look()
		starts, trial := t.lookCosts(o, l)
		if cost := starts + time.Duration(max(l.Needed-l.Rounds, t.d.least()))*trial; near == nil || cost < nearCost {
			near, nearCost = o, cost
		}
	}
	if near != nil {
		note += fmt.Sprintf("; the nearest open race, %s, would take %s", near.rc.r.knob.Name, nearCost.Round(time.Second))
	}
	return note
}
