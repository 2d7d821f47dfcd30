package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
)

// arm is one version in one comparison's experiment. Its trials run on the version's stack of the round: the
// gate moves both versions to fresh stacks between rounds, so the arm has nothing to start or stop.
type arm struct {
	g *gate
	v int
	c *comparison
}

func (a *arm) Name() string                { return a.g.ver[a.v].Label }
func (a *arm) Start(context.Context) error { return nil }
func (a *arm) Stop()                       {}

// Trial is a round's CPU trial, then, in a round that has them (latencyDue), once the other version's CPU trial
// has ended too, its latency trial beside the other's: the CPU figure is the observation's Value, the p99 at the
// comparison's rate its Second (0 in a round without).
func (a *arm) Trial(ctx context.Context) (experiment.Observation, error) {
	g, c, l := a.g, a.c, a.g.cur[a.v]
	obs, err := g.trialOne(ctx, a.v, l, c)
	if !c.latNow {
		return obs, err
	}
	rate := obs.Rate
	if err != nil {
		rate = 0
	}
	rates, merr := c.meet.meet(ctx, a.v, rate)
	began := g.clock.Now()
	if err := cmp.Or(err, merr); err != nil {
		return obs, err
	}
	r, n, err := c.lat.plan(rates)
	if err != nil {
		return obs, fmt.Errorf("%s: %w", g.ver[a.v].Label, err)
	}
	if err := g.waitCalm(ctx); err != nil {
		return obs, err
	}
	lt, err := g.latencyOne(ctx, a.v, l, c, r, n)
	if err != nil {
		return obs, err
	}
	c.lat.trials[a.v] = append(c.lat.trials[a.v], lt)
	obs.Second, obs.P99 = lt.P99, lt.P99
	if a.v == 0 {
		c.latWall = g.clock.Now().Sub(began) // the turn's latency part; the other version's ends with it
	}
	return obs, nil
}

// waitCalm waits until the next pair of stacks has started (g.calm), or the context ends.
func (g *gate) waitCalm(ctx context.Context) error {
	if g.calm == nil {
		return nil
	}
	select {
	case <-g.calm:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// trial sends c's requests to version v's stack l and reads php-fpm's CPU time, from the scheduler's own clock,
// before the first and after the last: every request's whole cost falls inside and nothing else does, so the
// figure, CPU microseconds a request served, does not depend on how much of the machine the trial got (tune's
// CPU trial). Failed requests count in the CPU and not among those served: a version that fails costs more.
func (g *gate) trial(ctx context.Context, v int, l *live, c *comparison) (experiment.Observation, error) {
	r, err := load.NewRunner(g.options(l, c.mixes[v], c.n))
	if err != nil {
		return experiment.Observation{}, err
	}
	pg := l.st.PID(l.st.PHP())
	began := time.Now()
	before, err := measure.GroupCPU(pg)
	if err != nil {
		return experiment.Observation{}, g.trialError(v, l, err)
	}
	res, err := r.Trial(ctx, 0, 0)
	if ctx.Err() != nil {
		return experiment.Observation{}, ctx.Err()
	}
	if res == nil || err != nil && !errors.Is(err, load.ErrNoRequests) {
		return experiment.Observation{}, g.trialError(v, l, err)
	}
	after, err := measure.GroupCPU(pg)
	if err != nil {
		return experiment.Observation{}, g.trialError(v, l, err)
	}
	if derr := l.st.Died(); derr != nil {
		// What was measured is its death (nginx's 502s), not the version.
		return experiment.Observation{}, g.trialError(v, l, derr)
	}
	wall := time.Since(began)
	ok := res.Requests - res.Errors
	cpu := max(after-before, time.Microsecond)
	us := float64(cpu) / float64(time.Microsecond) / float64(max(ok, 1))
	return experiment.Observation{Value: us, Requests: ok, Errors: res.Errors, Rate: float64(ok) / wall.Seconds(), Stack: l.serial}, nil
}

// trialError says which version's trial failed how, with PHP's own message.
func (g *gate) trialError(v int, l *live, err error) error {
	if err == nil {
		err = errors.New("no result")
	}
	if derr := l.st.Died(); derr != nil && !errors.Is(err, derr) {
		err = fmt.Errorf("%w (%v)", derr, err)
	}
	if msg := phpMessage(l.st); msg != "" {
		err = fmt.Errorf("%w; PHP says: %s", err, msg)
	}
	return fmt.Errorf("%s: trial: %w", g.ver[v].Label, err)
}
