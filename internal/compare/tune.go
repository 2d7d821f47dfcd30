package compare

import (
	"fmt"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/tune"
)

// SchemaTune names the JSON form of a TuneReport.
const SchemaTune = "phptune/compare-tune/v1"

// TuneReport compares tune runs: knob by knob, what each recommended and whether they agree, and the
// throughput of their recommendations (each run's final-phase trials of it, as independent samples).
type TuneReport struct {
	Schema string          `json:"schema"`
	Runs   []TuneRun       `json:"runs"`
	Knobs  []KnobAgreement `json:"knobs"`
	// Agree is true when every knob has the same value in every run.
	Agree bool `json:"agree"`
	// SameRecommendation is true when the recommended configurations are identical.
	SameRecommendation bool      `json:"same_recommendation"`
	Throughput         *Report   `json:"throughput,omitempty"` // nil when a run has no final trials
	Notes              []string  `json:"notes,omitempty"`
	Created            time.Time `json:"created"`
}

// TuneRun is one compared run.
type TuneRun struct {
	Name           string    `json:"name"`
	App            string    `json:"app"`
	Started        time.Time `json:"started"`
	Partial        bool      `json:"partial"`
	Recommendation string    `json:"recommendation"`
	Host           string    `json:"host"`
	FinalTrials    int       `json:"final_trials"`
	RPS            float64   `json:"rps"` // median of the final trials of the recommendation
}

// KnobAgreement is one knob across the runs.
type KnobAgreement struct {
	Name     string          `json:"name"`
	Values   []string        `json:"values"`   // per run; "" where the run has no such knob
	Verdicts []stats.Verdict `json:"verdicts"` // per run, of the decisive comparison
	Present  []bool          `json:"present"`
	// Decided is false where the run kept the value without a comparison (pinned, or the budget ran out).
	Decided  []bool   `json:"decided"`
	Compared []string `json:"compared"` // the decisive comparison in words, "opcache=off vs on"
	// Vs is the decisive comparison as data, per run (nil where not decided); absent from a compare.json
	// written before it, where Row reads Compared instead.
	Vs    []*tune.Versus `json:"vs,omitempty"`
	Notes []string       `json:"notes"`
	// States are the rows' states per run (tune.KnobRow.StateOf); absent from a compare.json written before
	// them, where Row's StateOf reads Notes instead.
	States []tune.RowState `json:"states,omitempty"`
	Agree  bool            `json:"agree"`
}

// Row is run i's row of the knob, as far as the comparison keeps it: its value, verdict, note, state and what it
// was compared on (from Vs, or from an older compare.json's Compared through tune.KnobRow.Versus; its state
// likewise from Notes through tune.KnobRow.StateOf).
func (k KnobAgreement) Row(i int) tune.KnobRow {
	row := tune.KnobRow{Name: k.Name, Value: k.Values[i], Compared: k.Compared[i], Verdict: k.Verdicts[i]}
	if i < len(k.Vs) {
		row.Vs = k.Vs[i]
	}
	if i < len(k.Notes) {
		row.Note = k.Notes[i]
	}
	if i < len(k.States) {
		row.State = k.States[i]
	}
	return row
}

// Tunes compares tune results against the first. minEffect is relative (0.01 = 1%).
func Tunes(results []*tune.Result, names []string, minEffect float64) (*TuneReport, error) {
	if len(results) < 2 {
		return nil, exitcode.UsageErrorf("compare needs at least two results")
	}
	rep := &TuneReport{Schema: SchemaTune, Created: time.Now().UTC(), Agree: true, SameRecommendation: true}
	var arms []*load.Result
	for i, r := range results {
		h := r.Environment.Host
		run := TuneRun{Name: names[i], App: r.App, Started: r.Started, Partial: r.Partial, Recommendation: r.Recommendation.String(),
			Host: fmt.Sprintf("%s, %d CPUs", h.CPUModel, h.CPUs)}
		arm := finalArm(r, names[i])
		run.FinalTrials = len(arm.Trials)
		run.RPS = arm.RPS
		rep.Runs = append(rep.Runs, run)
		arms = append(arms, arm)
		if run.Recommendation != rep.Runs[0].Recommendation {
			rep.SameRecommendation = false
		}
		if r.Partial {
			rep.Notes = append(rep.Notes, fmt.Sprintf("run %s is partial: its recommendation is what was decided before it stopped", names[i]))
		}
	}
	for i, run := range rep.Runs[1:] {
		if run.App != rep.Runs[0].App {
			rep.Notes = append(rep.Notes, fmt.Sprintf("run %s tuned %q, run %s %q: different apps", names[i+1], run.App, names[0], rep.Runs[0].App))
		}
		if run.Host != rep.Runs[0].Host {
			rep.Notes = append(rep.Notes, fmt.Sprintf("run %s ran on %s, run %s on %s: results hold for the host they were measured on", names[i+1], run.Host, names[0], rep.Runs[0].Host))
		}
	}
	// Knobs in the first run's order, then any only later runs decided.
	index := map[string]int{}
	for ri, r := range results {
		for _, k := range r.Knobs {
			i, ok := index[k.Name]
			if !ok {
				i = len(rep.Knobs)
				index[k.Name] = i
				n := len(results)
				rep.Knobs = append(rep.Knobs, KnobAgreement{Name: k.Name, Values: make([]string, n), Verdicts: make([]stats.Verdict, n),
					Present: make([]bool, n), Decided: make([]bool, n), Compared: make([]string, n), Vs: make([]*tune.Versus, n),
					Notes: make([]string, n), States: make([]tune.RowState, n)})
			}
			ka := &rep.Knobs[i]
			ka.Values[ri], ka.Verdicts[ri], ka.Present[ri] = k.Value, k.Verdict, true
			ka.Vs[ri] = k.Versus()
			ka.Decided[ri], ka.Compared[ri], ka.Notes[ri] = ka.Vs[ri] != nil, ka.Vs[ri].String(), k.Note
			ka.States[ri] = k.StateOf()
			if !ka.Decided[ri] {
				ka.Verdicts[ri] = ""
			}
		}
	}
	for i := range rep.Knobs {
		ka := &rep.Knobs[i]
		ka.Agree = true
		for ri := range results {
			if !ka.Present[ri] || ka.Values[ri] != ka.Values[0] {
				ka.Agree = false
			}
		}
		rep.Agree = rep.Agree && ka.Agree
	}
	for _, a := range arms {
		if len(a.Trials) == 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("run %s has no final trials of its recommendation: no throughput comparison", a.Arm))
			return rep, nil
		}
	}
	th, err := Results(arms, names, minEffect)
	if err != nil {
		return nil, err
	}
	// Compare's own advice (run them interleaved) does not apply to tune runs: say what does.
	notes := th.Notes[:0]
	for _, n := range th.Notes {
		if !strings.HasPrefix(n, "the results were not run interleaved") {
			notes = append(notes, n)
		}
	}
	th.Notes = append(notes, "the runs' final trials are independent samples: drift of the machine between the runs falls on the comparison")
	rep.Throughput = th
	return rep, nil
}

// finalArm is a run's final-phase trials of its recommendation as a bench-like result: per-trial figures, the
// medians as the merged ones (tune keeps no histograms).
func finalArm(r *tune.Result, name string) *load.Result {
	rec := r.Recommendation.String()
	a := &load.Result{Schema: load.SchemaBench, Target: name + ": " + rec, Arm: name, Partial: r.Partial}
	var rps, p50, p90, p99 []float64
	for _, t := range r.Trials {
		if t.Phase != "final" || t.Config != rec {
			continue
		}
		a.Trials = append(a.Trials, load.Trial{Index: len(a.Trials) + 1, Requests: t.Requests, Errors: t.Errors, RPS: t.RPS, Latency: t.Latency})
		a.Requests += t.Requests
		a.Errors += t.Errors
		rps, p50, p90, p99 = append(rps, t.RPS), append(p50, t.Latency.P50), append(p90, t.Latency.P90), append(p99, t.Latency.P99)
	}
	if len(rps) > 0 {
		a.RPS, a.Latency.P50, a.Latency.P90, a.Latency.P99 = stats.Median(rps), stats.Median(p50), stats.Median(p90), stats.Median(p99)
	}
	return a
}
