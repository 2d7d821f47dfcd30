package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/k6"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/report"
)

func newExportCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "export",
		Short:   "Write a test for another tool to run (k6 on Kubernetes)",
		Example: "  phptune export k6 http://shop.staging:8080/ -c 200 -d 5m --parallelism 4 --out k6-test",
	}
	cmd.AddCommand(newExportK6Cmd(s, nil))
	return cmd
}

// exportFlags are export k6's flags: the load's, and where the test goes.
type exportFlags struct {
	load        benchFlags
	out, name   string
	parallelism int
}

func newExportK6Cmd(s *streams, runF runFunc[exportFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runExportK6
	}
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "k6 TARGET --out DIR",
		Short: "Write the k6 script phptune would run and a k6-operator TestRun for it",
		Long: `Writes the load that phptune bench --engine k6 would send (the URL mix with its weights, methods, headers,
bodies and content markers; -c as constant VUs, --rate as a constant arrival rate, the warm-up as a scenario
whose points are not counted) into DIR: script.js (runs as is with k6 run), testrun.yaml (a ConfigMap and a
k6-operator TestRun of --parallelism runners) and collect.sh (saves each runner's output into out/). Then:
  kubectl apply -f DIR/testrun.yaml && sh DIR/collect.sh && phptune ingest k6 out/*.json --out result`,
		Example: `  phptune export k6 http://shop.staging:8080/ --url /=8 --url /search?q=x=1 -c 200 -d 5m --parallelism 4 --out k6-test`,
		Args:    cli.Args(1, 1, "TARGET, the http:// address the runners load"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			f.load.durationSet = cmd.Flags().Changed("duration")
			return runF(cmd.Context(), f, args)
		}),
	}
	cli.LearnMore(cmd, `docs/k6.md (the script, instances on other hosts over ssh, Kubernetes)`)
	fl := cmd.Flags()
	registerLoadFlags(fl, &f.load)
	fl.StringVar(&f.out, "out", "", "write script.js, testrun.yaml and collect.sh into this `DIR` (required)")
	fl.StringVar(&f.name, "name", "phptune-k6", "the TestRun's and ConfigMap's `NAME`")
	fl.IntVar(&f.parallelism, "parallelism", 1, "k6-operator runners to split the test among")
	cli.FlagGroup(fl, "OUTPUT", "out", "name", "parallelism")
	return cmd
}

func (s *streams) runExportK6(ctx context.Context, f exportFlags, args []string) error {
	out, name, parallelism := f.out, f.name, f.parallelism
	if out == "" {
		return exitcode.UsageErrorf("export k6: give --out DIR")
	}
	if parallelism < 1 {
		return exitcode.UsageErrorf("--parallelism %d: want at least 1", parallelism)
	}
	f.load.engine.engine, f.load.engine.instances = "phptune", 1 // the script is written, not run here
	o, err := f.load.options(ctx, args[0], s.err)
	if err != nil {
		return err
	}
	if err := load.Check(&o); err != nil {
		return err
	}
	if o.Connections < parallelism {
		return exitcode.UsageErrorf("--parallelism %d: more runners than the %d VUs (-c) to share among them", parallelism, o.Connections)
	}
	script, err := k6.Script(&o)
	if err != nil {
		return err
	}
	release, err := cli.OpenOut(out)
	if err != nil {
		return err
	}
	defer release()
	if err := k6.Export(out, name, script, parallelism); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "export k6: %s/script.js, testrun.yaml (%d runners), collect.sh\n", out, parallelism)
	return nil
}

func newIngestCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ingest",
		Short:   "Read another tool's raw output into a phptune result (k6)",
		Example: "  phptune ingest k6 out/*.json --out result",
	}
	cmd.AddCommand(newIngestK6Cmd(s, nil))
	return cmd
}

type ingestFlags struct {
	out, scenario, expectStatus, target string
	timeout                             time.Duration
	json                                bool
}

func newIngestK6Cmd(s *streams, runF runFunc[ingestFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runIngestK6
	}
	var f ingestFlags
	cmd := &cobra.Command{
		Use:   "k6 FILE...",
		Short: "Merge k6 instances' raw outputs (k6 run --out json) into one bench result",
		Long: `Reads the raw points of one k6 test's instances (k6 run --out json=FILE, plain or .gz; the runners' logs as
collect.sh saves them) into one bench result (schema phptune/bench/v1) that compare and report take: requests
and errors by class summed, latency percentiles from one merged HDR histogram, dropped iterations counted as
unsent requests. Lines that are not points (k6's log) are counted and skipped. Outputs of scripts phptune
wrote count their measured phase; other scripts' count every scenario, or the one --scenario names.`,
		Example: `  phptune ingest k6 out/*.json --out result && phptune report result/result.json`,
		Args:    cli.Args(1, -1, "FILE..., the k6 outputs (k6 run --out json=FILE)"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			return runF(cmd.Context(), f, args)
		}),
	}
	cli.LearnMore(cmd, `docs/k6.md (the script, instances on other hosts over ssh, Kubernetes)`)
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "a script not written by phptune: count this `SCENARIO`'s points only (default: every one)")
	fl.StringVar(&f.expectStatus, "expect-status", "", "accepted `STATUSES`, e.g. 200 or 200,301-302 (default: 1xx-3xx)")
	fl.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, "the test's per-request timeout, the latency histogram's range "+
		"(k6's own default is 60s: give it for scripts phptune did not write)")
	fl.StringVar(&f.target, "target-name", "k6", "the target's `NAME` in the result")
	cli.DeprecatedAlias(fl, "target", "target-name")
	cli.FlagGroup(fl, "INPUT", "scenario", "expect-status", "timeout", "target-name")
	fl.StringVar(&f.out, "out", "", "write result.json into this `DIR`")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/bench/v1) instead of the summary")
	cli.FlagGroup(fl, "OUTPUT", "out", "json")
	return cmd
}

func (s *streams) runIngestK6(_ context.Context, f ingestFlags, files []string) error {
	o := load.Options{Target: load.Target{Raw: f.target, Protocol: load.HTTP}, Timeout: f.timeout, Connections: 1, Duration: time.Second}
	if f.expectStatus != "" {
		var err error
		if o.ExpectStatus, err = load.ParseStatuses(f.expectStatus); err != nil {
			return err
		}
	}
	res, outs, err := k6.Ingest(files, &o, f.scenario)
	if err != nil {
		return err
	}
	release, err := cli.OpenOut(f.out)
	if err != nil {
		return err
	}
	defer release()
	if err := res.Encode(); err != nil {
		return err
	}
	end := ending{out: s.out, dir: f.out, json: f.json, text: func(w io.Writer) {
		for _, out := range outs {
			fmt.Fprintf(w, "  %s: %d requests over %s\n", out.Name, out.Requests, out.Window().Round(time.Millisecond))
		}
		report.Bench(w, res)
	}}
	return end.finish(res)
}
