// Command stackspread measures how far independently started stacks of ONE configuration differ, beyond the
// noise of a round: the offset a stack carries for its whole life (where php-fpm, its opcache and the app's copy
// land in memory), which a race that runs each arm on one stack reads as the configuration's effect.
//
// In each of -batches batches, -stacks stacks of the demo (a static pool of -children, started and warmed as
// tune starts a twin) run -rounds interleaved rounds; a round is one CPU trial of each stack (tune's: a fixed
// set of requests at two connections a core, php-fpm's CPU time read around them, about 0.4 s) and one goodput
// trial (0.1 s warm-up, 0.3 s window at the pool's size), in rotating order. For each metric it prints the
// noise of a round (the spread of the log ratio of two stacks' trials in a round, as a race's pairs see it),
// the stacks' own spread beyond it (two-way analysis of the log figures, rounds and stacks: the stacks' variance
// component, with a 90% interval and a permutation p-value), and the lag-1 autocorrelation of a stack's
// residuals (an offset that drifts within a stack's life).
//
// Then, with -overlap-rounds, it measures what a stack start costs the trials it overlaps on this machine:
// the last batch's stacks run more rounds while a background loop starts fresh stacks now and then (tune's
// start: launch, check, warm; or the launch and check alone) and stops them; each trial's residual against its
// stack and round is set beside how much of it a start overlapped. bench/stackspread.sh runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

func main() {
	var o opts
	flag.IntVar(&o.stacks, "stacks", 6, "stacks a batch, all of one configuration")
	flag.IntVar(&o.batches, "batches", 3, "batches of fresh stacks")
	flag.IntVar(&o.rounds, "rounds", 20, "rounds a batch (one CPU and one goodput trial of every stack a round)")
	flag.IntVar(&o.children, "children", 4, "the static pool's size (and the goodput trials' connections)")
	flag.IntVar(&o.overlap, "overlap-rounds", 20, "rounds with stack starts in the background (0: none)")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "stackspread:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "stackspread:", err)
		os.Exit(1)
	}
}

type opts struct{ stacks, batches, rounds, children, overlap int }

// check says what is wrong with the flags: the analysis needs two stacks and three rounds a batch.
func (o opts) check() error {
	if o.stacks < 2 || o.batches < 1 || o.rounds < 3 || o.children < 1 {
		return errors.New("want -stacks of at least 2, -rounds of at least 3, -batches and -children of at least 1")
	}
	return nil
}

// The metrics, by index.
const (
	cpuM = iota
	goodM
	metrics
)

var metricName = [metrics]string{"CPU", "goodput"}

// trial is one measured trial: its log figure and when it ran.
type trial struct {
	y          float64
	start, end time.Time
}

// batch is one batch's stacks and trials: got[metric][stack][round].
type batch struct {
	sts []*stack.Stack
	got [metrics][][]trial
}

type bench struct {
	o        opts
	mix      []load.MixItem
	cpuConc  int
	cpuN     int
	launches []time.Duration // stack.Start and the URL check
	warms    []time.Duration // tune's warming of a static pool
	mu       sync.Mutex      // the background starter records its starts too
}

func run(ctx context.Context, o opts) error {
	mix, err := demostack.Mix()
	if err != nil {
		return err
	}
	b := &bench{o: o, mix: mix, cpuConc: min(o.children, 2*runtime.NumCPU())}
	var batches []*batch
	defer func() {
		for _, bt := range batches {
			stopAll(bt.sts)
		}
	}()
	for i := 0; i < o.batches; i++ {
		bt := &batch{}
		batches = append(batches, bt)
		for range o.stacks {
			st, err := b.startOne(ctx)
			if err != nil {
				return err
			}
			bt.sts = append(bt.sts, st)
		}
		if b.cpuN == 0 {
			if err := b.calibrate(ctx, bt.sts[0]); err != nil {
				return err
			}
		}
		if err := b.rounds(ctx, bt, o.rounds); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "batch %d of %d done\n", i+1, o.batches)
		if i < o.batches-1 {
			stopAll(bt.sts)
			bt.sts = nil
		}
	}
	b.reportSpread(batches)
	if o.overlap > 0 {
		return b.measureOverlap(ctx, batches[len(batches)-1])
	}
	return nil
}

// config is the one configuration every stack serves: Debian's, as a static pool (tune's twin).
func (b *bench) config() knob.Config {
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", b.o.children
	return cfg
}

// startOne starts a stack as tune starts a twin: the servers, one request of each URL, then warming.
func (b *bench) startOne(ctx context.Context) (*stack.Stack, error) {
	began := time.Now()
	st, err := demostack.Start(ctx, b.config())
	if err != nil {
		return nil, err
	}
	if err := b.check(ctx, st); err != nil {
		st.Stop(context.Background())
		return nil, err
	}
	launched := time.Now()
	if err := arms.Settle(ctx, st.Pools[0], b.options(st, b.o.children), b.o.children); err != nil {
		st.Stop(context.Background())
		return nil, err
	}
	b.mu.Lock()
	b.launches = append(b.launches, launched.Sub(began))
	b.warms = append(b.warms, time.Since(launched))
	b.mu.Unlock()
	return st, nil
}

// check sends each URL once, as tune's check does.
func (b *bench) check(ctx context.Context, st *stack.Stack) error {
	o := b.options(st, 1)
	o.Requests, o.Duration, o.Warmup = int64(len(b.mix)), 0, 0
	o.Even = true
	res, err := load.Run(ctx, o)
	if err != nil {
		return err
	}
	if res.Errors > 0 {
		return fmt.Errorf("the demo's check failed %d of %d requests", res.Errors, res.Requests)
	}
	return nil
}

func (b *bench) options(st *stack.Stack, conc int) load.Options {
	tg, _ := load.ParseTarget(st.HTTPURL)
	return load.Options{Target: tg, Connections: conc, Timeout: 10 * time.Second, Mix: b.mix, SkipPreflight: true}
}

// calibrate sets the CPU trials' requests to about 0.4 s' worth, as tune does.
func (b *bench) calibrate(ctx context.Context, st *stack.Stack) error {
	b.cpuN = 200
	t, err := b.cpuTrial(ctx, st)
	if err != nil {
		return err
	}
	b.cpuN = max(20, int(0.4*200/t.end.Sub(t.start).Seconds()))
	return nil
}

// rounds runs n rounds of one CPU and one goodput trial of every stack of bt, appending to bt.got.
func (b *bench) rounds(ctx context.Context, bt *batch, n int) error {
	k := len(bt.sts)
	for m := range bt.got {
		if bt.got[m] == nil {
			bt.got[m] = make([][]trial, k)
		}
	}
	for r := 0; r < n; r++ {
		for _, m := range []int{cpuM, goodM} {
			for j := range k {
				i := (j + r) % k
				if (r+m)%2 == 1 {
					i = (k - 1 - j + r) % k
				}
				var t trial
				var err error
				if m == cpuM {
					t, err = b.cpuTrial(ctx, bt.sts[i])
				} else {
					t, err = b.goodputTrial(ctx, bt.sts[i])
				}
				if err != nil {
					return err
				}
				bt.got[m][i] = append(bt.got[m][i], t)
			}
		}
	}
	return nil
}

// cpuTrial is tune's CPU trial: requests per CPU-second of php-fpm over a fixed set of requests.
func (b *bench) cpuTrial(ctx context.Context, st *stack.Stack) (trial, error) {
	o := b.options(st, b.cpuConc)
	o.Requests, o.Even = int64(b.cpuN), true
	began := time.Now()
	res, cpu, err := demostack.CPUTrial(ctx, st, o)
	if err != nil {
		return trial{}, err
	}
	if res.Errors > 0 {
		return trial{}, fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests)
	}
	return trial{y: math.Log(float64(res.Requests) / cpu.Seconds()), start: began, end: time.Now()}, nil
}

// goodputTrial is tune's goodput trial: successful requests a second over a window after a warm-up. A window
// that completed nothing (a neighbour took the CPUs) is tried again, as tune does.
func (b *bench) goodputTrial(ctx context.Context, st *stack.Stack) (trial, error) {
	o := b.options(st, b.o.children)
	o.Warmup, o.Duration = 100*time.Millisecond, 300*time.Millisecond
	began := time.Now()
	res, err := load.Run(ctx, o)
	for try := 1; errors.Is(err, load.ErrNoRequests) && try < 3; try++ {
		began = time.Now()
		res, err = load.Run(ctx, o)
	}
	if err != nil {
		return trial{}, err
	}
	ok := float64(res.Requests - res.Errors)
	return trial{y: math.Log(max(ok, 1) / res.DurationS), start: began, end: time.Now()}, nil
}

func stopAll(sts []*stack.Stack) {
	for _, st := range sts {
		st.Stop(context.Background())
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// reportSpread prints each metric's round noise and the stacks' own spread.
func (b *bench) reportSpread(batches []*batch) {
	fmt.Printf("%d batches of %d stacks of the demo (static pool of %d), %d rounds a batch\n", len(batches), b.o.stacks, b.o.children, b.o.rounds)
	fmt.Printf("CPU trials: %d connections, %d requests; goodput trials: %d connections, 0.1 s warm-up, 0.3 s window\n", b.cpuConc, b.cpuN, b.o.children)
	fmt.Printf("a stack's start: launch and check %.2f s, warming %.2f s (medians of %d)\n",
		median(b.launches).Seconds(), median(b.warms).Seconds(), len(b.launches))
	fmt.Printf("%-8s %12s %12s %18s %10s %12s\n", "metric", "round (pair)", "stack sd", "90% interval", "p (perm)", "lag-1 resid")
	for m := range metrics {
		var tabs [][][]float64
		for _, bt := range batches {
			tabs = append(tabs, values(bt.got[m]))
		}
		a := twoWay(tabs)
		lo, hi := a.interval(0.90)
		p := permutationP(tabs, a.ssStack, 2000, rand.New(rand.NewPCG(1, uint64(m))))
		fmt.Printf("%-8s %11.1f%% %11.2f%% %8.2f%% to %5.2f%% %10.3f %12.2f\n", metricName[m], 100*math.Sqrt(2*a.msRes),
			100*math.Sqrt(max(a.varStack, 0)), 100*lo, 100*hi, p, lag1(tabs))
	}
	fmt.Println("round (pair): sd of the log ratio of two stacks' trials in a round, offsets taken out (a race's noise);")
	fmt.Println("stack sd: sd of a stack's lasting offset beyond it (a pair of one-stack arms differs by sqrt(2) of it)")
	fmt.Println("each batch's stacks, their mean against the batch's (%), and the batch's stack sd:")
	for i, bt := range batches {
		for m := range metrics {
			t := values(bt.got[m])
			sm, _, g := means(t)
			line := ""
			for _, x := range sm {
				line += fmt.Sprintf(" %+5.1f", 100*(x-g))
			}
			a := twoWay([][][]float64{t})
			fmt.Printf("  batch %d %-8s%s   (sd %.2f%%, round %.1f%%)\n", i+1, metricName[m], line, 100*math.Sqrt(max(a.varStack, 0)), 100*math.Sqrt(2*a.msRes))
		}
	}
}

func values(ts [][]trial) [][]float64 {
	out := make([][]float64, len(ts))
	for i, row := range ts {
		for _, t := range row {
			out[i] = append(out[i], t.y)
		}
	}
	return out
}
