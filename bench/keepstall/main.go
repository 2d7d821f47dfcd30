// Command keepstall counts how often nginx's upstream keep-alive stalls requests on a pool no larger than its
// load: two stacks of the demo, a static pool of 4 each, one with keepalive=on (tune's rendering: each nginx
// worker keeps max_children / (2 x worker_processes) connections; a kept connection pins a php-fpm worker) and
// one without, serve trials of 4 fresh connections in turns, as tune's CPU trials do (-keep sets the kept
// connections a nginx worker instead). It prints, for each, the trials with failed requests and the slowest
// trial. bench/keepstall.sh runs it (about 2 minutes).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/workloads"
)

func main() {
	trials := flag.Int("trials", 100, "trials of each stack")
	conc := flag.Int("c", 4, "connections a trial, and the pools' size")
	timeout := flag.Duration("timeout", 5*time.Second, "a request's timeout")
	keep := flag.Int("keep", 0, "kept connections a nginx worker (0: tune's rendering, knob.Config.KeepaliveConns)")
	flag.Parse()
	if err := run(*trials, *conc, *keep, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "keepstall:", err)
		os.Exit(1)
	}
}

type tally struct {
	failed, errors int
	slowest        time.Duration
}

// add counts one trial: its result, and how long it took.
func (t *tally) add(res *load.Result, took time.Duration) {
	t.slowest = max(t.slowest, took)
	if res.Errors > 0 {
		t.failed++
		t.errors += int(res.Errors)
	}
}

// stackConfig is the demo on a static pool of conc, with nginx's upstream keep-alive when keep: tune's rendering,
// or perWorker kept connections a nginx worker when that is set.
func stackConfig(conc int, keep bool, perWorker int) stack.Config {
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren, cfg.Keepalive = "static", conc, keep
	sc := stack.Config{AppFS: workloads.Demo(), FastStop: true}
	cfg.Apply(&sc, "www")
	if keep && perWorker > 0 {
		sc.NginxKeepalive = perWorker
	}
	return sc
}

func run(trials, conc, perWorker int, timeout time.Duration) error {
	ctx := context.Background()
	var sts []*stack.Stack
	defer func() {
		for _, st := range sts {
			st.Stop(context.Background())
		}
	}()
	for _, keep := range []bool{true, false} {
		st, err := stack.Start(ctx, stackConfig(conc, keep, perWorker))
		if err != nil {
			return err
		}
		sts = append(sts, st)
	}
	mix, err := demostack.Mix()
	if err != nil {
		return err
	}
	got := make([]tally, len(sts))
	for i := 0; i < trials; i++ {
		for k, st := range sts {
			tg, err := load.ParseTarget(st.HTTPURL)
			if err != nil {
				return err
			}
			o := load.Options{Target: tg, Connections: conc, Requests: int64(30 * conc), Even: true, Timeout: timeout, Mix: mix, SkipPreflight: true}
			began := time.Now()
			res, err := load.Run(ctx, o)
			if res == nil {
				return err
			}
			got[k].add(res, time.Since(began))
		}
	}
	for k, name := range []string{"keepalive=on", "keepalive=off"} {
		fmt.Printf("%-14s %d of %d trials with failed requests (%d requests), slowest trial %s\n", name, got[k].failed, trials, got[k].errors, got[k].slowest.Round(time.Millisecond))
	}
	return nil
}
