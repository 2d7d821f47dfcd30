package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/stats"
)

// Compare writes a comparison as a table per arm: figures side by side, the change, its interval, the p-value
// adjusted for the other comparisons and the verdict, in benchstat's spirit ("~" where no difference was shown).
// The methods are named in docs/compare.md, not here.
func Compare(w io.Writer, r *compare.Report) {
	base := r.Arms[0]
	how := "independent runs (unpaired)"
	if r.Paired {
		how = "interleaved trials, paired"
	}
	if r.Partial {
		fmt.Fprintf(w, "PARTIAL: interrupted, these are the results so far\n")
	}
	rule := fmt.Sprintf("verdicts need p < %.2g, adjusted for every comparison, and an effect of at least %.3g%%", r.Alpha, r.MinEffect*100)
	if r.Paired {
		rule = fmt.Sprintf("all verdicts hold together at %s confidence (--alpha %.2g), minimum effect %.3g%%", pctLevel(1-r.Alpha), r.Alpha,
			r.MinEffect*100)
	}
	writeWrapped(w, "", "  ", fmt.Sprintf("Comparing against %s: %s; %s", base.Name, how, rule), termWidth)
	for _, a := range r.Arms {
		writeWrapped(w, fmt.Sprintf("  %-3s ", a.Name), "      ", fmt.Sprintf("%s  (%d trial%s, %s requests, %s errors)", a.Target, a.Trials,
			plural(a.Trials), group(a.Requests), group(a.Errors)), termWidth)
	}
	for _, a := range r.Arms[1:] {
		ciHead, pHead := "95% interval", "p (adj.)"
		if r.Paired {
			ciHead = "interval"
		}
		fmt.Fprintf(w, "\n  %-8s %12s %12s %10s  %-22s %9s  %s\n", "metric", base.Name, a.Name, a.Name+" vs "+base.Name, ciHead, pHead, "verdict")
		for _, row := range a.Rows {
			name, bv, av := row.Metric, us(row.Baseline), us(row.Value)
			if row.Metric == "rps" {
				name, bv, av = "req/s", rate(row.Baseline), rate(row.Value)
			}
			// The change stated is the one the interval belongs to (of the trials, paired), when there is one;
			// else that of the merged figures.
			ci, p, verdict, change := "", "", "(no trials)", row.Diff
			if s := row.Stats; s != nil {
				change = s.Estimate
				ci = fmt.Sprintf("[%s, %s]", pct(s.Lo), pct(s.Hi))
				p = fmt.Sprintf("%.3g", s.PAdjusted)
				verdict = string(row.Verdict)
				switch row.Verdict {
				case stats.NoDifference:
					verdict = "~ no_difference"
				case stats.Inconclusive:
					verdict = fmt.Sprintf("? inconclusive (about %d rounds would decide)", s.RoundsNeeded)
				}
			}
			fmt.Fprintf(w, "  %-8s %12s %12s %10s  %-22s %9s  %s\n", name, bv, av, pct(change), ci, p, verdict)
		}
	}
	if len(r.Notes) > 0 || r.Winner != "" {
		fmt.Fprintln(w)
	}
	if r.Winner != "" {
		writeWrapped(w, "  ", "    ", fmt.Sprintf("race: %s is the pick (an arm shown slower than another left; the first keeps its place unless one is shown faster)", r.Winner), termWidth)
	}
	for _, n := range r.Notes {
		writeWrapped(w, "  ", "    ", "note: "+n, termWidth)
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
