package experiment

import (
	"context"
	"errors"
	"math"
	"math/rand"
)

// fakeArm is an arm whose trials are base * exp(effect + noise), the noise normal with sd sigma.
type fakeArm struct {
	name      string
	effect    float64 // log effect
	sigma     float64
	rng       *rand.Rand
	startErr  error
	failAt    int // 1-based trial that fails; 0 never
	errorsAt  int // 1-based trial from which every trial has 3 failed requests
	errorsFor int // with errorsAt, how many trials have them (0: every one from errorsAt on)
	trials    int
	starts    int
	stops     int
	onTrial   func()
	lowerBest bool // the value is a time: effect makes it smaller
	// burstRate is the chance that a trial has a burst of failures, of burstMean requests on average
	// (geometric); broken: every request of every trial fails. requests is a trial's (0: 500).
	burstRate, burstMean float64
	broken               bool
	requests             int64
	// second, when set, gives a second figure of effect second[0] and noise second[1] (log scale).
	second []float64
	// secondEvery gives the second figure in every secondEvery-th trial only, from the first (0: every trial).
	secondEvery int
	// stackSD is the spread of its stacks' offsets, a fresh stack every trials (0: one for its life).
	stackSD float64
	every   int
	stacks  []float64
	// proneShare of its stacks fail in proneRate of their trials (a burst of burstMean, or 4, requests).
	proneShare, proneRate float64
	prone                 []bool
	// emptyRate is the chance that a trial serves none of its requests (a stall longer than the trial);
	// proneEmpty: the failure-prone stacks' failing trials serve none.
	emptyRate  float64
	proneEmpty bool
	// stalls, shared by the arms of an experiment, time out trials and spill into the next trial run.
	stalls *stalls
}

// stalls are stalls in rate of trials that fail it and spill into the next trial run, whichever arm's; empty
// ones outlast both trials, which serve none of their requests.
type stalls struct {
	rate    float64
	empty   bool
	pending bool
}

// hit says whether the trial about to run fails: a stall of its own, or one the trial before left.
func (s *stalls) hit(rng *rand.Rand) bool {
	if s == nil {
		return false
	}
	if s.pending {
		s.pending = false
		return true
	}
	if rng.Float64() < s.rate {
		s.pending = true
		return true
	}
	return false
}

// proneStack says whether stack k fails often, drawn when first asked.
func (a *fakeArm) proneStack(k int) bool {
	for len(a.prone) <= k {
		a.prone = append(a.prone, a.rng.Float64() < a.proneShare)
	}
	return a.prone[k]
}

func (a *fakeArm) Name() string                    { return a.name }
func (a *fakeArm) Start(ctx context.Context) error { a.starts++; return a.startErr }
func (a *fakeArm) Stop()                           { a.stops++ }
func (a *fakeArm) Trial(ctx context.Context) (Observation, error) {
	if err := ctx.Err(); err != nil {
		return Observation{}, err
	}
	a.trials++
	if a.onTrial != nil {
		a.onTrial()
	}
	if a.failAt > 0 && a.trials >= a.failAt {
		return Observation{}, errors.New("php-fpm exited")
	}
	stack := 0
	if a.every > 0 {
		stack = (a.trials - 1) / a.every
	}
	for a.stackSD > 0 && len(a.stacks) <= stack {
		a.stacks = append(a.stacks, a.stackSD*a.rng.NormFloat64())
	}
	x := a.effect + a.sigma*a.rng.NormFloat64()
	if a.stackSD > 0 {
		x += a.stacks[stack]
	}
	if a.lowerBest {
		x = -x
	}
	n := a.requests
	if n == 0 {
		n = 500
	}
	o := Observation{Value: 1000 * math.Exp(x), Requests: n, Stack: stack}
	if a.second != nil && (a.secondEvery == 0 || (a.trials-1)%a.secondEvery == 0) {
		o.Second = 50 * math.Exp(a.second[0]+a.second[1]*a.rng.NormFloat64())
	}
	if a.errorsAt > 0 && a.trials >= a.errorsAt && (a.errorsFor == 0 || a.trials < a.errorsAt+a.errorsFor) {
		o.Errors = 3
	}
	if a.burstRate > 0 && a.rng.Float64() < a.burstRate {
		o.Errors = min(geometric(a.rng, a.burstMean), n)
	}
	if a.proneShare > 0 && a.proneStack(stack) && a.rng.Float64() < a.proneRate {
		o.Errors = min(geometric(a.rng, max(a.burstMean, 4)), n)
		if a.proneEmpty {
			o.Errors = n
		}
	}
	if a.emptyRate > 0 && a.rng.Float64() < a.emptyRate {
		o.Errors = n
	}
	if a.stalls.hit(a.rng) {
		o.Errors = max(o.Errors, min(geometric(a.rng, max(a.burstMean, 4)), n))
		if a.stalls.empty {
			o.Errors = n
		}
	}
	if a.broken {
		o.Errors = n
	}
	o.Requests -= o.Errors
	return o, nil
}

func arms(rng *rand.Rand, sigma float64, effects ...float64) []*fakeArm {
	var out []*fakeArm
	for i, e := range effects {
		out = append(out, &fakeArm{name: string(rune('A' + i)), effect: e, sigma: sigma, rng: rng})
	}
	return out
}

func asArms(f []*fakeArm) []Arm {
	var out []Arm
	for _, a := range f {
		out = append(out, a)
	}
	return out
}
