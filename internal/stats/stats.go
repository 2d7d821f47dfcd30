// Package stats holds the vocabulary of phptune's comparisons (Comparison, Verdict) and the rank tests for
// samples the experiment engine did not run.
//
// Every interleaved comparison (tune, compare --interleave, build, clients) is decided by the experiment
// engine (internal/experiment: anytime-valid confidence sequences, one error budget per run) and stated as a
// Comparison of this package. What is left here: saved results that were not run interleaved, compared as
// independent samples (Unpaired, Mann-Whitney with Holm's correction, as compare does for them), the paired
// rank test that bench/tunequality's exhaustive grid uses for its reference, and helpers (Median, MeanCI95).
// It works on the log scale: a metric's values must be positive (req/s, a latency percentile, seconds per op),
// and effects are reported as relative changes of B against A.
//
// # Paired trials (the rank test)
//
// Arms A and B are measured in interleaved pairs (A B, B A, A B, ...), giving n pairs (a_i, b_i). Paired works
// on the log ratios r_i = ln(b_i/a_i):
//
//   - Test: Wilcoxon's signed-rank test, two-sided. Zero differences (r_i == 0, e.g. identical quantised
//     percentiles) are dropped from the test, as in Wilcoxon's original procedure and scipy's default
//     zero_method="wilcox"; they still count in N and in the estimate. Ties among |r_i| get mid-ranks. With up
//     to ExactMax non-zero differences the p-value is exact: the permutation (sign-flip) distribution of the sum
//     of the actual mid-ranks, computed by dynamic programming, so it is exact with ties too (without ties it
//     is the classical exact null distribution). Beyond that, the normal approximation with tie correction and
//     continuity correction.
//   - Estimate: Hodges-Lehmann, the median of the n(n+1)/2 Walsh averages (r_i + r_j)/2, i <= j, over all n
//     pairs. Confidence interval: [W_(k), W_(M+1-k)] where W_(1) <= ... <= W_(M) are the sorted Walsh averages
//     and k-1 is the largest t with P(T+ <= t) <= (1-conf)/2 under the exact (untied) null distribution of the
//     signed-rank statistic T+ for n (normal approximation with continuity correction for n > ExactMax). Its
//     coverage, ConfAchieved = 1 - 2 P(T+ <= k-1), is at least conf whenever the sample allows it (it cannot
//     for n <= 5 at conf = 0.95: the interval is then [min, max] and ConfAchieved says what it covers).
//
// Log ratios are computed as +ln(max/min) or -ln(max/min), so |r| does not depend on which arm is A: swapping
// the arms negates every r_i exactly, and the estimate and interval exactly.
//
// # Unpaired samples
//
// For saved results that were not interleaved, Unpaired uses the Mann-Whitney U test (two-sided) and the
// two-sample Hodges-Lehmann shift: the median of all log ratios ln(b_j/a_i), with the interval from the
// order statistics of those log ratios at the (untied, exact for both sizes <= ExactMax, else normal) critical
// value of U. The p-value is exact for both sizes <= ExactMax, ties included (permutation distribution of the
// mid-rank sum, by dynamic programming), and otherwise the normal approximation with tie and continuity
// correction. Ranks are taken on the raw values (ranks are invariant under the log). N is the smaller sample
// size. Independent samples carry the machine's drift between trials into the noise: prefer Paired.
//
// Two-sided exact p-values are min(1, 2 min(P(S <= s), P(S >= s))) for the observed statistic s. Comparison.Exact
// says whether P is exact; Comparison.Zeros counts the pairs dropped from the signed-rank test. Paired and
// Unpaired leave Verdict empty and PAdjusted equal to P. Cost is O(n^2 log n) (all Walsh averages or all
// pairwise ratios are sorted): milliseconds for the tens of pairs phptune measures.
//
// # Deciding
//
// Rule.Decide gives Better or Worse only when the Holm-adjusted p-value is below Alpha, the confidence
// interval excludes 0 and the estimated relative change is at least MinEffect in size; NoDifference otherwise;
// Insufficient with fewer than MinPairs pairs (DESIGN: at least 6 pairs for any verdict, 10 by default). There
// is no "same" verdict: NoDifference means the data did not show a difference, not that there is none.
// DecideAll applies Holm's correction across the comparisons of one run and then decides each one. Never
// re-run until something looks significant.
//
// API:
//
//	Paired(a, b []float64, conf float64) (Comparison, error)
//	Unpaired(a, b []float64, conf float64) (Comparison, error)
//	Holm(p []float64) []float64
//	Rule{MinEffect, Alpha, HigherIsBetter}.Decide(c Comparison) Verdict
//	DefaultRule(higherIsBetter bool) Rule
//	DecideAll(cs []*Comparison, rules []Rule)
//	Median(x []float64) float64
package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

const (
	// MinPairs is the fewest pairs (or, unpaired, the smaller sample size) for any verdict.
	MinPairs = 6
	// DefaultPairs is the number of pairs to measure unless told otherwise.
	DefaultPairs = 10
	// DefaultConf is the confidence level used when conf is 0.
	DefaultConf = 0.95
	// DefaultAlpha is the significance level applied to Holm-adjusted p-values.
	DefaultAlpha = 0.05
	// DefaultMinEffect is the smallest relative change reported as Better or Worse (1%).
	DefaultMinEffect = 0.01
	// ExactMax is the largest sample size (non-zero differences for Paired, each sample for Unpaired) for
	// which p-values and critical values are computed exactly.
	ExactMax = 50
)

// Verdict is the outcome of a comparison of B against A.
type Verdict string

// Verdicts. There is deliberately no "same".
const (
	Better       Verdict = "better"
	Worse        Verdict = "worse"
	NoDifference Verdict = "no_difference"
	Insufficient Verdict = "insufficient"
	// Inconclusive: a sequential comparison ran out of budget before its interval decided (package experiment).
	Inconclusive Verdict = "inconclusive"
	// Error: the arm failed (it did not start, or a trial failed); not a measurement of it.
	Error Verdict = "error"
)

// Comparison is B measured against A.
type Comparison struct {
	N      int  `json:"n"`      // pairs; for unpaired samples the smaller sample size
	Paired bool `json:"paired"` // interleaved pairs (signed-rank) or independent samples (Mann-Whitney)
	// Estimate is the relative change of B against A, exp(LogEstimate) - 1 (-0.042: B is 4.2% lower).
	Estimate float64 `json:"estimate"`
	Lo       float64 `json:"lo"` // confidence interval of the relative change
	Hi       float64 `json:"hi"`
	// LogEstimate is the Hodges-Lehmann estimate of the shift in ln(B) - ln(A); LogLo and LogHi its interval.
	LogEstimate  float64 `json:"log_estimate"`
	LogLo        float64 `json:"log_lo"`
	LogHi        float64 `json:"log_hi"`
	Conf         float64 `json:"conf"`          // requested confidence level
	ConfAchieved float64 `json:"conf_achieved"` // coverage of the interval actually given (>= Conf unless N is too small)
	P            float64 `json:"p"`             // two-sided p-value
	Exact        bool    `json:"exact"`         // P is exact (not the normal approximation)
	Zeros        int     `json:"zeros"`         // pairs with b == a, left out of the signed-rank test (Paired only)
	PAdjusted    float64 `json:"p_adjusted"`    // after Holm across the family; equals P until DecideAll runs
	Verdict      Verdict `json:"verdict"`
	// Method is how P and the interval were computed: "" or "signed-rank" (fixed n, this package), or
	// "confidence-sequence" (sequential, package experiment: valid at every look).
	Method string `json:"method,omitempty"`
	// Alpha is the error rate this comparison was decided at (its share of the run's error budget): a
	// sequential comparison's interval is at level 1 - Alpha, and its verdict needs P <= Alpha.
	Alpha float64 `json:"alpha,omitempty"`
	// RoundsNeeded estimates, for an inconclusive comparison, the rounds that would have decided it.
	RoundsNeeded int `json:"rounds_needed,omitempty"`
	// Via, for a sequential comparison in a race, names the third arm through which the interval was narrowed:
	// each shown better or worse than the other two the same way (the sum of those two intervals bounds this one).
	Via string `json:"via,omitempty"`
	// OnErrors: the verdict is on failed requests (one arm shown to fail requests the other does not), whatever
	// the figure's interval says.
	OnErrors bool `json:"on_errors,omitempty"`
}

func checkSample(name string, x []float64) error {
	if len(x) == 0 {
		return fmt.Errorf("stats: %s is empty", name)
	}
	for i, v := range x {
		if !(v > 0) || math.IsInf(v, 1) {
			return fmt.Errorf("stats: %s[%d] = %v: values must be positive and finite", name, i, v)
		}
	}
	return nil
}

func checkConf(conf float64) (float64, error) {
	if conf == 0 {
		return DefaultConf, nil
	}
	if !(conf > 0 && conf < 1) {
		return 0, fmt.Errorf("stats: confidence level %v is not in (0, 1)", conf)
	}
	return conf, nil
}

// Paired compares B against A from interleaved pairs (a[i], b[i]) with the Wilcoxon signed-rank test on the
// log ratios and the Hodges-Lehmann estimate and interval at level conf (0 means DefaultConf). The verdict is
// left for Rule.Decide or DecideAll; PAdjusted is set to P.
func Paired(a, b []float64, conf float64) (Comparison, error) {
	if len(a) != len(b) {
		return Comparison{}, fmt.Errorf("stats: %d values for A but %d for B", len(a), len(b))
	}
	conf, err := checkInputs(a, b, conf)
	if err != nil {
		return Comparison{}, err
	}
	r := make([]float64, len(a))
	for i := range a {
		r[i] = logRatio(a[i], b[i])
	}
	return pairedFrom(r, conf), nil
}

// checkInputs checks both samples and the level (0: DefaultConf), which it returns.
func checkInputs(a, b []float64, conf float64) (float64, error) {
	if err := checkSample("A", a); err != nil {
		return 0, err
	}
	if err := checkSample("B", b); err != nil {
		return 0, err
	}
	return checkConf(conf)
}

// pairedFrom is Paired on the log ratios r (any real differences, in fact); conf must be valid.
func pairedFrom(r []float64, conf float64) Comparison {
	n := len(r)
	c := Comparison{N: n, Paired: true, Conf: conf}
	c.P, c.Exact, c.Zeros = signedRankTest(r)
	c.PAdjusted = c.P

	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range r {
		for j := i; j < n; j++ {
			walsh = append(walsh, (r[i]+r[j])/2)
		}
	}
	slices.Sort(walsh)
	k, achieved := signedRankCritical(n, conf)
	c.ConfAchieved = achieved
	c.setInterval(sortedMedian(walsh), walsh[k-1], walsh[len(walsh)-k])
	return c
}

// Unpaired compares independent samples a and b (saved results that were not interleaved) with the
// Mann-Whitney U test and the two-sample Hodges-Lehmann shift of the logs, at level conf (0 means DefaultConf).
func Unpaired(a, b []float64, conf float64) (Comparison, error) {
	conf, err := checkInputs(a, b, conf)
	if err != nil {
		return Comparison{}, err
	}
	// Ranks are taken on the raw values: the log cannot create or break ties there.
	p, exact := mannWhitneyTest(a, b)
	return unpairedFrom(a, b, p, exact, conf), nil
}

// unpairedFrom completes Unpaired from the samples and the test's p-value: the two-sample Hodges-Lehmann shift
// of the logs and its interval. The differences are log ratios ln(b_j/a_i), like Paired's.
func unpairedFrom(a, b []float64, p float64, exact bool, conf float64) Comparison {
	c := Comparison{N: min(len(a), len(b)), Paired: false, Conf: conf, P: p, PAdjusted: p, Exact: exact}
	d := make([]float64, 0, len(a)*len(b))
	for _, y := range b {
		for _, x := range a {
			d = append(d, logRatio(x, y))
		}
	}
	slices.Sort(d)
	k, achieved := mannWhitneyCritical(len(a), len(b), conf)
	c.ConfAchieved = achieved
	c.setInterval(sortedMedian(d), d[k-1], d[len(d)-k])
	return c
}

func (c *Comparison) setInterval(est, lo, hi float64) {
	c.LogEstimate, c.LogLo, c.LogHi = est, lo, hi
	c.Estimate, c.Lo, c.Hi = math.Expm1(est), math.Expm1(lo), math.Expm1(hi)
}

// logRatio is ln(b/a) computed so that logRatio(b, a) == -logRatio(a, b) exactly.
func logRatio(a, b float64) float64 {
	if b >= a {
		return math.Log(b / a)
	}
	return -math.Log(a / b)
}

// Median returns the median of x (the mean of the two middle values for an even count), NaN if x is empty.
// x is not modified.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return sortedMedian(s)
}

func sortedMedian(s []float64) float64 {
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Rule turns a Comparison into a Verdict.
type Rule struct {
	// MinEffect is the smallest relative change, in size, that can be Better or Worse (0.01 = 1%). Negative
	// values count as 0.
	MinEffect float64
	// Alpha is the significance level for the Holm-adjusted p-value. Values outside (0, 1) mean DefaultAlpha.
	Alpha float64
	// HigherIsBetter is true for throughput, false for latency and seconds per op.
	HigherIsBetter bool
}

// DefaultRule is the rule with DefaultMinEffect and DefaultAlpha.
func DefaultRule(higherIsBetter bool) Rule {
	return Rule{MinEffect: DefaultMinEffect, Alpha: DefaultAlpha, HigherIsBetter: higherIsBetter}
}

// Decide returns Insufficient when c.N < MinPairs; Better or Worse when c.PAdjusted < Alpha, the interval
// excludes 0 and |c.Estimate| >= MinEffect; NoDifference otherwise. It does not modify c.
func (r Rule) Decide(c Comparison) Verdict {
	if c.N < MinPairs {
		return Insufficient
	}
	alpha := r.Alpha
	if !(alpha > 0 && alpha < 1) {
		alpha = DefaultAlpha
	}
	minEffect := max(r.MinEffect, 0)
	excludes0 := c.LogLo > 0 || c.LogHi < 0
	if !(c.PAdjusted < alpha) || !excludes0 || !(math.Abs(c.Estimate) >= minEffect) {
		return NoDifference
	}
	if (c.LogEstimate > 0) == r.HigherIsBetter {
		return Better
	}
	return Worse
}

// DecideAll applies Holm's correction across the comparisons of one run and sets each PAdjusted and Verdict.
// rules has one rule for all comparisons or one per comparison (anything else panics). Nil entries are
// skipped. Comparisons with N < MinPairs can never get a verdict, so they stay out of the Holm family (their
// PAdjusted is P; their verdict Insufficient).
func DecideAll(cs []*Comparison, rules []Rule) {
	if len(rules) != 1 && len(rules) != len(cs) {
		panic(errors.New("stats.DecideAll: need one rule, or one rule per comparison"))
	}
	var idx []int
	var ps []float64
	for i, c := range cs {
		if c == nil {
			continue
		}
		c.PAdjusted = c.P
		if c.N >= MinPairs {
			idx = append(idx, i)
			ps = append(ps, c.P)
		}
	}
	for j, adj := range Holm(ps) {
		cs[idx[j]].PAdjusted = adj
	}
	for i, c := range cs {
		if c == nil {
			continue
		}
		rule := rules[0]
		if len(rules) > 1 {
			rule = rules[i]
		}
		c.Verdict = rule.Decide(*c)
	}
}

// Holm returns Holm's step-down adjusted p-values, in the order of p: with p sorted ascending as
// p_(1) <= ... <= p_(m), the adjusted p_(i) is max over j <= i of min(1, (m-j+1) p_(j)). They are monotone in
// p and capped at 1. A NaN p-value is treated as 1. p is not modified.
func Holm(p []float64) []float64 {
	m := len(p)
	q := make([]float64, m)
	for i, v := range p {
		if math.IsNaN(v) {
			v = 1
		}
		q[i] = min(max(v, 0), 1)
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case q[x] < q[y]:
			return -1
		case q[x] > q[y]:
			return 1
		}
		return 0
	})
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		running = max(running, min(1, float64(m-rank)*q[i]))
		adj[i] = running
	}
	return adj
}

// MeanSD is the mean of x and its sample standard deviation (NaN for fewer than two values).
func MeanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// MeanCI95 is the mean of x and its 95% confidence interval from Student's t distribution: for descriptive
// intervals (a point of a curve), not for comparisons, which pair their trials.
func MeanCI95(x []float64) (mean, lo, hi float64) {
	mean, sd := MeanSD(x)
	if len(x) < 2 {
		return mean, mean, mean
	}
	h := tQuantile975(len(x)-1) * sd / math.Sqrt(float64(len(x)))
	return mean, mean - h, mean + h
}

// tQuantile975 is Student's t 0.975 quantile: a table for small degrees of freedom, then a series in 1/df.
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228}
	if df < len(table) {
		return table[df]
	}
	return 1.96 + 2.4/float64(df)
}
