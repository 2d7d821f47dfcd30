// Command checkcost measures what `phptune check` costs the pool it reads: the demo app on one stack (nginx and
// a static pool), loaded through nginx at a fixed concurrency, in interleaved trials with and without a check
// running beside it (the real binary, its default interval unless -interval says otherwise), in ABBA order so
// that drift falls on both arms alike. It prints each arm's goodput and capacity (requests per CPU-second of
// php-fpm, nginx and, in the arm with it, check itself), the ratios with check to without and their 95% CIs over
// the rounds' paired ratios, and the CPU the check process used a second. Goodput moves with whatever else the
// shared machine runs; capacity counts the CPU the requests and check took, whatever the neighbours do, so it is
// the sharper figure of the two. Last, an accounting of a started check's CPU and its reads' against the CPU the
// stack uses, under steady load: the most it can take from a CPU-bound pool. bench/checkcost.sh runs it (about 3
// minutes with the defaults).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/check"
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
	roundsFile := flag.String("rounds-file", "", "append each round's figures to this `FILE` (runs pool with -from)")
	from := flag.String("from", "", "measure nothing: report the rounds kept in this `FILE`")
	flag.Parse()
	if *from != "" {
		without, with, err := readRounds(*from)
		if err == nil && len(with.goodput) < 2 {
			err = fmt.Errorf("%s: %d rounds, want 2 or more", *from, len(with.goodput))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "checkcost:", err)
			os.Exit(1)
		}
		report(without, with, *trialLen, *interval, *children, *conc)
		return
	}
	if err := run(*bin, *rounds, *trialLen, *interval, *children, *conc, *roundsFile); err != nil {
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

func run(bin string, rounds int, trialLen, interval time.Duration, children, conc int, roundsFile string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: %w (bench/checkcost.sh builds it)", bin, err)
	}
	// Ctrl-C or SIGTERM ends the rounds early and reports the whole rounds done so far: a long run keeps its data.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
	keep, err := openRoundLog(roundsFile)
	if err != nil {
		return err
	}
	defer keep.Close()
	without, with, err := measureRounds(ctx, r, st, bin, conf, rounds, interval, keep)
	if len(with.goodput) > 1 {
		report(without, with, trialLen, interval, children, conc)
	}
	if err != nil {
		return err
	}
	return steady(ctx, r, st, bin, conf, interval)
}

// progressEvery is how many rounds pass between the interim lines on stderr a long run prints.
const progressEvery = 25

// measureRounds runs the ABBA rounds. On an error (an interrupt included) it returns the whole rounds done.
func measureRounds(ctx context.Context, r *load.Runner, st *stack.Stack, bin, conf string, rounds int,
	interval time.Duration, keep *roundLog) (without, with arm, err error) {
	for i := 0; i < rounds; i++ {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		var fs [2]figures
		for _, checking := range order {
			f, err := trial(ctx, r, st, bin, conf, checking, interval)
			if err != nil {
				return without, with, fmt.Errorf("round %d: %w", i+1, err)
			}
			if checking {
				fs[1] = f
			} else {
				fs[0] = f
			}
		}
		without.goodput, without.capacity = append(without.goodput, fs[0].goodput), append(without.capacity, fs[0].capacity)
		with.goodput, with.capacity = append(with.goodput, fs[1].goodput), append(with.capacity, fs[1].capacity)
		with.cpu = append(with.cpu, fs[1].checkCPU)
		if err := keep.add(fs[0], fs[1]); err != nil {
			return without, with, fmt.Errorf("round %d: %w", i+1, err)
		}
		if (i+1)%progressEvery == 0 {
			m, lo, hi := logRatioCI(with.capacity, without.capacity)
			fmt.Fprintf(os.Stderr, "round %d: capacity with / without %.4f [%.4f, %.4f]\n", i+1, m, lo, hi)
		}
	}
	return without, with, nil
}

// steadyTrials is how many trials the steady accounting spans, after check's start-up (steadySkip).
const (
	steadyTrials = 5
	steadySkip   = 3 * time.Second
)

// steady accounts for what a started check takes: one check runs beside steadyTrials trials back to back, and its
// CPU (every thread's) is read with the pool's and nginx's from steadySkip on, with the requests served. A check
// takes from a CPU-bound pool at most the share of the CPU it and its reads use: its own, a status read an
// interval at what one costs the pool (measured first), and the opcache reads at an app request's cost. That
// share is read to a fraction of a percent in one run, where the side-by-side goodput ratio needs hundreds of
// rounds on a shared machine to resolve 1%.
func steady(ctx context.Context, r *load.Runner, st *stack.Stack, bin, conf string, interval time.Duration) error {
	span := time.Duration(steadyTrials)*(r.Options().Duration+warmup) + steadySkip + 5*time.Second
	statusCost, err := statusReadCost(ctx, st)
	if err != nil {
		return err
	}
	if span > check.DefaultFor {
		return fmt.Errorf("the steady accounting's %s is longer than check's default window", span)
	}
	cmd := exec.CommandContext(ctx, bin, "check", conf, "--for", check.DefaultFor.String(), "--interval", interval.String(), "--json")
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	time.Sleep(steadySkip)
	groups := []int{st.PID("php-fpm"), st.PID("nginx")}
	// read is the stack's CPU (php-fpm's and nginx's) and check's so far.
	read := func() (servers, check time.Duration, err error) {
		cpus, err := cpuOf(groups)
		if err != nil {
			return 0, 0, err
		}
		for _, c := range cpus {
			servers += c
		}
		check, err = threadsCPU(cmd.Process.Pid)
		return servers, check, err
	}
	stackBefore, checkBefore, err := read()
	if err != nil {
		return err
	}
	began := time.Now()
	var requests int64
	for i := 0; i < steadyTrials; i++ {
		res, err := r.Trial(ctx, 0, 0)
		if err != nil {
			return err
		}
		requests += res.Requests
	}
	wall := time.Since(began).Seconds()
	stackAfter, checkAfter, err := read()
	if err != nil {
		return err
	}
	stackCPU := stackAfter - stackBefore
	checkPerS := (checkAfter - checkBefore).Seconds() / wall
	stackPerS := stackCPU.Seconds() / wall
	// Requests counted over the trials' windows, CPU over their warm-ups too: the cost a request is an upper bound.
	perRequest := stackCPU.Seconds() / float64(requests)
	// check reads the status every interval, and opcache (a small script of its own, bounded here by what a
	// request of the app costs) ten times its default window, at most every 30 s and at least an interval apart
	// (check's sampler: opcacheReads, opcacheMaxEvery).
	opcacheEvery := min(max(check.DefaultFor/10, interval), 30*time.Second)
	readsCPU := statusCost.Seconds()/interval.Seconds() + perRequest/opcacheEvery.Seconds()
	share := (checkPerS + readsCPU) / (stackPerS + checkPerS)
	fmt.Printf("steady, %.0f s of load beside one started check:\n", wall)
	fmt.Printf("  check's own CPU: %.2f ms a second\n", 1000*checkPerS)
	fmt.Printf("  its reads: %.2f ms of the pool's CPU a second (a status read costs the pool %.0f us, measured; an opcache\n"+
		"  read every %s, counted at an app request's %.2f ms)\n", 1000*readsCPU, 1e6*statusCost.Seconds(),
		opcacheEvery.Round(100*time.Millisecond), 1000*perRequest)
	fmt.Printf("  %.3f%% of the CPU the pool, nginx and check used (%.0f ms a second): the most a check can take from a\n"+
		"  CPU-bound pool's throughput (target: under 1%%)\n", 100*share, 1000*(stackPerS+checkPerS))
	return nil
}

// statusReads is how many status reads statusReadCost sends, one after another, to the idle pool.
const statusReads = 500

// statusReadCost is what one read of the status page (?json&full, as check sends it) costs the pool in CPU:
// statusReads of them on the idle pool, its CPU read around them.
func statusReadCost(ctx context.Context, st *stack.Stack) (time.Duration, error) {
	pool, ok := st.Pool("www")
	if !ok || pool.StatusPath == "" {
		return 0, fmt.Errorf("the demo's pool has no status path")
	}
	fpm := []int{st.PID("php-fpm")}
	before, err := cpuOf(fpm)
	if err != nil {
		return 0, err
	}
	for i := 0; i < statusReads; i++ {
		if _, err := measure.ReadFPMStatus(ctx, pool.Network, pool.Address, pool.StatusPath); err != nil {
			return 0, err
		}
	}
	after, err := cpuOf(fpm)
	if err != nil {
		return 0, err
	}
	return (after[0] - before[0]) / statusReads, nil
}

// threadsCPU is the CPU time every thread of process pid has used so far (their schedstat, nanoseconds): check is
// a Go program of several threads, and /proc/PID/schedstat is its first thread's alone.
func threadsCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("check (pid %d) has no threads to read: did it exit?", pid)
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that exited meanwhile
		}
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
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
		// The window a user gets (check's default), stopped at the trial's end: its reads come at that window's pace.
		cmd = exec.CommandContext(ctx, bin, "check", conf, "--for", check.DefaultFor.String(), "--interval", interval.String(), "--json")
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
	m, lo, hi := logRatioCI(a, b)
	fmt.Printf("with / without, %s: %.4f  95%% CI [%.4f, %.4f]  (target: within 1%%)\n", what, m, lo, hi)
}

// logRatioCI is the geometric mean of the paired ratios a/b and its 95% CI.
func logRatioCI(a, b []float64) (m, lo, hi float64) {
	var logs []float64
	for i := range a {
		logs = append(logs, math.Log(a[i]/b[i]))
	}
	m, lo, hi = stats.MeanCI95(logs)
	return math.Exp(m), math.Exp(lo), math.Exp(hi)
}
