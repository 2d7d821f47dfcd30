// Command jitwarm measures what opcache's JIT saves a request of a preset's app, and from which request on: two
// static pools of the app, one with the JIT off and one with -jit (tracing or function, 64 MiB buffer: tune's
// values), both started cold and loaded at the same time (a duet block: what the machine does meanwhile falls on
// both alike), block after block of -n requests each. It prints each block's CPU a request of each pool (php-fpm's
// process group, as tune's CPU trials read it), their ratio, and the JIT buffer's use after the block; then the
// ratio's mean and spread over the blocks after -skip (the compiling ones): the mean of one pair of pools, whose
// own offsets (about 2% a stack, docs/engine.md) it holds and its interval does not. A JIT still compiling when
// tune's trials run would show here as blocks whose ratio keeps falling past the warm-up tune gives a pool (a
// few requests a worker). By default the mix is tune's: the preset's pages with its signed-in ones (-anonymous:
// the anonymous pages alone, as profile counts instructions on). bench/jitwarm.sh runs it.
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
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/workload"
)

type opts struct {
	preset, jit     string
	blocks, n, conc int
	skip            int
	anonymous       bool
}

func main() {
	var o opts
	flag.StringVar(&o.preset, "preset", "wordpress",
		"the workload preset served, prepared first (phptune workload prepare NAME)")
	flag.StringVar(&o.jit, "jit", "tracing", "the JIT mode of the second pool: tracing or function")
	flag.IntVar(&o.blocks, "blocks", 30, "duet blocks")
	flag.IntVar(&o.n, "n", 32, "requests a pool serves a block (tune's CPU trials on WordPress: 22 to 32)")
	flag.IntVar(&o.conc, "c", 4, "connections a pool, and its static pool's workers")
	flag.IntVar(&o.skip, "skip", 1, "blocks left out of the mean (the JIT compiles in the first)")
	flag.BoolVar(&o.anonymous, "anonymous", false, "the anonymous pages alone, without the preset's signed-in pages")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "jitwarm:", err)
		os.Exit(1)
	}
}

// run serves o.preset's app with its services for the whole run, stopped on every path, an interrupt included.
func run(o opts) error {
	if o.jit != "tracing" && o.jit != "function" {
		return fmt.Errorf("-jit %q: want tracing or function", o.jit)
	}
	if o.blocks <= o.skip || o.n < 1 || o.conc < 1 {
		return errors.New("-blocks must exceed -skip, and -n and -c be at least 1")
	}
	return demostack.WithPreset(o.preset, func(ctx context.Context, app *workload.App) error {
		return measureBlocks(ctx, app, o)
	})
}

// measureBlocks starts the two pools and prints o.blocks duet blocks and their summary.
func measureBlocks(ctx context.Context, app *workload.App, o opts) error {
	var sts [2]*stack.Stack
	defer func() {
		for _, st := range sts {
			if st != nil {
				st.Stop(context.Background())
			}
		}
	}()
	for i, mode := range []string{"off", o.jit} {
		cfg := knob.Debian()
		cfg.PM, cfg.MaxChildren = "static", o.conc
		if err := knob.JIT().Set(&cfg, mode); err != nil {
			return err
		}
		st, err := demostack.StartApp(ctx, app.Stack, cfg)
		if err != nil {
			return fmt.Errorf("start a pool of %s with the JIT %s: %w", o.preset, mode, err)
		}
		sts[i] = st
	}
	mix, err := blockMix(ctx, app, sts[0], o.anonymous)
	if err != nil {
		return err
	}
	fmt.Printf("%s, %d requests a block, %d connections a pool: CPU a request (php-fpm), JIT off against %s\n",
		o.preset, o.n, o.conc, o.jit)
	fmt.Printf("%5s %8s %10s %10s %8s %10s\n", "block", "served", "off us", o.jit+" us", "ratio", "JIT KiB")
	var logs []float64
	for b := range o.blocks {
		v, err := duetBlock(ctx, sts, mix, o)
		if err != nil {
			return err
		}
		used, err := jitUsed(ctx, sts[1])
		if err != nil {
			return err
		}
		r := math.Log(v[1] / v[0])
		if b >= o.skip {
			logs = append(logs, r)
		}
		fmt.Printf("%5d %8d %10.0f %10.0f %+7.1f%% %10d\n", b, (b+1)*o.n, v[0], v[1], 100*math.Expm1(r), used>>10)
	}
	printSummary(logs, o)
	return nil
}

// printSummary prints the mean of the blocks' log ratios after o.skip as a change of CPU a request, with its 95%
// interval (Student's t over the blocks) and a block's spread.
func printSummary(logs []float64, o opts) {
	m, lo, hi := stats.MeanCI95(logs)
	_, sd := stats.MeanSD(logs)
	fmt.Printf("blocks %d to %d: %s costs %+.1f%% CPU a request [%+.1f, %+.1f] (95%%, t), a block varying by %.1f%%\n",
		o.skip, o.blocks-1, o.jit, 100*math.Expm1(m), 100*math.Expm1(lo), 100*math.Expm1(hi), 100*sd)
}

// blockMix is the mix a block sends: the preset's with its signed-in pages (logged in through first, whose
// session's cookies every pool accepts: they share the database), or its anonymous pages alone.
func blockMix(ctx context.Context, app *workload.App, first *stack.Stack, anonymous bool) ([]load.MixItem, error) {
	if anonymous {
		return app.URLs, nil
	}
	items, session, err := app.Mix(load.Request{}, nil)
	if err != nil || session == nil {
		return items, err
	}
	return session(ctx, first.HTTPURL)
}

// duetBlock loads both pools at once, each with its own connections, and returns their CPU a request
// (microseconds).
func duetBlock(ctx context.Context, sts [2]*stack.Stack, mix []load.MixItem, o opts) ([2]float64, error) {
	var v [2]float64
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, st := range sts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v[i], errs[i] = cpuPerRequest(ctx, st, mix, o)
		}()
	}
	wg.Wait()
	return v, errors.Join(errs...)
}

// cpuPerRequest is one pool's share of a block: o.n requests, every connection whole cycles of the mix.
func cpuPerRequest(ctx context.Context, st *stack.Stack, mix []load.MixItem, o opts) (float64, error) {
	tg, err := load.ParseTarget(st.HTTPURL)
	if err != nil {
		return 0, err
	}
	lo := load.Options{Target: tg, Connections: o.conc, Requests: int64(o.n), Even: true, Timeout: 30 * time.Second,
		Mix: mix, SkipPreflight: true}
	res, cpu, err := demostack.CPUTrial(ctx, st, lo)
	if err != nil {
		return 0, err
	}
	if res.Errors > 0 {
		return 0, fmt.Errorf("%s: %d of %d requests failed (an error status, or a page without its content)",
			o.preset, res.Errors, res.Requests)
	}
	return float64(cpu/time.Microsecond) / float64(res.Requests), nil
}

// jitUsed is the bytes of st's JIT buffer in use, read through its pool from a worker (the buffer is the
// master's shared memory).
func jitUsed(ctx context.Context, st *stack.Stack) (int64, error) {
	path, err := measure.WriteOpcacheScript(st.PrivDir)
	if err != nil {
		return 0, err
	}
	p := st.Pools[0]
	oc, err := measure.ReadOpcache(ctx, p.Network, p.Address, path)
	if err != nil {
		return 0, fmt.Errorf("read the JIT buffer's use: %w", err)
	}
	return oc.JITBufferSize - oc.JITBufferFree, nil
}
