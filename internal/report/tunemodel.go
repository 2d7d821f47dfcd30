package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// The rows of tune's answer, decided once for every renderer (the terminal summary, report.html, a comparison
// of tune runs), as benchstat computes its table before any writer prints it. A row is about the value it
// shows: the value kept, the value it was compared with, and the change of the kept value against that one,
// positive when the kept value is the better; its verdict is the kept value's.

// knobLine is one knob's row.
type knobLine struct {
	Name  string `json:"knob"`
	Value string `json:"value"` // the value kept, as a reader reads it (knob.Shown: "default (511)", not "0")
	// Start is the starting configuration's value when the kept one differs from it ("" otherwise): 5 -> 8.
	Start string `json:"start,omitempty"`
	// Against is the value the kept one was compared with ("" when it was not compared).
	Against string `json:"against,omitempty"`
	// Change is the kept value against Against, in percent (nil when not compared).
	Change *change `json:"change,omitempty"`
	// Verdict is the kept value's against Against: better means the kept value was shown the better.
	Verdict stats.Verdict `json:"verdict,omitempty"`
	// Word is the verdict in the table's words, the same in every renderer: the verdict when compared, else
	// why not, from the row's state ("not tried", "pinned", "from the soak", "not compared", "others failed").
	Word   string `json:"word"`
	Metric string `json:"metric,omitempty"`
	// Rounds are those the change's interval rests on: the decisive comparison's, as the effects chart counts them.
	Rounds int `json:"rounds,omitempty"`
	// Level is the interval's confidence level (0.9972), 0 when the result does not say; the run's level is said
	// once (Answer.Level).
	Level float64 `json:"-"`
	// Details are what a reader needs beside the row: why it was not tried, what would decide it, notes.
	Details []string `json:"details,omitempty"`
	// Traded is what a value ahead on goodput but shown worse at the p99 would have traded (tune.KnobRow.Traded).
	Traded string `json:"traded,omitempty"`
}

// change is a relative change in percent with its interval.
type change struct {
	Est float64 `json:"pct"`
	Lo  float64 `json:"lo_pct"`
	Hi  float64 `json:"hi_pct"`
}

// knobLines are r's rows in its order.
func knobLines(r *tune.Result) []knobLine {
	out := make([]knobLine, 0, len(r.Knobs))
	for _, k := range r.Knobs {
		out = append(out, knobLineOf(r, k))
	}
	return out
}

// knobLineOf turns a knob's row, whose comparison is the decisive one as the race ran it (a candidate against
// the incumbent), into the row about the value kept.
func knobLineOf(r *tune.Result, k tune.KnobRow) knobLine {
	l := knobLine{Name: k.Name, Value: knob.Shown(k.Name, k.Value), Metric: k.Metric, Rounds: k.Rounds, Traded: k.Traded}
	if start := startValue(k.Name, r.Baseline); start != k.Value {
		l.Start = knob.Shown(k.Name, start)
	}
	var cand, inc string
	l.Against, l.Change, l.Verdict, cand, inc = keptSide(k)
	if l.Change != nil {
		if c := decisive(r, k.Name, cand, inc); c != nil {
			l.Level = statLevel(c.Stats)
			if c.Stats.N > 0 {
				l.Rounds = c.Stats.N
			}
		}
		if k.Value != cand && k.Value != inc {
			l.Details = append(l.Details, fmt.Sprintf("the change and verdict are %s's against %s", knob.Shown(k.Name, cand), l.Against))
		}
	} else if k.Compared != "" {
		// An old result's words that name no values (Versus could not read them): shown as they were written.
		l.Details = append(l.Details, "compared: "+k.Compared)
	}
	state := k.StateOf()
	l.Word = keptWord(l.Verdict, state, l.Change != nil)
	note := k.Note
	switch {
	case state == tune.StatePinned:
		note = "" // the word says it
	case (state == tune.StateNotTried || state == tune.StateSoak) && l.Change == nil:
		note = k.ReasonOf() // the word says the rest
	}
	if note != "" {
		l.Details = append(l.Details, note)
	}
	if k.Need != "" {
		l.Details = append(l.Details, "would need "+k.Need)
	}
	if l.Verdict == stats.Inconclusive && l.Start == "" {
		l.Details = append(l.Details, "not decided: the starting value, "+l.Value+", is kept")
	}
	if k.Name == knob.MaxChildren().Name && r.PeakCheck != nil {
		l.Details = append(l.Details, peakRow(r.PeakCheck))
	}
	return l
}

// keptSide states a row's decisive comparison, made as the race ran it (candidate against incumbent), as the
// kept value's: the value it was compared with, the change and the verdict; cand and inc are the comparison's
// values. No change when the row has no comparison that names its values.
func keptSide(k tune.KnobRow) (against string, c *change, v stats.Verdict, cand, inc string) {
	vs := k.Versus()
	if vs == nil {
		return "", nil, k.Verdict, "", ""
	}
	cand, inc = vs.B, vs.A
	ch := change{k.EffectPct, k.CILowPct, k.CIHighPct}
	if k.Value == inc {
		return knob.Shown(k.Name, cand), ch.inverse(), flip(k.Verdict), cand, inc
	}
	// The candidate kept; or neither (the caller says so): the comparison as it was made.
	return knob.Shown(k.Name, inc), &ch, k.Verdict, cand, inc
}

// keptPhrase is a compared row's verdict and what it is against, in words: "better than off".
func keptPhrase(v stats.Verdict, against string) string {
	switch v {
	case stats.Better:
		return "better than " + against
	case stats.Worse:
		return "worse than " + against
	case stats.NoDifference:
		return "no difference from " + against
	case stats.Inconclusive:
		return "inconclusive against " + against
	case tune.NonInferior:
		return "within the margin of " + against
	}
	return verdictWord(v) + " against " + against
}

// startValue is the knob's value in the starting configuration (Debian's defaults, or the user's files).
func startValue(name string, base knob.Config) string {
	if k, ok := knob.ByName(name); ok {
		return k.Get(base)
	}
	return knob.INI(name).Get(base)
}

// unbounded says whether the engine could not bound c's interval yet (a side at experiment.Unbounded).
func (c change) unbounded() bool { return unboundedPct(c.Lo) || unboundedPct(c.Hi) }

// MarshalJSON writes c with "unbounded": true where the text says "[not bounded yet]", so that a reader of
// result.json does not take the engine's placeholder bounds for figures.
func (c change) MarshalJSON() ([]byte, error) {
	type plain change // without this method
	return json.Marshal(struct {
		plain
		Unbounded bool `json:"unbounded,omitempty"`
	}{plain(c), c.unbounded()})
}

// inverse is A against B from B against A: the ratio turned over, the interval's ends swapped.
func (c change) inverse() *change {
	inv := func(p float64) float64 {
		if p <= -100 {
			return math.Inf(1)
		}
		return 100 * (100/(100+p) - 1)
	}
	return &change{inv(c.Est), inv(c.Hi), inv(c.Lo)}
}

// flip is the verdict of A against B from B's against A.
func flip(v stats.Verdict) stats.Verdict {
	switch v {
	case stats.Better:
		return stats.Worse
	case stats.Worse:
		return stats.Better
	}
	return v
}

// decisive is the comparison of cand against inc in the knob's race (the last such), nil when there is none.
func decisive(r *tune.Result, name, cand, inc string) *tune.Comparison {
	var out *tune.Comparison
	for i, c := range r.Comparisons {
		if c.Knob == name && c.B == cand && c.A == inc {
			out = &r.Comparisons[i]
		}
	}
	return out
}

// statLevel is the level a comparison's interval is at: its share of the run's error budget for a sequential
// comparison, 95% for a fixed-size one.
func statLevel(c stats.Comparison) float64 {
	if c.Conf > 0 {
		return c.Conf
	}
	if c.N > 0 {
		return 0.95
	}
	return 0
}

// keptWord is a row's verdict in words. A race whose candidates all failed keeps the incumbent: "others
// failed", never a red "error" on the value kept.
func keptWord(v stats.Verdict, s tune.RowState, compared bool) string {
	switch {
	case v == stats.Error && !compared:
		return "others failed"
	case v != "":
		return string(v)
	}
	return stateWord(s)
}

// stateWord is the word of a row kept without a comparison, by its state, the same in every renderer.
func stateWord(s tune.RowState) string {
	switch s {
	case tune.StatePinned:
		return "pinned"
	case tune.StateNotTried:
		return "not tried"
	case tune.StateSoak:
		return "from the soak" // memory growth, not a race (tune/soak.go)
	case tune.StateScreened:
		return string(tune.Screened)
	}
	return "not compared"
}

// metricWords names a metric short (for a column) and in words (said once, where the reader finds it): php-fpm's
// CPU (req/CPU-s) and all the servers' (req/server CPU-s) named apart, so that neither reads as the other.
func metricWords(m string) (short, words string) {
	switch m {
	case tune.MetricCPU:
		return "req/CPU-s", "requests served per second of php-fpm's CPU time (what a request costs the workers, read " +
			"from their CPU clocks around a fixed set of requests, so a busy neighbour does not change it)"
	case tune.MetricWork:
		return "work", "instructions and system calls counted per request (a screen before any timed trial)"
	case tune.MetricCapacity:
		return "req/server CPU-s", "requests served per second of all the servers' CPU time (php-fpm's and nginx's, " +
			"or Apache's) in the same trials as req/s: fewer servers for the same traffic"
	case "":
		return "", ""
	}
	return "req/s", "requests served successfully per second over HTTP (failed requests do not count)"
}

// metricsUsed are the metrics of the rows and the headline, each once, in the order first met.
func metricsUsed(lines []knobLine, h *headlineModel) []string {
	var out []string
	seen := map[string]bool{}
	add := func(m string) {
		short, _ := metricWords(m)
		if short != "" && !seen[short] {
			seen[short] = true
			out = append(out, m)
		}
	}
	for _, l := range lines {
		if l.Change != nil || l.Metric == tune.MetricWork {
			add(l.Metric)
		}
	}
	if h != nil {
		for _, f := range h.Figures {
			add(f.Metric)
		}
	}
	return out
}

// pctText is a change in percent for a terminal: one decimal below 100% (two below 0.05%), none above, "inf"
// for no bound.
func pctText(p float64) string {
	switch {
	case math.IsInf(p, 1):
		return "+inf"
	case math.Abs(p) >= 99.95:
		return fmt.Sprintf("%+.0f%%", p)
	case p != 0 && math.Abs(p) < 0.05:
		return fmt.Sprintf("%+.2f%%", p) // -0.04%, where -0.0% read as an interval that reaches zero
	}
	return fmt.Sprintf("%+.1f%%", p)
}

// intervalText is [lo, hi] in pctText's words; an interval the engine could not bound yet (too few rounds for
// its level: a side at experiment.Unbounded, a thousandfold) says so, where "[-99.9%, +99900%]" read as a figure.
func intervalText(c *change) string {
	if c.unbounded() {
		return "[not bounded yet]"
	}
	return "[" + pctText(c.Lo) + ", " + pctText(c.Hi) + "]"
}

// unboundedPct says whether a bound in percent is experiment.Unbounded's.
func unboundedPct(p float64) bool {
	return math.Abs(math.Log1p(p/100)) >= experiment.Unbounded-1e-6 || math.IsInf(p, 0)
}

// shownConfig is a configuration's one-line form for a reader: the docroot placeholder named in words.
func shownConfig(s string) string { return strings.ReplaceAll(s, stack.DocrootVar, "<docroot>") }
