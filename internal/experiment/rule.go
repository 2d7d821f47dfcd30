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

// Unbounded is the log bound that stands for no bound at all in a comparison's interval: a thousandfold.
var Unbounded = math.Log(1000)

// Judge is what s shows about the second arm: Better, Worse, NoDifference, or "" (undecided).
func (r Rule) Judge(s *Sequence) stats.Verdict {
	if s.N() < 2 {
		return ""
	}
	m := math.Log1p(r.MinEffect)
	lo, hi := s.Interval(r.Alpha)
	est := s.Mean()
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

// Comparison states s as the second arm against the first in the figure's own terms (higherIsBetter says which
// way the figure points; s is oriented by goodness): the relative change, its interval, the anytime-valid p-value
// and the verdict; an undecided one is Inconclusive with the rounds that would decide it.
func (r Rule) Comparison(s *Sequence, higherIsBetter bool) *stats.Comparison {
	runAlpha := r.RunAlpha
	if !(runAlpha > 0 && runAlpha < 1) {
		runAlpha = stats.DefaultAlpha
	}
	lo, hi := s.Interval(r.Alpha)
	est := s.Mean()
	if !higherIsBetter {
		lo, hi, est = -hi, -lo, -est
	}
	// Before enough rounds the interval is unbounded: it is stated as a thousandfold either way (JSON has no
	// infinity).
	lo, hi = max(lo, -Unbounded), min(hi, Unbounded)
	c := &stats.Comparison{N: s.N(), Paired: true, LogEstimate: est, LogLo: lo, LogHi: hi,
		Estimate: math.Expm1(est), Lo: math.Expm1(lo), Hi: math.Expm1(hi),
		Conf: 1 - r.Alpha, ConfAchieved: 1 - r.Alpha, P: s.P(), Method: method, Alpha: r.Alpha}
	c.PAdjusted = math.Min(1, c.P*runAlpha/r.Alpha)
	c.Verdict = r.Judge(s)
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
