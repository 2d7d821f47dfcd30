package clients

// The clients' arms on the experiment engine: the sweeps race their candidates, a pick is raced against its
// neighbours in fresh rounds, and the main run compares each model's pick with sync (Versus). phpbench's
// vocabulary stays: an iteration is a trial, --iterations caps the rounds, the retry threshold re-runs an
// iteration before the engine sees it, and --sequential runs each arm's iterations back to back at its start.

import (
	"context"
	"errors"
	"math"

	"github.com/phptune/phptune/internal/experiment"
)

// engineArm is one arm of one experiment.
type engineArm struct {
	r      *runner
	srv    *Server
	arm    Arm
	phase  string // "sweep", "neighbours", "main": for progress
	revs   int
	rounds int // the experiment's most rounds: the iterations --sequential runs up front
	// samples are the iterations the engine has seen; pre those --sequential measured at the start.
	samples, pre []Sample
	retries      int
}

func (a *engineArm) Name() string { return a.arm.Label() }

// Start measures every iteration back to back under --sequential; interleaved arms need no start.
func (a *engineArm) Start(ctx context.Context) error {
	if !a.r.cfg.Sequential {
		return nil
	}
	for len(a.pre) < a.rounds {
		s, err := a.take(ctx, a.pre)
		if err != nil {
			return err
		}
		a.pre = append(a.pre, s)
	}
	return nil
}

func (a *engineArm) Trial(ctx context.Context) (experiment.Observation, error) {
	var s Sample
	if a.r.cfg.Sequential {
		if len(a.samples) >= len(a.pre) {
			return experiment.Observation{}, errors.New("no iteration left")
		}
		s = a.pre[len(a.samples)]
	} else {
		var err error
		if s, err = a.take(ctx, a.samples); err != nil {
			return experiment.Observation{}, err
		}
	}
	a.samples = append(a.samples, s)
	return experiment.Observation{Value: s.OpsPerS(), Requests: int64(s.Ops), Rate: s.OpsPerS()}, nil
}

func (a *engineArm) Stop() {}

// take runs one iteration and, while it deviates from the mean of prior and itself by at least the retry
// threshold (phpbench's rule), runs it again, within the arm's retry limit.
func (a *engineArm) take(ctx context.Context, prior []Sample) (Sample, error) {
	s, err := a.iterate(ctx, len(prior))
	for err == nil && a.retries < a.r.cfg.RetryLimit && a.deviates(s, prior) {
		a.retries++
		a.r.progress("%s %s: %s, retrying iteration %d", a.arm.Target, a.arm.Op, a.arm.Label(), len(prior)+1)
		var again Sample
		again, err = a.iterate(ctx, len(prior))
		again.Retried = s.Retried + 1
		s = again
	}
	return s, err
}

func (a *engineArm) deviates(s Sample, prior []Sample) bool {
	if a.r.cfg.RetryThreshold <= 0 || len(prior) == 0 {
		return false
	}
	mean := s.Seconds
	for _, p := range prior {
		mean += p.Seconds
	}
	mean /= float64(len(prior) + 1)
	return math.Abs(s.Seconds-mean)/mean*100 >= a.r.cfg.RetryThreshold
}

func (a *engineArm) iterate(ctx context.Context, i int) (Sample, error) {
	a.r.progress("%s %s: %s, %s iteration %d/%d", a.arm.Target, a.arm.Op, a.arm.Label(), a.phase, i+1, a.rounds)
	s, err := a.r.iterate(ctx, a.srv, a.arm, a.revs)
	if err == nil && !(s.Ops > 0 && s.Seconds > 0) {
		err = errors.New("the iteration timed no operation")
	}
	return s, err
}

// plan is one experiment of the run: its phase (for progress), mode, rounds and revolutions.
type plan struct {
	phase                          string // "sweep", "neighbours", "main"
	mode                           experiment.Mode
	rounds, minRounds, futileAfter int
	revs                           int
}

// experiment runs arms (the first the incumbent or reference) as one experiment on the run's error budget. An
// incumbent that fails is an arm error like any other: the run goes on.
func (r *runner) experiment(ctx context.Context, srv *Server, p plan, arms []Arm) (*experiment.Outcome, []*engineArm, error) {
	ea := make([]*engineArm, len(arms))
	spec := experiment.Spec{Name: p.phase, Mode: p.mode, HigherIsBetter: true, MinEffect: r.cfg.MinEffect,
		Alpha: r.budget.Draw(experiment.Pairs(p.mode, len(arms))), RunAlpha: r.budget.Total(),
		MaxRounds: p.rounds, MinRounds: p.minRounds, FutileAfter: p.futileAfter}
	for i, a := range arms {
		ea[i] = &engineArm{r: r, srv: srv, arm: a, phase: p.phase, revs: p.revs, rounds: p.rounds}
		spec.Arms = append(spec.Arms, ea[i])
	}
	out, err := experiment.Run(ctx, spec)
	if err != nil && ctx.Err() == nil && out != nil {
		if out.Arms[0].Status != experiment.StatusError {
			out.Arms[0].Status, out.Arms[0].Note = experiment.StatusError, err.Error()
		}
		err = nil
	}
	return out, ea, err
}
