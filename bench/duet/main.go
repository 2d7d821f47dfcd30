// Command duet measures what duet rounds do to a CPU round's noise: two stacks of one configuration (a workload
// preset's app, -preset, the demo by default; a static pool of -c workers) serve the same requests in each round,
// once one after the other (as tune's rounds alternate them) and once at the same time, each from its own
// connections (a duet round: experiment.Spec.Duet); the two ways alternate round by round. It prints the spread
// (sd) of a round's log ratio of the two stacks' CPU per request each way, their ratio and the variance ratio; the
// mean is the two stacks' own offset, which a duet's smaller spread makes the larger part of the error.
// bench/duet.sh runs it (about 2 minutes, ROUNDS=n for more); run it quiet and beside a busy loop (BUSY=1). With
// -pin it adds pinned duet rounds in the same rounds: each stack's php-fpm and nginx on a CPU share of its own, the
// shares swapped every round (tune --duet-pin); with -spread, duet rounds with each stack's workers spread over the
// CPUs, one to each in turn (gate's stacks). Another preset is prepared first (phptune workload prepare NAME); its
// services (a database) start once and serve every stack. A slow app wants fewer requests a trial, or a trial lasts
// 20 s: WordPress serves roughly 50 to 100 a second here against the demo's 700, so -preset wordpress -n 150;
// MediaWiki is no faster (32.7 a second warm at one connection), so -n 100 to 150 too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/workload"
)

// opts are the command's flags.
type opts struct {
	preset              string
	rounds, conc, n     int
	starts, pin, spread bool
}

func main() {
	var o opts
	flag.StringVar(&o.preset, "preset", "demo", "the workload preset served (wordpress, mediawiki, ...: phptune workload list), prepared first (phptune workload prepare NAME)")
	flag.IntVar(&o.rounds, "rounds", 30, "rounds each way")
	flag.IntVar(&o.conc, "c", 4, "connections a stack, and its static pool's workers")
	flag.IntVar(&o.n, "n", 1500, "requests a trial (the demo's 1500 take about 2 s; WordPress or MediaWiki want about 150)")
	flag.BoolVar(&o.starts, "starts", false, "also duet rounds with two fresh stacks starting beside them, as tune's next round's do")
	flag.BoolVar(&o.pin, "pin", false, "also duet rounds with each stack pinned to a CPU share of its own, swapped every round")
	flag.BoolVar(&o.spread, "spread", false, "also duet rounds with each stack's workers spread over the CPUs, one to each in turn (gate)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "duet:", err)
		os.Exit(1)
	}
}

// run measures o.preset's app with its services started for the whole run and stopped on every path, an
// interrupt included (the stacks' deferred stops run too).
func run(o opts) error {
	return demostack.WithPreset(o.preset, func(ctx context.Context, app *workload.App) error {
		return measureRounds(ctx, app, o)
	})
}

// measureRounds starts the two stacks of app and measures o.rounds rounds each way, printing the spreads.
func measureRounds(ctx context.Context, app *workload.App, o opts) error {
	preset, rounds, conc, n, starts, pin, spread := o.preset, o.rounds, o.conc, o.n, o.starts, o.pin, o.spread
	// The app's anonymous pages with their content checks: a page that fails its check (a database error page is
	// a fast 200) counts as an error, and a trial with errors is never measured. The demo's pages are checked too
	// (demostack.Mix has no checks), as tune checks them. The logged-in pages (App.WithLogin: WordPress's, say) are
	// left out: they need a login's session, which this bench does not set up.
	mix := app.URLs
	// newStack starts a stack of app's static pool of conc workers.
	newStack := func() (*stack.Stack, error) {
		cfg := knob.Debian()
		cfg.PM, cfg.MaxChildren = "static", conc
		st, err := demostack.StartApp(ctx, app.Stack, cfg)
		if err != nil {
			return nil, fmt.Errorf("start a stack of %s: %w", preset, err)
		}
		return st, nil
	}
	var pins *pinner
	if pin || spread {
		var err error
		if pins, err = newPinner(2); err != nil {
			return err
		}
	}
	var sts []*stack.Stack
	defer func() {
		for _, st := range sts {
			st.Stop(context.Background())
		}
	}()
	for range 2 {
		st, err := newStack()
		if err != nil {
			return err
		}
		sts = append(sts, st)
	}
	trial := func(st *stack.Stack) (float64, error) {
		tg, err := load.ParseTarget(st.HTTPURL)
		if err != nil {
			return 0, err
		}
		o := load.Options{Target: tg, Connections: conc, Requests: int64(n), Even: true, Timeout: 10 * time.Second, Mix: mix, SkipPreflight: true}
		res, cpu, err := demostack.CPUTrial(ctx, st, o)
		if err != nil {
			return 0, err
		}
		if res.Errors > 0 {
			return 0, fmt.Errorf("%s: %d of %d requests failed (an error status, or a page without its content)", preset, res.Errors, res.Requests)
		}
		return float64(cpu/time.Microsecond) / float64(res.Requests), nil
	}
	for _, st := range sts { // warm both
		if _, err := trial(st); err != nil {
			return err
		}
	}
	// churn starts two stacks, warms each with a trial of a tenth of the requests and stops them: what tune's
	// start of the next round's stacks (a start, its check and settling) does beside a duet round.
	churn := func() error {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := newStack()
				if err != nil {
					errs[i] = err
					return
				}
				defer st.Stop(context.Background())
				tg, err := load.ParseTarget(st.HTTPURL)
				if err != nil {
					errs[i] = err
					return
				}
				o := load.Options{Target: tg, Connections: conc, Requests: int64(n / 10), Timeout: 10 * time.Second, Mix: mix, SkipPreflight: true}
				_, _, errs[i] = demostack.CPUTrial(ctx, st, o)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	duetRound := func(beside func() error) (float64, error) {
		var v [2]float64
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); v[i], errs[i] = trial(sts[i]) }()
		}
		if beside != nil {
			errs[2] = beside()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
		return math.Log(v[0] / v[1]), nil
	}
	// pinnedRound is a duet round with the stacks pinned to round r's shares, and back on all CPUs after it.
	pinnedRound := func(r int) (float64, error) {
		if err := pins.pin(sts, r); err != nil {
			return 0, err
		}
		d, err := duetRound(nil)
		return d, errors.Join(err, pins.unpin(sts))
	}
	// spreadRound is a duet round with each stack's workers spread over the CPUs, and back on all CPUs after it.
	spreadRound := func() (float64, error) {
		if err := pins.spread(sts); err != nil {
			return 0, err
		}
		d, err := duetRound(nil)
		return d, errors.Join(err, pins.unpin(sts))
	}
	var alt, duet, churned, pinned, spreadOut []float64
	for r := range rounds {
		// Alternating: one stack, then the other, which goes first turning each round.
		a, b := sts[r%2], sts[1-r%2]
		x, err := trial(a)
		if err != nil {
			return err
		}
		y, err := trial(b)
		if err != nil {
			return err
		}
		if r%2 == 1 {
			x, y = y, x
		}
		alt = append(alt, math.Log(x/y))
		// Duet: both at once; the pinned duet before or after it, turning each round.
		if pin && r%2 == 0 {
			d, err := pinnedRound(r)
			if err != nil {
				return err
			}
			pinned = append(pinned, d)
		}
		d, err := duetRound(nil)
		if err != nil {
			return err
		}
		duet = append(duet, d)
		if pin && r%2 == 1 {
			if d, err = pinnedRound(r); err != nil {
				return err
			}
			pinned = append(pinned, d)
		}
		if spread {
			if d, err = spreadRound(); err != nil {
				return err
			}
			spreadOut = append(spreadOut, d)
		}
		if starts {
			if d, err = duetRound(churn); err != nil {
				return err
			}
			churned = append(churned, d)
		}
	}
	ma, sa := stats.MeanSD(alt)
	md, sd := stats.MeanSD(duet)
	fmt.Printf("preset %s: %d rounds each way, %d connections, %d requests a trial; a round's log ratio of two stacks of one configuration\n", preset, rounds, conc, n)
	fmt.Printf("%-12s %10s %10s\n", "rounds", "mean", "sd")
	fmt.Printf("%-12s %9.2f%% %9.2f%%\n", "alternating", 100*ma, 100*sa)
	fmt.Printf("%-12s %9.2f%% %9.2f%%\n", "duet", 100*md, 100*sd)
	if starts {
		mc, sc := stats.MeanSD(churned)
		fmt.Printf("%-12s %9.2f%% %9.2f%%  (two fresh stacks starting beside each round)\n", "duet+starts", 100*mc, 100*sc)
		defer fmt.Printf("duet+starts' sd %.2f x duet's alone\n", sc/sd)
	}
	if pin {
		defer printPinned(pinned, sd)
	}
	if spread {
		ms, ss := stats.MeanSD(spreadOut)
		fmt.Printf("%-12s %9.2f%% %9.2f%%  (each stack's workers spread over the CPUs, one to each in turn)\n", "duet spread", 100*ms, 100*ss)
		defer fmt.Printf("duet spread's sd %.2f x unpinned duet's; variance %.2fx\n", ss/sd, (ss*ss)/(sd*sd))
	}
	fmt.Printf("duet's sd %.2f x alternating's (target at most 0.33); variance %.1fx lower\n", sd/sa, (sa*sa)/(sd*sd))
	return nil
}
