// Command poolmodel sets the pool size's model beside the goodput it stands for. Static pools of several sizes
// of the demo (or of a prepared workload preset's app, -preset; its services start once for all pools) serve
// one load that fills the largest, in interleaved rounds (the order turning each round); each
// trial reads goodput and the scheduler's figures of the pool (CPU time, run-queue wait). It prints each size's
// goodput against the best (the mean and spread of a round's log ratio) and what a request holds a worker for
// against its CPU (W/C: a worker's wall time, less its run-queue wait, per CPU second), from the pool of one,
// whose single worker always has a request waiting; the model's size, CPUs x W/C, is the pool that keeps every
// CPU busy. bench/poolmodel.sh runs it (about 5 minutes; ROUNDS=n for more, BUSY=1 beside a busy loop).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/workload"
)

// opts are the command's flags.
type opts struct {
	preset      string
	rounds      int
	sizes       []int
	conc, fixed int
	dur, warm   time.Duration
}

func main() {
	var o opts
	flag.StringVar(&o.preset, "preset", "demo",
		"the workload preset served (phptune workload list), prepared first (phptune workload prepare NAME)")
	flag.IntVar(&o.rounds, "rounds", 15, "rounds")
	sizesFlag := flag.String("sizes", "1,2,3,4,6,8", "pool sizes, comma-separated")
	flag.IntVar(&o.conc, "c", 0, "connections (0: twice the largest size)")
	flag.DurationVar(&o.dur, "d", 1500*time.Millisecond, "a trial's measured window")
	flag.DurationVar(&o.warm, "w", 300*time.Millisecond, "a window's warm-up")
	flag.IntVar(&o.fixed, "n", 0, "requests a trial, timed from the first sent to the last answered (0: a window of -d)")
	flag.Parse()
	var err error
	if o.sizes, err = parseSizes(*sizesFlag); err != nil {
		fmt.Fprintln(os.Stderr, "poolmodel:", err)
		os.Exit(2)
	}
	if o.conc == 0 {
		o.conc = 2 * o.sizes[len(o.sizes)-1]
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "poolmodel:", err)
		os.Exit(1)
	}
}

// parseSizes reads -sizes, smallest first.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-sizes: %q is not a pool size", f)
		}
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	return sizes, nil
}

// figures are one trial's.
type figures struct {
	goodput float64 // requests answered a second of the window
	wc      float64 // a worker's wall time less its run-queue wait, per CPU second: meaningful when every worker is busy
}

// run serves o.preset's app with its services started for the whole run and stopped on every path, an interrupt
// included.
func run(o opts) error {
	return demostack.WithPreset(o.preset, func(ctx context.Context, app *workload.App) error {
		return measureSizes(ctx, app, o)
	})
}

// measureSizes starts a static pool of each size and measures o.rounds interleaved rounds, printing the report.
func measureSizes(ctx context.Context, app *workload.App, o opts) error {
	rounds, sizes, conc, dur, warm, fixed := o.rounds, o.sizes, o.conc, o.dur, o.warm, o.fixed
	// The app's anonymous pages with their content checks: a page that fails its check is an error, and a trial
	// with errors is no figure.
	mix := app.URLs
	sts := make([]*stack.Stack, len(sizes))
	defer func() {
		for _, st := range sts {
			if st != nil {
				st.Stop(context.Background())
			}
		}
	}()
	for i, n := range sizes {
		cfg := knob.Debian()
		cfg.PM, cfg.MaxChildren = "static", n
		st, err := demostack.StartApp(ctx, app.Stack, cfg)
		if err != nil {
			return fmt.Errorf("start a pool of %d for %s: %w", n, o.preset, err)
		}
		sts[i] = st
	}
	trialWall := make([]time.Duration, len(sizes))
	trial := func(i int) (figures, error) {
		st := sts[i]
		tg, err := load.ParseTarget(st.HTTPURL)
		if err != nil {
			return figures{}, err
		}
		o := load.Options{Target: tg, Connections: conc, Duration: dur, Warmup: warm,
			Timeout: 10 * time.Second, Mix: mix, SkipPreflight: true, Drain: true}
		if fixed > 0 {
			o.Requests, o.Duration, o.Warmup, o.Even = int64(fixed), 0, 0, true
		}
		r, err := load.NewRunner(o)
		if err != nil {
			return figures{}, err
		}
		pg := st.PID("php-fpm")
		s0, err := measure.GroupSched(pg)
		if err != nil {
			return figures{}, err
		}
		t0 := time.Now()
		res, err := r.Trial(ctx, 0, 0)
		if err != nil {
			return figures{}, err
		}
		wall := time.Since(t0)
		s1, err := measure.GroupSched(pg)
		if err != nil {
			return figures{}, err
		}
		if res.Errors > 0 {
			return figures{}, fmt.Errorf("pool %d: %d of %d requests failed", sizes[i], res.Errors, res.Requests)
		}
		cpu, wait := s1.CPU-s0.CPU, s1.RunDelay-s0.RunDelay
		held := time.Duration(sizes[i])*wall - wait
		good := float64(res.Requests-res.Errors) / res.DurationS
		if fixed > 0 {
			good = float64(res.Requests-res.Errors) / wall.Seconds() // every request inside the clock: no window's edge
		}
		trialWall[i] += wall
		return figures{goodput: good, wc: float64(held) / float64(cpu)}, nil
	}
	for i := range sizes { // warm every pool
		if _, err := trial(i); err != nil {
			return err
		}
	}
	got := make([][]figures, len(sizes))
	for r := range rounds {
		for k := range sizes {
			i := (k + r) % len(sizes) // the order turns: every size meets every position
			f, err := trial(i)
			if err != nil {
				return err
			}
			got[i] = append(got[i], f)
		}
		// Each size's goodput in its order of the round: whether the spread is a few stray trials or all of them.
		var line strings.Builder
		for k := range sizes {
			i := (k + r) % len(sizes)
			fmt.Fprintf(&line, " %d:%.1f", sizes[i], got[i][r].goodput)
		}
		fmt.Fprintf(os.Stderr, "round %d of %d, req/s by size in order:%s\n", r+1, rounds, line.String())
	}
	var all time.Duration
	for _, w := range trialWall {
		all += w
	}
	fmt.Printf("a trial took %.2f s on average\n", all.Seconds()/float64(len(sizes)*(rounds+1)))
	report(o.preset, sizes, conc, dur, fixed, got)
	return nil
}

func report(preset string, sizes []int, conc int, dur time.Duration, fixed int, got [][]figures) {
	best := 0
	med := func(i int, f func(figures) float64) float64 {
		var xs []float64
		for _, g := range got[i] {
			xs = append(xs, f(g))
		}
		return stats.Median(xs)
	}
	gp := func(g figures) float64 { return g.goodput }
	for i := range sizes {
		if med(i, gp) > med(best, gp) {
			best = i
		}
	}
	trial := dur.String() + " windows"
	if fixed > 0 {
		trial = fmt.Sprintf("%d requests a trial, timed whole", fixed)
	}
	fmt.Printf("%s: %d rounds, %d connections, %s, %d CPUs; goodput against the best size (%d)\n",
		preset, len(got[0]), conc, trial, runtime.NumCPU(), sizes[best])
	fmt.Printf("%5s %10s %10s %10s %8s\n", "size", "req/s", "vs best", "sd/round", "W/C")
	for i, n := range sizes {
		var lr []float64
		for r := range got[i] {
			lr = append(lr, math.Log(got[i][r].goodput/got[best][r].goodput))
		}
		m, sd := stats.MeanSD(lr)
		fmt.Printf("%5d %10.1f %9.1f%% %9.1f%% %8.2f\n", n, med(i, gp), 100*m, 100*sd, med(i, func(g figures) float64 { return g.wc }))
	}
	if sizes[0] == 1 {
		wc := med(0, func(g figures) float64 { return g.wc })
		fmt.Printf("model: a request holds a worker %.2fx its CPU (pool of 1); %d CPUs busy take %.1f workers: size %d\n",
			wc, runtime.NumCPU(), float64(runtime.NumCPU())*wc, int(math.Ceil(float64(runtime.NumCPU())*wc)))
	}
}
