package arms

import (
	"math"

	"github.com/phptune/phptune/internal/stats"
)

// The stacks' offsets measured in the run. spread tallies each figure's round-to-round change of an arm's
// deviation from its round's mean, on the same stacks (a pair's variance a round, 2 σ_a², in expectation) and
// across a move of every arm to fresh stacks (2 (σ_a² + s²): the offsets change too). The difference is the
// offsets' variance s², as between-stack against within-stack variance in a one-way random-effects model. Its
// upper bound is F's: each tally is 2 σ² χ²(ν)/ν (ν the rounds' m-1 summed), so the ratio of the two means over
// 1 + s²/σ² is F(ν_moved, ν_same). The same-stack changes of adjacent rounds share a round (their squares
// correlate by 1/4), so their ν counts two thirds; the changes across moves are k rounds apart and independent.
// An F bound needs no resampling and holds at the few moves an experiment makes, where a bootstrap of a handful
// of changes would not; it assumes normal rounds, which the recorded noise's tails stretch, so the bound is
// shown by simulation on recorded rounds (TestTheRunsOffsetsKeepTheErrorRate).

// offsetConf is the confidence of the offsets' upper bound.
const offsetConf = 0.9

// minMoved is the fewest rounds across moves the run's estimate waits for: fewer give bounds too wide to tell
// the engine (at 6, F's 10% point is some 0.35, and the demo's runs were told up to 19% at 2% offsets).
const minMoved = 30

// StackOffset is what a run measured of its stacks' offsets on one metric before an experiment, and what the
// experiment's engine was told (result.json).
type StackOffset struct {
	Told float64 `json:"stack_sd_told"` // the spread of stacks' offsets the engine allowed for (Spec.StackSD)
	// SD is the run's estimate, Upper its 90% upper bound, from Moved rounds across moves against Same rounds
	// on the same stacks (both 0: too few rounds yet).
	SD    float64 `json:"stack_sd_measured"`
	Upper float64 `json:"stack_sd_upper"`
	Moved int     `json:"moved_rounds"`
	Same  int     `json:"same_rounds"`
}

// Measured says whether the estimate rests on enough rounds to tell an engine.
func (o StackOffset) Measured() bool { return o.Moved >= minMoved && o.Same >= MinDiffs }

// OffsetOf pools the experiments sps of metric, on their trials' figure: the tallies of those that have both
// are summed (an experiment that moved every round shows no spread of its own to set its moves against).
func OffsetOf(sps []*Spread, metric string) StackOffset {
	var same, moved tally
	for _, s := range sps {
		f := &s.figs[0]
		if s.metric != metric || f.diffs == 0 || f.moved.rounds == 0 {
			continue
		}
		same.sq, same.rounds, same.df = same.sq+f.sqDiff, same.rounds+f.diffs, same.df+f.df
		moved.sq, moved.rounds, moved.df = moved.sq+f.moved.sq, moved.rounds+f.moved.rounds, moved.df+f.moved.df
	}
	o := StackOffset{Moved: moved.rounds, Same: same.rounds}
	if !o.Measured() || same.sq <= 0 {
		return o
	}
	vs, vm := same.sq/float64(same.rounds), moved.sq/float64(moved.rounds)
	o.SD = math.Sqrt(max(vm-vs, 0) / 2)
	theta := vm / vs / stats.FQuantile(1-offsetConf, float64(moved.df), float64(same.df)*2/3)
	o.Upper = math.Sqrt(max(theta-1, 0) * vs / 2)
	return o
}
