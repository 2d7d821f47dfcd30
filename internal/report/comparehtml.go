package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/phptune/phptune/internal/compare"
)

type comparePage struct {
	Title  string
	R      *compare.Report
	T      *compare.TuneReport // set for a comparison of tune runs
	Cells  [][]tuneCell        // T's knobs, a cell a run
	Charts []*chart
}

// CompareHTML writes a page for a comparison: each arm's metrics against the baseline with their CIs and
// verdicts, as a table and a chart.
func CompareHTML(w io.Writer, r *compare.Report) error {
	return renderCompare(w, comparePage{Title: "phptune compare", R: r})
}

// CompareTunesHTML writes a page for a comparison of tune runs: the knobs side by side, then the
// recommendations' throughput and latency.
func CompareTunesHTML(w io.Writer, t *compare.TuneReport) error {
	return renderCompare(w, comparePage{Title: "phptune compare: tune runs", R: t.Throughput, T: t, Cells: tuneCells(t)})
}

func renderCompare(w io.Writer, p comparePage) error {
	if p.R != nil && len(p.R.Arms) > 0 {
		if c := compareChart(p.R); c != nil {
			if !p.R.Paired {
				c.Caption = "Independent samples: each change with its 95% interval; the verdicts adjusted for every comparison " +
					"(the methods are docs/compare.md's)."
			} else {
				c.Caption = fmt.Sprintf("Interleaved pairs: each change from the ratios within each round, with its interval; all "+
					"verdicts hold together at %s confidence (--alpha %.2g).", pctLevel(1-p.R.Alpha), p.R.Alpha)
			}
			p.Charts = append(p.Charts, c)
		}
	}
	var buf bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&buf, "compare.tmpl", p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// compareChart is a forest plot of every metric of every arm against the baseline.
func compareChart(r *compare.Report) *chart {
	var rows []forestRow
	for _, a := range r.Arms[1:] {
		for _, row := range a.Rows {
			if row.Stats == nil {
				continue
			}
			name := row.Metric
			if name == "rps" {
				name = "req/s"
			}
			label := fmt.Sprintf("%s %s", a.Name, name)
			tip := fmt.Sprintf("%s against %s: %s (interval %s to %s), %s, p %.3g (%.3g adjusted), n %d", label, r.Arms[0].Name, signedPct(100*row.Stats.Estimate),
				signedPct(100*row.Stats.Lo), signedPct(100*row.Stats.Hi), verdictText(row.Verdict), row.Stats.P, row.Stats.PAdjusted, row.Stats.N)
			s := *row.Stats
			s.Verdict = row.Verdict
			rows = append(rows, forestRow{Label: label, S: s, Tip: tip})
		}
	}
	return forestChart("compare", "Change against "+r.Arms[0].Name, "change against the baseline (95% CI); lower latency is better", rows)
}
