package experiment

import (
	"math"

	"github.com/phptune/phptune/internal/stats"
)

// Rule decides one comparison from its confidence sequence of log ratios, oriented so that a positive mean
// favours the second arm: the same rule for every comparison phptune makes, whether the engine ran the rounds
// or a caller judges another figure of the same rounds (anytime validity covers any stopping time, so a figure
// the experiment did not stop on is judged as soundly as the one it did).
type Rule struct {
	MinEffect float64 // smallest relative change that counts as better or worse (0.03 = 3%)
	Alpha     float64 // this comparison's level: its share of the run's error budget
	RunAlpha  float64 // the run's budget, which adjusted p-values are stated against (0: 0.05)
	Mixture   float64 // the sequence's mixture parameter, for the rounds that would decide (0: DefaultMixture)
}

const method = "confidence-sequence"

// Unbounded is the log bound that stands for no bound at all in a comparison's interval: a thousandfold,
// ln(1000).
const Unbounded = 6.907755278982137

// Judge is what s shows about the second arm: Better, Worse, NoDifference, or "" (undecided).
func (r Rule) Judge(s *Sequence) stats.Verdict {
	if s.N() < 2 || s.Identical() {
		return ""
	}
	lo, hi := s.Interval(r.Alpha)
	return r.judge(lo, hi, s.Mean())
}

// judge is the verdict of an interval [lo, hi] of log ratios around the estimate est.
func (r Rule) judge(lo, hi, est float64) stats.Verdict {
	m := math.Log1p(r.MinEffect)
	switch {
	case lo > 0 && est >= m:
		return stats.Better
	case hi < 0 && est <= -m:
		return stats.Worse
	case lo > -m && hi < m:
		return stats.NoDifference
	}
	return ""
}

// Bound is what other comparisons of the same experiment show about a pair, on its log scale (oriented like
// its sequence): an interval that, together with the pair's own, holds at level 1 - Alpha, and the p-value
// stated on that level. Via names how it was found.
type Bound struct {
	Lo, Hi, P, Alpha float64
	Via              string
}

// Comparison states s as the second arm against the first in the figure's own terms (higherIsBetter says which
// way the figure points; s is oriented by goodness): the relative change, its interval, the anytime-valid p-value
// and the verdict; an undecided one is Inconclusive with the rounds that would decide it.
func (r Rule) Comparison(s *Sequence, higherIsBetter bool) *stats.Comparison {
	return r.Bounded(s, higherIsBetter, nil)
}

// Bounded is Comparison with s's interval narrowed by b (nil: none), where the two overlap: both hold at once
// within the experiment's alpha, so their intersection does too. The estimate is kept inside the interval.
func (r Rule) Bounded(s *Sequence, higherIsBetter bool, b *Bound) *stats.Comparison {
	runAlpha := r.RunAlpha
	if !(runAlpha > 0 && runAlpha < 1) {
		runAlpha = stats.DefaultAlpha
	}
	lo, hi := s.Interval(r.Alpha)
	est, p, via, alpha := s.Mean(), s.P(), "", r.Alpha
	if b != nil && max(lo, b.Lo) <= min(hi, b.Hi) && (b.Lo > lo || b.Hi < hi) {
		// Narrowed by the bound: what holds is what both hold at once, at the bound's level.
		lo, hi, p, via, alpha = max(lo, b.Lo), min(hi, b.Hi), b.P, b.Via, b.Alpha
		est = min(max(est, lo), hi)
	}
	verdict := stats.Verdict("")
	if s.N() >= 2 && !s.Identical() {
		verdict = r.judge(lo, hi, est)
	}
	if !higherIsBetter {
		lo, hi, est = -hi, -lo, -est
	}
	// Before enough rounds the interval is unbounded: it is stated as a thousandfold either way (JSON has no
	// infinity).
	lo, hi = max(lo, -Unbounded), min(hi, Unbounded)
	c := &stats.Comparison{N: s.N(), Paired: true, LogEstimate: est, LogLo: lo, LogHi: hi,
		Estimate: math.Expm1(est), Lo: math.Expm1(lo), Hi: math.Expm1(hi),
		Conf: 1 - alpha, ConfAchieved: 1 - alpha, P: p, Method: method, Alpha: alpha, Via: via}
	c.PAdjusted = math.Min(1, c.P*runAlpha/alpha)
	c.Verdict = verdict
	if c.Verdict == "" {
		c.Verdict = stats.Inconclusive
		c.RoundsNeeded = r.roundsNeeded(s)
	}
	return c
}

// MaxRoundsNeeded bounds the estimate of rounds that would decide an inconclusive comparison: an estimate of
// that many says the difference is about the minimum effect.
const MaxRoundsNeeded = 1000

// roundsNeeded estimates the rounds at which the interval, as wide as this spread makes it, would decide:
// exclude zero (a difference at the estimate's size) or fit inside the minimum effect (no difference),
// whichever comes first.
func (r Rule) roundsNeeded(s *Sequence) int {
	m := math.Log1p(r.MinEffect)
	est := math.Abs(s.Mean())
	need := MaxRoundsNeeded
	if est >= m && est > 0 {
		need = min(need, s.RoundsFor(est, r.Alpha, MaxRoundsNeeded))
	}
	if est < m {
		need = min(need, s.RoundsFor(m-est, r.Alpha, MaxRoundsNeeded))
	}
	return need
}
