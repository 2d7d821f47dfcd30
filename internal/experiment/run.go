package experiment

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/phptune/phptune/internal/stats"
)

// run is one experiment in progress.
type run struct {
	s    Spec
	out  *Outcome
	live []int // arms still in, in index order
	// seq[i][j], i < j: the log ratios of arm j against arm i over their common rounds, oriented so that
	// positive means j is better; seq2 the same of the second figure (nil without one).
	seq, seq2 [][]*Sequence
	// fails[i][j], i < j: the pair's failed trials.
	fails [][]failTally
	// spill is the arm whose trial, the last of the round before, had failures (-1: none): a stall that outlasts
	// it fails the next trial too, which in AB, BA order is the same arm's (roundSpill).
	spill     int
	pairAlpha float64
	// scheduled counts the rounds since the live set last changed: the balanced orders start over then.
	scheduled int
	orders    [][]int
	// benched, in Versus, are the arms whose comparisons yielded their rounds (yieldHopeless): out of the rounds
	// but not stopped, and back in once the others are decided.
	benched []int
	// beaten, in a race, is why the incumbent lost ("worse than B") while it is kept as the reference: until
	// every challenger still in is decided against it, so that the race's pick can be stated against it.
	beaten string
	// beatenBy is the arm that beat it: should a guard take that arm out, the incumbent is the reference again.
	beatenBy int
	// kept[f][j], in Versus, is arm j's comparison with Arms[0] on figure f (0 the Value, 1 the second) as the
	// look that first decided it stated it (nil: undecided so far; kept.go).
	kept [2][]*stats.Comparison
}

func newRun(s Spec) *run {
	if !(s.RunAlpha > 0 && s.RunAlpha < 1) {
		s.RunAlpha = stats.DefaultAlpha
	}
	if !(s.Alpha > 0 && s.Alpha < 1) {
		s.Alpha = s.RunAlpha
	}
	s.MinEffect = max(s.MinEffect, 0)
	k := len(s.Arms)
	e := &run{s: s, out: &Outcome{Name: s.Name, HigherIsBetter: s.HigherIsBetter}}
	e.pairAlpha = s.Alpha / float64(Pairs(s.Mode, k))
	e.seq = sequences(k, s.Mixture, s.StackSD, 0)
	if s.Second != nil {
		e.seq2 = sequences(k, s.Mixture, s.Second.StackSD, s.Second.LeadSD)
	}
	e.fails = make([][]failTally, k)
	byStack := s.StackSD > 0 || s.Second != nil && s.Second.StackSD > 0
	for i := range e.fails {
		e.fails[i] = make([]failTally, k)
		for j := range e.fails[i] {
			e.fails[i][j].byStack = byStack // told that stacks differ: in their failures too
		}
	}
	e.spill = -1
	for i, a := range s.Arms {
		e.out.Arms = append(e.out.Arms, ArmResult{Name: a.Name(), Status: StatusOpen})
		e.live = append(e.live, i)
	}
	return e
}

// sequences are the pairs' sequences of k arms: [i][j] for i < j, allowing for stacks' offsets of spread sd.
func sequences(k int, g, sd, lead float64) [][]*Sequence {
	seq := make([][]*Sequence, k)
	for i := range seq {
		seq[i] = make([]*Sequence, k)
		for j := i + 1; j < k; j++ {
			seq[i][j] = NewSequence(g)
			seq[i][j].stacks.sd = sd
			seq[i][j].lead = lead
		}
	}
	return seq
}

// round runs one trial of every live arm in the next balanced order (all at once in a duet round: Spec.Duet)
// and, when all succeed, adds the round to the comparisons. An arm whose trial fails is taken out with the status
// error and the round is not paired.
func (e *run) round(ctx context.Context) error {
	if e.scheduled == 0 {
		e.orders = Williams(len(e.live))
	}
	order := e.orders[e.scheduled%len(e.orders)]
	e.scheduled++
	arms := make([]int, len(order))
	for i, o := range order {
		arms[i] = e.live[o]
	}
	n := e.out.Rounds + 1
	var tried []tried
	switch {
	case e.s.Duet:
		tried = e.together(ctx, n, arms, false)
	case e.s.Split:
		tried = e.split(ctx, n, arms)
	default:
		tried = e.inTurn(ctx, n, arms)
	}
	spilled := e.roundSpill(arms[0], tried)
	obs := map[int]Observation{}
	complete := len(tried) == len(arms)
	for _, t := range tried {
		i, a, o := t.arm, e.s.Arms[t.arm], t.obs
		if t.err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if i == 0 {
				return fmt.Errorf("%s: %w", a.Name(), t.err)
			}
			e.fail(i, t.err)
			complete = false
			continue
		}
		if err := e.check(o); err != nil {
			return fmt.Errorf("%s: %w", a.Name(), err)
		}
		r := &e.out.Arms[i]
		r.Trials, r.Round = append(r.Trials, o), append(r.Round, n)
		r.Requests += o.Requests
		r.Errors += o.Errors
		e.out.Order = append(e.out.Order, a.Name())
		obs[i] = o
	}
	if !complete {
		return nil
	}
	e.out.Rounds = n
	for x, i := range e.live {
		for _, j := range e.live[x+1:] {
			a, b := obs[i], obs[j]
			addRound(e.seq[i][j], a.first(), b.first(), e.s.HigherIsBetter)
			if e.seq2 != nil && a.Second > 0 && b.Second > 0 {
				addRound(e.seq2[i][j], a.second(), b.second(), e.s.Second.HigherIsBetter)
			}
			e.fails[i][j].add(a, b, i == spilled || j == spilled)
		}
	}
	return nil
}

// roundSpill is the arm whose trial opens this round right after its own failing trial closed the round before
// (-1: none), and notes whether this round's last trial failed. A stall that outlasts a trial fails the next one
// run: in AB, BA order the same arm's, two failing rounds from one stall. The pairs of that arm leave such a
// round out of their failure tally, whatever it shows: one event is counted once, and leaving it out by what
// came before, not by what it shows, keeps each round that counts a fair coin. Duet trials run together, and a
// stall falls on all of them alike.
func (e *run) roundSpill(first int, tried []tried) int {
	spilled := -1
	if !e.s.Duet && first == e.spill {
		spilled = first
	}
	e.spill = -1
	if n := len(tried); n > 0 && !e.s.Duet && tried[n-1].err == nil && tried[n-1].obs.Errors > 0 {
		e.spill = tried[n-1].arm
	}
	return spilled
}

// tried is one arm's trial of a round.
type tried struct {
	arm int
	obs Observation
	err error
}

// inTurn runs the arms' trials one after another, in order, up to the first that ends the round for all: an
// interruption, or a failure of the incumbent (Arms[0]).
func (e *run) inTurn(ctx context.Context, n int, arms []int) []tried {
	var out []tried
	for _, i := range arms {
		e.progress(n, i)
		o, err := e.s.Arms[i].Trial(ctx)
		out = append(out, tried{i, o, err})
		if err != nil && (ctx.Err() != nil || i == 0) {
			break
		}
	}
	return out
}

// together runs a duet round: every arm prepares (a move to a fresh stack, which must not overlap any trial), then
// all trials run at once, started in the round's order, so that whatever the machine does meanwhile falls on
// every arm alike and cancels in their ratios. The trials come back in the round's order. A split round's duet
// (split) runs the arms' split trials (Splitter), the arms prepared before its trials in turn.
func (e *run) together(ctx context.Context, n int, arms []int, split bool) []tried {
	out := make([]tried, len(arms))
	for x, i := range arms {
		out[x].arm = i
		if split {
			continue // prepared before the trials in turn
		}
		if stop := e.prepare(ctx, i, &out[x]); stop {
			return out[:x+1]
		}
	}
	var wg sync.WaitGroup
	var running atomic.Int32
	fill, allDone := context.WithCancel(ctx)
	defer allDone()
	for x := range arms {
		if out[x].err == nil {
			running.Add(1)
		}
	}
	for x, i := range arms {
		if out[x].err != nil {
			continue
		}
		if !split { // a split round's arms were heard of in turn
			e.progress(n, i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[x].obs, out[x].err = e.trial(ctx, i, split)
			if running.Add(-1) == 0 {
				allDone()
				return
			}
			if f, ok := e.s.Arms[i].(Filler); ok && out[x].err == nil {
				f.Fill(fill)
			}
		}()
	}
	wg.Wait()
	return out
}

// trial runs arm i's trial: its split trial in a split round's duet (Splitter), else its trial.
func (e *run) trial(ctx context.Context, i int, split bool) (Observation, error) {
	if sp, ok := e.s.Arms[i].(Splitter); ok && split {
		return sp.SplitTrial(ctx)
	}
	return e.s.Arms[i].Trial(ctx)
}

// prepare prepares arm i where it is a Preparer, a failure recorded in t; stop says the round ends for all (an
// interruption, or the incumbent's failure).
func (e *run) prepare(ctx context.Context, i int, t *tried) (stop bool) {
	p, ok := e.s.Arms[i].(Preparer)
	if !ok {
		return false
	}
	if t.err = p.Prepare(ctx); t.err != nil {
		return ctx.Err() != nil || i == 0
	}
	return false
}

// split runs a split round (Spec.Split): every arm prepares, the trials run in turn, then all at once, and each
// arm's figures are combined (splitObservation). A failure in either pass is the arm's trial failing.
func (e *run) split(ctx context.Context, n int, arms []int) []tried {
	var out []tried // the failures to prepare, then the trials in turn
	var live []int
	for _, i := range arms {
		t := tried{arm: i}
		stop := e.prepare(ctx, i, &t)
		if t.err != nil {
			out = append(out, t)
		} else {
			live = append(live, i)
		}
		if stop {
			return out
		}
	}
	turn := e.inTurn(ctx, n, live)
	incumbentFailed := slices.ContainsFunc(turn, func(t tried) bool { return t.arm == 0 && t.err != nil })
	if len(turn) < len(live) || ctx.Err() != nil || incumbentFailed {
		return append(out, turn...) // the round ended for all
	}
	var ran []int
	for _, t := range turn {
		if t.err == nil {
			ran = append(ran, t.arm)
		}
	}
	duet := map[int]tried{}
	for _, t := range e.together(ctx, n, ran, true) {
		duet[t.arm] = t
	}
	for _, t := range turn {
		if d, ok := duet[t.arm]; ok && t.err == nil {
			if t.err = d.err; t.err == nil {
				t.obs, t.err = splitObservation(t.obs, d.obs)
			}
		}
		out = append(out, t)
	}
	return out
}

// splitObservation is an arm's figures of a split round from its trial in turn and its duet trial: Value the
// turn's share of the machine (Value / Capacity) times the duet's Capacity. Value's step adds the turn's twice
// (its count reads both the window and the capacity) and the duet's; the requests and errors add. The turn's
// second figure, rate, p99 and stack stand.
func splitObservation(turn, duet Observation) (Observation, error) {
	if !(turn.Capacity > 0 && duet.Capacity > 0) {
		return Observation{}, fmt.Errorf("a split round's trial read no capacity (%v in turn, %v in the duet)",
			turn.Capacity, duet.Capacity)
	}
	o := turn
	o.Value = turn.Value / turn.Capacity * duet.Capacity
	o.Capacity = duet.Capacity
	o.Step = 2*turn.Step + duet.Step
	o.Requests += duet.Requests
	o.Errors += duet.Errors
	return o, nil
}

// progress tells Spec.Progress that arm i's trial of round n is next.
func (e *run) progress(n, i int) {
	if e.s.Progress != nil {
		e.s.Progress(Progress{Name: e.s.Name, Round: n, Arm: e.s.Arms[i].Name(), Live: len(e.live)})
	}
}

// check says what is wrong with a trial's figures: comparisons work on log ratios.
func (e *run) check(o Observation) error {
	bad := func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }
	if bad(o.Value) {
		return fmt.Errorf("trial value %v: values must be positive and finite", o.Value)
	}
	if e.s.Second != nil && bad(o.Second) && !(e.s.Second.Sparse && o.Second == 0) {
		return fmt.Errorf("trial's %s %v: values must be positive and finite", e.s.Second.Name, o.Second)
	}
	return nil
}

// first and second are the trial's figures as a sequence reads them.
func (o Observation) first() reading  { return reading{math.Log(o.Value), o.Step, o.Stack} }
func (o Observation) second() reading { return reading{math.Log(o.Second), o.SecondStep, o.Stack} }

// addRound adds b against a to s, oriented so that positive means b is better.
func addRound(s *Sequence, a, b reading, higherIsBetter bool) {
	d := b.log - a.log
	if !higherIsBetter {
		d = -d
	}
	s.add(d, a, b)
}

// fail takes arm i out with the status error.
func (e *run) fail(i int, err error) {
	r := &e.out.Arms[i]
	r.Status, r.Err, r.Note = StatusError, err, err.Error()
	e.remove(i)
}

// drop takes arm i out, saying why, and stops it.
func (e *run) drop(i int, status, why string) {
	r := &e.out.Arms[i]
	r.Status, r.Note = status, why
	e.remove(i)
}

func (e *run) remove(i int) {
	for x, v := range e.live {
		if v == i {
			e.live = append(e.live[:x:x], e.live[x+1:]...)
			e.scheduled = 0
			if i != 0 || e.s.Mode != Versus {
				e.s.Arms[i].Stop()
			}
			return
		}
	}
}

// done says whether there is nothing left to decide.
func (e *run) done() bool {
	if e.s.Mode == Smallest {
		return e.smallestDone()
	}
	if e.s.Mode == Race {
		return len(e.live) <= 1
	}
	return len(e.live) <= 1 || e.live[0] != 0
}

// judge is what the pair (i, j) shows about j against i: Better, Worse, NoDifference or "" (undecided; a
// verdict in favour of an arm that failed more is held).
func (e *run) judge(i, j int) stats.Verdict {
	v := e.rule().Judge(e.seq[i][j])
	if e.held(i, j, v) {
		return ""
	}
	return v
}

// rule is the decision rule of every pair's sequences: each figure's share of the pair's alpha.
func (e *run) rule() Rule {
	figures := 1.0
	if e.s.Second != nil {
		figures = 2
	}
	return Rule{MinEffect: e.s.MinEffect, Alpha: e.pairAlpha * seqShare / figures, RunAlpha: e.s.RunAlpha}
}

// look decides what the rounds so far show: failures first (an arm shown to fail more than another is worse,
// whatever its speed), then the confidence sequences.
func (e *run) look() {
	if e.out.Rounds < e.s.MinRounds {
		return
	}
	if e.failuresRule() {
		return
	}
	if e.s.Mode == Smallest {
		e.smallestLook()
		return
	}
	if e.s.Mode == Versus {
		e.keep()
		for _, j := range append([]int(nil), e.live[1:]...) {
			if e.decided(0, j) && (e.seq2 == nil || e.decided(1, j)) && !e.hold(j) {
				e.drop(j, StatusDecided, "")
			}
		}
		e.yieldHopeless()
		e.recall()
		return
	}
	e.guard()
	out, by := map[int]string{}, map[int]int{}
	for x, i := range e.live {
		for _, j := range e.live[x+1:] {
			switch e.judge(i, j) {
			case stats.Better:
				out[i], by[i] = "worse than "+e.s.Arms[j].Name(), j
			case stats.Worse:
				out[j] = "worse than " + e.s.Arms[i].Name()
			case stats.NoDifference:
				// Within the minimum effect of each other: the incumbent stays, or the arm tried first.
				if _, gone := out[j]; !gone {
					out[j] = "no better than " + e.s.Arms[i].Name()
				}
			}
		}
	}
	if why, ok := out[0]; ok && e.beaten == "" {
		e.beaten, e.beatenBy = why, by[0]
	}
	if e.beaten != "" && e.keepReference(out) {
		delete(out, 0)
	} else if e.beaten != "" {
		out[0] = e.beaten
	}
	if len(out) == len(e.live) {
		// Only a broken model (or an error the budget allows) makes every arm lose: keep the best.
		delete(out, e.bestLive())
	}
	for _, i := range append([]int(nil), e.live...) {
		if why, ok := out[i]; ok {
			e.drop(i, StatusDropped, why)
		}
	}
}

// keepReference says whether an incumbent shown worse than a challenger stays in as the reference: some
// challenger that stays in is not yet decided against it. A race drops a loser at once, but the question a
// race answers is how its pick compares with the incumbent: on the demo, off was shown worse than function in
// 5 rounds and dropped, tracing against function then ran 6 more, and tracing (+20%) against off ended
// undecided on its 5 shared rounds. Keeping off costs a trial a round until tracing is decided against it, or
// while a guard leans against a challenger (guardLeans).
func (e *run) keepReference(out map[int]string) bool {
	for _, j := range e.live[1:] {
		if _, gone := out[j]; !gone && (e.judge(0, j) == "" || e.guardLeans(j)) {
			return true
		}
	}
	return false
}

// failuresRule drops (Race) or decides (Versus) the arms shown to fail more than another live arm (failTally):
// failed requests are not served ones, and an arm that fails more is worse whatever its speed.
func (e *run) failuresRule() bool {
	changed := false
	if e.s.Mode == Versus {
		for _, j := range append([]int(nil), e.live[1:]...) {
			switch e.failVerdict(0, j) {
			case stats.Worse:
				e.drop(j, StatusDecided, e.failNote(j, 0))
				changed = true
			case stats.Better:
				e.drop(j, StatusDecided, e.failNote(0, j))
				changed = true
			}
		}
		return changed
	}
	out := map[int]string{}
	for x, i := range e.live {
		for _, j := range e.live[x+1:] {
			switch e.failVerdict(i, j) {
			case stats.Worse:
				out[j] = e.failNote(j, i)
			case stats.Better:
				out[i] = e.failNote(i, j)
			}
		}
	}
	if len(out) == len(e.live) {
		delete(out, e.bestLive())
	}
	for _, i := range append([]int(nil), e.live...) {
		if why, ok := out[i]; ok {
			e.drop(i, StatusDropped, why)
			changed = true
		}
	}
	return changed
}

// futile says whether a race should end for lack of promise: FutileAfter rounds run, the incumbent still in,
// and no live challenger's estimate a third of the minimum effect better than it.
func (e *run) futile() bool {
	if e.s.Mode != Race || e.s.FutileAfter <= 0 || e.out.Rounds < e.s.FutileAfter {
		return false
	}
	return !e.promising()
}

// promising says whether a race may yet find a gain: its incumbent is out, or some live challenger's estimate
// against it is at least a third of the minimum effect in the challenger's favour.
func (e *run) promising() bool {
	if e.s.Mode != Race || len(e.live) < 2 {
		return false
	}
	if e.live[0] != 0 || e.beaten != "" {
		return true
	}
	bar := math.Log1p(e.s.MinEffect) / 3
	for _, j := range e.live[1:] {
		if e.seq[0][j].N() > 0 && e.seq[0][j].Mean() >= bar {
			return true
		}
	}
	return false
}

// yieldAfter is the fewest rounds whose spread a comparison's rounds still needed are estimated from before it may
// yield. Only a later arm yields, so an early mistake costs the rule of thumb's comparison, not the starting
// point's: in TestAHopelessComparisonYields the starting point's capacity was decided in 121 runs of 400 yielding
// from 4 rounds on, 112 from 6, 97 from 8 (48 never).
const yieldAfter = 4

// yieldHopeless benches, in Versus, an undecided comparison that the time left cannot decide with every arm in,
// the last arm's first, for one before it that is undecided too (Spec.RoundsLeft): the arms come in the
// order their comparisons matter, and the first is never benched for a later one (in a simulated WordPress final,
// where the two baselines were alike, the starting point yielded to the rule of thumb as often as the other way
// round). It yields when it is hopeless even with it out, or when the earlier one cannot be decided at the pace of
// every arm in: the WordPress final's rule of thumb and Debian's defaults were alike and each a few rounds short
// (ra30: 11 rounds where 12 were needed); in TestTheRuleOfThumbYieldsToTheStartingPoint the starting point's
// capacity was decided in 117 runs of 400 so, 87 yielding only a hopeless comparison, 56 never yielding. Its
// interval stays valid: a confidence sequence holds at any stopping time, and the others' do not depend on it.
func (e *run) yieldHopeless() {
	if e.s.RoundsLeft == nil || len(e.live) < 3 || e.live[0] != 0 {
		return
	}
	if e.out.Rounds < yieldAfter {
		return
	}
	all := e.out.Rounds + e.s.RoundsLeft(len(e.live))
	out := e.out.Rounds + e.s.RoundsLeft(len(e.live)-1)
	need := map[int]int{}
	for _, j := range e.live[1:] {
		need[j] = e.pairNeeded(j)
	}
	worst, owes := -1, -1
	for x := len(e.live) - 1; x > 1 && worst < 0; x-- {
		j := e.live[x]
		if need[j] <= all {
			continue
		}
		for _, k := range e.live[1:x] {
			if (need[k] <= out && need[j] > out) || need[k] > all {
				worst, owes = j, k
				break
			}
		}
	}
	if worst < 0 {
		return
	}
	r := &e.out.Arms[worst]
	r.Status, r.Note = StatusYielded, fmt.Sprintf("out after %d rounds: deciding it would need about %d, more than "+
		"the time left buys; its rounds went to the other comparisons", e.out.Rounds, need[worst])
	if need[worst] <= out {
		r.Note = fmt.Sprintf("out after %d rounds: its rounds went to the comparison with %s, which the time left "+
			"could not decide with it in; it comes back once that is decided", e.out.Rounds, e.out.Arms[owes].Name)
	}
	e.benched = append(e.benched, worst)
	e.live = slices.DeleteFunc(e.live, func(i int) bool { return i == worst })
	e.scheduled = 0
}

// recall brings the benched arms back once every other comparison is decided: the time left is theirs.
func (e *run) recall() {
	if len(e.benched) == 0 || len(e.live) != 1 || e.live[0] != 0 {
		return
	}
	for _, i := range e.benched {
		e.out.Arms[i].Status, e.out.Arms[i].Note = StatusOpen, ""
	}
	e.live = append(e.live, e.benched...)
	slices.Sort(e.live)
	e.benched, e.scheduled = nil, 0
}

// pairNeeded is the fewest rounds in all after which one of arm j's undecided figures against Arms[0] would be
// decided, at its estimate and spread.
func (e *run) pairNeeded(j int) int {
	need := MaxRoundsNeeded
	if !e.decided(0, j) {
		need = e.rule().roundsNeeded(e.seq[0][j])
	}
	if e.seq2 != nil && !e.decided(1, j) {
		need = min(need, e.inRounds(e.rule().roundsNeeded(e.seq2[0][j]), e.seq2[0][j].N()))
	}
	return need
}

// inRounds is need of the second figure's rounds as rounds in all, at the pace it has been given so far (n of
// the rounds run): a sparse figure's rounds are some of them.
func (e *run) inRounds(need, n int) int {
	if n == 0 || n >= e.out.Rounds {
		return need
	}
	return min(MaxRoundsNeeded, int(math.Ceil(float64(need)*float64(e.out.Rounds)/float64(n))))
}

// needed is the fewest rounds in all after which a live challenger's comparison with the incumbent would be
// decided at its estimate and spread; 0 when the incumbent is out or no comparison has two rounds.
func (e *run) needed() int {
	if e.s.Mode == Smallest {
		return e.smallestNeeded()
	}
	if len(e.live) < 2 || e.live[0] != 0 {
		return 0
	}
	best := 0
	for _, j := range e.live[1:] {
		if s := e.seq[0][j]; s.N() >= 2 {
			if n := e.rule().roundsNeeded(s); best == 0 || n < best {
				best = n
			}
		}
	}
	return best
}

// bestLive is the live arm with the best mean log figure over the rounds all live arms share.
func (e *run) bestLive() int {
	best, idx := math.Inf(-1), e.live[0]
	for _, i := range e.live {
		if i == 0 && e.beaten != "" && len(e.live) > 1 {
			continue // shown worse than another: kept only as the reference
		}
		score := 0.0
		for _, j := range e.live {
			switch {
			case i < j:
				score -= e.seq[i][j].Mean()
			case j < i:
				score += e.seq[j][i].Mean()
			}
		}
		if score > best {
			best, idx = score, i
		}
	}
	return idx
}

// chain bounds arm j against Arms[0] through a third arm k of a race, shown better than Arms[0] and j better
// than k (or worse and worse): the sum of the two links' intervals bounds j against Arms[0] whenever both hold.
// A race drops an arm once it is shown worse than another, so its winner may have been compared with the
// incumbent for only a few rounds: on the demo, the JIT's off was shown worse than function in 4 rounds and
// function worse than tracing in 7, while tracing against off, stopped at 4 rounds, was undecided. The
// tightest such bound, or nil.
//
// What holds for it is what every sequence it may come from holds at once: the direct one and both links through
// each of the K-2 other arms, 2K-3 in all (the tightest chain is picked after the fact, so each could have been
// the one stated). Its level is 2K-3 times a sequence's alpha (within the race's, which covers all its pairs):
// three for three arms, where it stated three for any number. Its p-value is 2K-3 times the least per-sequence
// alpha at which the direct interval or the chain excludes zero: under no difference each of those sequences
// misses at that level with chance at most that alpha, so it is a p-value at the stated level, valid at any
// look like the sequences it comes from.
func (e *run) chain(j int) *Bound {
	if e.s.Mode != Race {
		return nil
	}
	alpha, m := e.rule().Alpha, chainSequences(len(e.seq))
	var best *Bound
	via := 0
	for k := 1; k < len(e.seq); k++ {
		if k == j || e.out.Arms[k].Status == StatusError {
			continue
		}
		lo1, hi1, ok1 := e.link(0, k, alpha)
		lo2, hi2, ok2 := e.link(k, j, alpha)
		if !ok1 || !ok2 || !(lo1 > 0 && lo2 > 0 || hi1 < 0 && hi2 < 0) {
			continue
		}
		b := &Bound{Lo: lo1 + lo2, Hi: hi1 + hi2, Via: e.out.Arms[k].Name, Alpha: m * alpha}
		if best == nil || b.Hi-b.Lo < best.Hi-best.Lo {
			best, via = b, k
		}
	}
	if best != nil {
		best.P = min(1, m*min(e.seq[0][j].P(), e.chainLevel(via, j, best.Lo > 0)))
	}
	return best
}

// chainSequences is how many sequences a chained interval of a race of k arms rests on: the direct one and two
// links through each of the k-2 other arms.
func chainSequences(k int) float64 { return float64(2*k - 3) }

// chainLevel is the least alpha at which the chain from Arms[0] through k to j, each link's interval at that
// level, excludes zero on the side better says (found by bisection on its log: intervals widen as alpha shrinks).
func (e *run) chainLevel(k, j int, better bool) float64 {
	excludes := func(a float64) bool {
		lo1, hi1, _ := e.link(0, k, a)
		lo2, hi2, _ := e.link(k, j, a)
		if better {
			return lo1+lo2 > 0
		}
		return hi1+hi2 < 0
	}
	lo, hi := math.Log(1e-300), 0.0
	if !excludes(1) {
		return 1
	}
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if excludes(math.Exp(mid)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Exp(hi)
}

// link is arm j against arm i (positive: j better): its interval at level 1 - alpha; ok is false before two
// shared rounds.
func (e *run) link(i, j int, alpha float64) (lo, hi float64, ok bool) {
	s, flip := e.seq[min(i, j)][max(i, j)], j < i
	if s.N() < 2 {
		return math.Inf(-1), math.Inf(1), false
	}
	lo, hi = s.Interval(alpha)
	if flip {
		lo, hi = -hi, -lo
	}
	return lo, hi, true
}

// finish picks the winner and states every arm's comparison with Arms[0].
func (e *run) finish() {
	o := e.out
	if e.s.Mode == Smallest {
		e.smallestFinish()
		return
	}
	switch {
	case e.s.Mode == Versus:
		o.Winner = 0
	case len(e.live) == 1:
		o.Winner = e.live[0]
	case len(e.live) > 1 && e.live[0] == 0 && e.beaten == "":
		o.Winner = 0 // undecided: the incumbent keeps its place
	case len(e.live) > 1:
		o.Winner = e.bestLive()
	}
	for i := range o.Arms {
		r := &o.Arms[i]
		switch {
		case i == 0 && e.s.Mode == Versus:
			r.Status = StatusRef
		case i == o.Winner && e.s.Mode == Race && r.Status != StatusError:
			r.Status = StatusWinner
		}
		if i == 0 {
			continue
		}
		if r.Status == StatusError {
			r.Vs = &stats.Comparison{Verdict: stats.Error, Method: method}
			if e.seq2 != nil {
				r.Vs2 = &stats.Comparison{Verdict: stats.Error, Method: method}
			}
			continue
		}
		if e.seq[0][i].N() > 0 {
			r.Vs = e.stated(0, i)
			if e.seq2 != nil && e.seq2[0][i].N() > 0 {
				r.Vs2 = e.stated(1, i)
			}
		}
	}
	if e.s.Mode == Race && o.Winner != 0 && o.Arms[0].Status == StatusOpen && e.beaten != "" {
		o.Arms[0].Status, o.Arms[0].Note = StatusDropped, e.beaten
	}
	if e.s.Mode == Race && o.Winner != 0 && o.Arms[0].Status == StatusOpen {
		o.Arms[0].Status = StatusDropped
		o.Arms[0].Note = strings.TrimSpace(o.Arms[0].Note + " undecided when the budget ran out; " + o.Arms[o.Winner].Name + " has the better estimate")
	}
}

// comparison states arm j against Arms[0] in the Value's own terms; failures decide first.
func (e *run) comparison(j int) *stats.Comparison {
	c := e.rule().Bounded(e.seq[0][j], e.s.HigherIsBetter, e.chain(j))
	if e.held(0, j, c.Verdict) { // verdicts are by goodness, whichever way the figure points
		c.Verdict, c.RoundsNeeded = stats.Inconclusive, e.rule().roundsNeeded(e.seq[0][j])
	}
	return e.onFailures(j, c)
}

// onFailures is c decided on failures when they show arm j or Arms[0] to fail more.
func (e *run) onFailures(j int, c *stats.Comparison) *stats.Comparison {
	if fv := e.failVerdict(0, j); fv != "" {
		c.Verdict, c.RoundsNeeded, c.OnErrors = fv, 0, true
	}
	return c
}
