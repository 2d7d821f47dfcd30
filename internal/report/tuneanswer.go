package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/tune"
)

// Answer is tune's answer as every renderer states it, computed once from a result (AnswerOf): the knobs' rows,
// the final comparison, the sweep and the level at which the run's verdicts hold. The terminal's summary and
// account, report.html and result.json's "answer" all print its figures, so that none can disagree with another.
type Answer struct {
	// Level is the confidence the intervals are at; Joint says that the run's verdicts hold together at it (its
	// error budget shared by every comparison), not each on its own.
	Level float64 `json:"level,omitempty"`
	Joint bool    `json:"joint,omitempty"`
	// Start is what the run started from: Debian's defaults, your configuration or your starting point.
	Start    string         `json:"start"`
	Knobs    []knobLine     `json:"knobs"`
	Headline *headlineModel `json:"headline,omitempty"`
	Sweep    *sweepModel    `json:"sweep,omitempty"`
	// Memory is what the run met of its memory cgroup's limit (nil outside a limited cgroup that met no kill).
	Memory *memoryModel `json:"memory,omitempty"`
	// Configs are the configurations measured, one figure a metric (the report's table, the headline's figures);
	// not in result.json, whose trials they are drawn from.
	Configs []configRow `json:"-"`
}

// AnswerOf is r's answer.
func AnswerOf(r *tune.Result) *Answer {
	a := &Answer{Knobs: knobLines(r), Configs: configRows(r), Sweep: sweepOf(r.Saturation, r.Plan.SweepTrials),
		Memory: memoryOf(r.Memory)}
	a.Headline = headlineOf(r, a.Configs)
	a.Start = startName(r, a.Headline)
	a.Level, a.Joint = runLevel(r, a.Knobs, a.Headline)
	return a
}

// TuneRecord is what a tune run's result.json holds: the result, and beside it the answer its reports print.
// Reading result.json back into a tune.Result leaves the answer out; AnswerOf makes it again, the same.
type TuneRecord struct {
	*tune.Result
	Answer *Answer `json:"answer,omitempty"`
}

// RecordOf is r with its answer, for result.json.
func RecordOf(r *tune.Result) TuneRecord { return TuneRecord{Result: r, Answer: AnswerOf(r)} }

// runLevel is the level the run's intervals are at: 1 - --alpha, shared by all its verdicts at once, for a run
// that says its error budget; else the level of its comparisons, each on its own (95%: results before the budget).
func runLevel(r *tune.Result, lines []knobLine, h *headlineModel) (float64, bool) {
	if a := r.Plan.Alpha; a > 0 && a < 1 {
		return 1 - a, true
	}
	for _, l := range lines {
		if l.Level > 0 {
			return l.Level, false
		}
	}
	if h != nil {
		for _, f := range h.Figures {
			for _, v := range []*versus{f.VsBase, f.VsRule} {
				if v != nil && v.Level > 0 {
					return v.Level, false
				}
			}
		}
	}
	return 0, false
}

// levelSentence says once, in words, how far the run's intervals and verdicts can be trusted ("" when it has
// none).
func levelSentence(a *Answer) string {
	switch {
	case a.Level <= 0:
		return ""
	case a.Joint:
		return fmt.Sprintf("All verdicts of the run hold together at %s confidence, however early a race stopped.", pctLevel(a.Level))
	}
	return fmt.Sprintf("Each interval is a %s confidence interval.", pctLevel(a.Level))
}

// pctLevel is a level in whole percent where it is one (95%), else with the digits it has (99.5%).
func pctLevel(l float64) string { return fmt.Sprintf("%.4g%%", 100*l) }
