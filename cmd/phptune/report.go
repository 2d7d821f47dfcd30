package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/check"
	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/tune"
)

func newReportCmd() *cobra.Command {
	var out string
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
		Args: args(1, 1, "RESULT.json, a result written by tune, bench, build or compare"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runReport(args[0], out) }),
	}
	learnMore(cmd, `docs/report.md (what each section shows, the intervals' level)`)
	cmd.Flags().StringVar(&out, "out", "", "write the page to this `FILE` (default: report.html beside RESULT.json)")
	return cmd
}

func runReport(path, out string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return exitcode.UsageErrorf("read result: %v", err)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return exitcode.UsageErrorf("%s: not a phptune result (%v): give a result.json written by phptune tune, bench or build", path, oneLine(err))
	}
	if out == "" {
		out = filepath.Join(filepath.Dir(path), "report.html")
	}
	var page bytes.Buffer
	switch head.Schema {
	case tune.Schema:
		var r tune.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, tune.Schema, oneLine(err))
		}
		if err := report.TuneHTML(&page, &r, tuneFiles(filepath.Dir(path), &r)); err != nil {
			return err
		}
	case load.SchemaBench:
		r, err := load.ReadResult(path)
		if err != nil {
			return err
		}
		if err := report.BenchHTML(&page, r); err != nil {
			return err
		}
	case compare.Schema:
		var r compare.Report
		if err := json.Unmarshal(data, &r); err != nil || len(r.Arms) == 0 {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, compare.Schema, errOr(err, "no arms"))
		}
		if err := report.CompareHTML(&page, &r); err != nil {
			return err
		}
	case compare.SchemaTune:
		var r compare.TuneReport
		if err := json.Unmarshal(data, &r); err != nil || len(r.Runs) == 0 {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, compare.SchemaTune, errOr(err, "no runs"))
		}
		if err := report.CompareTunesHTML(&page, &r); err != nil {
			return err
		}
	case check.Schema:
		var r check.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, check.Schema, oneLine(err))
		}
		if err := report.CheckHTML(&page, &r); err != nil {
			return err
		}
	case phpbuild.Schema:
		var r phpbuild.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return exitcode.UsageErrorf("%s: bad %s result: %v", path, phpbuild.Schema, oneLine(err))
		}
		if err := report.BuildHTML(&page, &r); err != nil {
			return err
		}
	default:
		return exitcode.UsageErrorf("%s: schema %q is not one phptune report renders (%s, %s, %s, %s, %s, %s)", path, head.Schema,
			tune.Schema, load.SchemaBench, compare.Schema, compare.SchemaTune, phpbuild.Schema, check.Schema)
	}
	if err := writeAtomic(out, page.Bytes()); err != nil {
		return err
	}
	fmt.Printf("report: %s\n", out)
	return nil
}

// writeTuneReport writes report.html into a tune run dir, beside result.json and the configuration files.
func writeTuneReport(dir string, r *tune.Result) error {
	var page bytes.Buffer
	if err := report.TuneHTML(&page, r, tuneFiles(dir, r)); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "report.html"), page.Bytes())
}

// tuneFiles are the run's configuration files by name with their contents: read from dir (where tune writes
// them, beside result.json) or from the path the result recorded; a value that is already the text is kept.
func tuneFiles(dir string, r *tune.Result) map[string]string {
	files := map[string]string{}
	for name, v := range r.Files {
		if strings.Contains(v, "\n") {
			files[name] = v
			continue
		}
		for _, p := range []string{filepath.Join(dir, filepath.Base(name)), v} {
			if b, err := os.ReadFile(p); err == nil {
				files[name] = string(b)
				break
			}
		}
	}
	return files
}

// oneLine keeps an error message to one line.
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func errOr(err error, msg string) string {
	if err != nil {
		return oneLine(err)
	}
	return msg
}
