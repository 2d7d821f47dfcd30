package experiment

import "math"

// A figure that moves in steps (a count of requests in a window, a timer's ticks) hides what lies within a
// step: a goodput trial of 30 requests moves in steps of 3%, the minimum effect. Rounding adds noise of
// variance step²/12 when the figure varies over several steps from trial to trial (Sheppard), which the rounds'
// own spread may not show in a few rounds; and when it varies by less than a step, rounding also biases its
// mean, by up to half a step, which no number of rounds averages out (Widrow and Kollar 2008, "Quantization
// Noise": with normal variation of sd sigma the bias is below step/2 exp(-2 pi² sigma²/step²), negligible from
// sigma = step/2 on). A sequence's spread is never taken below the first, and its interval is widened by the
// second, bounded from each figure's own variation over the rounds.

// reading is one figure of a round: its log, its relative step (0: finer than matters) and the stack it was
// read on (offsets.go).
type reading struct {
	log, step float64
	stack     int
}

// resolution is what a sequence knows of its figures' steps.
type resolution struct {
	quant float64 // the sum over the rounds of the variance their rounding adds to a difference
	a, b  side
}

// side is one arm's figures over a pair's rounds: Welford's mean and squares of their logs, and the sum of
// their steps.
type side struct {
	n              int
	mean, m2, step float64
}

func (r *resolution) add(a, b reading) {
	r.quant += (a.step*a.step + b.step*b.step) / 12
	r.a.add(a)
	r.b.add(b)
}

func (s *side) add(x reading) {
	s.n++
	d := x.log - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x.log - s.mean)
	s.step += x.step
}

// floor is the variance of a difference that the steps imply, on average over the rounds.
func (r *resolution) floor(n int) float64 {
	if n == 0 {
		return 0
	}
	return r.quant / float64(n)
}

// bias bounds how far rounding may have moved the mean difference.
func (r *resolution) bias() float64 { return r.a.bias() + r.b.bias() }

// bias bounds how far rounding may have moved the mean of this side's figures: half a step unless they are shown
// to vary by half a step, vanishing from there on (Widrow and Kollar's bound at the variation shown). Rounding
// spreads a figure that sits between two steps by up to half a step whatever it does (27.55 reads 28, 28.45
// mostly 28 and now and then 29), so what the figures show of their own variation is their spread less half a
// step (sd(x + e) <= sd(x) + sd(e), |e| <= step/2), from a lower confidence bound of that spread: taking the
// spread less the rounding's step²/12 as the variation shrank the allowance to about 0.18 of a step where
// counts varying by a tenth of a step were biased by 0.29.
func (s *side) bias() float64 {
	if s.n == 0 || s.step == 0 {
		return 0
	}
	q := s.step / float64(s.n)
	shown := max(sdLow(s.m2, s.n)-q/2, 0)
	return q / 2 * math.Exp(-2*math.Pi*math.Pi*shown*shown/(q*q))
}

// sdLow is a one-sided 99% lower confidence bound of the standard deviation of n values whose squared
// deviations from their mean sum to m2 (the chi-square bound, its quantile by Wilson and Hilferty): 0 below two.
func sdLow(m2 float64, n int) float64 {
	if n < 2 {
		return 0
	}
	const z = 2.326 // the normal's 99th percentile
	k := float64(n - 1)
	c := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return math.Sqrt(m2 / (k * c * c * c))
}
