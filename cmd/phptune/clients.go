package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/cli"
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

func newClientsCmd(s *streams, runF runFunc[clientsFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runClients
	}
	var f clientsFlags
	cmd := &cobra.Command{
		Use:   "clients",
		Short: "Measure concurrency models for PHP client code against private Tarantool and Redis servers",
		Long: `Measures how much faster I/O-bound PHP client code gets with Fibers, forked processes, both, or pipelining,
against a private Tarantool and Redis that phptune starts on loopback and stops. Each model's sweep (--fibers,
--procs, --depth) is raced in interleaved rounds, its pick raced again beside its neighbours, and the winner
compared with sync (one connection) in fresh rounds: the speedup, its interval and a verdict, within one error
budget (--alpha). Exit 1 when a model failed (its row says why; the others are reported).

NEEDS
tarantool, redis-server, php8.2-cli, php8.2-msgpack; php8.2-redis for the phpredis rows (apt-get install
tarantool redis-server php8.2-msgpack php8.2-redis; no service of theirs is used).

OPERATIONS
tarantool: select, insert, replace, update, upsert, delete, sql_select, sql_insert, sql_replace, sql_update,
sql_delete, sleep (a 10 ms server-side call), check; redis: get, set, incr, check. Every reply is checked.`,
		Example: `  phptune clients                                  # Tarantool select and Redis get, every model
  phptune clients --target tarantool --tarantool-ops select,update,sql_select --fibers 10,25,50
  phptune clients --revs 2000 --iterations 6 --pause 0 --json > clients.json
  phptune clients --out results/clients             # result.json and chart.html`,
		Args: cli.Args(0, 0, ""),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			// phpbench's retry threshold suits back-to-back iterations; interleaved rounds leave it off.
			if f.sequential && !cmd.Flags().Changed("retry-threshold") {
				f.retryThreshold = 5
			}
			return runF(cmd.Context(), f, args)
		}),
	}
	cli.LearnMore(cmd, `docs/clients.md (the models, phpbench's vocabulary, the statistics)`)
	fl := cmd.Flags()
	fl.StringSliceVar(&f.targets, "target", []string{clients.Tarantool, clients.Redis}, "`SERVERS` to measure: tarantool, redis")
	fl.StringSliceVar(&f.tarantoolOps, "tarantool-ops", []string{"select"}, "Tarantool `OPERATIONS` (see above)")
	fl.StringSliceVar(&f.redisOps, "redis-ops", []string{"get"}, "Redis `OPERATIONS`: get, set, incr, check")
	fl.StringSliceVar(&f.models, "models", clients.Models, "`MODELS` to run (sync always runs: it is the reference)")
	fl.IntSliceVar(&f.fibers, "fibers", []int{5, 10, 25, 50, 100}, "Fibers per process to sweep (N)")
	fl.IntSliceVar(&f.procs, "procs", []int{2, 4, 8}, "forked processes to sweep (P)")
	fl.IntSliceVar(&f.depths, "depth", []int{10, 25, 100}, "pipeline depths to sweep (D)")
	cli.FlagGroup(fl, "WHAT TO MEASURE", "target", "tarantool-ops", "redis-ops", "models", "fibers", "procs", "depth")
	fl.IntVar(&f.revs, "revs", 10000, "revolutions per iteration, split among the workers")
	fl.IntVar(&f.iterations, "iterations", 10, "iterations (rounds) of the main run, and the most of a pick's race with its neighbours (at least 6)")
	fl.IntVar(&f.warmup, "warmup-revs", 200, "warm-up revolutions per iteration (untimed)")
	cli.DeprecatedAlias(fl, "warmup", "warmup-revs")
	fl.DurationVar(&f.pause, "pause", time.Second, "pause before each iteration")
	fl.IntVar(&f.sweepIterations, "sweep-iterations", 3, "iterations per candidate in the sweeps")
	fl.IntVar(&f.sweepRevs, "sweep-revs", 0, "revolutions per sweep iteration (default: --revs)")
	fl.Float64Var(&f.retryThreshold, "retry-threshold", 0, "re-run iterations deviating from the mean by at least this % (default 0: off; 5 with --sequential)")
	fl.IntVar(&f.retryLimit, "retry-limit", 10, "most retries per arm")
	fl.BoolVar(&f.sequential, "sequential", false, "run each arm's iterations back to back instead of interleaved")
	fl.BoolVar(&f.neighbours, "neighbours", true, "race each sweep's pick beside its neighbours in the main run")
	fl.Float64Var(&f.minEffect, "min-effect", defaultMinEffectPct, minEffectUsage)
	fl.Float64Var(&f.alpha, "alpha", stats.DefaultAlpha, alphaUsage)
	cli.FlagGroup(fl, "HOW LONG AND HOW SURE", "revs", "iterations", "warmup-revs", "pause", "sweep-iterations", "sweep-revs",
		"retry-threshold", "retry-limit", "sequential", "neighbours", "min-effect", "alpha")
	fl.BoolVar(&f.noPhpredis, "no-phpredis", false, "leave out the phpredis rows")
	fl.StringVar(&f.php, "php", "php", "the PHP CLI `BINARY`")
	fl.IntVar(&f.tarantoolPort, "tarantool-port", 0, "loopback port for the private Tarantool (default: a free one)")
	fl.IntVar(&f.redisPort, "redis-port", 0, "loopback port for the private Redis (default: a free one)")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/clients/v1) instead of the table")
	fl.StringVar(&f.out, "out", "", "also write result.json and chart.html into this `DIR`")
	return cmd
}

func (s *streams) runClients(ctx context.Context, f clientsFlags, _ []string) error {
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
	php, err := clients.NewPHP(ctx, f.php)
	if err != nil {
		return err
	}
	defer php.Close()
	release, err := cli.OpenOut(f.out)
	if err != nil {
		return err
	}
	defer release()

	rep := clients.NewReport(cfg, php, s.argv)
	line := cli.NewStatusLine(s.err)
	start := time.Now()
	cfg.Progress = func(s string) { line.Set("clients: %s  %s", time.Since(start).Round(time.Second), s) }
	runErr := clients.Run(ctx, cfg, php, &rep.Outcome)
	line.Clear()
	rep.Seconds = time.Since(start).Seconds()
	rep.Environment.Servers = rep.Servers
	if runErr != nil && len(rep.Results) == 0 && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	rep.Partial = runErr != nil
	end := ending{out: s.out, dir: f.out, json: f.json, holds: "result.json, chart.html", text: func(w io.Writer) { clients.Table(w, rep) },
		page: func(w io.Writer) error { return clients.HTML(w, rep) }, pageName: "chart.html"}
	if err := end.finish(rep); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if failed := rep.Failed(); len(failed) > 0 {
		return exitcode.WithCode(exitcode.Failed, fmt.Errorf("%d arm(s) failed: %s", len(failed), strings.Join(failed, ", ")))
	}
	return nil
}
