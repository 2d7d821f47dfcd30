// Command cpunoise measures how precisely a CPU trial (tune's measure for CPU-only knobs: a fixed set of
// requests, php-fpm's CPU time read around them) tells one configuration from another, by the trial's
// connections and length: two stacks of the same configuration (the demo, a static pool of 4) serve the same
// requests in the same rounds, and the spread of the log ratio of their figures in a round is the noise a
// pairwise race sees. What a race pays for a given precision is that spread squared times a round's wall time,
// printed relative to tune's setting (4 connections, about 0.4 s). Each mode also gets the requests' mean
// latency as a second figure (the service time a request sees with nothing queued, at one connection).
// bench/cpunoise.sh runs it (about 3 minutes).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
)

func main() {
	rounds := flag.Int("rounds", 60, "rounds of every mode on both stacks")
	modes := flag.String("modes", "4x0.4,2x0.4,1x0.4,4x0.1,1x0.1", "modes: CONNECTIONSxSECONDS, comma-separated (the first is the reference; a trailing w warms each connection with a cycle of the mix first)")
	flag.Parse()
	ms, err := parseModes(*modes)
	if err == nil {
		err = run(*rounds, ms)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpunoise:", err)
		os.Exit(1)
	}
}

type mode struct {
	conc    int
	seconds float64
	warm    bool // one cycle of the mix a connection before the CPU is read
	n       int  // requests a trial, from the calibration
}

func parseModes(s string) ([]mode, error) {
	var ms []mode
	for _, f := range strings.Split(s, ",") {
		f, warm := strings.CutSuffix(f, "w")
		c, sec, ok := strings.Cut(f, "x")
		conc, err1 := strconv.Atoi(c)
		secs, err2 := strconv.ParseFloat(sec, 64)
		if !ok || err1 != nil || err2 != nil || conc < 1 || secs <= 0 {
			return nil, fmt.Errorf("mode %q: want CONNECTIONSxSECONDS, as in 4x0.4", f)
		}
		ms = append(ms, mode{conc: conc, seconds: secs, warm: warm})
	}
	return ms, nil
}

type trial struct{ cpuUs, latUs, wallS float64 }

func run(rounds int, ms []mode) error {
	ctx := context.Background()
	var sts []*stack.Stack
	defer func() {
		for _, st := range sts {
			st.Stop(context.Background())
		}
	}()
	mix, err := demostack.Mix()
	if err != nil {
		return err
	}
	for range 2 {
		cfg := knob.Debian()
		cfg.PM, cfg.MaxChildren = "static", 4
		st, err := demostack.Start(ctx, cfg)
		if err != nil {
			return err
		}
		sts = append(sts, st)
	}
	for i := range ms { // calibrate: the requests a trial of its length holds, warming both stacks
		for _, st := range sts {
			t, err := measureOne(ctx, st, mix, mode{conc: ms[i].conc, n: 200})
			if err != nil {
				return err
			}
			ms[i].n = max(ms[i].n, int(ms[i].seconds*200/t.wallS))
		}
	}
	got := make([][2][]trial, len(ms))
	for r := 0; r < rounds; r++ {
		for i, m := range ms {
			for j := range 2 {
				k := (j + r + i) % 2
				t, err := measureOne(ctx, sts[k], mix, m)
				if err != nil {
					return err
				}
				got[i][k] = append(got[i][k], t)
			}
		}
	}
	report(ms, got)
	return nil
}

func measureOne(ctx context.Context, st *stack.Stack, mix []load.MixItem, m mode) (trial, error) {
	tg, err := load.ParseTarget(st.HTTPURL)
	if err != nil {
		return trial{}, err
	}
	o := load.Options{Target: tg, Connections: m.conc, Requests: int64(m.n), Even: true, Timeout: 10 * time.Second, Mix: mix, SkipPreflight: true}
	r, err := load.NewRunner(o)
	if err != nil {
		return trial{}, err
	}
	pg := st.PID("php-fpm")
	began := time.Now()
	if m.warm {
		w := o
		w.Requests = int64(m.conc)
		if _, err := load.Run(ctx, w); err != nil {
			return trial{}, err
		}
	}
	c0, err := measure.GroupCPU(pg)
	if err != nil {
		return trial{}, err
	}
	res, err := r.Trial(ctx, 0, 0)
	if err != nil {
		return trial{}, err
	}
	c1, err := measure.GroupCPU(pg)
	if err != nil {
		return trial{}, err
	}
	if res.Errors > 0 {
		return trial{}, fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests)
	}
	req := float64(max(res.Requests, 1))
	return trial{cpuUs: float64((c1-c0)/time.Microsecond) / req, latUs: res.Latency.Mean, wallS: time.Since(began).Seconds()}, nil
}

func report(ms []mode, got [][2][]trial) {
	fmt.Printf("%d rounds; a round's log ratio of two stacks of one configuration (sd), and a race's cost for a given precision (sd^2 x wall) relative to the first mode\n", len(got[0][0]))
	fmt.Printf("%-10s %8s %8s %10s %12s %10s %12s %10s\n", "mode", "requests", "wall s", "CPU us/req", "sd CPU", "cost CPU", "sd latency", "cost lat")
	var ref float64
	for i, m := range ms {
		var dc, dl []float64
		wall := 0.0
		for r := range got[i][0] {
			a, b := got[i][0][r], got[i][1][r]
			dc = append(dc, math.Log(a.cpuUs/b.cpuUs))
			dl = append(dl, math.Log(a.latUs/b.latUs))
			wall += (a.wallS + b.wallS) / 2
		}
		wall /= float64(len(dc))
		sc, sl := sd(dc), sd(dl)
		if i == 0 {
			ref = sc * sc * wall
		}
		fmt.Printf("%-10s %8d %8.3f %10.0f %11.1f%% %10.2f %11.1f%% %10.2f\n", fmt.Sprintf("%dx%gs%s", m.conc, m.seconds, map[bool]string{true: "w"}[m.warm]), m.n, wall,
			meanCPU(got[i]), 100*sc, sc*sc*wall/ref, 100*sl, sl*sl*wall/ref)
	}
}

func meanCPU(g [2][]trial) float64 {
	s, n := 0.0, 0
	for _, ts := range g {
		for _, t := range ts {
			s += t.cpuUs
			n++
		}
	}
	return s / float64(n)
}

// sd is the spread about the mean: two stacks of one configuration may differ a little in level (where each
// lands in memory), which a race's pairs see as a small effect, not noise.
func sd(v []float64) float64 {
	_, s := stats.MeanSD(v)
	return s
}
