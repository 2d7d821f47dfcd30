package tune

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
)

// p99 judges the latency goal open-loop at the user's rate on the recommendation.
func (t *tuner) p99(ctx context.Context) error {
	c, err := t.p99Check(ctx, t.best)
	if err != nil {
		return err
	}
	t.log.p99 = c
	return nil
}

// p99Check runs the open model at the user's rate, through a bounded pool of connections large enough that the
// generator is never what queues, and compares the corrected p99 with the goal.
func (t *tuner) p99Check(ctx context.Context, cfg knob.Config) (*P99Check, error) {
	arm := t.stacks.Shared(cfg, arms.TrialSpec{Phase: "p99", Metric: MetricGoodput, Conc: t.conc})
	if err := arm.Start(ctx); err != nil {
		return nil, err
	}
	defer arm.Stop()
	a := t.stacks.WarmOf(cfg)
	t.status("p99", fmt.Sprintf("max_children %d, open loop at %.0f req/s", cfg.MaxChildren, t.o.Rate))
	inflight := max(4*cfg.MaxChildren, 64)
	o := t.stacks.LoadOptions(a, inflight)
	o.Rate, o.MaxInflight = t.o.Rate, inflight
	o.Duration = p99Window(t.o.Rate, t.lengths.Win)
	res, err := load.Run(ctx, o)
	if res == nil {
		return nil, err
	}
	if err != nil && !errors.Is(err, load.ErrNoRequests) {
		return nil, err
	}
	goal := float64(t.o.P99 / time.Microsecond)
	q := res.QuantileOfAll(0.99, o.Timeout)
	c := &P99Check{Rate: t.o.Rate, GoalUs: goal, P99Us: q.Value, P99LoUs: q.Lo, P99HiUs: q.Hi, MaxChildren: cfg.MaxChildren,
		Requests: res.Requests, Errors: res.Errors, Unsent: res.Unsent, InFlight: res.InFlightAtEnd, Verdict: "undecided"}
	switch {
	case q.N > 0 && q.Hi <= goal:
		c.Verdict, c.Met = "met", true
	case q.N == 0 || q.Lo > goal:
		c.Verdict = "missed"
	}
	return c, nil
}

// p99Window is the length of a check of the goal at rate: about 2000 requests give the p99 an interval of a
// few ranks; within 2 to 10 seconds (and at least four trial windows, win).
func p99Window(rate float64, win time.Duration) time.Duration {
	return min(max(time.Duration(2000/rate*float64(time.Second)), win*4, 2*time.Second), 10*time.Second)
}

// p99Limit is the pool size's third limit: when the size from the knee misses the latency goal at the user's
// rate, the next larger sizes (within memory) are tried, and the smallest that meets it is taken.
func (t *tuner) p99Limit(ctx context.Context, ps *PoolSize) error {
	if alone := time.Duration(t.checkLatency() * float64(time.Second)); alone > t.o.P99 {
		// One request on an idle server already takes longer: more workers cannot help.
		ps.Note = strings.TrimSpace(fmt.Sprintf("%s a request alone takes %s on average, above the p99 goal %s: no pool size meets it",
			ps.Note, alone.Round(100*time.Microsecond), t.o.P99))
		return nil
	}
	cfg := t.best.Clone()
	for step := 0; step < 3; step++ {
		if t.left() < p99Window(t.o.Rate, t.lengths.Win)+t.costs.start(MetricGoodput) {
			ps.Note = strings.TrimSpace(ps.Note + " the budget ended before a larger pool could be checked against the p99 goal")
			return nil
		}
		c, err := t.p99Check(ctx, cfg)
		if err != nil {
			return err
		}
		ps.P99Checks = append(ps.P99Checks, *c)
		if c.Met {
			t.best.MaxChildren = cfg.MaxChildren
			return nil
		}
		nb := knob.Neighbours(cfg.MaxChildren)
		next := nb[len(nb)-1]
		if ps.MemoryLimit > 0 && next > ps.MemoryLimit {
			break
		}
		cfg.MaxChildren = next
	}
	ps.Note = strings.TrimSpace(ps.Note + " no pool size tried meets the p99 goal at this rate")
	return nil
}

// readOpcache reads opcache's state and the realpath cache's use from a worker of a, once every URL was served.
func (t *tuner) readOpcache(ctx context.Context, a *arms.Stack) {
	if a.Pool.Network == "" {
		t.warn("opcache's state is read through php-fpm's FastCGI: under mod_php (the starting point's runtime) it is not read, so opcache_memory and realpath_cache_size are not tried")
		return
	}
	path, err := measure.WriteOpcacheScript(a.Server.PrivDir)
	if err != nil {
		return
	}
	rc, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	oc, err := measure.ReadOpcache(rc, a.Pool.Network, a.Pool.Address, path)
	if err != nil {
		t.warn("opcache's state could not be read: " + err.Error())
		return
	}
	t.facts.RealpathUsed, t.facts.RealpathLimit = oc.RealpathUsed, oc.RealpathLimit
	if oc.Enabled {
		t.facts.Opcache = &knob.OpcacheUse{MemoryUsed: oc.MemoryUsed, MemoryFree: oc.MemoryFree, MemoryWasted: oc.MemoryWasted,
			InternedUsed: oc.InternedUsed, InternedFree: oc.InternedFree, Keys: oc.CachedKeys, MaxKeys: oc.MaxCachedKeys,
			CacheFull: oc.CacheFull, HitRate: oc.HitRate}
	}
}
