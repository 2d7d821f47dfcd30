package main

import (
	"context"
	"fmt"
	"io"

	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/k6"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/report"
)

func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "export",
		Short:   "Write a test for another tool to run (k6 on Kubernetes)",
		Example: "  phptune export k6 http://shop.staging:8080/ -c 200 -d 5m --parallelism 4 --out k6-test",
	}
	cmd.AddCommand(newExportK6Cmd())
	return cmd
}

func newExportK6Cmd() *cobra.Command {
	var f benchFlags
	var out, name string
	var parallelism int
	cmd := &cobra.Command{
		Use:   "k6 TARGET --out DIR",
		Short: "Write the k6 script phptune would run and a k6-operator TestRun for it",
		Long: `Writes the load that phptune bench --engine k6 would send (the URL mix with its weights, methods, headers,
bodies and content markers; -c as constant VUs, --rate as a constant arrival rate, the warm-up as a scenario
whose points are not counted) into DIR: script.js (runs as is with k6 run), testrun.yaml (a ConfigMap and a
k6-operator TestRun of --parallelism runners) and collect.sh (saves each runner's output into out/). Then:
  kubectl apply -f DIR/testrun.yaml && sh DIR/collect.sh && phptune ingest k6 out/*.json --out result`,
		Example: `  phptune export k6 http://shop.staging:8080/ --url /=8 --url /search?q=x=1 -c 200 -d 5m --parallelism 4 --out k6-test`,
		Args:    args(1, 1, "TARGET, the http:// address the runners load"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			return runExportK6(cmd.Context(), f, args[0], out, name, parallelism, cmd.Flags().Changed("duration"))
		}),
	}
	learnMore(cmd, `docs/k6.md (the script, instances on other hosts over ssh, Kubernetes)`)
	fl := cmd.Flags()
	registerLoadFlags(fl, &f)
	fl.StringVar(&out, "out", "", "write script.js, testrun.yaml and collect.sh into this `DIR` (required)")
	fl.StringVar(&name, "name", "phptune-k6", "the TestRun's and ConfigMap's `NAME`")
	fl.IntVar(&parallelism, "parallelism", 1, "k6-operator runners to split the test among")
	flagGroup(fl, "OUTPUT", "out", "name", "parallelism")
	return cmd
}

func runExportK6(ctx context.Context, f benchFlags, target, out, name string, parallelism int, durationSet bool) error {
	if out == "" {
		return exitcode.UsageErrorf("export k6: give --out DIR")
	}
	if parallelism < 1 {
		return exitcode.UsageErrorf("--parallelism %d: want at least 1", parallelism)
	}
	f.engine.engine, f.engine.instances = "phptune", 1 // the script is written, not run here
	o, err := f.options(ctx, target, durationSet)
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
	release, err := openOut(out)
	if err != nil {
		return err
	}
	defer release()
	files := []struct {
		name, data string
	}{{"script.js", script}, {"testrun.yaml", k6.Manifests(name, script, parallelism)}, {"collect.sh", k6.Collect(name)}}
	for _, fl := range files {
		if err := writeAtomic(filepath.Join(out, fl.name), []byte(fl.data)); err != nil {
			return err
		}
	}
	fmt.Printf("export k6: %s/script.js, testrun.yaml (%d runners), collect.sh\n", out, parallelism)
	return nil
}

func newIngestCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ingest",
		Short:   "Read another tool's raw output into a phptune result (k6)",
		Example: "  phptune ingest k6 out/*.json --out result",
	}
	cmd.AddCommand(newIngestK6Cmd())
	return cmd
}

type ingestFlags struct {
	out, scenario, expectStatus, target string
	timeout                             time.Duration
	json                                bool
}

func newIngestK6Cmd() *cobra.Command {
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
		Args:    args(1, -1, "FILE..., the k6 outputs (k6 run --out json=FILE)"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			return runIngestK6(f, args)
		}),
	}
	learnMore(cmd, `docs/k6.md (the script, instances on other hosts over ssh, Kubernetes)`)
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "a script not written by phptune: count this `SCENARIO`'s points only (default: every one)")
	fl.StringVar(&f.expectStatus, "expect-status", "", "accepted `STATUSES`, e.g. 200 or 200,301-302 (default: 1xx-3xx)")
	fl.DurationVar(&f.timeout, "timeout", load.DefaultTimeout, "the test's per-request timeout, the latency histogram's range "+
		"(k6's own default is 60s: give it for scripts phptune did not write)")
	fl.StringVar(&f.target, "target-name", "k6", "the target's `NAME` in the result")
	deprecatedAlias(fl, "target", "target-name")
	flagGroup(fl, "INPUT", "scenario", "expect-status", "timeout", "target-name")
	fl.StringVar(&f.out, "out", "", "write result.json into this `DIR`")
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (schema phptune/bench/v1) instead of the summary")
	flagGroup(fl, "OUTPUT", "out", "json")
	return cmd
}

func runIngestK6(f ingestFlags, files []string) error {
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
	if f.out != "" {
		release, err := openOut(f.out)
		if err != nil {
			return err
		}
		defer release()
	}
	if err := res.Encode(); err != nil {
		return err
	}
	end := ending{dir: f.out, json: f.json, text: func(w io.Writer) {
		for _, out := range outs {
			fmt.Fprintf(w, "  %s: %d requests over %s\n", out.Name, out.Requests, out.Window().Round(time.Millisecond))
		}
		report.Bench(w, res)
	}}
	return end.finish(res)
}
