package gate

import (
	"math"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// latencyFigure names the second figure of every comparison.
const latencyFigure = "p99 latency"

// The figures NEW may be shown worse on (Comparison.WorseOn).
const (
	FigureCPU     = "cpu"
	FigureLatency = "latency"
)

// LatencyMetric says what the latency figure is, in result.json.
const LatencyMetric = "p99 (and p50) latency in milliseconds at a fixed rate, both versions at once, in some rounds: " +
	"half the slower version's throughput in the comparison's first round"

// Latency is NEW against OLD on the p99 at a fixed rate, for one comparison. The p99 is a guard, as tune's is: NEW
// shown worse on it is worse whatever its CPU; undecided, it holds the gate undecided only while its estimate
// leans against NEW by the minimum effect and beyond chance (leanRisk: more rounds may show it worse).
type Latency struct {
	// RatePerS is each version's rate in every latency trial; RequestsPerTrial a latency trial's requests; Trials
	// the rounds that ran latency trials (some of the comparison's rounds, latencyDue).
	RatePerS         float64 `json:"rate_per_s"`
	RequestsPerTrial int     `json:"requests_per_trial"`
	Trials           int     `json:"trials"`
	// Verdict is the engine's on the p99; Gate what it means for the gate; LeansWorse that it leans against NEW.
	Verdict    stats.Verdict `json:"verdict"`
	Gate       string        `json:"gate"`
	LeansWorse bool          `json:"leans_worse,omitempty"`
	// Change is the relative change of the p99, NEW against OLD, with its interval [Lo, Hi] at Level (its share
	// of the comparison's alpha: half).
	Change float64 `json:"change"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Level  float64 `json:"level"`
	// The medians of each version's latency trials' p50 and p99, milliseconds.
	OldP50Ms float64 `json:"old_p50_ms"`
	NewP50Ms float64 `json:"new_p50_ms"`
	OldP99Ms float64 `json:"old_p99_ms"`
	NewP99Ms float64 `json:"new_p99_ms"`
	// RoundsNeeded estimates, undecided, the rounds with latency trials in all that would decide the p99.
	RoundsNeeded int  `json:"rounds_needed,omitempty"`
	OnErrors     bool `json:"on_errors,omitempty"`
}

// leanRisk is the chance a run may end undecided by a p99 that only seems to lean against NEW, shared among its
// comparisons (leans). The lean is a one-sided t-test on the p99's rounds, a looser test than the verdict's
// confidence sequence: the gate asks that the p99 be neither shown worse nor lean so. It was two standard errors
// a comparison, which the p99's few rounds (6 to 9 in 2 minutes) pass by chance in 4 to 5% of comparisons: of
// 20 runs of the demo against itself, 4 ended undecided so, each held by one page's p99 (docs/ci.md).
const leanRisk = 0.01

// leans says whether c's p99, undecided, leans against NEW by the minimum effect and by more than chance gives
// its rounds at the comparison's share of leanRisk.
func (g *gate) leans(c *comparison) bool {
	return c.x.SecondLeans(1, leanRisk/float64(len(g.comps)))
}

// latencyState is c's latency figure as it stands (nil before its first round).
func (g *gate) latencyState(c *comparison) *Latency {
	if c.out == nil || c.lat.n == 0 {
		return nil
	}
	l := &Latency{RatePerS: c.lat.rate, RequestsPerTrial: c.lat.n, Verdict: stats.Inconclusive, Gate: Undecided,
		Lo: -1, Hi: math.Expm1(experiment.Unbounded)}
	l.Trials = len(c.lat.trials[0])
	l.OldP50Ms, l.OldP99Ms = medians(c.lat.trials[0])
	l.NewP50Ms, l.NewP99Ms = medians(c.lat.trials[1])
	vs := c.out.Arms[1].Vs2
	if vs == nil {
		return l
	}
	l.Verdict, l.Change, l.Lo, l.Hi, l.Level = vs.Verdict, vs.Estimate, vs.Lo, vs.Hi, vs.Conf
	l.RoundsNeeded, l.OnErrors = vs.RoundsNeeded, vs.OnErrors
	l.LeansWorse = g.leans(c)
	l.Gate = latencyGate(vs, l.LeansWorse)
	return l
}

// latencyGate is what the latency figure means for the gate: worse when shown worse; not worse when neither
// shown worse nor leaning worse (after two rounds); else undecided.
func latencyGate(vs *stats.Comparison, leans bool) string {
	switch {
	case vs == nil || vs.Verdict == stats.Error || vs.N < 2:
		return Undecided
	case vs.Verdict == stats.Worse:
		return Worse
	case leans:
		return Undecided
	}
	return NotWorse
}

// together is what a comparison's figures mean for the gate, with the figures NEW is shown worse on: worse when
// either is, not worse when both are (latency "" when not raced: CPU alone), else undecided.
func together(cpu, lat string) (string, []string) {
	var worse []string
	if cpu == Worse {
		worse = append(worse, FigureCPU)
	}
	if lat == Worse {
		worse = append(worse, FigureLatency)
	}
	switch {
	case len(worse) > 0:
		return Worse, worse
	case cpu == NotWorse && (lat == NotWorse || lat == ""):
		return NotWorse, nil
	}
	return Undecided, nil
}

// settled says whether c is shown not worse on CPU and decided not worse on its p99 (better, no difference), or
// has no p99: nothing more rounds could change for the gate.
func (g *gate) settled(c *comparison) bool {
	if gateOf(c.out.Arms[1].Vs, g.o.MinEffect) != NotWorse {
		return false
	}
	l := g.latencyState(c)
	return l == nil || l.Gate == NotWorse && (l.Verdict == stats.Better || l.Verdict == stats.NoDifference)
}

// gates is what c's figures mean for the gate now, both together, for deciding whether it races on.
func (g *gate) gates(c *comparison) string {
	lat := ""
	if l := g.latencyState(c); l != nil {
		lat = l.Gate
	}
	gate, _ := together(gateOf(c.out.Arms[1].Vs, g.o.MinEffect), lat)
	return gate
}

// medians are the median p50 and p99 of latency trials (0 without any).
func medians(ts []latTrial) (p50, p99 float64) {
	if len(ts) == 0 {
		return 0, 0
	}
	a, b := make([]float64, len(ts)), make([]float64, len(ts))
	for i, t := range ts {
		a[i], b[i] = t.P50, t.P99
	}
	return stats.Median(a), stats.Median(b)
}
