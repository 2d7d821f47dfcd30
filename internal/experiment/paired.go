package experiment

import "math"

// Paired is the confidence sequence of another figure of an outcome's rounds than the ones the experiment decided
// on, for a caller to judge with a Rule (anytime validity covers the stopping time the experiment chose): fig
// reads it from a trial (positive; a trial where it is not is left out), each round two arms shared gives the log
// ratio of b's figure to a's, oriented so that a positive mean favours b (higherIsBetter says which way the
// figure points), and the stacks' offsets of spread stackSD are allowed for as Spec.StackSD's are. An arm run
// twice in a round (a round run again after another arm failed in it) pairs by its last trial there: the
// engine's pairs are of complete rounds, which the last trials make.
func Paired(a, b ArmResult, fig func(Observation) float64, higherIsBetter bool, g, stackSD float64) *Sequence {
	s := NewSequence(g)
	s.stacks.sd = stackSD
	ra, rb := byRound(a, fig), byRound(b, fig)
	for _, n := range roundsOf(a) {
		x, okA := ra[n]
		y, okB := rb[n]
		if okA && okB {
			addRound(s, x, y, higherIsBetter)
			delete(ra, n) // once a round
		}
	}
	return s
}

// byRound is an arm's last reading of fig in each round it ran.
func byRound(r ArmResult, fig func(Observation) float64) map[int]reading {
	out := map[int]reading{}
	for i, o := range r.Trials {
		if i >= len(r.Round) {
			break
		}
		if v := fig(o); v > 0 && !math.IsInf(v, 0) {
			out[r.Round[i]] = reading{log: math.Log(v), stack: o.Stack}
		} else {
			delete(out, r.Round[i]) // its last trial there read nothing: no pair
		}
	}
	return out
}

// roundsOf is the rounds an arm ran in, in order, each once.
func roundsOf(r ArmResult) []int {
	var out []int
	for i, n := range r.Round {
		if i == 0 || n != r.Round[i-1] {
			out = append(out, n)
		}
	}
	return out
}

// hold says whether the caller keeps arm j in the rounds though its comparisons are decided (Spec.Hold).
func (e *run) hold(j int) bool {
	return e.s.Hold != nil && e.s.Hold(j, e.out.Arms[0], e.out.Arms[j])
}
