// Package compare puts load results side by side and decides, metric by metric, whether an arm is better, worse
// or not different from the baseline, from repeated trials (those of one interleaved run by the experiment
// engine's rule, others as independent samples); and it runs load targets as arms of the engine (Interleave).
package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
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
	Schema     string   `json:"schema"`
	Paired     bool     `json:"paired"` // interleaved trials, compared pair by pair
	Interleave string   `json:"interleave,omitempty"`
	Order      []string `json:"order,omitempty"` // the run order of an interleaved run
	MinEffect  float64  `json:"min_effect"`
	Alpha      float64  `json:"alpha"`
	// Share is the part of Alpha these comparisons may spend, when they are one experiment of a larger run
	// (build's throughput check beside its verification); 0: all of it.
	Share float64 `json:"alpha_share,omitempty"`
	// Winner is the pick of a race of more than two arms ("" without one); Notes say why the others left.
	Winner  string    `json:"winner,omitempty"`
	Arms    []Arm     `json:"arms"`
	Notes   []string  `json:"notes,omitempty"`
	Partial bool      `json:"partial"`
	Created time.Time `json:"created"`
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

// Results compares results[1:] against results[0]. Trials pair up, by their index (the round they ran in), when
// the results are arms of the same interleaved run, and every metric is then judged by the experiment engine's
// rule (anytime-valid confidence sequences, one error budget over every arm and metric: experiment.Rule);
// otherwise their trials are independent samples (Mann-Whitney, Holm). minEffect is relative (0.01 = 1%).
func Results(results []*load.Result, names []string, minEffect float64) (*Report, error) {
	return ResultsWithin(results, names, minEffect, 0, stats.DefaultAlpha)
}

// ResultsWithin is Results on share of a run's error budget alpha (share 0: all of it).
func ResultsWithin(results []*load.Result, names []string, minEffect, share, alpha float64) (*Report, error) {
	if len(results) < 2 {
		return nil, exitcode.UsageErrorf("compare needs at least two results")
	}
	if minEffect < 0 || math.IsNaN(minEffect) {
		return nil, exitcode.UsageErrorf("--min-effect must not be negative")
	}
	rep := &Report{Schema: Schema, MinEffect: minEffect, Alpha: alpha, Share: share, Created: time.Now().UTC(), Paired: true}
	base := results[0]
	for _, r := range results {
		rep.Partial = rep.Partial || r.Partial
		if r.Interleave == "" || r.Interleave != base.Interleave {
			rep.Paired = false
		}
	}
	if rep.Paired {
		rep.Interleave = base.Interleave
	}
	for i, r := range results {
		arm := Arm{Name: names[i], Target: r.Target, Trials: max(len(r.Trials), 1), Requests: r.Requests, Errors: r.Errors, Result: r}
		if i > 0 {
			for _, m := range Metrics {
				row := Row{Metric: m.Name, HigherIsBetter: m.HigherIsBetter, Baseline: m.merged(base), Value: m.merged(r)}
				if row.Baseline > 0 {
					row.Diff = row.Value/row.Baseline - 1
				}
				arm.Rows = append(arm.Rows, row)
			}
		}
		rep.Arms = append(rep.Arms, arm)
	}
	if rep.Paired {
		judgePaired(rep, minEffect)
	} else {
		judgeUnpaired(rep, minEffect)
	}
	for i := range rep.Arms {
		for j := range rep.Arms[i].Rows {
			if s := rep.Arms[i].Rows[j].Stats; s != nil {
				rep.Arms[i].Rows[j].Verdict = s.Verdict
			}
		}
	}
	return rep, nil
}

// Rule is the decision rule of a comparison of arms (k of them, the first the baseline): share of the run's
// error budget alpha (0: all of it) is split evenly over every arm against the baseline and every metric.
func Rule(k int, minEffect, share, alpha float64) experiment.Rule {
	if !(share > 0 && share <= alpha) {
		share = alpha
	}
	return experiment.Rule{MinEffect: minEffect, Alpha: share / float64(max(k-1, 1)*len(Metrics)), RunAlpha: alpha}
}

// judgePaired judges each arm's metrics on the log ratios of the trials it shares a round with the baseline. An
// arm that failed requests where the baseline failed none is worse in throughput on that alone, as in the engine.
func judgePaired(rep *Report, minEffect float64) {
	rule := Rule(len(rep.Arms), minEffect, rep.Share, rep.Alpha)
	base := rep.Arms[0].Result
	byIndex := map[int]load.Trial{}
	for _, t := range base.Trials {
		byIndex[t.Index] = t
	}
	judged := false
	for i := 1; i < len(rep.Arms); i++ {
		a := &rep.Arms[i]
		for j, m := range Metrics {
			seq := experiment.NewSequence(0)
			for _, t := range a.Result.Trials {
				b, ok := byIndex[t.Index]
				x, y := m.trial(b), m.trial(t)
				if !ok || !(x > 0) || !(y > 0) {
					continue
				}
				d := math.Log(y / x)
				if !m.HigherIsBetter {
					d = -d
				}
				seq.Add(d)
			}
			if seq.N() < 2 {
				continue
			}
			c := rule.Comparison(seq, m.HigherIsBetter)
			if m.Name == "rps" && a.Errors > 0 && base.Errors == 0 {
				c.Verdict, c.RoundsNeeded = stats.Worse, 0
			}
			a.Rows[j].Stats = c
			judged = true
		}
	}
	if !judged {
		rep.Notes = append(rep.Notes, "no verdicts: the arms share fewer than two rounds")
	}
}

// judgeUnpaired compares independent samples of trials (results not run together): Mann-Whitney, Holm.
func judgeUnpaired(rep *Report, minEffect float64) {
	base := rep.Arms[0].Result
	var family []*stats.Comparison
	var rules []stats.Rule
	for i := 1; i < len(rep.Arms); i++ {
		a := &rep.Arms[i]
		for j, m := range Metrics {
			x, y := trialValues(base, m), trialValues(a.Result, m)
			if len(x) < 2 || len(y) < 2 {
				continue
			}
			c, err := stats.Unpaired(x, y, stats.DefaultConf)
			if err != nil {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s %s: no statistics: %v", a.Name, m.Name, err))
				continue
			}
			a.Rows[j].Stats = &c
			family = append(family, a.Rows[j].Stats)
			rules = append(rules, stats.Rule{MinEffect: minEffect, Alpha: rep.Alpha, HigherIsBetter: m.HigherIsBetter})
		}
	}
	if len(family) == 0 {
		rep.Notes = append(rep.Notes, "no verdicts: the results carry no repeated trials (run them with --repeat, or use compare --interleave)")
		return
	}
	stats.DecideAll(family, rules)
	rep.Notes = append(rep.Notes, "the results were not run interleaved: their trials are compared as independent samples, which drift between runs can bias; compare --interleave pairs them")
	// The smallest p-value n samples a side can give is 2/C(2n, n): with Holm over the whole family the first
	// step multiplies it by the family's size, so too few trials can never show a difference.
	n := len(base.Trials)
	for _, c := range family {
		n = min(n, c.N)
	}
	if n >= stats.MinPairs && minPFor(n)*float64(len(family)) >= rep.Alpha {
		need := n
		for ; minPFor(need+1)*float64(len(family)) >= rep.Alpha; need++ {
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d trials cannot show any difference across %d comparisons (the smallest p-value they allow, %.3g, times %d is not below %.2g): use at least %d",
			n, len(family), minPFor(n), len(family), rep.Alpha, need+1))
	}
}

// minPFor is the smallest two-sided Mann-Whitney p-value n trials a side allow.
func minPFor(n int) float64 { return 2 / binomial(2*n, n) }

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
	Pair, Pairs int // the round, and the most rounds
	Arm         string
	Load        load.Progress
}

// InterleaveOptions bound and decide an interleaved run.
type InterleaveOptions struct {
	MaxRounds int     // the most rounds (--rounds); the run stops sooner when it is decided
	MinEffect float64 // relative
	Alpha     float64 // the run's error budget (0: 0.05)
	Share     float64 // the part of Alpha this run may spend, when it is one experiment of several (0: all)
	// Race, with more than two arms, races them: an arm shown slower than another leaves, and the run ends when
	// one is left (the first keeps its place unless another is shown faster). Otherwise every arm runs against
	// the first until its comparison is decided.
	Race     bool
	Progress func(Progress)
}

// Interleaved is an interleaved run: each arm's merged result (its trials indexed by round, so that
// ResultsWithin pairs them), the order the trials ran in, and how it ended.
type Interleaved struct {
	Results []*load.Result
	Order   []string
	// Share is the part of the budget the metrics are to be judged on (ResultsWithin's share): what the run's
	// own decisions between arms other than the first did not take.
	Share float64
	// Winner is a race's pick ("" without a race); Left says why each other arm left it.
	Winner string
	Left   []string
}

// levels splits share of a run of k arms: one level a comparison, over every metric of every arm against the
// first and, in a race, the throughput of every other pair too. It returns what the engine spends (its pairs'
// levels summed) and what the metrics against the first are judged on.
func levels(k int, race bool, share float64) (engine, metrics float64) {
	metricPairs, enginePairs := (k-1)*len(Metrics), k-1
	total := metricPairs
	if race {
		enginePairs = experiment.Pairs(experiment.Race, k)
		total += enginePairs - (k - 1)
	}
	a := share / float64(total)
	return a * float64(enginePairs), a * float64(metricPairs)
}

// Interleave runs the arms in interleaved rounds on the experiment engine: one trial of each a round, in
// balanced orders (drift on the machine falls on every arm alike), at most MaxRounds rounds; each arm against
// the first until its throughput comparison is decided (Versus), or a race (Race). A cancelled ctx returns the
// trials so far (Partial) with ctx's error.
func Interleave(ctx context.Context, arms []load.Options, names []string, o InterleaveOptions) (*Interleaved, error) {
	if len(arms) < 2 {
		return nil, exitcode.UsageErrorf("compare --interleave needs at least two arms")
	}
	if o.MaxRounds < 2 {
		return nil, exitcode.UsageErrorf("--rounds %d: want at least 2 rounds", o.MaxRounds)
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		o.Alpha = stats.DefaultAlpha
	}
	if !(o.Share > 0 && o.Share <= o.Alpha) {
		o.Share = o.Alpha
	}
	la := make([]*loadArm, len(arms))
	ea := make([]experiment.Arm, len(arms))
	for i, opt := range arms {
		r, err := load.NewRunner(opt)
		if err != nil {
			return nil, fmt.Errorf("arm %s: %w", names[i], err)
		}
		la[i] = &loadArm{name: names[i], r: r, max: o.MaxRounds, progress: o.Progress}
		ea[i] = la[i]
	}
	race := o.Race && len(arms) > 2
	mode := experiment.Versus
	if race {
		mode = experiment.Race
	}
	engine, metrics := levels(len(arms), race, o.Share)
	out, runErr := experiment.Run(ctx, experiment.Spec{Name: "compare", Arms: ea, Mode: mode, HigherIsBetter: true,
		MinEffect: o.MinEffect, Alpha: engine, RunAlpha: o.Alpha, MaxRounds: o.MaxRounds})
	if out == nil {
		return nil, runErr
	}
	run := &Interleaved{Order: out.Order, Share: metrics}
	if race {
		run.Winner = names[out.Winner]
		for i, a := range out.Arms {
			if i != out.Winner && a.Note != "" {
				run.Left = append(run.Left, names[i]+": "+a.Note)
			}
		}
	}
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	for i, a := range la {
		a.r = nil
		if len(a.trials) == 0 {
			return nil, errors.Join(runErr, fmt.Errorf("arm %s: no trial completed", names[i]))
		}
		m := load.Merge(a.trials)
		for k := range m.Trials { // indexed by round: trials of one round pair up
			m.Trials[k].Index = out.Arms[i].Round[k]
		}
		m.Interleave, m.Arm = id, names[i]
		m.Partial = runErr != nil
		run.Results = append(run.Results, m)
	}
	for i, a := range out.Arms {
		if a.Status == experiment.StatusError {
			return run, fmt.Errorf("arm %s: %s", names[i], a.Note)
		}
	}
	return run, runErr
}

// loadArm is one target as an arm of the engine: its trials are load runs, its figure requests a second.
type loadArm struct {
	name     string
	r        *load.Runner
	trials   []*load.Result
	max      int
	progress func(Progress)
}

func (a *loadArm) Name() string { return a.name }

// Start checks that the target answers (one request of each URL) before any trial counts.
func (a *loadArm) Start(ctx context.Context) error { return a.r.Preflight(ctx) }

func (a *loadArm) Trial(ctx context.Context) (experiment.Observation, error) {
	round := len(a.trials) + 1
	r := a.r
	if a.progress != nil {
		r = r.WithProgress(func(p load.Progress) { a.progress(Progress{Pair: round, Pairs: a.max, Arm: a.name, Load: p}) })
	}
	res, err := r.Trial(ctx, round, a.max)
	if err != nil {
		return experiment.Observation{}, err
	}
	a.trials = append(a.trials, res)
	// A window that completed nothing counts as one request in it: a usable (and damning) log ratio.
	return experiment.Observation{Value: max(res.RPS, 1/max(res.DurationS, 1e-3)), Requests: res.Requests - res.Errors,
		Errors: res.Errors, Rate: res.RPS}, nil
}

func (a *loadArm) Stop() {}
