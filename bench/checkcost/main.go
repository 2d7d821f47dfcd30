// Command checkcost measures what `phptune check` costs the pool it reads: the demo app on one stack (nginx and
// a static pool), loaded through nginx at a fixed concurrency, in interleaved trials with and without a check
// running beside it (the real binary, its default interval unless -interval says otherwise), in ABBA order so
// that drift falls on both arms alike. It prints each arm's goodput, the ratio with check to without and its 95%
// CI over the rounds' paired ratios, and the CPU the check process used a second. bench/checkcost.sh runs it
// (about 2 minutes with the defaults).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
)

func main() {
	bin := flag.String("phptune", "bin/phptune", "the phptune binary whose check is measured")
	rounds := flag.Int("rounds", 10, "rounds of one trial with check and one without")
	trialLen := flag.Duration("trial", 5*time.Second, "measured window of a trial")
	interval := flag.Duration("interval", time.Second, "check's --interval")
	children := flag.Int("children", 4, "the static pool's max_children")
	conc := flag.Int("c", 8, "connections")
	flag.Parse()
	if err := run(*bin, *rounds, *trialLen, *interval, *children, *conc); err != nil {
		fmt.Fprintln(os.Stderr, "checkcost:", err)
		os.Exit(1)
	}
}

// warmup precedes each trial's window: check starts in it (reads its target, the first status and opcache).
const warmup = time.Second

type arm struct {
	goodput []float64
	cpu     []float64 // check's CPU seconds a second of its run
}

func run(bin string, rounds int, trialLen, interval time.Duration, children, conc int) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: %w (bench/checkcost.sh builds it)", bin, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "static", children
	st, err := demostack.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Stop(context.Background())
	mix, err := demostack.Mix()
	if err != nil {
		return err
	}
	tg, err := load.ParseTarget(st.HTTPURL)
	if err != nil {
		return err
	}
	r, err := load.NewRunner(load.Options{Target: tg, Connections: conc, Duration: trialLen, Warmup: warmup, Timeout: 10 * time.Second,
		Mix: mix, SkipPreflight: true})
	if err != nil {
		return err
	}
	conf := filepath.Join(st.RunDir, "php-fpm.conf")
	var without, with arm
	for i := 0; i < rounds; i++ {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, checking := range order {
			g, cpu, err := trial(ctx, r, st, bin, conf, checking, trialLen, interval)
			if err != nil {
				return err
			}
			a := &without
			if checking {
				a = &with
				a.cpu = append(a.cpu, cpu)
			}
			a.goodput = append(a.goodput, g)
		}
	}
	report(without, with, trialLen, interval, children, conc)
	return nil
}

// trial loads the stack for one window, with a check running beside it when checking; it returns the goodput
// and the check's CPU seconds a second.
func trial(ctx context.Context, r *load.Runner, st *stack.Stack, bin, conf string, checking bool, trialLen, interval time.Duration) (float64, float64, error) {
	var cmd *exec.Cmd
	var started time.Time
	if checking {
		cmd = exec.CommandContext(ctx, bin, "check", conf, "--for", (trialLen + 2*warmup).String(), "--interval", interval.String(), "--json")
		cmd.Stdout, cmd.Stderr = nil, nil
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		started = time.Now()
	}
	res, err := r.Trial(ctx, 0, 0)
	if err != nil {
		return 0, 0, err
	}
	cpu := 0.0
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait() // exit 130 after an interrupt: expected
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		cpu = used.Seconds() / time.Since(started).Seconds()
	}
	if res.Errors > 0 {
		return 0, 0, fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests)
	}
	return float64(res.Requests-res.Errors) / res.DurationS, cpu, nil
}

func report(without, with arm, trialLen, interval time.Duration, children, conc int) {
	var logs []float64
	for i := range with.goodput {
		logs = append(logs, math.Log(with.goodput[i]/without.goodput[i]))
	}
	m, lo, hi := stats.MeanCI95(logs)
	fmt.Printf("%d rounds (ABBA), %s trials after %s warm-up; demo on a static pool of %d, %d connections through nginx; check every %s\n",
		len(logs), trialLen, warmup, children, conc, interval)
	fmt.Printf("%-14s %10s\n", "arm", "goodput")
	fmt.Printf("%-14s %10.1f\n", "without check", stats.Median(without.goodput))
	fmt.Printf("%-14s %10.1f\n", "with check", stats.Median(with.goodput))
	fmt.Printf("with / without: %.4f  95%% CI [%.4f, %.4f]  (target: within 1%%)\n", math.Exp(m), math.Exp(lo), math.Exp(hi))
	fmt.Printf("check's own CPU: %.2f ms a second (median over its runs, start-up included)\n", 1000*stats.Median(with.cpu))
}
