// Command duetgoodput asks whether duet rounds would serve a throughput knob's race: two static pools of the demo,
// one with the knob at -a and one at -b (the same value: an A/A), serve tune's goodput trials (a short warm-up and
// a window of closed-loop load through nginx) one after the other, as tune's rounds alternate, and at the same time,
// each from its own connections (a duet round); the two ways alternate round by round. It prints each way's mean
// and spread of a round's log ratio of goodput (B over A): the spread says how many rounds a race would need, and
// the means, whether a duet round measures the same difference (a duet shares the CPUs between the arms: where a
// value changes how much of the machine its stack takes, the two ways' means part). It prints the same for the
// trials' capacity (requests served per CPU-second of the stack's servers, tune's final's second figure): a figure
// an arm's own, which a duet may measure fairly where goodput it cannot; and goodput split in two, capacity from
// the duet round and the servers' share of the machine from the alternating one. bench/duetgoodput.sh runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
)

func main() {
	rounds := flag.Int("rounds", 30, "rounds each way")
	name := flag.String("knob", "listen", "the knob the two pools differ in")
	a := flag.String("a", "unix", "its value on the first pool")
	b := flag.String("b", "unix", "its value on the second pool (the same as -a: an A/A)")
	pool := flag.Int("pool", 4, "workers a pool (static)")
	conc := flag.Int("c", 4, "connections a pool")
	win := flag.Duration("d", 300*time.Millisecond, "a trial's window")
	warm := flag.Duration("w", 100*time.Millisecond, "a trial's warm-up")
	fixed := flag.Int("n", 0, "a duet trial's requests, a fixed set as tune's split rounds send, each arm loading its stack "+
		"until the other's ends (0: the goodput window)")
	flag.Parse()
	cfgs, err := configs(*name, *a, *b, *pool)
	if err != nil {
		fmt.Fprintln(os.Stderr, "duetgoodput:", err)
		os.Exit(2)
	}
	o := load.Options{Connections: *conc, Duration: *win, Warmup: *warm, Timeout: 10 * time.Second, SkipPreflight: true, Drain: true}
	if err := run(*rounds, cfgs, o, *fixed); err != nil {
		fmt.Fprintln(os.Stderr, "duetgoodput:", err)
		os.Exit(1)
	}
}

// configs are the two pools: static pools of pool workers, knob name at a on the first and at b on the second.
func configs(name, a, b string, pool int) ([2]knob.Config, error) {
	var cfgs [2]knob.Config
	k, ok := knob.ByName(name)
	if !ok {
		return cfgs, fmt.Errorf("-knob %q is no knob tune races", name)
	}
	for i, v := range []string{a, b} {
		cfgs[i] = knob.Debian()
		cfgs[i].PM, cfgs[i].MaxChildren = "static", pool
		if err := k.Set(&cfgs[i], v); err != nil {
			return cfgs, fmt.Errorf("%s=%s: %v", name, v, err)
		}
	}
	return cfgs, nil
}

func run(rounds int, cfgs [2]knob.Config, o load.Options, fixed int) error {
	ctx := context.Background()
	mix, err := demostack.Mix()
	if err != nil {
		return err
	}
	o.Mix = mix
	var sts [2]*stack.Stack
	defer func() {
		for _, st := range sts {
			if st != nil {
				st.Stop(context.Background())
			}
		}
	}()
	for i, cfg := range cfgs {
		if sts[i], err = demostack.Start(ctx, cfg); err != nil {
			return err
		}
	}
	target := func(i int, o load.Options) (load.Options, error) {
		tg, err := load.ParseTarget(sts[i].HTTPURL)
		o.Target = tg
		return o, err
	}
	trialWith := func(i int, o load.Options) (figures, error) {
		oi, err := target(i, o)
		if err != nil {
			return figures{}, err
		}
		r, err := load.NewRunner(oi)
		if err != nil {
			return figures{}, err
		}
		before, err := sts[i].ServersCPU()
		if err != nil {
			return figures{}, err
		}
		res, err := r.Trial(ctx, 0, 0)
		if err != nil {
			return figures{}, err
		}
		after, err := sts[i].ServersCPU()
		if err != nil {
			return figures{}, err
		}
		if res.Errors > 0 || res.Requests == 0 {
			return figures{}, fmt.Errorf("%s: %d of %d requests failed", cfgs[i], res.Errors, res.Requests)
		}
		// Capacity counts every request the servers did the work of (the warm-up's and the drain's), as tune's.
		capacity := float64(max(res.Served, res.Requests)) / max(after-before, time.Microsecond).Seconds()
		return figures{float64(res.Requests) / res.DurationS, capacity}, nil
	}
	trial := func(i int) (figures, error) { return trialWith(i, o) }
	od := o
	if fixed > 0 {
		od.Requests, od.Duration, od.Warmup, od.Even = int64(fixed), 0, 0, true
	}
	duet := func() ([2]figures, error) {
		var v [2]figures
		var errs [2]error
		var wg sync.WaitGroup
		var running atomic.Int32
		running.Store(2)
		fill, allDone := context.WithCancel(ctx)
		defer allDone()
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v[i], errs[i] = trialWith(i, od)
				if running.Add(-1) == 0 || fixed == 0 {
					allDone()
					return
				}
				// As tune's arms do (arms.Filler): no trial's end runs alone.
				if of, err := target(i, o); err == nil {
					of.Warmup, of.Duration = 0, time.Minute
					_, _ = arms.Unmeasured(fill, of)
				}
			}()
		}
		wg.Wait()
		return v, errors.Join(errs[:]...)
	}
	for i := range 2 { // warm both
		if _, err := trial(i); err != nil {
			return err
		}
	}
	var alt, du ratios
	for r := range rounds {
		first := r % 2 // which pool goes first turns each round
		var v [2]figures
		for _, i := range []int{first, 1 - first} {
			if v[i], err = trial(i); err != nil {
				return err
			}
		}
		alt.add(v)
		if v, err = duet(); err != nil {
			return err
		}
		du.add(v)
	}
	duetIs := "the same windows"
	if fixed > 0 {
		duetIs = fmt.Sprintf("duets of %d requests", fixed)
	}
	fmt.Printf("%d rounds each way: %s against %s, %d connections a pool, %s windows, %s; a round's log ratio\n",
		rounds, cfgs[1], cfgs[0], o.Connections, o.Duration, duetIs)
	report("goodput", rounds, alt.goodput, du.goodput)
	report("capacity", rounds, alt.capacity, du.capacity)
	reportSplit(rounds, alt, du)
	return nil
}

// figures are a trial's goodput (requests a second in its window) and capacity (requests a CPU-second).
type figures struct{ goodput, capacity float64 }

// ratios are the rounds' log ratios of each figure, the second pool's over the first's; share is goodput over
// capacity, the CPU-seconds a second the stack's servers got.
type ratios struct{ goodput, capacity, share []float64 }

func (r *ratios) add(v [2]figures) {
	r.goodput = append(r.goodput, math.Log(v[1].goodput/v[0].goodput))
	r.capacity = append(r.capacity, math.Log(v[1].capacity/v[0].capacity))
	r.share = append(r.share, r.goodput[len(r.goodput)-1]-r.capacity[len(r.capacity)-1])
}

// reportSplit states goodput read in two parts: capacity from the duet round and the servers' share of the
// machine from the alternating round beside it (goodput is their product). A duet measures an arm's own capacity
// where it cannot measure the share an arm gets of the machine; if the split's mean is the alternating goodput's
// and its spread is smaller, a goodput race could be read so.
func reportSplit(rounds int, alt, du ratios) {
	split, diff := make([]float64, rounds), make([]float64, rounds)
	for i := range split {
		split[i] = du.capacity[i] + alt.share[i]
		diff[i] = du.capacity[i] - alt.capacity[i] // the split's round less the alternating goodput's
	}
	report("share", rounds, alt.share, du.share)
	_, sa := stats.MeanSD(alt.goodput)
	ms, ss := stats.MeanSD(split)
	md, sd := stats.MeanSD(diff)
	se := func(s float64) float64 { return 100 * s / math.Sqrt(float64(rounds)) }
	fmt.Printf("\ngoodput split (duet capacity + alternating share): mean %.2f%% (+-%.2f%%), sd %.2f%%\n", 100*ms, se(ss), 100*ss)
	fmt.Printf("split's sd %.2f x alternating goodput's; the means differ by %.2f%% (+-%.2f%%)\n", ss/sa, 100*md, se(sd))
}

// report states each way's mean and spread of a figure's rounds, and how the two ways compare.
func report(figure string, rounds int, alt, du []float64) {
	ma, sa := stats.MeanSD(alt)
	md, sd := stats.MeanSD(du)
	se := func(s float64) float64 { return 100 * s / math.Sqrt(float64(rounds)) }
	fmt.Printf("\n%-12s %9s %9s %9s\n", figure, "mean", "+-se", "sd")
	fmt.Printf("%-12s %8.2f%% %8.2f%% %8.2f%%\n", "alternating", 100*ma, se(sa), 100*sa)
	fmt.Printf("%-12s %8.2f%% %8.2f%% %8.2f%%\n", "duet", 100*md, se(sd), 100*sd)
	fmt.Printf("duet's sd %.2f x alternating's; the means differ by %.2f%% (+-%.2f%%)\n", sd/sa, 100*(md-ma),
		math.Hypot(se(sa), se(sd)))
}
