package tune

import (
	"math"

	"github.com/phptune/phptune/internal/experiment"
)

// The final comparison decides on goodput and capacity; the p99 is judged beside them, on the same rounds, so
// that a recommendation whose tail is shown worse than the starting point's is never printed as if it were not.
// The races of knobs that trade throughput for the tail guard their pick's p99 (experiment.Figure.Guard), but a
// chain of small losses across races, or a pool size (which no guard watches), adds up only here: the
// recommendation against the starting point, as a person would apply it.

// finalTailShare is the part of one pair's share of the final's alpha that the p99 is judged at: taken off the
// final's draw before the engine splits the rest over its pairs, so that one error budget covers all three
// figures. A quarter, not a third: the p99 is a check beside the final's two figures, and what it takes from
// them widens their intervals (about 1% at a pair's share of a few thousandths); a tail shown worse is a large
// effect (a round's p99 varies by 30% or more), which a small alpha still shows in a few rounds.
const finalTailShare = 0.25

// finalTailAlpha is the p99's share of drawn, the final's alpha for arms arms compared with the recommendation;
// none where the recommendation is the starting point (same), which is not raced against it.
func finalTailAlpha(drawn float64, nArms int, same bool) float64 {
	if same || nArms < 2 {
		return 0
	}
	return drawn / float64(experiment.Pairs(experiment.Versus, nArms)) * finalTailShare
}

// tailJudge judges the recommendation's p99 against the starting point's over the final's rounds: each round's
// log ratio of their p99s in a confidence sequence as a guard judges it, at the p99's share of alpha, with the
// stacks' offsets allowed for as on goodput (whose allowance stands for the p99's, as in a guard).
type tailJudge struct {
	rule experiment.Rule
	sd   float64
}

// judgeTail is the final's judge of the p99 at alpha, with es's mixture and stacks' offsets.
func (t *tuner) judgeTail(alpha float64, es experiment.Spec) tailJudge {
	r := experiment.Rule{MinEffect: t.o.MinEffect, Alpha: alpha, RunAlpha: t.budget.Total(), Mixture: es.Mixture}
	return tailJudge{rule: r, sd: es.StackSD}
}

// seq is the rounds rec and base shared, positive where the recommendation's p99 is the lower.
func (j tailJudge) seq(base, rec experiment.ArmResult) *experiment.Sequence {
	return experiment.Paired(base, rec, p99Of, false, j.rule.Mixture, j.sd)
}

// hold keeps the starting point's arm (base) in the final's rounds once its figures are decided, while the
// recommendation's p99 against it is undecided and leans worse by the minimum effect and a standard error (as a
// guard holds a challenger): more rounds may show it, and a recommendation printed without the worse tail it has
// is what the check is for. Leaning less, it is let go. The final's time bounds it.
func (j tailJudge) hold(base int) func(int, experiment.ArmResult, experiment.ArmResult) bool {
	return func(arm int, ref, a experiment.ArmResult) bool {
		if arm != base {
			return false
		}
		s := j.seq(a, ref)
		if s.N() < 2 || j.rule.Judge(s) != "" {
			return false
		}
		return s.Mean() <= -max(math.Log1p(j.rule.MinEffect), s.SD()/math.Sqrt(float64(s.N())))
	}
}

// record states in h the recommendation's p99 (out's first arm) against the starting point's (arm base) and the
// medians of their trials' p99s. Nothing where no round read both.
func (j tailJudge) record(h *Headline, out *experiment.Outcome, base int) {
	a, b := out.Arms[base], out.Arms[0]
	s := j.seq(a, b)
	if s.N() == 0 {
		return
	}
	h.RecommendationP99Us, h.DebianP99Us = medianOf(readOf(b.Trials, p99Of), p99Of),
		medianOf(readOf(a.Trials, p99Of), p99Of)
	h.P99VsDebian = j.rule.Comparison(s, false)
}

func p99Of(o experiment.Observation) float64 { return o.P99 }

// readOf is the trials whose figure f was read (positive).
func readOf(obs []experiment.Observation, f func(experiment.Observation) float64) []experiment.Observation {
	var out []experiment.Observation
	for _, o := range obs {
		if f(o) > 0 {
			out = append(out, o)
		}
	}
	return out
}
