package experiment

import "math"

// Sequence accumulates paired differences (log ratios of two arms' figures, one a round) and gives an
// anytime-valid confidence sequence for their mean: an interval at every look that covers the true mean at all
// looks at once with probability at least 1 - alpha, under the model that the differences are independent and
// normal with unknown variance. So the comparison may stop at the first look that decides, however many looks
// it takes. See doc.go for the method and why.
type Sequence struct {
	n        int
	mean, m2 float64 // Welford's running mean and sum of squared deviations
	maxBF0   float64 // the largest Bayes factor against a zero mean seen at any look: the anytime p-value's
	values   []float64
	mixture  float64 // g: the prior variance of the standardised effect
	// res is what the figures' steps imply (quantize.go): a floor under the spread, a bias the interval allows.
	res resolution
	// stacks are the stacks the rounds ran on, and what their offsets add (offsets.go).
	stacks offsets
	// lead is the spread of a lead every round of the run shares (lead.go; 0: none).
	lead float64
}

// DefaultMixture is g, the variance of the normal prior on the standardised effect (mean / sd of the log
// ratios) that the mixture averages over. It sets where the sequence is narrowest: a large g spends the error
// budget on effects of tens of standard deviations decided in 3 rounds, a small g on small effects late. At a
// knob's share of alpha (a few thousandths) the interval after 4 rounds is narrowest near g = 100 (9.3 sd
// against 9.9 at 300), after 100 rounds 4% narrower at 150 than at 300, and g below about 150 cannot decide
// anything in 3 rounds. Chosen by simulation on replayed real rounds (bench/engine): 150 decided opcache off
// (-44%) in a median 4 rounds where 300 took 5, and found a 5% effect slightly more often.
const DefaultMixture = 150.0

// NewSequence starts an empty sequence with mixture parameter g (0: DefaultMixture).
func NewSequence(g float64) *Sequence {
	if !(g > 0) {
		g = DefaultMixture
	}
	return &Sequence{mixture: g, maxBF0: 1}
}

// Add records one round's difference.
func (s *Sequence) Add(d float64) { s.add(d, reading{}, reading{}) }

// add records one round's difference d of the figures a and b: with their steps, the spread is never taken
// below what rounding implies and the interval allows for what rounding may have biased (quantize.go).
func (s *Sequence) add(d float64, a, b reading) {
	s.n++
	delta := d - s.mean
	s.mean += delta / float64(s.n)
	s.m2 += delta * (d - s.mean)
	s.values = append(s.values, d)
	s.res.add(a, b)
	s.stacks.add(a.stack, b.stack)
	if s.n >= 2 && !s.Identical() {
		s.maxBF0 = math.Max(s.maxBF0, s.bayesFactor(0))
	}
}

// Identical says that there are differences and all of them are the same: a spread of zero is no evidence of
// anything (figures that move in steps all rounded alike), so no verdict rests on such rounds.
func (s *Sequence) Identical() bool { return s.n >= 1 && s.m2 == 0 }

// N is the number of differences.
func (s *Sequence) N() int { return s.n }

// Mean is the mean difference (0 when empty).
func (s *Sequence) Mean() float64 { return s.mean }

// SD is the spread the sequence decides with: the sample standard deviation (n-1 in the denominator; 0 with
// fewer than 2), or what the figures' steps imply when that is more, and what the stacks' offsets and a lasting
// lead add.
func (s *Sequence) SD() float64 {
	if s.n < 2 {
		return 0
	}
	return math.Sqrt(max(s.m2/float64(s.n-1), s.res.floor(s.n)) + s.stacks.variance(s.n) + leadVariance(s.lead, s.n))
}

// Values are the differences in the order added.
func (s *Sequence) Values() []float64 { return s.values }

// bayesFactor is the mixture likelihood ratio against mean mu0 at the current look: the Bayes factor of the
// one-sample t-test with a normal prior of variance g on the standardised effect and the right-Haar prior
// 1/sigma on the scale (Rouder et al. 2009, their eq. for a fixed g), which is a nonnegative martingale under
// mean mu0 whatever the variance (Lai 1976; Perez-Ortiz et al. 2024), so Ville's inequality bounds the chance
// that it ever reaches 1/alpha by alpha.
func (s *Sequence) bayesFactor(mu0 float64) float64 {
	n := float64(s.n)
	nu := n - 1
	a := 1 + n*s.mixture
	sd := s.SD()
	var t2 float64
	if sd == 0 {
		if s.mean == mu0 {
			return 1 / math.Sqrt(a)
		}
		return math.Inf(1)
	}
	// The mean is mu0's as far as rounding may have biased it.
	t := max(math.Abs(s.mean-mu0)-s.res.bias(), 0) / (sd / math.Sqrt(n))
	t2 = t * t
	logBF := -0.5*math.Log(a) + (nu+1)/2*(math.Log1p(t2/nu)-math.Log1p(t2/(nu*a)))
	return math.Exp(logBF)
}

// HalfWidth is the half-width of the confidence sequence at level 1 - alpha at the current look: the mean
// mu0 is outside it exactly when the Bayes factor against mu0 reaches 1/alpha; it includes what rounding may
// have biased the mean by. +Inf with fewer than 2 differences, or when the look cannot exclude any mean yet (too
// few rounds for so small an alpha).
func (s *Sequence) HalfWidth(alpha float64) float64 {
	return halfWidth(s.n, s.SD(), alpha, s.mixture) + s.res.bias()
}

// HalfWidthAt is the half-width that n differences of spread sd would give at level 1 - alpha with mixture g
// (0: DefaultMixture): the smallest difference a comparison of n rounds can decide, before they are run.
func HalfWidthAt(n int, sd, alpha, g float64) float64 {
	if !(g > 0) {
		g = DefaultMixture
	}
	return halfWidth(n, sd, alpha, g)
}

// halfWidth solves BF(t) = 1/alpha for |t| with n differences of standard deviation sd.
func halfWidth(n int, sd, alpha, g float64) float64 {
	if n < 2 {
		return math.Inf(1)
	}
	nf := float64(n)
	nu := nf - 1
	a := 1 + nf*g
	// BF < 1/alpha  <=>  (1 + t²/nu) / (1 + t²/(nu a)) < K,  K = (sqrt(a)/alpha)^(2/n).
	logK := 2 / nf * (0.5*math.Log(a) - math.Log(alpha))
	k := math.Exp(logK)
	if k >= a {
		return math.Inf(1)
	}
	t2 := nu * (k - 1) / (1 - k/a)
	return math.Sqrt(t2) * sd / math.Sqrt(nf)
}

// Interval is the confidence sequence's interval at level 1 - alpha at the current look, on the scale of the
// differences.
func (s *Sequence) Interval(alpha float64) (lo, hi float64) {
	h := s.HalfWidth(alpha)
	return s.mean - h, s.mean + h
}

// P is the anytime-valid p-value against a zero mean: 1 over the largest Bayes factor seen at any look, so
// P <= alpha exactly when some look's interval at level 1 - alpha excluded zero.
func (s *Sequence) P() float64 { return math.Min(1, 1/s.maxBF0) }

// RoundsFor estimates how many differences of this sequence's spread would bring the half-width at level
// 1 - alpha down to width: what a comparison left undecided would need. 0 when it cannot be said (no spread
// known, or no width asked); capped at limit.
func (s *Sequence) RoundsFor(width, alpha float64, limit int) int {
	sd := s.SD()
	if s.n < 2 || !(width > 0) {
		return 0
	}
	width -= s.res.bias() // more rounds of figures that vary as little do not average it out
	for n := max(s.n, 2); n <= limit && width > 0; n++ {
		if halfWidth(n, sd, alpha, s.mixture) <= width {
			return n
		}
	}
	return limit
}
