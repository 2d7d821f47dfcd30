package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
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

// trialSeconds is how long a trial sends requests at the slower version's rate alone (a duet round, both
// versions at once on two cores, takes about twice that). The precision of a comparison is the stacks it has
// seen, not its trials' length (docs/engine.md, "Duet rounds"): short trials buy more rounds, each on fresh
// stacks, until a round is as long as the next pair's start beside it.
const trialSeconds = 0.4

// calibrationRequests is the fewest requests the app's rate alone is read from.
const calibrationRequests = 20

// maxTrialRequests bounds a trial of a very fast page.
const maxTrialRequests = 50000

// calibrate sets the run's connections, and each comparison's requests a trial, from the app alone on the first
// stacks: the connections that keep the workers of the page that waits most about busyAim busy (a pool of a
// worker a connection: the first pair is replaced by one with more workers when a page needs them), the requests
// from the slower version's rate at those connections; the same requests in both versions' trials, and in every
// round.
func (g *gate) calibrate(ctx context.Context) error {
	conc := g.conc
	for _, c := range g.comps {
		_, busy, err := g.timeAlone(ctx, c)
		if err != nil {
			return err
		}
		conc = max(conc, connectionsFor(g.conc, busy))
	}
	if conc > g.conc {
		g.progress("start", "a page waits: %d connections a version, and as many workers", conc)
		if err := g.replacePair(ctx, conc); err != nil {
			return err
		}
	}
	for _, c := range g.comps {
		rate, _, err := g.timeAlone(ctx, c)
		if err != nil {
			return err
		}
		c.n = min(max(g.conc*cycle(c.mixes[0]), int(rate*trialSeconds)), maxTrialRequests)
		// A turn, foreseen: both versions' trials at once take about twice one alone; then the latency trials,
		// at a rate set from a version's throughput in a duet, about half its rate alone.
		c.cost[0] = seconds(2 * float64(c.n) / rate)
		if !g.o.NoLatency {
			lr, ln := latencyPlan(rate / 2)
			c.cost[1] = seconds(float64(ln) / lr)
		}
	}
	return nil
}

// replacePair sets the run's connections (and each pool's workers) to conc and moves both versions to a fresh
// pair of stacks served so.
func (g *gate) replacePair(ctx context.Context, conc int) error {
	g.conc = conc
	pair, wall, err := g.startPair(ctx, g.nextSerials())
	if err != nil {
		return err
	}
	g.stopAll()
	g.cur, g.startWall = pair, wall
	return nil
}

// timeAlone sends some of c's requests to each version's stack of the round, alone, and returns the slower
// version's rate and how busy the busier kept a worker: php-fpm's CPU time over the trial's wall time, a
// connection's share.
func (g *gate) timeAlone(ctx context.Context, c *comparison) (rate, busy float64, err error) {
	g.progress("start", "timing %s", c.Name)
	per := g.conc * cycle(c.mixes[0])
	n := per * int(math.Ceil(float64(calibrationRequests)/float64(per)))
	rate = math.Inf(1)
	for v, l := range g.cur {
		r, b, err := g.timeOne(ctx, v, l, c, n)
		if err != nil {
			return 0, 0, err
		}
		rate, busy = min(rate, r), max(busy, b)
	}
	return rate, busy, nil
}

// timeOne sends n of c's requests to version v's stack l and reads the rate and the busy share of timeAlone.
func (g *gate) timeOne(ctx context.Context, v int, l *live, c *comparison, n int) (rate, busy float64, err error) {
	r, err := load.NewRunner(g.options(l, c.mixes[v], n))
	if err != nil {
		return 0, 0, err
	}
	pg := l.st.PID(l.st.PHP())
	before, err := measure.GroupCPU(pg)
	if err != nil {
		return 0, 0, g.trialError(v, l, err)
	}
	began := time.Now()
	res, err := r.Trial(ctx, 0, 0)
	if ctx.Err() != nil {
		return 0, 0, ctx.Err()
	}
	if err != nil || res.Errors > 0 {
		return 0, 0, g.trialError(v, l, fmt.Errorf("timing %s: %v", c.Name, cmpErr(err, res)))
	}
	wall := time.Since(began)
	after, err := measure.GroupCPU(pg)
	if err != nil {
		return 0, 0, g.trialError(v, l, err)
	}
	return float64(res.Requests) / wall.Seconds(), float64(after-before) / float64(wall) / float64(g.conc), nil
}

// busyAim is how busy a worker of a page that waits is kept: a page that computes keeps its worker on the CPU
// most of the time, one that waits (on a remote service, a database) mostly sleeps, and with a worker a
// connection its trials would read little CPU a second. Its CPU a request then varies from request to request
// (waking a sleeping worker, on an idle CPU, costs what the CPU's state makes it), and a trial's figure with the
// few requests it served: the demo's /remote (5 ms asleep, 0.6 ms on the CPU) varied by 4.5 to 5.1% a round with
// 2 connections and by 0.8 to 2.3% with 8, its A/A shown within 3% in 3 to 8 seconds of rounds against 24 to 29.
// A page that computes is served as fast, and varies as little, with 8 connections and workers as with 2 (the
// demo's /articles: 176 to 180 requests a second, 0.9 to 1.0% a round; 162 to 181, 0.9 to 1.2%), but not with 2
// connections to 8 workers (126 to 140, its requests spread over workers that sat idle): so one count serves
// every comparison of the run (docs/ci.md, "Measured").
const busyAim = 0.5

// maxConnFactor bounds the connections of a page that waits: this many times those of a page that computes.
const maxConnFactor = 4

// connectionsFor is the connections that keep a page's workers busy about busyAim of the time, where conc
// connections kept each busy for that share of it: conc for a page that computes, up to maxConnFactor times
// more for one that waits.
func connectionsFor(conc int, busy float64) int {
	if !(busy > 0) {
		return conc * maxConnFactor
	}
	return min(max(conc, int(math.Ceil(float64(conc)*busyAim/busy))), conc*maxConnFactor)
}

// seconds is s seconds as a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// cmpErr is err, or the failed requests of res.
func cmpErr(err error, res *load.Result) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests)
}
