// Command checkcost measures what `phptune check` costs the pool it reads: the demo app on one stack (nginx and
// a static pool), loaded through nginx at a fixed concurrency, in interleaved trials with and without a check
// running beside it (the real binary, its default interval unless -interval says otherwise), in ABBA order so
// that drift falls on both arms alike. It prints each arm's goodput and capacity (requests per CPU-second of
// php-fpm, nginx and, in the arm with it, check itself), the ratios with check to without and their 95% CIs over
// the rounds' paired ratios, and the CPU the check process used a second. Goodput moves with whatever else the
// shared machine runs; capacity counts the CPU the requests and check took, whatever the neighbours do, so it is
// the sharper figure of the two. bench/checkcost.sh runs it (about 2 minutes with the defaults).
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
	"github.com/phptune/phptune/internal/measure"
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
	goodput  []float64
	capacity []float64 // requests per CPU-second of php-fpm, nginx and check
	cpu      []float64 // check's CPU seconds a second of the trial
}

// figures are one trial's.
type figures struct{ goodput, capacity, checkCPU float64 }

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
			f, err := trial(ctx, r, st, bin, conf, checking, interval)
			if err != nil {
				return err
			}
			a := &without
			if checking {
				a = &with
				a.cpu = append(a.cpu, f.checkCPU)
			}
			a.goodput, a.capacity = append(a.goodput, f.goodput), append(a.capacity, f.capacity)
		}
	}
	report(without, with, trialLen, interval, children, conc)
	return nil
}

// trial loads the stack for one window, with a check running beside it when checking. php-fpm's and nginx's CPU
// (single-threaded processes: their schedstat is all of it) is read around the whole trial (warm-up included)
// and scaled to the window, as tune's trials do. check's is its whole run's (every thread's, from the kernel's
// account when it exits, start-up included) at its rate a second over the window.
func trial(ctx context.Context, r *load.Runner, st *stack.Stack, bin, conf string, checking bool, interval time.Duration) (figures, error) {
	var cmd *exec.Cmd
	var started time.Time
	groups := []int{st.PID("php-fpm"), st.PID("nginx")}
	if checking {
		trialLen := r.Options().Duration
		cmd = exec.CommandContext(ctx, bin, "check", conf, "--for", (trialLen + 2*warmup).String(), "--interval", interval.String(), "--json")
		if err := cmd.Start(); err != nil {
			return figures{}, err
		}
		started = time.Now()
		defer cmd.Wait()
	}
	before, err := cpuOf(groups)
	if err != nil {
		return figures{}, err
	}
	began := time.Now()
	res, err := r.Trial(ctx, 0, 0)
	if err != nil {
		return figures{}, err
	}
	wall := time.Since(began)
	after, err := cpuOf(groups)
	if err != nil {
		return figures{}, err
	}
	if res.Errors > 0 {
		return figures{}, fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests)
	}
	scale := res.DurationS / wall.Seconds()
	var total time.Duration
	for i := range groups {
		total += after[i] - before[i]
	}
	f := figures{goodput: float64(res.Requests) / res.DurationS}
	cpuS := total.Seconds() * scale
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait() // exit 130 after an interrupt: expected
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		f.checkCPU = used.Seconds() / time.Since(started).Seconds()
		cpuS += f.checkCPU * res.DurationS
	}
	f.capacity = float64(res.Requests) / cpuS
	return f, nil
}

// cpuOf is each process group's CPU time so far.
func cpuOf(groups []int) ([]time.Duration, error) {
	var out []time.Duration
	for _, g := range groups {
		d, err := measure.GroupCPU(g)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func report(without, with arm, trialLen, interval time.Duration, children, conc int) {
	fmt.Printf("%d rounds (ABBA), %s trials after %s warm-up; demo on a static pool of %d, %d connections through nginx; check every %s\n",
		len(with.goodput), trialLen, warmup, children, conc, interval)
	fmt.Printf("%-14s %10s %12s\n", "arm", "goodput", "req/CPU-s")
	fmt.Printf("%-14s %10.1f %12.1f\n", "without check", stats.Median(without.goodput), stats.Median(without.capacity))
	fmt.Printf("%-14s %10.1f %12.1f\n", "with check", stats.Median(with.goodput), stats.Median(with.capacity))
	ratio("goodput", with.goodput, without.goodput)
	ratio("capacity (php-fpm, nginx and check's CPU)", with.capacity, without.capacity)
	fmt.Printf("check's own CPU: %.2f ms a second (median over its trials, start-up included)\n", 1000*stats.Median(with.cpu))
}

// ratio prints the geometric mean of the rounds' paired ratios a/b with its 95% CI.
func ratio(what string, a, b []float64) {
	var logs []float64
	for i := range a {
		logs = append(logs, math.Log(a[i]/b[i]))
	}
	m, lo, hi := stats.MeanCI95(logs)
	fmt.Printf("with / without, %s: %.4f  95%% CI [%.4f, %.4f]  (target: within 1%%)\n", what, math.Exp(m), math.Exp(lo), math.Exp(hi))
}
