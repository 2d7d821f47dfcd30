package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
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
		writeWrapped(w, fmt.Sprintf("  %-3s ", run.Name), "      ", fmt.Sprintf("%s, %s%s: %s", run.App, run.Started.Format("2006-01-02 15:04"), partial,
			shownConfig(run.Recommendation)), termWidth)
	}
	fmt.Fprintln(w)
	knobsSideBySide(w, r)
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
		fmt.Fprintln(w)
		writeWrapped(w, "  ", "  ", fmt.Sprintf("The runs disagree on %s.", strings.Join(differ, ", ")), termWidth)
	}
	for _, n := range r.Notes {
		writeWrapped(w, "  ", "    ", "note: "+n, termWidth)
	}
	if r.Throughput != nil {
		fmt.Fprintf(w, "\nThe recommendations' throughput (each run's final trials of its recommendation):\n")
		Compare(w, r.Throughput)
	}
}

// knobsSideBySide writes the knobs with each run's value and word on it, a column a run; when that is wider
// than a terminal line, a block a knob, a line a run.
func knobsSideBySide(w io.Writer, r *compare.TuneReport) {
	t := textTable{Head: []string{"knob"}, Max: []int{20}}
	for _, run := range r.Runs {
		t.Head, t.Max = append(t.Head, run.Name), append(t.Max, 40)
	}
	t.Head, t.Max = append(t.Head, "agree"), append(t.Max, 0)
	var blocks strings.Builder
	for _, k := range r.Knobs {
		row := textRow{Cells: []string{k.Name}}
		agree := agreeWord(r, k)
		fmt.Fprintf(&blocks, "  %s: the runs agree: %s\n", k.Name, agree)
		for i, run := range r.Runs {
			cell := "(not in this run)"
			if k.Present[i] {
				cell = knob.Shown(k.Name, k.Values[i]) + " (" + runCell(k, i) + ")"
			}
			row.Cells = append(row.Cells, cell)
			writeWrapped(&blocks, "    "+run.Name+"  ", "      ", cell, termWidth)
		}
		t.Rows = append(t.Rows, textRow{Cells: append(row.Cells, agree)})
	}
	var table strings.Builder
	t.write(&table, 2, termWidth)
	for _, line := range strings.Split(table.String(), "\n") {
		if textLen(line) > termWidth {
			io.WriteString(w, blocks.String())
			return
		}
	}
	io.WriteString(w, table.String())
}

// agreeWord says whether the runs agree on k, and where it was not compared.
func agreeWord(r *compare.TuneReport, k compare.KnobAgreement) string {
	if !k.Agree {
		return "NO"
	}
	var undecided []string
	for i, d := range k.Decided {
		if !d {
			undecided = append(undecided, r.Runs[i].Name)
		}
	}
	if len(undecided) > 0 {
		return "yes, but not compared in " + strings.Join(undecided, ", ")
	}
	return "yes"
}

// runCell is one run's word on a knob, about the value it kept: "better than off", or why it was not compared.
func runCell(k compare.KnobAgreement, i int) string {
	if !k.Decided[i] {
		return stateWord(k.Row(i).StateOf())
	}
	against, v := runVerdict(k, i)
	if against == "" {
		return verdictWord(v)
	}
	return keptPhrase(v, against)
}

// runVerdict is run i's verdict on the value it kept, and what that value was compared with.
func runVerdict(k compare.KnobAgreement, i int) (against string, v stats.Verdict) {
	against, _, v, _, _ = keptSide(k.Row(i))
	return against, v
}

// tuneCell is one run's value of a knob on the comparison page.
type tuneCell struct {
	Present, Decided bool
	Value, Word      string
	Verdict          stats.Verdict
}

// tuneCells are the page's cells: a row a knob, a cell a run, each about the value the run kept.
func tuneCells(r *compare.TuneReport) [][]tuneCell {
	var out [][]tuneCell
	for _, k := range r.Knobs {
		var row []tuneCell
		for i := range r.Runs {
			c := tuneCell{Present: k.Present[i], Decided: k.Decided[i], Value: knob.Shown(k.Name, k.Values[i])}
			if c.Present {
				c.Word = runCell(k, i)
				_, c.Verdict = runVerdict(k, i)
			}
			row = append(row, c)
		}
		out = append(out, row)
	}
	return out
}
