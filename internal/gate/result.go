package gate

import (
	"errors"
	"math"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// Schema names result.json's format.
const Schema = "phptune/gate/v1"

// The gate's outcomes, for the run and for each comparison.
const (
	Worse     = "worse"     // NEW shown worse (on the mix or some URL: exit 3)
	NotWorse  = "not_worse" // NEW shown not worse by more than the minimum effect (on every comparison: exit 0)
	Undecided = "undecided" // neither, in the budget (exit 4)
)

// Result is what a gate run found.
type Result struct {
	Schema  string  `json:"schema"`
	Old     Version `json:"old"`
	New     Version `json:"new"`
	Outcome string  `json:"outcome"`
	// Metric is what was raced: php-fpm's CPU time a request served, in microseconds; LatencyMetric the second
	// figure, each comparison's Latency.
	Metric        string       `json:"metric"`
	LatencyMetric string       `json:"latency_metric,omitempty"`
	Comparisons   []Comparison `json:"comparisons"`
	MinEffect     float64      `json:"min_effect"`
	Alpha         float64      `json:"alpha"`
	// StackSD is the spread of a stack's offset the comparisons allow for; LatencyLeadSD that of a p99 lead lasting
	// the run.
	StackSD       float64 `json:"stack_sd"`
	LatencyLeadSD float64 `json:"latency_lead_sd,omitempty"`
	Connections   int     `json:"connections"` // each version's, in a trial
	BudgetS       float64 `json:"budget_s"`
	ElapsedS      float64 `json:"elapsed_s"`
	// Rounds are the rounds run, each on a fresh pair of stacks; Stacks the stacks started.
	Rounds      int      `json:"rounds"`
	Stacks      int      `json:"stacks"`
	Partial     bool     `json:"partial,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	CommandLine []string `json:"command_line,omitempty"`
}

// Comparison is NEW against OLD on one URL, or on the mix.
type Comparison struct {
	Name string `json:"name"` // "GET /path", or "mix"
	// Verdict is the engine's on CPU a request (better, worse, no_difference, inconclusive, error); CPUGate what
	// it means for the gate (worse, not_worse, undecided): an inconclusive comparison whose interval lies below
	// the minimum effect is shown not worse. Gate is the comparison's, both figures together: worse when either
	// is (WorseOn names which: cpu, latency), not worse when both are.
	Verdict stats.Verdict `json:"verdict"`
	CPUGate string        `json:"cpu_gate"`
	Gate    string        `json:"gate"`
	WorseOn []string      `json:"worse_on,omitempty"`
	// Change is the relative change of CPU a request, NEW against OLD (+0.05: NEW costs 5% more), with its
	// interval [Lo, Hi] at Level, which holds with every other comparison's at the run's 1 - alpha.
	Change float64 `json:"change"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Level  float64 `json:"level"`
	// OldUs and NewUs are the median CPU microseconds a request of each version's trials.
	OldUs  float64 `json:"old_cpu_us"`
	NewUs  float64 `json:"new_cpu_us"`
	Rounds int     `json:"rounds"`
	// DecidedAt is the round whose look decided the CPU figure, when the comparison raced on after it for its
	// p99 and all its rounds no longer bear the verdict out: the verdict, change and interval are that look's (a
	// confidence sequence's verdict holds at the look that reaches it; the rounds after are the p99's).
	DecidedAt        int `json:"decided_at,omitempty"`
	RequestsPerTrial int `json:"requests_per_trial"`
	// Seconds is the time its rounds took (both versions' trials at once).
	Seconds float64 `json:"seconds"`
	// RoundsNeeded estimates, for an undecided comparison, the rounds in all that would decide it.
	RoundsNeeded int `json:"rounds_needed,omitempty"`
	// OnErrors: decided on failed requests, whatever the CPU.
	OnErrors bool `json:"on_errors,omitempty"`
	// Ended says why it stopped racing: decided, shown worse, shown not worse, budget, interrupted.
	Ended string `json:"ended"`
	// Latency is the second figure: the p99 at a fixed rate (nil before the first round).
	Latency *Latency `json:"latency,omitempty"`
	// Engine is the experiment: every trial, its stack, and the engine's own account.
	Engine *experiment.Outcome `json:"engine,omitempty"`
}

// result states the run as it stands.
func (g *gate) result() *Result {
	r := &Result{Schema: Schema, Old: g.ver[0], New: g.ver[1], Metric: "php-fpm CPU microseconds a request",
		MinEffect: g.o.MinEffect, Alpha: g.o.Alpha, StackSD: g.o.StackSD, Connections: g.conc,
		BudgetS: g.o.Budget.Seconds(), ElapsedS: g.clock.Now().Sub(g.began).Seconds(), Rounds: g.roundsRun, Stacks: g.serial,
		Warnings: g.warnings}
	if !g.o.NoLatency {
		r.LatencyMetric, r.LatencyLeadSD = LatencyMetric, LatencyLeadSD
	}
	for _, c := range g.comps {
		r.Comparisons = append(r.Comparisons, g.state(c))
	}
	r.Outcome = outcome(r.Comparisons)
	return r
}

// state is c as it stands.
func (g *gate) state(c *comparison) Comparison {
	s := Comparison{Name: c.Name, Verdict: stats.Inconclusive, CPUGate: Undecided, Gate: Undecided, RequestsPerTrial: c.n,
		Ended:   c.ended,
		Seconds: c.spent.Seconds(),
		Engine:  c.out, Lo: -1, Hi: math.Expm1(experiment.Unbounded)}
	if c.out == nil {
		s.Ended = "not raced"
		return s
	}
	if s.Ended == "" {
		s.Ended = c.out.Ended
	}
	s.Rounds = c.out.Rounds
	s.OldUs, s.NewUs = medianValue(c.out.Arms[0]), medianValue(c.out.Arms[1])
	vs := c.out.Arms[1].Vs
	if vs == nil {
		return s
	}
	s.Verdict, s.Change, s.Lo, s.Hi, s.Level = vs.Verdict, vs.Estimate, vs.Lo, vs.Hi, vs.Conf
	s.RoundsNeeded, s.OnErrors = vs.RoundsNeeded, vs.OnErrors
	if vs.Verdict != stats.Inconclusive && vs.N < s.Rounds {
		s.DecidedAt = vs.N
	}
	s.CPUGate = gateOf(vs, g.o.MinEffect)
	lat := ""
	if s.Latency = g.latencyState(c); s.Latency != nil {
		lat = s.Latency.Gate
	}
	s.Gate, s.WorseOn = together(s.CPUGate, lat)
	return s
}

// gateOf is what a comparison means for the gate.
func gateOf(vs *stats.Comparison, minEffect float64) string {
	switch {
	case vs == nil:
		return Undecided
	case vs.Verdict == stats.Worse:
		return Worse
	case notWorse(vs, minEffect):
		return NotWorse
	}
	return Undecided
}

// notWorse says whether vs shows NEW not worse than OLD by more than the minimum effect: better or no difference,
// or an interval of the change in CPU a request whose upper end lies below it (one side of the interval, which
// holds at its level as the whole does).
func notWorse(vs *stats.Comparison, minEffect float64) bool {
	if vs == nil || vs.Verdict == stats.Error || vs.Verdict == stats.Worse {
		return false
	}
	return vs.Verdict == stats.Better || vs.Verdict == stats.NoDifference || vs.N >= 2 && vs.LogHi < math.Log1p(minEffect)
}

// outcome is the run's: worse when any comparison is, not worse when every one is, else undecided.
func outcome(cs []Comparison) string {
	all := len(cs) > 0
	for _, c := range cs {
		if c.Gate == Worse {
			return Worse
		}
		all = all && c.Gate == NotWorse
	}
	if all {
		return NotWorse
	}
	return Undecided
}

// medianValue is the median figure of an arm's trials (0 without any).
func medianValue(a experiment.ArmResult) float64 {
	if len(a.Trials) == 0 {
		return 0
	}
	x := make([]float64, len(a.Trials))
	for i, t := range a.Trials {
		x[i] = t.Value
	}
	return stats.Median(x)
}

// Exit is the run's exit: 3 when NEW is shown worse, 4 when undecided, nil (0) when shown not worse.
func (r *Result) Exit() error {
	switch r.Outcome {
	case Worse:
		return exitcode.ThresholdErrorf("%s", r.Headline())
	case Undecided:
		return exitcode.WithCode(exitcode.Undecided, errors.New(r.Headline()+": a longer --budget decides more"))
	}
	return nil
}
