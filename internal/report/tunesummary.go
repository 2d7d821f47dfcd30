package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// TuneSummary writes tune's answer first, in about 30 lines: the recommendation's p99 where it is shown worse
// than the starting point's; a value ahead on goodput not taken for its p99, and what it traded; what to change,
// each from -> to with the change and interval that decided it; what was shown and kept; what was not decided and
// what would decide it; the recommendation against the starting point in one sentence; the apply command. The
// whole account (the sweep, the pool size's reasoning, memory, every knob's row) is Tune's: tune --verbose, and
// report.html. Its figures come from the same answer (AnswerOf), so the two cannot disagree.
func TuneSummary(w io.Writer, r *tune.Result) {
	a, say := tuneOpening(w, r)
	lines, h := a.Knobs, a.Headline
	base := a.Start
	fmt.Fprintln(w)
	changes, kept, open, unraced := sortLines(lines)
	if h != nil && h.Tail != nil && h.Tail.Warning != "" {
		say("  ", "    ", h.Tail.Warning) // first: a worse tail is what a reader must not miss
	}
	if traded := tradedLines(lines); len(traded) > 0 {
		say("  ", "    ", "Not taken for its p99: "+strings.Join(traded, "; ")+".")
	}
	if len(changes) == 0 {
		say("  ", "  ", fmt.Sprintf("Nothing to change: the run recommends %s as they are.", base))
	} else {
		say("  ", "  ", fmt.Sprintf("Change (from %s):", base))
		changeTable(changes).write(w, 4, termWidth)
		for _, n := range metricNotes(changes) {
			say("    ", "      ", n)
		}
		if p := r.Apply; p != nil && len(p.Changes) > 0 && len(p.Changes) <= maxFileLines {
			say("  ", "    ", "In the pool's files, as php-fpm will run it:")
			for _, l := range p.Effective() {
				say("    ", "      ", l)
			}
		}
	}
	if len(kept) > 0 {
		say("  ", "    ", "Shown and kept: "+strings.Join(kept, "; ")+".")
	}
	if counted := screenedNames(lines); len(counted) > 0 {
		say("  ", "    ", "Counted, not timed (screened), kept: "+strings.Join(counted, ", ")+": "+screenedSummary)
	}
	if len(open) > 0 {
		say("  ", "    ", "Not decided, the starting value kept: "+strings.Join(open, "; ")+".")
	}
	if len(unraced) > 0 {
		say("  ", "    ", "Not raced, the budget too short for them (a larger --budget races them): "+strings.Join(unraced, ", ")+".")
	}
	if s := headlineSentence(h); s != "" {
		say("  ", "    ", s)
	}
	if n := levelSentence(a); n != "" {
		say("  ", "    ", n)
	}
	if m := memoryUse(a); m != "" {
		say("  ", "    ", m)
	}
	if len(r.Warnings) > 0 {
		say("  ", "    ", fmt.Sprintf("%d warning(s), first: %s", len(r.Warnings), r.Warnings[0]))
	}
	if p := r.Apply; p != nil && len(changes) > 0 {
		dir := filepath.Dir(r.Files[apply.PoolName])
		fmt.Fprintln(w)
		say("  ", "    ", fmt.Sprintf("To apply (as root): %s, then %s; %s has every step and the way back.",
			p.Patch(dir), strings.Join(append(p.Check, p.Reload...), " && "), filepath.Join(dir, "apply.txt")))
	}
	say("  ", "    ", "The sweep, the pool size, memory and every knob's row: tune --verbose, or report.html.")
}

// startName is what the run started from: Debian's defaults, or the user's configuration.
func startName(r *tune.Result, h *headlineModel) string {
	switch {
	case h != nil && h.Baseline != "":
		return h.Baseline
	case r.Headline != nil && r.Headline.Baseline != "":
		return r.Headline.Baseline
	}
	return "Debian's defaults"
}

// maxFileLines is the most directive changes the summary lists; more are in apply.txt.
const maxFileLines = 6

// sortLines splits the rows: the values that change (from the start), the values shown and kept as they were, the
// knobs raced and left undecided with what would decide them, and those the budget could not race. A knob not
// tried (it does not apply here), kept where a value ahead of it was not taken for its p99 (tradedLines), or
// screened (screenedNames: counted, not timed), is in none.
func sortLines(lines []knobLine) (changes []knobLine, kept, open, unraced []string) {
	for _, l := range lines {
		switch {
		case l.Start != "":
			changes = append(changes, l)
		case l.Traded != "":
		case l.Change != nil && l.Verdict != stats.Inconclusive:
			kept = append(kept, fmt.Sprintf("%s %s (%s %s)", l.Name, l.Value, pctText(l.Change.Est), keptPhrase(l.Verdict, l.Against)))
		case l.Change == nil && l.Word == "not compared" && len(l.Details) > 0 && strings.HasPrefix(l.Details[0], "not raced"):
			unraced = append(unraced, l.Name+" "+l.Value)
		case l.Change == nil && l.Word == "not compared" && len(l.Details) > 0:
			why, _, _ := strings.Cut(l.Details[0], ";")
			open = append(open, l.Name+" "+l.Value+": "+why)
		case l.Verdict == stats.Inconclusive:
			open = append(open, l.Name+" "+l.Value+needOf(l))
		}
	}
	return changes, kept, open, unraced
}

// screenedSummary says in one sentence what a screened knob rests on: a count, no time and no verdict. Listed
// under "Shown and kept" it read as shown, a statistical verdict, where nothing was timed (issue 53).
const screenedSummary = "every candidate did the same instructions and system calls a request; no time was " +
	"measured and none of the error budget spent, so this is no verdict."

// screenedNames are the knobs (with the value kept) whose every candidate the screen counted doing the same work.
func screenedNames(lines []knobLine) []string {
	var out []string
	for _, l := range lines {
		if l.Verdict == tune.Screened && l.Start == "" {
			out = append(out, l.Name+" "+l.Value)
		}
	}
	return out
}

// tradedLines are the rows' trades of goodput for the p99 that were not taken, each with its knob's name.
func tradedLines(lines []knobLine) []string {
	var out []string
	for _, l := range lines {
		if l.Traded != "" {
			out = append(out, l.Name+" "+l.Traded)
		}
	}
	return out
}

// needOf is what would decide an undecided row (": would need about 151 rounds (3m59s more)"), "" when the row
// does not say.
func needOf(l knobLine) string {
	for _, d := range l.Details {
		if n, ok := strings.CutPrefix(d, "would need "); ok {
			return ": would need " + n
		}
	}
	return ""
}

// changeTable is the changes, one a row: the knob, from -> to, the change of the new value against the one it
// was compared with, its interval and verdict, what was measured and in how many rounds.
func changeTable(changes []knobLine) textTable {
	t := textTable{Head: []string{"knob", "from -> to", "change", "interval", "verdict", "measured"}, Right: []bool{false, false, true}}
	for _, l := range changes {
		row := textRow{Cells: []string{l.Name, l.Start + " -> " + l.Value, "", "", termWord(l.Word), ""}}
		if l.Change != nil {
			short, _ := metricWords(l.Metric)
			row.Cells[2], row.Cells[3] = pctText(l.Change.Est), intervalText(l.Change)
			row.Cells[5] = fmt.Sprintf("%s, %d rounds", short, l.Rounds)
			if l.Against != l.Start {
				row.Details = append(row.Details, "against "+l.Against)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// metricNotes say what the changes' CPU metrics are, once each: the summary has no legend, and "req/CPU-s" is not a
// word a reader knows (req/s is).
func metricNotes(changes []knobLine) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range changes {
		if l.Change == nil || seen[l.Metric] || (l.Metric != tune.MetricCPU && l.Metric != tune.MetricCapacity) {
			continue
		}
		seen[l.Metric] = true
		short, _ := metricWords(l.Metric)
		who := "php-fpm's CPU time (what a request costs the workers)"
		if l.Metric == tune.MetricCapacity {
			who = "all the servers' CPU time"
		}
		out = append(out, short+" is requests served per second of "+who+".")
	}
	return out
}

// headlineSentence is the recommendation against the starting point, in one sentence ("" without a final).
func headlineSentence(h *headlineModel) string {
	if h == nil || len(h.Figures) == 0 {
		return ""
	}
	var parts []string
	rounds := 0
	for _, f := range h.Figures {
		c := f.VsBase
		if c == nil {
			continue
		}
		words := "requests/s"
		if f.Metric == tune.MetricCapacity {
			words = "requests per server CPU-second"
		}
		rounds = max(rounds, c.Rounds)
		parts = append(parts, fmt.Sprintf("%s %s %s, %s", words, pctText(c.Change.Est), intervalText(&c.Change), verdictWord(c.Verdict)))
	}
	if t := h.Tail; t != nil && len(parts) > 0 {
		rounds = max(rounds, t.Vs.Rounds)
		parts = append(parts, "p99 "+tailPart(t))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Against %s, the recommendation measured (%d rounds side by side): %s.", h.Baseline, rounds, strings.Join(parts, "; "))
}

// tuneOpening writes what both of tune's texts open with (PARTIAL where the run stopped early; the app, its URLs'
// count and the time taken) and returns the answer they print and their way of wrapping a line within termWidth.
func tuneOpening(w io.Writer, r *tune.Result) (*Answer, func(first, rest, text string)) {
	say := func(first, rest, text string) { writeWrapped(w, first, rest, text, termWidth) }
	if r.Partial {
		fmt.Fprintf(w, "PARTIAL: the run stopped early; these are the results so far\n\n")
	}
	say("", "  ", fmt.Sprintf("phptune tune: %s, %d URL(s), %s of a %s budget", r.App, len(r.URLs), secs(r.ElapsedS), secs(r.BudgetS)))
	return AnswerOf(r), say
}
