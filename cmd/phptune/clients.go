package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/clients"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stats"
)

type clientsFlags struct {
	targets, tarantoolOps, redisOps, models  []string
	fibers, procs, depths                    []int
	revs, iterations, warmup, retryLimit     int
	sweepIterations, sweepRevs               int
	pause                                    time.Duration
	retryThreshold, minEffect, alpha         float64
	sequential, noPhpredis, json, neighbours bool
	out, php                                 string
	tarantoolPort, redisPort                 int
}

func newClientsCmd() *cobra.Command {
	var f clientsFlags
	cmd := &cobra.Command{
		Use:   "clients",
		Short: "Measure concurrency models for PHP client code against private Tarantool and Redis servers",
		Long: `Measure how much faster I/O-bound PHP client code gets with Fibers, forked processes, both, or
pipelining, against a private Tarantool and Redis that phptune starts on loopback (Debian packages tarantool and
redis-server) and stops. The PHP side is phptune's own IPROTO and RESP clients (ext-msgpack: php8.2-msgpack),
written once to run blocking or inside Fibers under a stream_select scheduler; phpredis (php8.2-redis) is the
C baseline for Redis.

Models: sync (one connection), fibers (N Fibers, N swept over --fibers), processes (P forked after start,
each connecting after the fork; P swept over --procs), processes+fibers (P x the best N), pipeline (D requests
per round trip, swept over --depth). Every decision is the experiment engine's (as in tune and compare): a
sweep races its candidates for --sweep-iterations rounds (one clearly slower is dropped early); its pick, a
noisy maximum, is raced against its neighbours in the sweep list in fresh rounds (--neighbours=false: not) and
the winner, marked *, is compared with sync in fresh rounds again, so that no speedup is rated on the data it
was chosen on. Swoole coroutines and ext-parallel threads appear as "not available here" without their
extensions.

phpbench's vocabulary: each iteration runs --revs revolutions (split among the workers) in a fresh php -n with
only the extensions needed and GC off; --warmup revolutions first, untimed; --pause before each iteration.
Connections open before the timed region and workers start behind a barrier. The arms run in interleaved
rounds in balanced orders; each model's pick is compared with sync from --iterations paired rounds: the
speedup, its interval and a verdict (faster or slower by at least --min-effect, no_difference within it,
inconclusive), within one error budget (--alpha) for the whole run. --retry-threshold PCT re-runs an iteration deviating from its arm's mean by
at least PCT%, up to --retry-limit times per arm (off by default when interleaved, 5% with --sequential;
retries are reported). --sequential runs each arm's iterations back to back and pairs them by index.

Operations: tarantool select, insert, replace, update, upsert, delete, sql_select, sql_insert, sql_replace,
sql_update, sql_delete (SQL through execute), sleep (a 10 ms server-side call), check (insert, select,
update, select, delete, each answer checked); redis get, set, incr, check. Every reply is checked.
The space holds 10,000 tuples {id, 'tuple_' .. id}, reset before each iteration; keys are random.

Exit codes: 0 ok, 1 a model failed (its error is in its row; the others are reported), 2 bad input or a
missing package, 130 interrupted (every process stopped, the rows so far kept, marked partial).`,
		Example: `  phptune clients                                  # Tarantool select and Redis get, every model
  phptune clients --target tarantool --tarantool-ops select,update,sql_select --fibers 10,25,50
  phptune clients --revs 2000 --iterations 6 --pause 0 --json > clients.json
  phptune clients --out results/clients             # result.json and chart.html`,
		Args: cobra.NoArgs,
		RunE: run(func(cmd *cobra.Command, args []string) error {
			// phpbench's retry threshold suits back-to-back iterations; interleaved rounds leave it off.
			if f.sequential && !cmd.Flags().Changed("retry-threshold") {
				f.retryThreshold = 5
			}
			return runClients(cmd.Context(), f)
		}),
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.targets, "target", []string{clients.Tarantool, clients.Redis}, "servers to measure: tarantool, redis")
	fl.StringSliceVar(&f.tarantoolOps, "tarantool-ops", []string{"select"}, "Tarantool operations (see above)")
	fl.StringSliceVar(&f.redisOps, "redis-ops", []string{"get"}, "Redis operations: get, set, incr, check")
	fl.StringSliceVar(&f.models, "models", clients.Models, "models to run (sync always runs: it is the reference)")
	fl.IntSliceVar(&f.fibers, "fibers", []int{5, 10, 25, 50, 100}, "Fibers per process to sweep (N)")
	fl.IntSliceVar(&f.procs, "procs", []int{2, 4, 8}, "processes to sweep (P)")
	fl.IntSliceVar(&f.depths, "depth", []int{10, 25, 100}, "pipeline depths to sweep (D)")
	fl.IntVar(&f.revs, "revs", 10000, "revolutions per iteration, split among the workers")
	fl.IntVar(&f.iterations, "iterations", 10, "iterations (rounds) of the main run, and the most of a pick's race with its neighbours (at least 6 for a median's CI)")
	fl.IntVar(&f.warmup, "warmup", 200, "warm-up revolutions per iteration (untimed)")
	fl.DurationVar(&f.pause, "pause", time.Second, "pause before each iteration")
	fl.IntVar(&f.sweepIterations, "sweep-iterations", 3, "iterations per candidate in the sweeps")
	fl.IntVar(&f.sweepRevs, "sweep-revs", 0, "revolutions per sweep iteration (default: --revs)")
	fl.Float64Var(&f.retryThreshold, "retry-threshold", 0, "re-run iterations deviating from the mean by at least this % (0: off; default 0, or 5 with --sequential)")
	fl.IntVar(&f.retryLimit, "retry-limit", 10, "most retries per arm")
	fl.BoolVar(&f.sequential, "sequential", false, "run each arm's iterations back to back instead of interleaved")
	fl.BoolVar(&f.neighbours, "neighbours", true, "re-measure each sweep's pick beside its neighbours in the main run")
	fl.Float64Var(&f.minEffect, "min-effect", 3, "smallest change in % that counts as faster or slower; no_difference means within it")
	fl.Float64Var(&f.alpha, "alpha", stats.DefaultAlpha, "error budget of the run: the chance, at most, that any verdict is wrong")
	fl.BoolVar(&f.noPhpredis, "no-phpredis", false, "leave out the phpredis rows")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/clients/v1) instead of the table")
	fl.StringVar(&f.out, "out", "", "also write result.json and chart.html into this directory")
	fl.StringVar(&f.php, "php", "php", "the PHP CLI binary")
	fl.IntVar(&f.tarantoolPort, "tarantool-port", 0, "loopback port for the private Tarantool (0: a free one)")
	fl.IntVar(&f.redisPort, "redis-port", 0, "loopback port for the private Redis (0: a free one)")
	return cmd
}

func runClients(ctx context.Context, f clientsFlags) error {
	cfg := clients.Config{
		Targets: f.targets, Ops: map[string][]string{clients.Tarantool: f.tarantoolOps, clients.Redis: f.redisOps},
		Models: f.models, Revs: f.revs, Iterations: f.iterations, Warmup: f.warmup, Pause: f.pause,
		RetryThreshold: f.retryThreshold, RetryLimit: f.retryLimit, Sequential: f.sequential,
		Fibers: f.fibers, Procs: f.procs, Depths: f.depths, SweepIterations: f.sweepIterations,
		SweepRevs: f.sweepRevs, Neighbours: f.neighbours, MinEffect: f.minEffect / 100, Alpha: f.alpha, Phpredis: !f.noPhpredis, Seed: time.Now().UnixNano() % 1e9,
		Ports: map[string]int{clients.Tarantool: f.tarantoolPort, clients.Redis: f.redisPort},
	}
	if cfg.SweepRevs == 0 {
		cfg.SweepRevs = cfg.Revs
	}
	if err := cfg.Validate(); err != nil {
		return exitcode.UsageErrorf("%v", err)
	}
	for _, p := range []int{f.tarantoolPort, f.redisPort} {
		if p < 0 || p > 65535 {
			return exitcode.UsageErrorf("port %d: want 1 to 65535, or 0 for a free one", p)
		}
	}
	if f.out != "" {
		release, err := openOut(f.out)
		if err != nil {
			return err
		}
		defer release()
	}
	php, err := clients.NewPHP(ctx, f.php)
	if err != nil {
		return err
	}
	defer php.Close()

	rep := &clients.Report{Schema: clients.Schema, Started: time.Now().UTC(), Command: os.Args, Settings: clients.SettingsOf(cfg)}
	rep.Environment.CPUs = runtime.NumCPU()
	rep.Environment.PHP = php.Version
	rep.Environment.Phpredis = php.Phpredis
	line := newStatusLine(os.Stderr)
	start := time.Now()
	cfg.Progress = func(s string) { line.set("clients: %s  %s", time.Since(start).Round(time.Second), s) }
	runErr := clients.Run(ctx, cfg, php, &rep.Outcome)
	line.clear()
	rep.Seconds = time.Since(start).Seconds()
	rep.Environment.Servers = rep.Servers
	if runErr != nil && len(rep.Results) == 0 && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	rep.Partial = runErr != nil
	end := ending{dir: f.out, json: f.json, holds: "result.json, chart.html", text: func(w io.Writer) { clients.Table(w, rep) },
		pages: func(dir string) error { return writeClientsChart(dir, rep) }}
	if err := end.finish(rep); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	var failed []string
	for _, r := range rep.Results {
		if r.Error != "" {
			failed = append(failed, r.Target+" "+r.Op+" "+r.Label())
		}
	}
	if len(failed) > 0 {
		return exitcode.WithCode(exitcode.Failed, fmt.Errorf("%d arm(s) failed: %s", len(failed), strings.Join(failed, ", ")))
	}
	return nil
}

func writeClientsChart(dir string, rep *clients.Report) error {
	var h bytes.Buffer
	if err := clients.HTML(&h, rep); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "chart.html"), h.Bytes())
}
