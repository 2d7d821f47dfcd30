package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/compare"
)

// CompareTunes writes a comparison of tune runs: each run's recommendation, the knobs side by side with
// whether the runs agree, then the recommendations' throughput compared as compare does.
func CompareTunes(w io.Writer, r *compare.TuneReport) {
	fmt.Fprintf(w, "Comparing tune runs against %s\n", r.Runs[0].Name)
	for _, run := range r.Runs {
		partial := ""
		if run.Partial {
			partial = " PARTIAL"
		}
		fmt.Fprintf(w, "  %-3s %s, %s%s: %s\n", run.Name, run.App, run.Started.Format("2006-01-02 15:04"), partial, run.Recommendation)
	}
	fmt.Fprintf(w, "\n  %-13s", "knob")
	for _, run := range r.Runs {
		fmt.Fprintf(w, " %-32s", run.Name)
	}
	fmt.Fprintf(w, " %s\n", "agree")
	for _, k := range r.Knobs {
		fmt.Fprintf(w, "  %-13s", k.Name)
		for i := range r.Runs {
			cell := "(not decided)"
			if k.Present[i] {
				v := string(k.Verdicts[i])
				if v == "" {
					v = "no comparison"
				}
				cell = unset(k.Values[i]) + " (" + v + ")"
			}
			fmt.Fprintf(w, " %-32s", cell)
		}
		agree := "yes"
		if !k.Agree {
			agree = "NO"
		}
		fmt.Fprintf(w, " %s\n", agree)
	}
	switch {
	case r.Agree && r.SameRecommendation:
		fmt.Fprintf(w, "\n  The runs agree on every knob: the same recommendation.\n")
	case r.Agree:
		fmt.Fprintf(w, "\n  The runs agree on every knob they decided.\n")
	default:
		var differ []string
		for _, k := range r.Knobs {
			if !k.Agree {
				differ = append(differ, k.Name)
			}
		}
		fmt.Fprintf(w, "\n  The runs disagree on %s.\n", strings.Join(differ, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if r.Throughput != nil {
		fmt.Fprintf(w, "\nThe recommendations' throughput (each run's final trials of its recommendation):\n")
		Compare(w, r.Throughput)
	}
}
