package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/stats"
)

// Compare writes a comparison as a table per arm: figures side by side, the change, its 95% CI, the
// Holm-adjusted p-value and the verdict, in benchstat's spirit ("~" where no difference was shown).
func Compare(w io.Writer, r *compare.Report) {
	base := r.Arms[0]
	how := "independent runs (unpaired)"
	if r.Paired {
		how = "interleaved trials, paired"
	}
	if r.Partial {
		fmt.Fprintf(w, "PARTIAL: interrupted, these are the results so far\n")
	}
	fmt.Fprintf(w, "Comparing against %s: %s; verdicts need p < %.2g after Holm's correction and an effect of at least %.3g%%\n",
		base.Name, how, r.Alpha, r.MinEffect*100)
	for _, a := range r.Arms {
		fmt.Fprintf(w, "  %-3s %s  (%d trial%s, %s requests, %s errors)\n", a.Name, a.Target, a.Trials, plural(a.Trials), group(a.Requests), group(a.Errors))
	}
	for _, a := range r.Arms[1:] {
		fmt.Fprintf(w, "\n  %-8s %12s %12s %10s  %-22s %9s  %s\n", "metric", base.Name, a.Name, a.Name+" vs "+base.Name, "95% CI", "p (Holm)", "verdict")
		for _, row := range a.Rows {
			name, bv, av := row.Metric, us(row.Baseline), us(row.Value)
			if row.Metric == "rps" {
				name, bv, av = "req/s", rate(row.Baseline), rate(row.Value)
			}
			ci, p, verdict := "", "", "(no trials)"
			if s := row.Stats; s != nil {
				ci = fmt.Sprintf("[%s, %s]", pct(s.Lo), pct(s.Hi))
				p = fmt.Sprintf("%.3g", s.PAdjusted)
				verdict = string(row.Verdict)
				if row.Verdict == stats.NoDifference {
					verdict = "~ no_difference"
				}
			}
			fmt.Fprintf(w, "  %-8s %12s %12s %10s  %-22s %9s  %s\n", name, bv, av, pct(row.Diff), ci, p, verdict)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "\n  note: %s", n)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
	}
	if len(r.Order) > 0 {
		fmt.Fprintf(w, "\n  run order: %s\n", strings.Join(r.Order, " "))
	}
}

func pct(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
