// Command poolnoise measures what interleaved trials do to a dynamic pool: two stacks with a static pool and two
// with a dynamic one (Debian's spare-server rule, tune's sizes) serve the demo in the same rounds, each round one
// trial of each (0.1 s warm-up, 0.3 s window, tune's goodput trial), in rotating order. It prints each kind's
// goodput and php-fpm CPU per request, the dynamic pool's ratios to the static one's, and the spread of the log
// ratio of a kind's two stacks within a round: the noise a pairwise race of that kind sees. It also times a
// fixed loop on its own thread's CPU clock, a probe of the machine's speed, and prints its correlation with
// goodput. bench/poolnoise.sh runs it (about 2 minutes).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"golang.org/x/sys/unix"
)

func main() {
	rounds := flag.Int("rounds", 60, "rounds of one trial of each of the four stacks")
	children := flag.Int("children", 8, "max_children of every pool")
	conc := flag.Int("c", 8, "connections")
	flag.Parse()
	if err := run(*rounds, *children, *conc); err != nil {
		fmt.Fprintln(os.Stderr, "poolnoise:", err)
		os.Exit(1)
	}
}

type trial struct{ goodput, cpuUs, probeNs float64 }

func run(rounds, children, conc int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kinds := []string{"static", "static", "dynamic", "dynamic"}
	var sts []*stack.Stack
	defer func() {
		for _, st := range sts {
			st.Stop(context.Background())
		}
	}()
	for _, pm := range kinds {
		cfg := knob.Debian()
		cfg.PM, cfg.MaxChildren = pm, children
		st, err := demostack.Start(ctx, cfg)
		if err != nil {
			return err
		}
		sts = append(sts, st)
	}
	mix, err := demostack.Mix()
	if err != nil {
		return err
	}
	var p probe
	go p.run(ctx)
	got := make([][]trial, len(sts))
	for r := 0; r < rounds; r++ {
		for j := range sts {
			i := (j + r) % len(sts)
			if r%2 == 1 {
				i = (len(sts) - 1 - j + r) % len(sts)
			}
			t, err := measureOne(ctx, sts[i], mix, conc, &p)
			if err != nil {
				return err
			}
			got[i] = append(got[i], t)
		}
	}
	report(got, kinds)
	return nil
}

func measureOne(ctx context.Context, st *stack.Stack, mix []load.MixItem, conc int, p *probe) (trial, error) {
	tg, err := load.ParseTarget(st.HTTPURL)
	if err != nil {
		return trial{}, err
	}
	o := load.Options{Target: tg, Connections: conc, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond,
		Timeout: 10 * time.Second, Mix: mix, SkipPreflight: true}
	r, err := load.NewRunner(o)
	if err != nil {
		return trial{}, err
	}
	pg := st.PID("php-fpm")
	c0, err := measure.GroupCPU(pg)
	if err != nil {
		return trial{}, err
	}
	ns0, u0 := p.ns.Load(), p.units.Load()
	res, err := r.Trial(ctx, 0, 0)
	if err != nil {
		return trial{}, err
	}
	c1, err := measure.GroupCPU(pg)
	if err != nil {
		return trial{}, err
	}
	ns1, u1 := p.ns.Load(), p.units.Load()
	share := o.Duration.Seconds() / (o.Duration + o.Warmup).Seconds() // the CPU read spans the warm-up too
	return trial{goodput: float64(res.Requests-res.Errors) / res.DurationS,
		cpuUs:   float64((c1-c0)/time.Microsecond) * share / float64(max(res.Requests, 1)),
		probeNs: float64(ns1-ns0) / float64(max(u1-u0, 1))}, nil
}

func report(got [][]trial, kinds []string) {
	level := func(i int, f func(trial) float64) float64 {
		s := 0.0
		for _, t := range got[i] {
			s += math.Log(f(t))
		}
		return s / float64(len(got[i]))
	}
	good := func(t trial) float64 { return t.goodput }
	cpu := func(t trial) float64 { return t.cpuUs }
	fmt.Printf("%d rounds, one 0.3 s trial of each stack a round\n", len(got[0]))
	fmt.Printf("%-8s %10s %14s %22s %18s\n", "pool", "goodput", "php-fpm us/req", "sd of a round's ratio", "probe corr")
	for _, i := range []int{0, 2} {
		var d, dp []float64
		for r := range got[i] {
			d = append(d, math.Log(got[i+1][r].goodput/got[i][r].goodput))
			dp = append(dp, math.Log(got[i+1][r].probeNs/got[i][r].probeNs))
		}
		g := math.Exp((level(i, good) + level(i+1, good)) / 2)
		c := math.Exp((level(i, cpu) + level(i+1, cpu)) / 2)
		fmt.Printf("%-8s %10.1f %14.0f %21.1f%% %18.2f\n", kinds[i], g, c, 100*rms(d), corr(d, dp))
	}
	fmt.Printf("dynamic / static: goodput %.3f, php-fpm CPU a request %.3f\n",
		math.Exp((level(2, good)+level(3, good)-level(0, good)-level(1, good))/2),
		math.Exp((level(2, cpu)+level(3, cpu)-level(0, cpu)-level(1, cpu))/2))
}

func rms(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s / float64(len(v)))
}

func corr(a, b []float64) float64 {
	n := float64(len(a))
	var ma, mb float64
	for i := range a {
		ma, mb = ma+a[i]/n, mb+b[i]/n
	}
	var sab, sa, sb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		sa += (a[i] - ma) * (a[i] - ma)
		sb += (b[i] - mb) * (b[i] - mb)
	}
	return sab / math.Sqrt(sa*sb)
}

// probe times a fixed loop on its own thread's CPU clock, 2 ms apart: the machine's speed as a thread sees it
// (frequency, a sibling's contention), whatever the scheduler gives it.
type probe struct{ ns, units atomic.Int64 }

func (p *probe) run(ctx context.Context) {
	runtime.LockOSThread()
	x := uint64(88172645463325252)
	for ctx.Err() == nil {
		var a, b unix.Timespec
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &a)
		for i := 0; i < 20000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &b)
		if x != 0 { // always: keeps the loop
			p.ns.Add(b.Nano() - a.Nano())
			p.units.Add(1)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
