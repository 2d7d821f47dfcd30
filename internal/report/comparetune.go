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
		fmt.Fprintf(w, " %-44s", run.Name)
	}
	fmt.Fprintf(w, " %s\n", "agree")
	for _, k := range r.Knobs {
		fmt.Fprintf(w, "  %-13s", k.Name)
		for i := range r.Runs {
			cell := "(not decided)"
			if k.Present[i] {
				v := string(k.Verdicts[i])
				if !k.Decided[i] {
					v = "not compared"
					if n := k.Notes[i]; n != "" {
						v = strings.TrimPrefix(strings.SplitN(n, ":", 2)[0], "not decided")
						v = strings.TrimSpace("not decided" + v)
					}
				}
				if c := strings.TrimPrefix(k.Compared[i], k.Name+"="); k.Decided[i] && c != "" {
					v = c + ": " + v // the verdict is the candidate's: "off vs on: worse"
				}
				cell = unset(k.Values[i]) + " (" + v + ")"
			}
			fmt.Fprintf(w, " %-44s", cell)
		}
		agree := "yes"
		if !k.Agree {
			agree = "NO"
		} else {
			var undecided []string
			for i, d := range k.Decided {
				if !d {
					undecided = append(undecided, r.Runs[i].Name)
				}
			}
			if len(undecided) > 0 {
				agree = "yes, but not compared in " + strings.Join(undecided, ", ")
			}
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
