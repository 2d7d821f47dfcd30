package tune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// decider runs tune's experiments on the engine: a knob's values race the incumbent, and the final compares
// the recommendation with the baselines; every experiment draws its share of the run's error budget and gets
// its share of the time left.
type decider struct {
	src       armSource
	clock     clock.Clock
	end       time.Time // the budget's end
	budget    *experiment.Budget
	minEffect float64
	costs     *costs
	progress  func(phase, detail string)
	// hold keeps a race's winner warm before its arms let go of it (nil: nothing to keep warm).
	hold func(knob.Config)
	// mixture is the confidence sequences' g (0: the engine's default) and minRounds the fewest rounds a race
	// is given (0: minRounds): a simulation may choose others (bench/engine chooses them on recorded runs).
	mixture   float64
	minRounds int
	// stackSD is the spread of a stack's own offset, by metric, that comparisons allow for (Spec.StackSD).
	stackSD map[string]float64
	// measuredStackSD: the run's measured bound where larger than stackSD (see tuned).
	measuredStackSD bool
	// duet runs CPU races in duet rounds (Options.Duet) where fit says their arms' stacks fit the memory
	// loaded together (nil: always).
	duet bool
	fit  func([]knob.Config) bool
}

// Splits says whether the goodput race of knob name may run split rounds (Options.Split). Not the pool sizes': a
// duet changes how pools of other sizes fare beside each other (the demo's 4 workers against 2: split rounds read
// +4.9% [+-2.2] more than alternating ones, no steadier); nor keep-alive's, whose share of the machine is what
// varies (split rounds no steadier). docs/engine.md, "Split rounds".
func Splits(name string) bool { return name != knob.KeepaliveName && name != knob.MaxChildrenName }

// race is one knob's race: its candidate values against the incumbent configuration.
type race struct {
	knob   knob.Knob
	from   knob.Config
	values []string
	spec   arms.TrialSpec
	// allowance is the time the race may take; it ends earlier when decided. stretch, when longer, is what it
	// may take while it is promising (a challenger's estimate is in favour but not yet decided): time the later
	// races can spare.
	allowance, stretch time.Duration
}

// raced is what a race decided, and what a second look at it needs.
type raced struct {
	row   KnobRow
	comps []Comparison
	best  knob.Config
	// x is the race's experiment: resumable when the budget or its futility rule ended it undecided.
	x    *experiment.Experiment
	r    race
	cfgs []knob.Config // the arms' configurations, the incumbent first
	arms []experiment.Arm
	spec arms.TrialSpec
	// second is the rounds run in second looks.
	second int
	// stopped is what stopped the run during the race (nil: nothing did).
	stopped error
	// offset is what the engine was told of stacks' offsets, and what the run had measured of them.
	offset StackOffset
}

// minRounds is the fewest rounds worth starting a race for: at a knob's share of alpha, three rounds decide only
// an effect of some 30 standard deviations of a round and two nothing; four decide opcache off (-44%) at this
// machine's noise (bench/engine: a median of 4).
const minRounds = 4

// cost is what a race of k arms, starting cold of them, takes at the least: the arms start side by side.
func (d *decider) cost(spec arms.TrialSpec, k, cold int) time.Duration {
	return startsCost(cold, d.costs.start(spec.StartKind())) + time.Duration(d.least()*k)*d.costs.trial(spec.CostKind())
}

// tuned is es, the experiment of phase's arms, with the engine's parameters the decider was given for trials of
// metric: the mixture, and the spread of stacks' offsets to allow for: stackSD (DefaultStackSD in real runs; a
// simulation may try others), or with measuredStackSD the upper bound of what the run's experiments before
// measured where that is larger (so the allowance only grows where the run shows larger offsets, and an
// experiment's own rounds never set its own). The second figure's allowance is its metric's. It returns what the
// engine was told, and what the run had measured.
func (d *decider) tuned(es experiment.Spec, metric, phase string) (experiment.Spec, StackOffset) {
	told := d.told(metric, phase)
	es.Mixture, es.StackSD = d.mixture, told.Told
	if es.Second != nil {
		// Capacity is read from the servers' CPU clocks, whose offsets the CPU trials measure; a guard's latency
		// offsets are not measured, and its metric's allowance stands for them.
		second, of := *es.Second, MetricCPU
		if second.Guard {
			of = metric
		}
		second.StackSD = d.told(of, phase).Told
		es.Second = &second
	}
	d.src.Tell(phase, told.Told)
	return es, told
}

// told is what phase's experiment of metric allows for of stacks' offsets, and what the run measured before it.
func (d *decider) told(metric, phase string) StackOffset {
	o := d.src.StackOffset(metric, phase)
	o.Told = d.stackSD[metric]
	if d.measuredStackSD && o.Measured() {
		o.Told = max(o.Told, o.Upper)
	}
	return o
}

// least is the fewest rounds a race is given.
func (d *decider) least() int { return cmp.Or(d.minRounds, minRounds) }

// startsCost is what starting cold arms side by side takes: about one start (settling is waiting for php-fpm).
func startsCost(cold int, start time.Duration) time.Duration {
	if cold <= 0 {
		return 0
	}
	return start + time.Duration(cold-1)*start/4
}

// StartsCost is what starting cold stacks side by side takes (startsCost), for the simulations' tables.
func StartsCost(cold int, start time.Duration) time.Duration { return startsCost(cold, start) }

// race runs r. The winner is the incumbent unless a candidate was shown better. An incumbent that fails
// (its stack died) is an error of the run; a candidate that fails is an error of its own.
func (d *decider) race(ctx context.Context, r race) (*raced, error) {
	rc, err := d.arms(r)
	if err != nil {
		return nil, err
	}
	k, n, metric := r.knob, len(rc.arms), rc.spec.Metric
	// A race that shows nothing after a third of the rounds its time allows ends then (at least 8 rounds in).
	affordable := int(r.allowance / (time.Duration(n) * d.costs.trial(rc.spec.CostKind())))
	es := experiment.Spec{Name: k.Name, Arms: rc.arms, Mode: experiment.Race, HigherIsBetter: true, MinEffect: d.minEffect,
		Alpha: d.budget.Draw(experiment.Pairs(experiment.Race, n)), RunAlpha: d.budget.Total(), FutileAfter: max(8, affordable/3),
		ParallelStart: true, Duet: rc.spec.Duet, Split: rc.spec.Split,
		Continue: d.within(d.clock.Now(), r.allowance, r.stretch, n, rc.spec.CostKind()),
		Progress: func(p experiment.Progress) {
			if d.progress != nil {
				d.progress("knob "+k.Name, fmt.Sprintf("round %d, %s=%s (%d in the race)", p.Round, k.Name, orUnset(p.Arm), p.Live))
			}
		}}
	if rc.spec.Tail {
		es.Second = &experiment.Figure{Name: "p99", Guard: true}
	}
	es, rc.offset = d.tuned(es, metric, r.spec.Phase)
	if rc.x, err = experiment.New(es); err != nil {
		return nil, err
	}
	out, err := rc.x.Run(ctx)
	rc.stopped = err
	d.ended(rc, out, d.hold)
	if out == nil {
		return nil, err
	}
	return rc, err
}

// resume gives a race that ended undecided for want of time up to allowance more: its arms still in start
// again and it runs on until decided. Its row and comparisons are the whole race's; apply hears of its winner
// before the arms let go of them.
func (d *decider) resume(ctx context.Context, rc *raced, allowance time.Duration, apply func(knob.Config)) error {
	l := rc.x.Look()
	out, err := rc.x.Resume(ctx, d.within(d.clock.Now(), allowance, 0, l.Live, rc.spec.CostKind()))
	rc.second += out.Rounds - l.Rounds
	rc.stopped = err
	d.ended(rc, out, apply)
	return err
}

// within is a race's Continue: a round fits while the race's time since began stays within limit and the budget
// has not ended; a promising race runs on to stretch when its decision is in reach there. A race's first
// minRounds rounds are its least, whatever they take (a slow value, such as opcache off, takes several times
// the trials that were planned), within the budget.
func (d *decider) within(began time.Time, limit, stretch time.Duration, n int, kind string) func(experiment.Look) bool {
	return func(l experiment.Look) bool {
		round := time.Duration(n) * d.costs.trial(kind)
		next := d.clock.Now().Add(round)
		if l.Rounds < d.least() {
			return next.Before(d.end)
		}
		lim := limit
		if l.Promising && l.Needed > l.Rounds && d.clock.Now().Add(time.Duration(l.Needed-l.Rounds)*round).Sub(began) <= stretch {
			lim = max(lim, stretch)
		}
		return next.Sub(began) <= lim && next.Before(d.end)
	}
}

// arms makes r's arms: the incumbent configuration first, then each candidate value's.
func (d *decider) arms(r race) (*raced, error) {
	k := r.knob
	rc := &raced{r: r, cfgs: []knob.Config{r.from}, spec: r.spec}
	for _, v := range r.values {
		c := r.from.Clone()
		if err := k.Set(&c, v); err != nil {
			return nil, fmt.Errorf("knob %s=%s: %w", k.Name, v, err)
		}
		rc.cfgs = append(rc.cfgs, c)
	}
	if k.Load != nil {
		for _, c := range rc.cfgs {
			rc.spec.Conc = max(rc.spec.Conc, k.Load(r.spec.Conc, c))
		}
	}
	// A duet round loads every arm's stack at once: where they would not fit the memory together (a container's
	// limit, a pool sized to fill it), the rounds alternate, one stack loaded at a time, rather than meet the
	// OOM killer.
	fits := d.fit == nil || d.fit(rc.cfgs)
	rc.spec.Duet = d.duet && rc.spec.Metric == MetricCPU && fits
	rc.spec.Split = rc.spec.Split && fits // as planned (tuner.specOf)
	for i, c := range rc.cfgs {
		s := rc.spec
		if i > 0 && k.Check != nil {
			s.Check = k.Check
		}
		a := &timedArm{Arm: d.src.Arm(c, s), name: orUnset(k.Get(c)), c: d.costs, clock: d.clock, metric: rc.spec.CostKind(), kind: rc.spec.StartKind()}
		if rc.spec.Tail {
			rc.arms = append(rc.arms, tailArm{a})
			continue
		}
		rc.arms = append(rc.arms, a)
	}
	return rc, nil
}

// ended tells keep of the race's winner (to keep its stack warm before the arms let go of it), lets go of every
// arm and reports the outcome (nil: nothing to report).
func (d *decider) ended(rc *raced, out *experiment.Outcome, keep func(knob.Config)) {
	if out != nil && keep != nil {
		keep(rc.cfgs[out.Winner])
	}
	stopAll(rc.arms)
	if out != nil {
		d.report(rc, out)
	}
}

// stopAll stops the arms side by side: each waits for its servers to exit.
func stopAll(as []experiment.Arm) {
	var wg sync.WaitGroup
	for _, a := range as {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Stop()
		}()
	}
	wg.Wait()
}

// report turns a race's outcome into the knob's row and its comparisons.
func (d *decider) report(rc *raced, out *experiment.Outcome) {
	k, r, cfgs, spec, res := rc.r.knob, rc.r, rc.cfgs, rc.spec, rc
	from := k.Get(r.from)
	res.best, res.comps = cfgs[out.Winner], nil
	inc := out.Arms[0]
	for i, a := range out.Arms[1:] {
		c := Comparison{Knob: k.Name, A: from, B: r.values[i], Config: cfgs[i+1].String(), Metric: spec.Metric,
			ValueA: medianOf(inc.Trials, value), ValueB: medianOf(a.Trials, value), RPSA: medianOf(inc.Trials, rate),
			RPSB: medianOf(a.Trials, rate), ErrorsA: inc.Errors, ErrorsB: a.Errors, Rounds: len(a.Trials),
			Status: a.Status, Accepted: out.Winner == i+1, Note: a.Note}
		if a.Vs != nil {
			c.Stats = *a.Vs
		}
		if spec.Tail {
			c.P99 = a.Vs2
		}
		if errors.Is(a.Err, arms.ErrNotInEffect) {
			c.Stats = stats.Comparison{}
			c.Note, c.NotTried = notTriedWords+a.Note, true
		}
		res.comps = append(res.comps, c)
	}
	row := KnobRow{Name: k.Name, Value: k.Get(res.best), From: from, Metric: spec.Metric, Rounds: out.Rounds, StackSD: &rc.offset,
		State: StateRaced}
	var notes []string
	why := "" // a race that compared nothing: why, when none of its candidates got a round
	if spec.Tail {
		var note string
		row.Traded, note = tailNotes(from, row.Value, out.Winner != 0, res.comps, d.minEffect)
		notes = appendNonEmpty(notes, row.Traded, note)
	}
	idx, dec := out.Decisive()
	for _, c := range res.comps {
		if c.NotTried {
			notes = append(notes, fmt.Sprintf("%s=%s %s", k.Name, orUnset(c.B), c.Note))
		}
	}
	switch {
	case dec == nil:
		// No candidate shared a round with the incumbent: every one failed, was not in effect, or the budget
		// ended first.
		failed := 0
		for _, c := range res.comps {
			if c.Stats.Verdict == stats.Error {
				failed++
				notes = append(notes, fmt.Sprintf("%s=%s failed: %s", k.Name, orUnset(c.B), c.Note))
			}
		}
		if failed > 0 {
			row.Verdict = stats.Error
			break
		}
		row.State = StateNotTried
		if len(notes) == 0 {
			why = endedBefore(out, rc.stopped)
			notes = append(notes, notTriedWords+why)
		}
	default:
		c := res.comps[idx-1]
		row.EffectPct, row.CILowPct, row.CIHighPct = 100*dec.Estimate, 100*dec.Lo, 100*dec.Hi
		row.Verdict = dec.Verdict
		row.setVersus(k.Name, c.B, from)
		if c.Note != "" && c.Note != "no better than "+orUnset(from) && c.Note != "worse than "+orUnset(from) &&
			(row.Traded == "" || !c.outForTail()) { // the trade says it
			notes = append(notes, c.Note)
		}
		if dec.OnErrors {
			// Decided on failed requests, whatever the figure's interval says: the row says so, with the
			// engine's account of them (a failing challenger's is its note, above).
			notes = append(notes, "decided on failed requests")
			if inc.Errors > 0 {
				notes = append(notes, inc.Note)
			}
		}
		if dec.Via != "" {
			notes = append(notes, fmt.Sprintf("its interval through %s=%s, which was shown %s than %s=%s and %s than %s=%s (all of a race's pairs hold at once)",
				k.Name, orUnset(dec.Via), betterOrWorse(dec.Lo > 0), k.Name, orUnset(from), betterOrWorse(dec.Lo <= 0), k.Name, orUnset(c.B)))
		}
		if dec.Verdict == stats.Inconclusive {
			live := 0
			for _, a := range out.Arms {
				if a.Status == experiment.StatusOpen || a.Status == experiment.StatusWinner {
					live++
				}
			}
			if !c.outForTail() { // it left the race: more rounds would not run it
				row.Need = Need(dec.RoundsNeeded, out.Rounds, time.Duration(max(live, 2))*d.costs.trial(spec.CostKind()))
			}
			if out.Winner != 0 && inc.Status == experiment.StatusDropped {
				// The pick by way of another value: the incumbent was shown worse than one that lost to it.
				notes = append(notes, fmt.Sprintf("%s=%s is the race's pick: %s=%s was shown %s", k.Name, orUnset(row.Value), k.Name, orUnset(from), inc.Note))
			}
		}
	}
	if rc.second > 0 {
		notes = append(notes, fmt.Sprintf("%s of them in a second look, once the other knobs were done", plural(rc.second, "round", "rounds")))
	}
	if dec != nil && (out.Ended == experiment.EndError || out.Ended == experiment.EndInterrupted) {
		notes = append(notes, endedAfter(out, rc.stopped))
	}
	row.Note = strings.Join(notes, "; ")
	if row.State == StateNotTried {
		row.Reason = row.Note // the candidates not in effect, each with its why
		if why != "" {
			row.Reason = strings.Join(append([]string{why}, notes[1:]...), "; ")
		}
	}
	res.row = row
}

// endedBefore says why a race that never completed a round did not: the run stopped (an error of the incumbent,
// an interruption), or the budget ended.
func endedBefore(out *experiment.Outcome, why error) string {
	switch out.Ended {
	case experiment.EndInterrupted:
		return "the run was interrupted before its first round"
	case experiment.EndError:
		if errors.Is(why, arms.ErrOOM) {
			return "the race ended before its first round: " + errText(why)
		}
		return "the run stopped before its first round: " + errText(why)
	}
	return "the budget ended before its first round"
}

// endedAfter says that the run stopped during a race that had rounds, and why.
func endedAfter(out *experiment.Outcome, why error) string {
	if out.Ended == experiment.EndInterrupted {
		return fmt.Sprintf("the run was interrupted after %s", plural(out.Rounds, "round", "rounds"))
	}
	if errors.Is(why, arms.ErrOOM) {
		// Memory, not the value: the race ends undecided and the run goes on.
		return fmt.Sprintf("the race ended after %s: %s", plural(out.Rounds, "round", "rounds"), errText(why))
	}
	return fmt.Sprintf("the run stopped after %s: %s", plural(out.Rounds, "round", "rounds"), errText(why))
}

// appendNonEmpty appends the notes that say something.
func appendNonEmpty(notes []string, more ...string) []string {
	for _, n := range more {
		if n != "" {
			notes = append(notes, n)
		}
	}
	return notes
}

func errText(err error) string {
	if err == nil {
		return "an error"
	}
	return err.Error()
}

// betterOrWorse words a chained comparison (its interval excludes zero; tune's figures point up).
func betterOrWorse(better bool) string {
	if better {
		return "better"
	}
	return "worse"
}

// Need says what would decide an inconclusive comparison: the rounds in all, and about how much more time at
// perRound a round.
func Need(rounds, done int, perRound time.Duration) string {
	if rounds <= 0 {
		return ""
	}
	more := time.Duration(max(rounds-done, 1)) * perRound
	if rounds >= experiment.MaxRoundsNeeded {
		return fmt.Sprintf("more than 1000 rounds (over %s more): the difference is about the minimum effect", more.Round(time.Minute))
	}
	return fmt.Sprintf("about %d rounds (%s more)", rounds, more.Round(time.Second))
}

func value(o experiment.Observation) float64 { return o.Value }
func rate(o experiment.Observation) float64  { return o.Rate }

func medianOf(obs []experiment.Observation, f func(experiment.Observation) float64) float64 {
	var v []float64
	for _, o := range obs {
		v = append(v, f(o))
	}
	if len(v) == 0 {
		return 0
	}
	m := stats.Median(v)
	if math.IsNaN(m) {
		return 0
	}
	return m
}
