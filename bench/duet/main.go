// Command duet measures what duet rounds do to a CPU round's noise: two stacks of one configuration (the demo, a
// static pool of 4) serve the same requests in each round, once one after the other (as tune's rounds alternate
// them) and once at the same time, each from its own connections (a duet round: experiment.Spec.Duet); the two
// ways alternate round by round. It prints the spread (sd) of a round's log ratio of the two stacks' CPU per
// request each way, their ratio and the variance ratio; the mean is the two stacks' own offset, which a duet's
// smaller spread makes the larger part of the error. bench/duet.sh runs it (about 2 minutes, ROUNDS=n for more);
// run it quiet and beside a busy loop (BUSY=1). With -pin it adds pinned duet rounds in the same rounds: each
// stack's php-fpm and nginx on a CPU share of its own, the shares swapped every round (tune --duet-pin); with
// -spread, duet rounds with each stack's workers spread over the CPUs, one to each in turn (gate's stacks).
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
)

func main() {
	rounds := flag.Int("rounds", 30, "rounds each way")
	conc := flag.Int("c", 4, "connections a stack")
	n := flag.Int("n", 1500, "requests a trial")
	starts := flag.Bool("starts", false, "also duet rounds with two fresh stacks starting beside them, as tune's next round's do")
	pin := flag.Bool("pin", false, "also duet rounds with each stack pinned to a CPU share of its own, swapped every round")
	spread := flag.Bool("spread", false, "also duet rounds with each stack's workers spread over the CPUs, one to each in turn (gate)")
	flag.Parse()
	if err := run(*rounds, *conc, *n, *starts, *pin, *spread); err != nil {
		fmt.Fprintln(os.Stderr, "duet:", err)
		os.Exit(1)
	}
}

func run(rounds, conc, n int, starts, pin, spread bool) error {
	ctx := context.Background()
	var pins *pinner
	if pin || spread {
		var err error
		if pins, err = newPinner(2); err != nil {
			return err
		}
	}
	mix, err := demostack.Mix()
	if err != nil {
		return err
	}
	var sts []*stack.Stack
	defer func() {
		for _, st := range sts {
			st.Stop(context.Background())
		}
	}()
	for range 2 {
		cfg := knob.Debian()
		cfg.PM, cfg.MaxChildren = "static", conc
		st, err := demostack.Start(ctx, cfg)
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
			return 0, fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests)
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
				cfg := knob.Debian()
				cfg.PM, cfg.MaxChildren = "static", conc
				st, err := demostack.Start(ctx, cfg)
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
	fmt.Printf("%d rounds each way, %d connections, %d requests a trial; a round's log ratio of two stacks of one configuration\n", rounds, conc, n)
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
