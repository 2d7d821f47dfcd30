package experiment

import (
	"fmt"
	"math"

	"github.com/phptune/phptune/internal/stats"
)

// A guard is a second figure a race's pick must not make worse (Figure.Guard): tune races the runtime on goodput
// with the p99 as its guard, since a runtime that serves 5% more requests at a p99 24 times worse is not one a
// person would take. It is judged as any figure is: each round's pair of trials gives a log ratio, the pair's
// confidence sequence its interval, at half the pair's alpha (the other half is the race's figure's), so one
// error budget covers both and the guard costs no trials of its own.

// guarded says whether the experiment is a race with a guard.
func (e *run) guarded() bool { return e.s.Mode == Race && e.seq2 != nil && e.s.Second.Guard }

// guard takes out of a guarded race each live challenger shown worse on the guard than Arms[0], whatever its
// Value, while Arms[0] runs (the guard's comparisons are with it). One that had beaten the incumbent takes that
// with it: the incumbent is the reference again, and the race picks among the others.
func (e *run) guard() {
	if !e.guarded() || e.live[0] != 0 {
		return
	}
	for _, j := range append([]int(nil), e.live[1:]...) {
		if e.rule().Judge(e.seq2[0][j]) != stats.Worse {
			continue
		}
		if e.beaten != "" && e.beatenBy == j {
			e.beaten, e.beatenBy = "", 0
		}
		e.drop(j, StatusDropped, fmt.Sprintf("%s worse than %s", e.s.Second.Name, e.s.Arms[0].Name()))
	}
}

// guardLeans says whether challenger j's guard, undecided, leans against it by the minimum effect or more: more
// rounds may yet show it worse, so it does not take the incumbent's place while the race's time lasts. One that
// leans less is let through: showing it not worse by the margin would take a tail's noise thousands of rounds.
func (e *run) guardLeans(j int) bool {
	if !e.guarded() {
		return false
	}
	return e.leans(e.seq2[0][j], 1)
}

// leans says whether s, undecided, leans against its second arm by the minimum effect and by ses standard errors.
func (e *run) leans(s *Sequence, ses float64) bool {
	if s.N() == 0 || e.rule().Judge(s) != "" {
		return false
	}
	return s.Mean() <= -max(math.Log1p(e.s.MinEffect), ses*s.SD()/math.Sqrt(float64(s.N())))
}

// SecondLeans says whether arm j's comparison with Arms[0] on the second figure, undecided, leans against j by
// the minimum effect and by more than chance gives its rounds with probability risk (one-sided, Student's t on
// the rounds so far, at least two): for a caller that holds a second figure as a guard outside a race (gate's
// latency), which more rounds may yet show worse. A count of standard errors would not do there: on the few
// rounds such a figure gets, two are passed by chance in 4 to 5% of comparisons (t with 6 to 8 degrees of
// freedom), not the 2.3% of a normal.
func (x *Experiment) SecondLeans(j int, risk float64) bool {
	e := x.e
	if e.seq2 == nil || j <= 0 || j >= len(e.s.Arms) {
		return false
	}
	s := e.seq2[0][j]
	if s.N() < 2 {
		return false
	}
	return e.leans(s, stats.TQuantile(1-risk, s.N()-1))
}
