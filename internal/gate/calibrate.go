package gate

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
)

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
	conc0, conc := g.conc, g.conc
	rates, busies := make([]float64, len(g.comps)), make([]float64, len(g.comps))
	for i, c := range g.comps {
		rate, busy, err := g.timeAlone(ctx, c)
		if err != nil {
			return err
		}
		rates[i], busies[i], conc = rate, busy, max(conc, connectionsFor(g.conc, busy))
	}
	if conc > g.conc {
		g.progress("start", "a page waits: %d connections a version, and as many workers", conc)
		if err := g.replacePair(ctx, conc); err != nil {
			return err
		}
		for i, c := range g.comps {
			var err error
			if rates[i], busies[i], err = g.timeAlone(ctx, c); err != nil {
				return err
			}
		}
	}
	for i, c := range g.comps {
		rate := rates[i]
		c.n = trialRequests(g.conc*cycle(c.mixes[0]), rate, busies[i]*float64(g.conc)/rate, conc0)
		// A turn, foreseen: both versions' trials at once take about twice one alone; then the latency trials,
		// at a rate set from a version's throughput in a duet, about half its rate alone.
		c.cost[0] = seconds(2 * float64(c.n) / rate)
		if !g.o.NoLatency {
			lr, ln := latencyPlan(rate / 2)
			c.cost[1] = seconds(float64(ln)/lr) + latencyWarmup
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

// trialSeconds is how long a trial sends requests at the slower version's rate alone (a page that waits sends
// more, trialRequests; a duet round, both versions at once on two cores, takes about twice that). The precision
// of a comparison is the stacks it has seen, not its trials' length (docs/engine.md, "Duet rounds"): short
// trials buy more rounds, each on fresh stacks, until a round is as long as the next pair's start beside it.
const trialSeconds = 0.4

// trialRequests is a CPU trial's requests (at least least, a cycle of the mix on every connection):
// trialSeconds at the slower version's rate alone, or, for a page that waits, cpu (CPU-seconds a request) apart,
// as many as make the CPU work of a page that computes in that time (trialSeconds on conc0 connections kept
// busy). A sleeping worker's CPU a request varies from request to request (what waking it costs), so a trial of
// its few requests (360 in 0.25 s for the demo's /remote at 8 connections) read a round varying by 1.4 to 3.1%,
// and left the A/A undecided in 4 of 8 runs of 2 minutes; in one run whose rounds were of 360 or 1,416 requests,
// the 12 of 360 varied by 1.8%, the 4 of 1,416 by 1.0%.
func trialRequests(least int, rate, cpu float64, conc0 int) int {
	n := max(least, int(rate*trialSeconds))
	if cpu > 0 {
		n = max(n, int(trialSeconds*float64(conc0)/cpu))
	}
	return min(n, maxTrialRequests)
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
