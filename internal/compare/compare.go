// Package compare puts results side by side and decides, metric by metric, whether an arm is better, worse or
// not different from the baseline, from repeated trials; and it runs arms in interleaved trials, the way every
// comparison in phptune is made.
package compare

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
)

// Schema names the JSON form of a Report.
const Schema = "phptune/compare/v1"

// Metric is one figure compared between arms.
type Metric struct {
	Name           string
	HigherIsBetter bool
	trial          func(load.Trial) float64
	merged         func(*load.Result) float64
}

// Metrics compared: throughput, and latency percentiles (corrected ones in the open model).
var Metrics = []Metric{
	{"rps", true, func(t load.Trial) float64 { return t.RPS }, func(r *load.Result) float64 { return r.RPS }},
	{"p50", false, func(t load.Trial) float64 { return t.Latency.P50 }, func(r *load.Result) float64 { return r.Latency.P50 }},
	{"p90", false, func(t load.Trial) float64 { return t.Latency.P90 }, func(r *load.Result) float64 { return r.Latency.P90 }},
	{"p99", false, func(t load.Trial) float64 { return t.Latency.P99 }, func(r *load.Result) float64 { return r.Latency.P99 }},
}

// Row is one metric of one arm against the baseline.
type Row struct {
	Metric         string            `json:"metric"`
	HigherIsBetter bool              `json:"higher_is_better"`
	Baseline       float64           `json:"baseline"` // merged figure of the baseline
	Value          float64           `json:"value"`    // merged figure of this arm
	Diff           float64           `json:"diff"`     // (value - baseline) / baseline, of the merged figures
	Stats          *stats.Comparison `json:"stats,omitempty"`
	Verdict        stats.Verdict     `json:"verdict,omitempty"` // empty without trials
}

// Arm is one compared result.
type Arm struct {
	Name     string       `json:"name"`
	Target   string       `json:"target"`
	Trials   int          `json:"trials"`
	Requests int64        `json:"requests"`
	Errors   int64        `json:"errors"`
	Rows     []Row        `json:"rows,omitempty"` // empty for the baseline
	Result   *load.Result `json:"-"`
}

// Report is a comparison of arms against the first (the baseline).
type Report struct {
	Schema     string    `json:"schema"`
	Paired     bool      `json:"paired"` // interleaved trials, compared pair by pair
	Interleave string    `json:"interleave,omitempty"`
	Order      []string  `json:"order,omitempty"` // the run order of an interleaved run
	MinEffect  float64   `json:"min_effect"`
	Alpha      float64   `json:"alpha"`
	Arms       []Arm     `json:"arms"`
	Notes      []string  `json:"notes,omitempty"`
	Partial    bool      `json:"partial"`
	Created    time.Time `json:"created"`
}

// Worse reports whether any metric of any arm got the verdict worse.
func (r *Report) Worse() bool {
	for _, a := range r.Arms {
		for _, row := range a.Rows {
			if row.Verdict == stats.Worse {
				return true
			}
		}
	}
	return false
}

// Results compares results[1:] against results[0]. Trials pair up when the results are arms of the same
// interleaved run; otherwise their trials are independent samples. minEffect is relative (0.01 = 1%).
func Results(results []*load.Result, names []string, minEffect float64) (*Report, error) {
	if len(results) < 2 {
		return nil, exitcode.UsageErrorf("compare needs at least two results")
	}
	if minEffect < 0 || math.IsNaN(minEffect) {
		return nil, exitcode.UsageErrorf("--min-effect must not be negative")
	}
	rep := &Report{Schema: Schema, MinEffect: minEffect, Alpha: stats.DefaultAlpha, Created: time.Now().UTC(), Paired: true}
	base := results[0]
	for _, r := range results {
		rep.Partial = rep.Partial || r.Partial
		if r.Interleave == "" || r.Interleave != base.Interleave || len(r.Trials) != len(base.Trials) {
			rep.Paired = false
		}
	}
	if rep.Paired {
		rep.Interleave = base.Interleave
	}
	var family []*stats.Comparison
	var rules []stats.Rule
	for i, r := range results {
		arm := Arm{Name: names[i], Target: r.Target, Trials: max(len(r.Trials), 1), Requests: r.Requests, Errors: r.Errors, Result: r}
		if i > 0 {
			for _, m := range Metrics {
				row := Row{Metric: m.Name, HigherIsBetter: m.HigherIsBetter, Baseline: m.merged(base), Value: m.merged(r)}
				if row.Baseline > 0 {
					row.Diff = row.Value/row.Baseline - 1
				}
				a, b := trialValues(base, m), trialValues(r, m)
				if len(a) > 1 && len(b) > 1 {
					var c stats.Comparison
					var err error
					if rep.Paired {
						c, err = stats.Paired(a, b, stats.DefaultConf)
					} else {
						c, err = stats.Unpaired(a, b, stats.DefaultConf)
					}
					if err == nil {
						row.Stats = &c
						family = append(family, row.Stats)
						rules = append(rules, stats.Rule{MinEffect: minEffect, Alpha: stats.DefaultAlpha, HigherIsBetter: m.HigherIsBetter})
					} else {
						rep.Notes = append(rep.Notes, fmt.Sprintf("%s %s: no statistics: %v", arm.Name, m.Name, err))
					}
				}
				arm.Rows = append(arm.Rows, row)
			}
		}
		rep.Arms = append(rep.Arms, arm)
	}
	if len(family) > 0 {
		stats.DecideAll(family, rules)
	}
	for i := range rep.Arms {
		for j := range rep.Arms[i].Rows {
			if s := rep.Arms[i].Rows[j].Stats; s != nil {
				rep.Arms[i].Rows[j].Verdict = s.Verdict
			}
		}
	}
	switch {
	case len(family) == 0:
		rep.Notes = append(rep.Notes, "no verdicts: the results carry no repeated trials (run them with --repeat, or use compare --interleave)")
	case !rep.Paired:
		rep.Notes = append(rep.Notes, "the results were not run interleaved: their trials are compared as independent samples (Mann-Whitney), which drift between runs can bias; compare --interleave pairs them")
	}
	// The smallest p-value n pairs can give is 2/2^n (exact signed-rank test): with Holm over the whole family
	// the first step multiplies it by the family's size, so too few trials can never show a difference.
	if len(family) > 0 {
		n := len(base.Trials)
		for _, c := range family {
			n = min(n, c.N)
		}
		if n >= stats.MinPairs {
			minP := 2 * math.Pow(0.5, float64(n))
			if !rep.Paired {
				minP = 2 / binomial(2*n, n)
			}
			if minP*float64(len(family)) >= rep.Alpha {
				need := n
				for ; minPFor(need+1, rep.Paired)*float64(len(family)) >= rep.Alpha; need++ {
				}
				rep.Notes = append(rep.Notes, fmt.Sprintf("%d trials cannot show any difference across %d comparisons (the smallest p-value they allow, %.3g, times %d is not below %.2g): use at least %d",
					n, len(family), minP, len(family), rep.Alpha, need+1))
			}
		}
	}
	for _, a := range rep.Arms {
		if a.Trials > 1 && a.Trials < stats.MinPairs {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s has %d trials: at least %d are needed for a verdict (%d by default)", a.Name, a.Trials, stats.MinPairs, stats.DefaultPairs))
			break
		}
	}
	return rep, nil
}

func minPFor(n int, paired bool) float64 {
	if paired {
		return 2 * math.Pow(0.5, float64(n))
	}
	return 2 / binomial(2*n, n)
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func trialValues(r *load.Result, m Metric) []float64 {
	var v []float64
	for _, t := range r.Trials {
		if x := m.trial(t); x > 0 {
			v = append(v, x)
		} else {
			return nil // a trial without that figure (no request completed): no statistics on it
		}
	}
	return v
}

// Progress reports an interleaved run's position.
type Progress struct {
	Pair, Pairs int
	Arm         string
	Load        load.Progress
}

// Interleave runs repeat trials of every arm in alternating order (A B, B A, A B, ... with two arms; the order
// reverses every round with more), so that drift on the machine falls on both arms alike, and returns each
// arm's merged result. A cancelled ctx returns the trials so far (Partial) with ctx's error.
func Interleave(ctx context.Context, arms []load.Options, names []string, repeat int, progress func(Progress)) ([]*load.Result, []string, error) {
	if len(arms) < 2 {
		return nil, nil, exitcode.UsageErrorf("compare --interleave needs at least two arms")
	}
	if repeat < 1 {
		return nil, nil, exitcode.UsageErrorf("--repeat %d: want at least 1", repeat)
	}
	runners := make([]*load.Runner, len(arms))
	for i, o := range arms {
		r, err := load.NewRunner(o)
		if err != nil {
			return nil, nil, fmt.Errorf("arm %s: %w", names[i], err)
		}
		if err := r.Preflight(ctx); err != nil {
			return nil, nil, fmt.Errorf("arm %s: %w", names[i], err)
		}
		runners[i] = r
	}
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	trials := make([][]*load.Result, len(arms))
	var order []string
	var runErr error
rounds:
	for round := 0; round < repeat; round++ {
		for k := range arms {
			i := k
			if round%2 == 1 {
				i = len(arms) - 1 - k
			}
			o := runners[i].Options()
			if progress != nil {
				pair, arm := round+1, names[i]
				o.Progress = func(p load.Progress) { progress(Progress{Pair: pair, Pairs: repeat, Arm: arm, Load: p}) }
			}
			r, err := runners[i].WithProgress(o.Progress).Trial(ctx, round+1, repeat)
			if r != nil && (err == nil || ctx.Err() == nil) {
				trials[i] = append(trials[i], r)
				order = append(order, names[i])
			}
			if err != nil {
				runErr = fmt.Errorf("arm %s, trial %d: %w", names[i], round+1, err)
				if ctx.Err() != nil {
					runErr = ctx.Err()
				}
				break rounds
			}
		}
	}
	out := make([]*load.Result, len(arms))
	// Only complete rounds pair up; a round cut short leaves its partial trials out of the statistics.
	complete := len(trials[0])
	for _, t := range trials {
		complete = min(complete, len(t))
	}
	if complete == 0 {
		return nil, order, runErr
	}
	for i, t := range trials {
		m := load.Merge(t[:complete])
		if len(t[:complete]) == 1 {
			m.Trials = []load.Trial{{Index: 1, Started: m.Started, DurationS: m.DurationS, Requests: m.Requests, Errors: m.Errors,
				RPS: m.RPS, Latency: m.Latency, LatencyUncorr: m.LatencyUncorrected, ClientCPUUsPerReq: m.ClientCPUUsPerReq}}
		}
		m.Interleave, m.Arm = id, names[i]
		m.Partial = runErr != nil
		out[i] = m
	}
	return out, order, runErr
}
