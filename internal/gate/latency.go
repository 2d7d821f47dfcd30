package gate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
)

// The latency trials: in some rounds (latencyDue), after both versions' CPU trials, both versions are sent the
// same fixed rate of requests at once (an open model: a request's latency runs from its scheduled send, so a
// version that falls behind cannot hide its queue), and the p99 of each is the round's second figure (the p50 is
// stated beside it). A fixed rate is what a server's users send: where CPU a request says what a version costs,
// the latency at a rate says what its users wait, a sleep or a remote call included, which costs no CPU.
const (
	// latencyShare of the slower version's throughput in the comparison's first round (both versions loaded at
	// once, as in every round) is the rate: half, so that both versions at that rate at once keep the machine
	// about half busy, where a queue is the version's own doing and not the machine's saturation.
	latencyShare = 0.5
	// latencySeconds is how long a latency trial sends requests at that rate, at least.
	latencySeconds = 1.0
	// latencyMinRequests is the fewest requests of a latency trial, unless that would take latencyMaxSeconds: a
	// p99 of fewer is a trial's slowest request, which one stall of a busy machine sets (measured here: a trial of
	// 20 requests read p99s of 2 to 80 ms for a page of 1 ms, and 13 rounds could not tell a 20 ms sleep).
	latencyMinRequests = 100
	latencyMaxSeconds  = 2.5
	// LatencyLeadSD is the spread of a p99 lead that lasts a run, which the p99's interval allows for
	// (experiment/lead.go): in 583 comparisons of the demo against a copy of itself (2026-11-28, docs/ci.md) the
	// comparisons' mean log ratios spread beyond their rounds' spread by 1.6 to 2.0% beside a busy loop and 3.3
	// to 3.9% quiet, 2.6% pooled: 4% is the upper end. It costs the small changes: simulated on rounds of 21%
	// spread, a p99 30% longer leans or is shown worse in 21% of comparisons of 8 rounds (36% untold), 50%
	// longer in 71% (81%); twice as long in all from 8 rounds.
	LatencyLeadSD = 0.04
)

// latency is one comparison's latency trials: the rate and requests fixed in its first round, and the p50 and
// p99 of each version's trials.
type latency struct {
	once   sync.Once
	rate   float64 // requests a second, each version
	n      int     // requests a trial
	err    error
	trials [2][]latTrial // by version: each arm appends to its own
}

// latTrial is one latency trial's p50 and p99, in milliseconds.
type latTrial struct {
	P50, P99 float64
}

// latencyPlan is the rate and the requests of a latency trial, from the slower version's throughput in a duet.
func latencyPlan(duetRate float64) (rate float64, n int) {
	rate = latencyShare * duetRate
	least := min(latencyMinRequests, int(math.Ceil(rate*latencyMaxSeconds)))
	n = min(max(least, int(math.Ceil(rate*latencySeconds))), maxTrialRequests)
	return rate, n
}

// plan fixes the comparison's rate from its first round's CPU trials (rates, requests a second each: 0 for one
// that failed) and returns it with the requests a trial, the same in every latency trial.
func (l *latency) plan(rates [2]float64) (float64, int, error) {
	l.once.Do(func() {
		slower := math.Inf(1)
		for _, r := range rates {
			if r > 0 {
				slower = min(slower, r)
			}
		}
		if math.IsInf(slower, 1) {
			l.err = errors.New("latency: no CPU trial served a request to set the rate from")
			return
		}
		l.rate, l.n = latencyPlan(slower)
	})
	return l.rate, l.n, l.err
}

// latencyTrial sends c's requests to version v's stack l at the rate, n of them, and reads their p50 and p99.
func (g *gate) latencyTrial(ctx context.Context, v int, l *live, c *comparison, rate float64, n int) (latTrial, error) {
	o := g.latencyOptions(l, c.mixes[v], rate, n)
	o.Phase = latencyPhase(v, len(c.lat.trials[v]))
	r, err := load.NewRunner(o)
	if err != nil {
		return latTrial{}, err
	}
	res, err := r.Trial(ctx, 0, 0)
	if ctx.Err() != nil {
		return latTrial{}, ctx.Err()
	}
	if res == nil || err != nil && !errors.Is(err, load.ErrNoRequests) {
		return latTrial{}, g.trialError(v, l, fmt.Errorf("latency at %.0f requests/s: %v", rate, err))
	}
	if derr := l.st.Died(); derr != nil {
		return latTrial{}, g.trialError(v, l, derr)
	}
	p50, p99 := tail(res)
	if !(p99 > 0) {
		return latTrial{}, g.trialError(v, l, fmt.Errorf("latency at %.0f requests/s: no request answered", rate))
	}
	return latTrial{P50: p50 / 1000, P99: p99 / 1000}, nil
}

// latencyPhase is version v's schedule's phase in a comparison's k-th latency trial: the two versions' requests
// come in turn, half a period apart, which of the two first turning from trial to trial. Started together at the
// same rate, their requests were due at the same instants, and whichever was sent a moment sooner could wait
// less for a CPU, request after request. In runs of the demo against itself (2026-11-28, docs/ci.md) a page's
// p99 read one version 10 to 20% slower in most rounds of a run, and the comparisons' means spread more than
// independent rounds allow (|t| over 2.2 in 7 of 51, about 3 expected): same-instant sends are one way a lead
// could last a run. Not shown to be the way: in 3 A/A runs each way (4 comparisons a run) neither read a lead.
func latencyPhase(v, k int) float64 { return 0.5 * float64((v+k)%2) }

// latencyOptions is an open-model run of mix on l: n requests at rate, from a pool of connections twice the
// workers, so that a request that finds every worker busy waits in php-fpm's queue, as a user's would.
func (g *gate) latencyOptions(l *live, mix []load.MixItem, rate float64, n int) load.Options {
	return load.Options{Target: l.target, Request: g.o.Request, Connections: 2 * g.conc, MaxInflight: 2 * g.conc,
		Rate: rate, Requests: int64(n), Warmup: latencyWarmup, Timeout: g.o.Timeout, Mix: mix, SkipPreflight: true,
		ExpectStatus: ok2xx}
}

// latencyWarmup opens each latency trial, its requests sent and not counted: the two versions' trials start a
// moment apart (the version whose CPU trial ended last goes on from the meeting at once, the other is woken), and
// the first requests of one meet the other's setting up (its connections, its goroutines). Over 160 comparisons
// of 40 gate runs of the demo (2026-11-28), the share of rounds in which NEW's CPU trial ended last went with
// NEW's p99 against OLD's (correlation 0.42): in a run where NEW's page cost a little more (the planted app's
// /articles, +0.6%), it ended last in 7 rounds of 7 and its p99 read +16%, shown worse. Not yet shown to be the
// cause: 2 runs each way of the planted app against the demo read no lasting lead either way.
const latencyWarmup = 100 * time.Millisecond

// tail is a run's p50 and p99 in microseconds: of every request it meant to make when some failed or were never
// sent (each counted as taking the timeout: a version that fails is not a fast one), else of those answered.
func tail(res *load.Result) (p50, p99 float64) {
	if len(res.LatencyAll) == 3 {
		return res.LatencyAll[0].Value, res.LatencyAll[2].Value
	}
	return res.Latency.P50, res.Latency.P99
}

// latencyTimeShare is the most of a comparison's time its latency trials take while its CPU figure is open: a
// latency trial (1 to 2.5 seconds) is longer than a round's CPU trials (about 0.8 seconds on the demo), and
// run every round it took two thirds of the time, leaving a 5% change of CPU undecided in 2 minutes (11 to 13
// rounds where 16 to 20 were needed, docs/ci.md). A third leaves the CPU trials twice the rounds.
const latencyTimeShare = 1.0 / 3

// trialLeanRisk is the lean that asks for latency trials every turn: looser than the gate's (leanRisk), since it
// costs time, not a verdict. At the gate's, a p99 90 times OLD's leaned after two rounds only if their t passed
// 31.8 (one degree of freedom); in a CI run it did not, and the p99 waited for the time share, undecided.
const trialLeanRisk = 0.05

// latencyDue says whether c's next turn runs latency trials: never with --no-latency or once the p99 is decided
// (a confidence sequence's verdict holds at any stopping time: more trials would change nothing for the gate);
// every turn once CPU is shown not worse, when the p99 is all that is left to race, or while the p99 leans worse
// (at trialLeanRisk, or its one round reads worse by the minimum effect: a p99 500 ms longer read so and then
// waited for the time share, 1 latency round in 14), when it is the figure that may end the race; else while
// the latency trials have taken at most latencyTimeShare of the comparison's time (so the first turn's, which
// sets the rate).
func (g *gate) latencyDue(c *comparison) bool {
	if g.o.NoLatency {
		return false
	}
	if c.out != nil {
		vs := c.out.Arms[1].Vs2
		if vs != nil && vs.Verdict != stats.Inconclusive {
			return false
		}
		if gateOf(c.out.Arms[1].Vs, g.o.MinEffect) == NotWorse || c.x.SecondLeans(1, trialLeanRisk) {
			return true
		}
		if vs != nil && vs.N == 1 && vs.Estimate >= g.o.MinEffect {
			return true // one round read worse: a second lets the lean's t-test speak
		}
	}
	return float64(c.latSpent) <= latencyTimeShare*float64(c.spent)
}
