package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// Tune writes tune's answer: the sweep and the pool size, one row a knob about the value kept, what the
// columns mean, then the final comparison; no line wider than termWidth.
func Tune(w io.Writer, r *tune.Result) {
	a, say := tuneOpening(w, r)
	lines, h := a.Knobs, a.Headline
	if h != nil && h.Tail != nil && h.Tail.Warning != "" {
		say("  ", "    ", h.Tail.Warning) // before the account: a worse tail is what a reader must not miss
	}
	if urls := urlList(r.URLs); len(urls) > 1 || (len(urls) == 1 && r.URLs[0].PeakMemory > 0) {
		if line := "  URLs: " + strings.Join(urls, ", "); textLen(line) <= termWidth {
			fmt.Fprintln(w, line)
		} else {
			for i, u := range urls { // one a line, so that none is broken
				lead := "        "
				if i == 0 {
					lead = "  URLs: "
				}
				say(lead, "          ", u)
			}
		}
	}
	for _, b := range r.Builds {
		how := fmt.Sprintf("built in %s", secs(b.Seconds))
		if b.Cached {
			how = "from the build cache"
		}
		say("  ", "    ", fmt.Sprintf("PHP %s trained on this mix (%s, outside the budget), raced as the knob php: %s", b.Variant, how, b.PHPFPM))
	}
	if s := a.Sweep; s != nil {
		fmt.Fprintln(w)
		say("  ", "    ", fmt.Sprintf("Saturation, a static pool of %d (requests/s by connections, the %s of %d trial%s a point):", s.Pool,
			s.figureWord(), max(s.Trials, 1), plural(max(s.Trials, 1))))
		sweepTable(s).write(w, 4, termWidth)
		say("    ", "    ", kneeText(s, r.Plan))
	}
	if p := r.PoolSize; p != nil {
		for i, line := range append(poolSizeText(p, r.Plan.PoolMarginOr()), cpuLines(r.Environment.Limits)...) {
			if i == 0 {
				say("  ", "    ", line)
			} else {
				say("    ", "    ", line)
			}
		}
	}
	for i, line := range soakLines(r) {
		if i == 0 {
			say("  ", "    ", "Memory over hours: "+line)
		} else {
			say("    ", "    ", line)
		}
	}
	fmt.Fprintln(w)
	knobTable(lines).write(w, 2, termWidth)
	fmt.Fprintln(w)
	for _, n := range legend(a) {
		say("  ", "  ", n)
	}
	runtimes(w, r.Runtimes)
	if h != nil {
		fmt.Fprintln(w)
		say("  ", "    ", "Recommendation: "+shownConfig(r.Recommendation.String()))
		if s := sameText(h); s != "" {
			say("  ", "    ", s)
		}
		if len(h.Figures) > 0 {
			say("  ", "    ", fmt.Sprintf("The final comparison, %d round%s interleaved%s:", h.Rounds, plural(h.Rounds), atConns(h.Load)))
			for _, f := range h.Figures {
				headlineTable(h, f).write(w, 4, termWidth)
			}
			if t := h.Tail; t != nil {
				say("    ", "      ", fmt.Sprintf("p99, the recommendation against %s (%d rounds): %s.", h.Baseline,
					t.Vs.Rounds, tailPart(t)))
			}
			say("  ", "  ", finalNote)
		}
	}
	if c := r.P99Check; c != nil {
		say("  ", "    ", fmt.Sprintf("Latency goal: p99 %s [%s, %s] (95%% interval) at %s req/s open loop, goal %s: %s", us(c.P99Us), us(c.P99LoUs), us(c.P99HiUs),
			rate(c.Rate), us(c.GoalUs), p99Verdict(c)))
	}
	if c := r.PeakCheck; c != nil && !peakOnPoolRow(r) {
		say("  ", "    ", peakRow(c))
	}
	if m := memoryUse(a); m != "" {
		say("  ", "    ", m)
	}
	for _, warn := range r.Warnings {
		say("  ", "    ", "warning: "+warn)
	}
	if p := r.Apply; p != nil {
		fmt.Fprintln(w)
		if dir := filepath.Dir(r.Files[apply.PoolName]); h != nil && h.Same && h.SameBut == "" {
			say("  ", "  ", fmt.Sprintf("Nothing to apply: the recommendation is %s. Its files are in %s all the same, as phptune writes them.", h.Baseline, dir))
		} else {
			applyText(w, p, dir, "  ")
		}
	}
	if r.Note != "" {
		fmt.Fprintln(w)
		say("  ", "  ", r.Note)
	}
}

// knobTable lays the rows out for a terminal: the kept value first (start -> kept where the starting
// configuration differs), what it was compared with, its change against that, the verdict.
func knobTable(lines []knobLine) textTable {
	t := textTable{Head: []string{"knob", "kept", "against", "change", "interval", "verdict", "metric", "rounds"},
		Right: []bool{false, false, false, true, false, false, false, true}, Max: []int{20, 24, 14, 0, 0, 0, 0, 0}}
	for _, l := range lines {
		val := l.Value
		if l.Start != "" {
			val = l.Start + " -> " + l.Value
		}
		cells := []string{l.Name, val, l.Against, "", "", termWord(l.Word), "", ""}
		if l.Change != nil {
			cells[3], cells[4] = pctText(l.Change.Est), intervalText(l.Change)
		}
		if l.Change != nil || l.Metric == tune.MetricWork {
			cells[6], _ = metricWords(l.Metric)
		}
		if l.Rounds > 0 && l.Change != nil {
			cells[7] = fmt.Sprint(l.Rounds)
		}
		t.Rows = append(t.Rows, textRow{Cells: cells, Details: l.Details})
	}
	return t
}

// termWord marks the verdicts that decide nothing, as benchstat marks "~".
func termWord(w string) string {
	switch w {
	case string(stats.NoDifference):
		return "~ " + w
	case string(stats.Inconclusive):
		return "? " + w
	}
	return w
}

// legend says what the table's columns and metrics mean and how far its intervals hold, once.
func legend(a *Answer) []string {
	out := []string{fmt.Sprintf("kept: the value recommended, as START -> KEPT where the starting configuration (%s) has "+
		"another; change: the kept value against the one under against, positive when the kept value is the better; verdict: "+
		"the kept value's; a knob not decided keeps the starting value.", a.Start)}
	for _, m := range metricsUsed(a.Knobs, a.Headline) {
		short, words := metricWords(m)
		out = append(out, short+": "+words+".")
	}
	if screenedAny(a.Knobs) {
		out = append(out, screenedNote)
	}
	if n := levelSentence(a); n != "" {
		out = append(out, n)
	}
	return out
}

// screenedNote says what a screened row rests on: counts, so that no one reads it as a timed no_difference.
const screenedNote = "screened: every candidate was counted doing the same work a request as the kept value " +
	"(instructions under callgrind, system calls under strace, within half the minimum effect), so none was raced: " +
	"no time was measured, there is no interval, and none of the error budget was spent on it."

func screenedAny(lines []knobLine) bool {
	for _, l := range lines {
		if l.Verdict == tune.Screened {
			return true
		}
	}
	return false
}

// finalNote says how the final comparison's figures and changes relate (the method is docs/engine.md's).
const finalNote = "The final comparison's figures are each configuration's median over its rounds; its changes are estimated " +
	"from the ratios within each round, so a change need not equal the ratio of the medians."

// headlineTable is one metric of the final comparison: each configuration's figure (the table's) and the
// recommendation against it.
func headlineTable(h *headlineModel, f headlineFigure) textTable {
	short, _ := metricWords(f.Metric)
	t := textTable{Head: []string{"configuration", short, "recommendation against it", "verdict"},
		Right: []bool{false, true, false, false}}
	rec := "recommendation"
	if h.Same {
		rec += " = " + h.Baseline
	}
	if h.SameBut != "" {
		rec += " in a run"
	}
	if h.RuleSame {
		rec += " = rule of thumb"
	}
	t.Rows = append(t.Rows, textRow{Cells: []string{rec, rate(f.Rec), "", ""}})
	for _, x := range []struct {
		name string
		v    float64
		c    *versus
		same bool
	}{{h.Baseline, f.Base, f.VsBase, h.Same}, {"rule of thumb", f.Rule, f.VsRule, h.RuleSame}} {
		if x.same {
			continue // its row is the recommendation's
		}
		row := textRow{Cells: []string{x.name, rate(x.v), "", ""}}
		if x.name == "rule of thumb" && h.Rule.Config != h.Rec.Config {
			row.Details = []string{"the rule of thumb: " + shownConfig(h.Rule.Config)}
		}
		cells := row.Cells
		if c := x.c; c != nil {
			cells[2], cells[3] = pctText(c.Change.Est)+" "+intervalText(&c.Change), termWord(verdictWord(c.Verdict))
			if c.RoundsNote != "" {
				row.Details = append(row.Details, c.RoundsNote)
			}
			if c.Need != "" {
				row.Details = append(row.Details, "deciding it would need "+c.Need)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// sameText says that the recommendation is the starting point, and so was not raced against it ("" when it is
// not).
func sameText(h *headlineModel) string {
	if !h.Same {
		return ""
	}
	s := "It is " + h.Baseline + ": no knob was shown better than its starting value, so there is nothing to change, " +
		"and the final comparison does not race a configuration against itself"
	if h.SameBut != "" {
		s = fmt.Sprintf("It is %s but for %s, which recycles a worker after that many requests to bound its memory over hours "+
			"(see Memory over hours). No worker could serve that many in this run (the whole run at its fastest rate is %s requests), so the two serve alike in it, "+
			"and the final comparison does not race them", h.Baseline, h.SameBut, group(h.Reach))
	}
	switch {
	case h.RuleSame:
		return s + " (it is the rule of thumb too)."
	case h.Rounds == 0:
		return s + "; the budget ended before it could set it against the rule of thumb."
	}
	return s + "; it sets it against the rule of thumb alone."
}

// headlineNeed is what would have decided an inconclusive comparison of the final, at the time its rounds took
// ("" when it was decided, or nothing says).
func headlineNeed(h *headlineModel, c *stats.Comparison) string {
	if c.Verdict != stats.Inconclusive || c.RoundsNeeded <= 0 || !(h.RoundS > 0) {
		return ""
	}
	return tune.Need(c.RoundsNeeded, c.N, time.Duration(h.RoundS*float64(time.Second)))
}

// yieldedText says that c's baseline ran in the final's first rounds only ("" when it ran in all): the time left
// could not decide the comparison with the starting point, which comes first, with both in, and it got the rounds.
func yieldedText(h *headlineModel, c *stats.Comparison) string {
	if c.N <= 0 || c.N >= h.Rounds || c.Verdict != stats.Inconclusive {
		return ""
	}
	return fmt.Sprintf("raced in the first %d of the %d rounds only: its rounds went to the comparison with %s, "+
		"which the time left could not decide with both in", c.N, h.Rounds, h.Baseline)
}

// verdictWord is a comparison's verdict in the table's words.
func verdictWord(v stats.Verdict) string {
	if v == "" {
		return "no verdict"
	}
	return string(v)
}

// sweepTable is the saturation curve: requests/s under each load, the peak marked.
func sweepTable(s *sweepModel) textTable {
	t := textTable{Head: []string{"connections"}, Right: []bool{false}}
	cells := []string{"req/s"}
	for _, p := range s.Points {
		head := fmt.Sprint(p.Conns)
		if p.Conns == s.Peak {
			head = "peak " + head
		}
		t.Head, t.Right = append(t.Head, head), append(t.Right, true)
		cells = append(cells, rate(p.RPS))
	}
	t.Rows = []textRow{{Cells: cells}}
	return t
}

// kneeText says where throughput levels off (the knee) and what the comparisons load, by the rule tune uses.
func kneeText(s *sweepModel, p tune.Plan) string {
	if s.Knee <= 0 {
		return "the sweep stopped before throughput was seen to level off"
	}
	text := fmt.Sprintf("throughput levels off at %d connection%s (the knee: the fewest not shown below %.0f%% of the peak's), "+
		"the peak at %d", s.Knee, plural(s.Knee), 100*tune.KneeShare, s.Peak)
	n := p.Concurrency
	switch {
	case p.ConcurrencyNote != "":
		text += "; the knob comparisons load " + p.ConcurrencyNote
	case n > 0:
		text += fmt.Sprintf("; the knob comparisons load %d connection%s", n, plural(n))
	}
	if c := p.CPUConcurrency; n > 0 && c > 0 && c != n {
		text += fmt.Sprintf(", CPU trials %d", c)
	}
	return text
}

// poolSizeText says what limited the pool size and how it was chosen: a line, then where its memory came from
// and the sizes that serve within the margin of the best, when the result has them.
func poolSizeText(p *tune.PoolSize, minEffect float64) []string {
	mem := "memory not limiting"
	if p.MemoryLimit > 0 {
		mem = fmt.Sprintf("memory allows %d children in %s (%.0f MiB shared + %.1f MiB each at peak)", p.MemoryLimit, mib(p.Memory),
			float64(p.SharedBytes)/(1<<20), float64(p.PerWorkerBytes)/(1<<20))
	}
	how := "from that load"
	switch {
	case p.StateOf() == tune.StatePinned:
		how = "(pinned)"
	case p.StateOf() == tune.StateNotRaced && p.Chosen == p.Initial:
		how = "from that load (" + p.Note + ")"
	case p.StateOf() == tune.StateNotRaced:
		how = "(the starting size kept: the budget could not decide the sizes' race)"
	case len(p.Sizes) == 0 && p.Note != "":
		how = "(" + p.Note + ")"
	case len(p.Sizes) > 0 && p.Decided:
		how = fmt.Sprintf("(the smallest of %s shown within %.0f%% of the best, at %d connections)", sizeList(p.Sizes), 100*minEffect, p.Load)
	case len(p.Sizes) > 0 && p.Kept:
		how = fmt.Sprintf("(the starting size kept: the race of %s at %d connections ended before its smallest size not "+
			"shown worse was shown within %.0f%% of the best)", sizeList(p.Sizes), p.Load, 100*minEffect)
	case len(p.Sizes) > 0:
		how = fmt.Sprintf("(the race of %s at %d connections ended before its smallest size not shown worse was shown "+
			"within %.0f%% of the best: of the sizes not shown worse, the nearest to the starting size)", sizeList(p.Sizes),
			p.Load, 100*minEffect)
	}
	out := []string{fmt.Sprintf("Pool size: throughput levels off at %d connection%s; %s; chosen %d %s", p.Knee, plural(p.Knee), mem,
		p.Chosen, how)}
	if p.MemoryFrom != "" {
		out = append(out, fmt.Sprintf("%s for the pool: %s", mib(p.Memory), p.MemoryFrom))
	}
	if p.RangeLo > 0 {
		out = append(out, sizeRange(p, minEffect))
	}
	return out
}

func unset(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// urlList names each URL with its weight and, when known, PHP's peak memory for one request of it; a URL that
// needs three times the median of the others or more is marked, as the pool must be sized for it.
func urlList(urls []tune.URL) []string {
	var out []string
	for i, u := range urls {
		s := strings.TrimSpace(u.Method + " " + u.Path)
		s += fmt.Sprintf(" (weight %d", u.Weight)
		if u.PeakMemory > 0 {
			s += ", " + mibs(float64(u.PeakMemory)) + " peak"
			var others []float64
			for j, o := range urls {
				if j != i && o.PeakMemory > 0 {
					others = append(others, float64(o.PeakMemory))
				}
			}
			if m := stats.Median(others); len(others) > 0 && float64(u.PeakMemory) >= 3*m {
				s += fmt.Sprintf(", %.0fx the other URLs'", float64(u.PeakMemory)/m)
			}
		}
		out = append(out, s+")")
	}
	return out
}

func mib(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// p99Verdict says how the p99 stands against the goal; results from before the interval have no Verdict.
func p99Verdict(c *tune.P99Check) string {
	switch {
	case c.Verdict == "undecided":
		return "undecided (its interval straddles the goal: a longer run or more --budget decides)"
	case c.Met:
		return "met"
	}
	return "NOT met"
}

// sizeList names the pool sizes raced: "4, 8, 16".
func sizeList(sizes []tune.SizeResult) string {
	var out []string
	for _, s := range sizes {
		out = append(out, fmt.Sprint(s.Size))
	}
	return strings.Join(out, ", ")
}

// sizeRange says which pool sizes serve within the margin of the best: shown, or not yet shown worse.
func sizeRange(p *tune.PoolSize, minEffect float64) string {
	r := p.RangeText(minEffect)
	var worse []string
	for _, s := range p.Sizes {
		if s.Status == "dropped" {
			worse = append(worse, fmt.Sprint(s.Size))
		}
	}
	if len(worse) > 0 {
		r += "; shown worse by more: " + strings.Join(worse, ", ")
	}
	return r
}
