package experiment

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/stats"
)

// run is one experiment in progress.
type run struct {
	s    Spec
	out  *Outcome
	live []int // arms still in, in index order
	// seq[i][j], i < j: the log ratios of arm j against arm i over their common rounds, oriented so that
	// positive means j is better.
	seq       [][]*Sequence
	pairAlpha float64
	// scheduled counts the rounds since the live set last changed: the balanced orders start over then.
	scheduled int
	orders    [][]int
	// beaten, in a race, is why the incumbent lost ("worse than B") while it is kept as the reference: until
	// every challenger still in is decided against it, so that the race's pick can be stated against it.
	beaten string
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
	e.seq = make([][]*Sequence, k)
	for i := range e.seq {
		e.seq[i] = make([]*Sequence, k)
		for j := i + 1; j < k; j++ {
			e.seq[i][j] = NewSequence(s.Mixture)
		}
	}
	for i, a := range s.Arms {
		e.out.Arms = append(e.out.Arms, ArmResult{Name: a.Name(), Status: StatusOpen})
		e.live = append(e.live, i)
	}
	return e
}

// round runs one trial of every live arm in the next balanced order and, when all succeed, adds the round to
// the comparisons. An arm whose trial fails is taken out with the status error and the round is not paired.
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
	values := map[int]float64{}
	complete := true
	for _, i := range arms {
		a := e.s.Arms[i]
		if e.s.Progress != nil {
			e.s.Progress(Progress{Name: e.s.Name, Round: n, Arm: a.Name(), Live: len(e.live)})
		}
		obs, err := a.Trial(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if i == 0 {
				return fmt.Errorf("%s: %w", a.Name(), err)
			}
			e.fail(i, err)
			complete = false
			continue
		}
		if !(obs.Value > 0) || math.IsInf(obs.Value, 0) {
			return fmt.Errorf("%s: trial value %v: values must be positive and finite", a.Name(), obs.Value)
		}
		r := &e.out.Arms[i]
		r.Trials, r.Round = append(r.Trials, obs), append(r.Round, n)
		r.Requests += obs.Requests
		r.Errors += obs.Errors
		e.out.Order = append(e.out.Order, a.Name())
		values[i] = obs.Value
	}
	if !complete {
		return nil
	}
	e.out.Rounds = n
	for x, i := range e.live {
		for _, j := range e.live[x+1:] {
			d := math.Log(values[j] / values[i])
			if !e.s.HigherIsBetter {
				d = -d
			}
			e.seq[i][j].Add(d)
		}
	}
	return nil
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

// judge is what the pair (i, j) shows about j against i: Better, Worse, NoDifference or "" (undecided).
func (e *run) judge(i, j int) stats.Verdict { return e.rule().Judge(e.seq[i][j]) }

// rule is the decision rule of every pair of this experiment.
func (e *run) rule() Rule {
	return Rule{MinEffect: e.s.MinEffect, Alpha: e.pairAlpha, RunAlpha: e.s.RunAlpha}
}

// look decides what the rounds so far show: failed requests first (an arm that fails requests where another
// fails none is worse, whatever its speed), then the confidence sequences.
func (e *run) look() {
	if e.out.Rounds < e.s.MinRounds {
		return
	}
	if e.errorsRule() {
		return
	}
	if e.s.Mode == Smallest {
		e.smallestLook()
		return
	}
	if e.s.Mode == Versus {
		for _, j := range append([]int(nil), e.live[1:]...) {
			if v := e.judge(0, j); v != "" {
				e.drop(j, StatusDecided, "")
			}
		}
		return
	}
	out := map[int]string{}
	for x, i := range e.live {
		for _, j := range e.live[x+1:] {
			switch e.judge(i, j) {
			case stats.Better:
				out[i] = "worse than " + e.s.Arms[j].Name()
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
		e.beaten = why
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
// undecided on its 5 shared rounds. Keeping off costs a trial a round until tracing is decided against it.
func (e *run) keepReference(out map[int]string) bool {
	for _, j := range e.live[1:] {
		if _, gone := out[j]; !gone && e.judge(0, j) == "" {
			return true
		}
	}
	return false
}

// errorsRule drops (Race) or decides (Versus) the arms shown to fail requests while another live arm failed
// none (errorsShown): failed requests are not served ones, and an arm that fails is worse whatever its speed.
func (e *run) errorsRule() bool {
	changed := false
	if e.s.Mode == Versus {
		for _, j := range append([]int(nil), e.live[1:]...) {
			if v := e.errorVerdict(j); v != "" {
				e.drop(j, StatusDecided, e.errorNote(j, 0))
				changed = true
			}
		}
		return changed
	}
	clean := -1
	for _, i := range e.live {
		if e.out.Arms[i].Errors == 0 {
			clean = i
			break
		}
	}
	if clean < 0 {
		return false
	}
	for _, i := range append([]int(nil), e.live...) {
		if e.errorsShown(i, clean) {
			e.drop(i, StatusDropped, e.errorNote(i, clean))
			changed = true
		}
	}
	return changed
}

// errorsShown says whether arm bad's failed requests, where arm good failed none, are shown to be bad's own:
// were their rates of failure equal, each failure would fall on bad with the chance of bad's share of their
// requests, and all of the first k on bad has the chance share^k (either arm may be the one: half the pair's
// alpha each). It is exact at any look, since once a failure falls on good it can never hold again. A broken
// value that fails every request is shown in its first trial; two failures in 360 requests are not (a
// 10-minute demo's huge_code_pages was decided better on those alone: the incumbent's trial had them).
func (e *run) errorsShown(bad, good int) bool {
	b, g := e.out.Arms[bad], e.out.Arms[good]
	if b.Errors == 0 || g.Errors > 0 {
		return false
	}
	share := float64(b.Requests+b.Errors) / float64(b.Requests+b.Errors+g.Requests)
	return share < 1 && float64(b.Errors)*math.Log(share) <= math.Log(e.pairAlpha/2)
}

// errorVerdict is arm j against Arms[0] on failed requests alone: Worse when j is shown to fail requests that
// Arms[0] does not, Better the other way round, "" otherwise.
func (e *run) errorVerdict(j int) stats.Verdict {
	switch {
	case e.errorsShown(j, 0):
		return stats.Worse
	case e.errorsShown(0, j):
		return stats.Better
	}
	return ""
}

// errorNote says how the arm with failures (i or clean, whichever failed) compares with the other.
func (e *run) errorNote(i, clean int) string {
	bad, good := i, clean
	if e.out.Arms[i].Errors == 0 {
		bad, good = clean, i
	}
	r := e.out.Arms[bad]
	return fmt.Sprintf("%s: %d of %d requests failed, none with %s", r.Name, r.Errors, r.Errors+r.Requests, e.s.Arms[good].Name())
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

// needed is the fewest rounds in all after which a live challenger's comparison with the incumbent would be
// decided at its estimate and spread; 0 when the incumbent is out or no comparison has two rounds.
func (e *run) needed() int {
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
// than k (or worse and worse): all of a race's pairs hold at once within its alpha, so j against Arms[0] lies
// within the sum of the two links' intervals. A race drops an arm once it is shown worse than another, so its
// winner may have been compared with the incumbent for only a few rounds: on the demo, the JIT's off was
// shown worse than function in 4 rounds and function worse than tracing in 7, while tracing against off,
// stopped at 4 rounds, was undecided. The tightest such bound, or nil.
func (e *run) chain(j int) *Bound {
	if e.s.Mode != Race {
		return nil
	}
	var best *Bound
	for k := 1; k < len(e.seq); k++ {
		if k == j || e.out.Arms[k].Status == StatusError {
			continue
		}
		lo1, hi1, p1, ok1 := e.link(0, k)
		lo2, hi2, p2, ok2 := e.link(k, j)
		if !ok1 || !ok2 || !(lo1 > 0 && lo2 > 0 || hi1 < 0 && hi2 < 0) {
			continue
		}
		b := &Bound{Lo: lo1 + lo2, Hi: hi1 + hi2, P: max(p1, p2), Via: e.out.Arms[k].Name}
		if best == nil || b.Hi-b.Lo < best.Hi-best.Lo {
			best = b
		}
	}
	return best
}

// link is arm j against arm i (positive: j better): its interval at the pair's level and its p-value; ok is
// false before two shared rounds.
func (e *run) link(i, j int) (lo, hi, p float64, ok bool) {
	s, flip := e.seq[min(i, j)][max(i, j)], j < i
	if s.N() < 2 {
		return 0, 0, 1, false
	}
	lo, hi = s.Interval(e.pairAlpha)
	if flip {
		lo, hi = -hi, -lo
	}
	return lo, hi, s.P(), true
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
			continue
		}
		if e.seq[0][i].N() > 0 {
			r.Vs = e.comparison(i)
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

// comparison states arm j against Arms[0] in the Value's own terms; failed requests decide first.
func (e *run) comparison(j int) *stats.Comparison {
	c := e.rule().Bounded(e.seq[0][j], e.s.HigherIsBetter, e.chain(j))
	if ev := e.errorVerdict(j); ev != "" {
		c.Verdict, c.RoundsNeeded, c.OnErrors = ev, 0, true
	}
	return c
}
