package experiment

import (
	"math"

	"github.com/phptune/phptune/internal/stats"
)

// Smallest mode: the arms come in order of preference (the cheapest first: the smallest pool), and the question
// is which is the first one shown within the minimum effect of the best, not which is the best. A best found by
// racing is a noisy maximum on a flat curve (pool sizes of 4, 8 and 16 within a few percent of each other): a
// threshold or a race on it picks a different size each run. Shown within (non-inferior: one-sided, so cheaper to
// show than equality) is stable: every size on the flat part qualifies, and the first of them is the pick.
//
// At each look, arm i is
//   - out when it is shown worse than another live arm (the pair's verdict Worse: its interval below zero and
//     its estimate at least the minimum effect below): dropped;
//   - within when its interval against every other live arm lies above -MinEffect: whichever of them is the
//     best, i is not worse than it by more than the minimum effect;
//   - open otherwise.
//
// It is decided when the first live arm is within; its status is winner, the others within or open. All pairs
// share the experiment's alpha, so every statement holds at once, whichever pairs are read.

// smallestLook drops the arms shown worse than another live arm.
func (e *run) smallestLook() {
	out := map[int]string{}
	for x, i := range e.live {
		for _, j := range e.live[x+1:] {
			switch e.judge(i, j) {
			case stats.Better:
				out[i] = "worse than " + e.s.Arms[j].Name()
			case stats.Worse:
				out[j] = "worse than " + e.s.Arms[i].Name()
			}
		}
	}
	if len(out) == len(e.live) {
		delete(out, e.bestLive())
	}
	for _, i := range append([]int(nil), e.live...) {
		if why, ok := out[i]; ok {
			e.drop(i, StatusDropped, why)
		}
	}
}

// within says whether arm i is shown not worse than any other live arm by more than the minimum effect. Like a
// pair's verdict (Rule.Judge), it never rests on rounds whose log ratios are all identical: figures that never
// vary say nothing of a difference within a step.
func (e *run) within(i int) bool {
	m := math.Log1p(e.s.MinEffect)
	for _, j := range e.live {
		if j == i {
			continue
		}
		lo, _, ok := e.link(j, i, e.rule().Alpha)
		if !ok || lo <= -m || e.seq[min(i, j)][max(i, j)].Identical() {
			return false
		}
	}
	return true
}

// smallestDone: the first live arm is within, or it is the last one.
func (e *run) smallestDone() bool {
	return len(e.live) <= 1 || (e.out.Rounds >= 2 && e.within(e.live[0]))
}

// NoteOpenBefore is a Smallest winner's note when it is shown within the margin and an arm before it is open.
const NoteOpenBefore = "the first shown within the margin; an arm before it not yet shown within or worse"

// firstWithin is the first live arm shown within the margin of every other live arm, or -1.
func (e *run) firstWithin() int {
	for _, i := range e.live {
		if e.out.Rounds >= 2 && e.within(i) {
			return i
		}
	}
	return -1
}

// smallestFinish picks the winner and states every arm against the live arm with the best estimate (Best):
// decided, the first live arm; undecided, the first live arm whose estimate against the best is within half
// the minimum effect (it looks within the margin, though not yet shown), else the best. Only a decided winner
// has no note: a best shown within the others while an arm before it is open is not the first within.
func (e *run) smallestFinish() {
	o := e.out
	o.Best = e.bestLive()
	o.Winner = o.Best
	decided := len(e.live) > 0 && e.within(e.live[0])
	if !decided {
		o.Needed = e.smallestNeeded()
	}
	if w := e.firstWithin(); w >= 0 {
		// Shown within the margin of every live arm: a claim that holds at the pairs' level, though an arm
		// before it is still open (a size a percent or two from the margin is open for hundreds of rounds).
		o.Winner = w
	} else {
		half := math.Log1p(e.s.MinEffect) / 2
		for _, i := range e.live {
			if i == o.Best || e.estimate(o.Best, i) >= -half {
				o.Winner = i
				break
			}
		}
	}
	for i := range o.Arms {
		r := &o.Arms[i]
		if r.Status == StatusError {
			r.Vs = &stats.Comparison{Verdict: stats.Error, Method: method}
			continue
		}
		switch {
		case i == o.Winner && decided:
			r.Status, r.Within = StatusWinner, true
		case i == o.Winner && e.within(i):
			// Within, but an arm before it is not yet shown within or worse: the first shown within, not the
			// first arm within (a decided race).
			r.Status, r.Note, r.Within = StatusWinner, NoteOpenBefore, true
		case i == o.Winner:
			r.Status, r.Note = StatusWinner, "not yet shown within the margin: the budget ran out"
		case r.Status == StatusOpen && e.within(i):
			r.Status, r.Within = StatusWithin, true
		}
		if i != o.Best {
			r.Vs = e.against(o.Best, i)
		}
	}
}

// estimate is arm j's mean log figure against arm i (positive: j better), 0 before a shared round.
func (e *run) estimate(i, j int) float64 {
	s := e.seq[min(i, j)][max(i, j)]
	if s.N() == 0 {
		return 0
	}
	if j < i {
		return -s.Mean()
	}
	return s.Mean()
}

// against states arm j against arm i in the Value's own terms.
func (e *run) against(i, j int) *stats.Comparison {
	s := e.seq[min(i, j)][max(i, j)]
	if s.N() == 0 {
		return nil
	}
	c := e.rule().Comparison(s, e.s.HigherIsBetter)
	if j < i {
		// The sequence runs i against j: turn it round to j against i.
		c.LogEstimate, c.LogLo, c.LogHi = -c.LogEstimate, -c.LogHi, -c.LogLo
		c.Estimate, c.Lo, c.Hi = math.Expm1(c.LogEstimate), math.Expm1(c.LogLo), math.Expm1(c.LogHi)
		switch c.Verdict {
		case stats.Better:
			c.Verdict = stats.Worse
		case stats.Worse:
			c.Verdict = stats.Better
		}
	}
	return c
}

// smallestNeeded is the fewest rounds in all after which the race would have its answer, at the pairs'
// estimates and spreads: with an arm shown within the margin, the rounds after which an arm before it would
// be shown within or worse (the first within would then change or be the first arm); before any is, the
// rounds after which the first to be would be (0 when a pair has fewer than two rounds). On the sequential
// rule alone (the first live arm within, or shown worse and the next first) a size a percent from the margin
// held a race open for hundreds of rounds, and the sizes' race stopped after four with none shown.
func (e *run) smallestNeeded() int {
	w := e.firstWithin()
	need := MaxRoundsNeeded
	for k, i := range e.live {
		if i == w {
			break
		}
		within, worse, ok := e.smallestEnds(i, others(e.live, k))
		if !ok {
			return 0
		}
		if w >= 0 {
			need = min(need, within, worse) // an arm before the first within: its end changes the answer
		} else {
			need = min(need, within)
		}
	}
	if w >= 0 && w == e.live[0] {
		return 0
	}
	return need
}

// others is live without its k-th arm.
func others(live []int, k int) []int {
	return append(append([]int(nil), live[:k]...), live[k+1:]...)
}

// smallestEnds is the rounds in all after which first would be shown within the margin of every arm of rest,
// and after which it would be shown worse than one of them (MaxRoundsNeeded: not at these estimates).
func (e *run) smallestEnds(first int, rest []int) (within, worse int, ok bool) {
	m, alpha := math.Log1p(e.s.MinEffect), e.rule().Alpha
	worse = MaxRoundsNeeded
	for _, j := range rest {
		s := e.seq[min(first, j)][max(first, j)]
		if s.N() < 2 {
			return 0, 0, false
		}
		est := e.estimate(j, first) // first against j
		n := MaxRoundsNeeded
		if est+m > 0 {
			n = s.RoundsFor(est+m, alpha, MaxRoundsNeeded) // its interval's low end above -m
		}
		within = max(within, n)
		if -est >= m {
			worse = min(worse, s.RoundsFor(-est, alpha, MaxRoundsNeeded))
		}
	}
	return within, worse, true
}
