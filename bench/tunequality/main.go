// Command tunequality checks tune's answer against an exhaustive search: for an I/O-bound app and for a
// memory-heavy app under a memory budget it runs `phptune tune`, then an interleaved grid over pm x
// max_children under the same constraints with the recommendation as one more arm, and prints
// (recommended throughput / best grid throughput) and (tune time / grid time). With -demo it also runs tune
// twice on the demo app and says whether every better/worse verdict agrees. bench/tune-quality.sh runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

type app struct {
	name   string
	php    string
	memory string // --memory for tune, "" = tune's default
}

// The apps: one that mostly waits (20 ms on a "remote service", about 1 ms of CPU), and one whose requests hold
// 16 MiB while they wait, under a memory budget that fits about a dozen workers. Allocating is costly on
// some VMs (page faults), so the memory app waits longer than it computes.
const burn1ms = `$t = hrtime(true); while (hrtime(true) - $t < 1000000) { $x = md5("x"); }`

var apps = []app{
	{name: "io-20ms", php: `<?php ` + burn1ms + ` usleep(20000); echo str_repeat("waited ", 100);`},
	{name: "memory-16MiB", php: `<?php $b = str_repeat("x", 16 << 20); usleep(100000); echo strlen($b);`, memory: "260MiB"},
}

func main() {
	bin := flag.String("phptune", "bin/phptune", "the phptune binary")
	budget := flag.Duration("budget", 3*time.Minute, "tune's --budget for each app")
	demo := flag.Bool("demo", true, "also run tune twice on the demo app and compare the verdicts")
	demoBudget := flag.Duration("demo-budget", 5*time.Minute, "tune's --budget for each demo run")
	only := flag.String("apps", "", "comma-separated app names to run (default: all)")
	rounds := flag.Int("grid-rounds", 0, "interleaved rounds of the grid (default: tune's pairs, 10)")
	full := flag.Bool("full-grid", false, "every pool size (default: every one to 16, every second to 32, every fourth beyond)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *budget, *demo, *demoBudget, *only, *rounds, *full); err != nil {
		fmt.Fprintln(os.Stderr, "tunequality:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin string, budget time.Duration, demo bool, demoBudget time.Duration, only string, rounds int, full bool) error {
	work, err := os.MkdirTemp("", "phptune-quality-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var lines []string
	for _, a := range apps {
		if only != "" && !strings.Contains(","+only+",", ","+a.name+",") {
			continue
		}
		line, err := quality(ctx, bin, work, a, budget, rounds, full)
		if err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		lines = append(lines, line)
		fmt.Println(line)
	}
	if demo {
		line, err := agreement(ctx, bin, work, demoBudget)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		lines = append(lines, line)
	}
	fmt.Println("\nsummary (goals: rec/best >= 0.97, tune/grid time <= 0.25, demo verdicts agree)")
	for _, l := range lines {
		fmt.Println("  " + l)
	}
	return nil
}

func tuneRun(ctx context.Context, bin, app, out string, args ...string) (*tune.Result, time.Duration, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, append([]string{"tune", app, "--out", out}, args...)...)
	cmd.Stderr = os.Stderr
	if b, err := cmd.Output(); err != nil {
		return nil, 0, fmt.Errorf("phptune tune: %v\n%s", err, b)
	}
	took := time.Since(start)
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		return nil, 0, err
	}
	var res tune.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, 0, err
	}
	return &res, took, nil
}

// quality tunes one app (pm and the pool size, the grid's dimensions) and searches the grid.
func quality(ctx context.Context, bin, work string, a app, budget time.Duration, rounds int, fullGrid bool) (string, error) {
	dir := filepath.Join(work, a.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(a.php), 0o644); err != nil {
		return "", err
	}
	args := []string{"--only", "pm", "--budget", budget.String()}
	if a.memory != "" {
		args = append(args, "--memory", a.memory)
	}
	fmt.Printf("%s: tune %s\n", a.name, strings.Join(args, " "))
	res, took, err := tuneRun(ctx, bin, dir, filepath.Join(work, a.name+"-tune"), args...)
	if err != nil {
		return "", err
	}
	rec := res.Recommendation
	conc := res.Plan.Concurrency
	trial := time.Duration((res.Plan.WarmupS + res.Plan.WindowS) * float64(time.Second))
	// The grid: every pm with the pool sizes from 1 to twice tune's load (at most 64) that the memory allows
	// (gridSizes), at tune's load and trial length, as many interleaved rounds as tune has pairs.
	limit := 128
	if ps := res.PoolSize; ps != nil && ps.MemoryLimit > 0 {
		limit = ps.MemoryLimit
	}
	// A cell's stack runs only while it is measured: every pool size of every pm kept warm at once would be
	// hundreds of workers on a small machine, and they would load each other's measurements.
	type cell struct {
		cfg knob.Config
		rps []float64
	}
	var cells []*cell
	add := func(c knob.Config) {
		for _, x := range cells {
			if x.cfg.String() == c.String() {
				return
			}
		}
		cells = append(cells, &cell{cfg: c})
	}
	recCfg := rec.Clone()
	add(recCfg)
	for _, pm := range []string{"static", "dynamic", "ondemand"} {
		for _, n := range gridSizes(min(limit, 64, max(2*conc, 8)), fullGrid) {
			c := res.Baseline.Clone()
			c.PM, c.MaxChildren = pm, n
			add(c)
		}
	}
	if rounds == 0 {
		rounds = res.Plan.Pairs
	}
	rounds = max(rounds, stats.MinPairs)
	fmt.Printf("%s: grid of %d arms x %d rounds at %d connections, %s a trial\n", a.name, len(cells), rounds, conc, trial.Round(time.Millisecond))
	gridStart := time.Now()
	warm := time.Duration(res.Plan.WarmupS * float64(time.Second))
	prewarm := max(2*time.Second, trial)
	measure := func(c *cell) error {
		sc := stack.Config{App: dir}
		c.cfg.Apply(&sc, "grid")
		st, err := stack.Start(ctx, sc)
		if err != nil {
			return fmt.Errorf("start %s: %w", c.cfg, err)
		}
		defer st.Stop(context.Background())
		tg, _ := load.ParseTarget(st.HTTPURL)
		// Tune measures arms that have been serving for a while: a fresh pm=dynamic or ondemand pool starts
		// with a few workers and spawns at most 32 a second, so each such cell is brought up to its steady
		// state under the same load first, as tune settles its arms; a static one is warmed for prewarm.
		lo := load.Options{Target: tg, Request: load.Request{KeepAlive: true}, Connections: conc,
			Duration: prewarm, Timeout: 10 * time.Second, SkipPreflight: true}
		if c.cfg.PM != "static" {
			if err := tune.Settle(ctx, st.Pools[0], lo, c.cfg.MaxChildren); err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
		} else if _, err := load.Run(ctx, lo); err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		lr, err := load.Run(ctx, load.Options{Target: tg, Request: load.Request{KeepAlive: true}, Connections: conc,
			Duration: trial - warm, Warmup: warm, Timeout: 10 * time.Second, SkipPreflight: true})
		if err != nil && lr == nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if lr.Errors > 0 {
			for cls, msg := range lr.ErrorSamples {
				return fmt.Errorf("%s: %d errors (%s: %s)", c.cfg, lr.Errors, cls, msg)
			}
		}
		c.rps = append(c.rps, lr.RPS)
		return nil
	}
	for r := 0; r < rounds; r++ {
		for i := range cells {
			// Rotated, so that no arm always follows the same one.
			if err := measure(cells[(i+r)%len(cells)]); err != nil {
				return "", err
			}
		}
		fmt.Printf("%s: grid round %d of %d done after %s\n", a.name, r+1, rounds, time.Since(gridStart).Round(time.Second))
	}
	gridTook := time.Since(gridStart)
	sort.Slice(cells[1:], func(i, j int) bool { return stats.Median(cells[1+i].rps) > stats.Median(cells[1+j].rps) })
	best := cells[1]
	recRPS := stats.Median(cells[0].rps)
	for _, c := range cells[1:] {
		if c.cfg.String() == recCfg.String() {
			recRPS = stats.Median(c.rps)
		}
	}
	if stats.Median(cells[0].rps) > stats.Median(best.rps) {
		best = cells[0]
	}
	fmt.Printf("%s: top of the grid:", a.name)
	for _, c := range cells[1:min(6, len(cells))] {
		fmt.Printf("  %s/%d %.0f", c.cfg.PM, c.cfg.MaxChildren, stats.Median(c.rps))
	}
	fmt.Println()
	return fmt.Sprintf("%-13s recommendation %s/%d %.0f req/s, grid best %s/%d %.0f req/s: rec/best %.3f; tune %s, grid %s: tune/grid time %.2f",
		a.name, rec.PM, rec.MaxChildren, recRPS, best.cfg.PM, best.cfg.MaxChildren, stats.Median(best.rps), recRPS/stats.Median(best.rps),
		took.Round(time.Second), gridTook.Round(time.Second), took.Seconds()/gridTook.Seconds()), nil
}

// gridSizes are the pool sizes the grid tries up to top: every one with full, else every one to 16, every
// second to 32 and every fourth beyond (neighbours at most 12.5% apart, where throughput changes slowly).
func gridSizes(top int, full bool) []int {
	var out []int
	for n := 1; n <= top; n++ {
		if full || n <= 16 || (n <= 32 && n%2 == 0) || n%4 == 0 {
			out = append(out, n)
		}
	}
	return out
}

// agreement runs tune twice on the demo app and compares the better/worse verdicts knob by knob.
func agreement(ctx context.Context, bin, work string, budget time.Duration) (string, error) {
	var runs []*tune.Result
	for i := 1; i <= 2; i++ {
		fmt.Printf("demo: tune run %d of 2, --budget %s\n", i, budget)
		res, _, err := tuneRun(ctx, bin, "demo", filepath.Join(work, fmt.Sprintf("demo-%d", i)), "--budget", budget.String())
		if err != nil {
			return "", err
		}
		runs = append(runs, res)
	}
	verdicts := func(r *tune.Result) map[string]string {
		m := map[string]string{}
		for _, k := range r.Knobs {
			m[k.Name] = string(k.Verdict) + " " + k.Value
		}
		return m
	}
	a, b := verdicts(runs[0]), verdicts(runs[1])
	var names []string
	for n := range a {
		names = append(names, n)
	}
	sort.Strings(names)
	agree, decided := true, 0
	var diffs []string
	for _, n := range names {
		va, vb := a[n], b[n]
		fmt.Printf("demo: %-20s run 1: %-28s run 2: %s\n", n, va, vb)
		if strings.HasPrefix(va, "better") || strings.HasPrefix(va, "worse") || strings.HasPrefix(vb, "better") || strings.HasPrefix(vb, "worse") {
			decided++
			if va != vb {
				agree = false
				diffs = append(diffs, fmt.Sprintf("%s (%s / %s)", n, va, vb))
			}
		}
	}
	if agree {
		return fmt.Sprintf("demo          every better/worse verdict agrees between two runs (%d knobs decided)", decided), nil
	}
	return fmt.Sprintf("demo          verdicts DISAGREE between two runs: %s", strings.Join(diffs, "; ")), nil
}
