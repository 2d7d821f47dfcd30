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

// bias bounds how far rounding may have moved the mean of this side's figures: half a step when they never
// vary, vanishing as their variation (less the rounding's own) reaches half a step.
func (s *side) bias() float64 {
	if s.n == 0 || s.step == 0 {
		return 0
	}
	q := s.step / float64(s.n)
	v := 0.0
	if s.n >= 2 {
		v = max(s.m2/float64(s.n-1)-q*q/12, 0)
	}
	return q / 2 * math.Exp(-2*math.Pi*math.Pi*v/(q*q))
}
