package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/report"
)

// reportFlags are report's flags.
type reportFlags struct{ out string }

func newReportCmd(s *streams, runF runFunc[reportFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runReport
	}
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "Render a saved result as report.html, one self-contained page",
		Long: `Renders a saved result as one HTML file that works offline (charts as inline SVG, nothing loaded from
anywhere): tune's result.json (schema phptune/tune/v1), bench's (phptune/bench/v1), build's (phptune/build/v1),
check's (phptune/check/v1) or compare's compare.json. tune, build and check write this page into their run dirs
themselves; this re-renders it.`,
		Example: `  phptune report phptune-results/tune-20260101-120000/result.json
  phptune report bench/result.json --out bench.html
  phptune report phptune-results/build-20260101-120000/result.json
  phptune compare tune-a/result.json tune-b/result.json --out cmp && phptune report cmp/compare.json`,
		Args: cli.Args(1, 1, "RESULT.json, a result written by tune, bench, build or compare"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cli.LearnMore(cmd, `docs/report.md (what each section shows, the intervals' level)`)
	cmd.Flags().StringVar(&f.out, "out", "", "write the page to this `FILE` (default: report.html beside RESULT.json)")
	return cmd
}

func (s *streams) runReport(_ context.Context, f reportFlags, args []string) error {
	path, out := args[0], f.out
	data, err := os.ReadFile(path)
	if err != nil {
		return exitcode.UsageErrorf("read result: %v", err)
	}
	if out == "" {
		out = filepath.Join(filepath.Dir(path), "report.html")
	}
	if err := savePage(out, func(w io.Writer) error { return report.Saved(w, path, data) }); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "report: %s\n", out)
	return nil
}
