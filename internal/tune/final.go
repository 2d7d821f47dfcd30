package tune

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// final compares the recommendation with the starting point (Debian's defaults or the user's files) and the
// rule of thumb, in the same rounds, on goodput at the load measured and on capacity (requests per CPU-second of
// php-fpm and nginx) read from the same trials, each comparison until both are decided or the budget ends. The
// two figures share the comparison's alpha: one error budget over both. Goodput varies by 10 to 20% a round on
// a busy machine, the CPU a request by about 5%: capacity decides where goodput cannot.
func (t *tuner) final(ctx context.Context) error {
	rule := knob.RuleOfThumb(t.cpus())
	rule.INI, rule.Defines = t.o.Base.INI, t.o.Base.Defines
	rule.Server, rule.Apache = t.o.Base.Server, t.o.Base.Apache // the rule of thumb on the starting point's runtime
	h := &Headline{RuleOfThumb: rule.String(), Baseline: t.o.BaseName}
	if h.Baseline == "" {
		h.Baseline = "Debian's defaults"
	}
	t.res.Headline = h
	spec := TrialSpec{Phase: "final", Metric: MetricGoodput, Conc: t.conc}
	cfgs := []knob.Config{t.best, t.o.Base, rule}
	arms := make([]experiment.Arm, len(cfgs))
	names := []string{"recommendation", h.Baseline, "rule of thumb"}
	for i, c := range cfgs {
		arms[i] = &timedArm{Arm: t.src.Arm(c, spec), name: names[i], c: t.costs, clock: t.clock, metric: MetricGoodput}
	}
	defer stopAll(arms)
	es := experiment.Spec{Name: "final", Arms: arms, Mode: experiment.Versus, HigherIsBetter: true, MinEffect: t.o.MinEffect,
		Second: &experiment.Figure{Name: "requests per CPU-second", HigherIsBetter: true, StackSD: t.d.stackSD[MetricCPU]},
		Alpha:  t.budget.Draw(experiment.Pairs(experiment.Versus, 3)), RunAlpha: t.budget.Total(), ParallelStart: true,
		Continue: func(experiment.Look) bool {
			return t.clock.Now().Add(3 * t.costs.trial(MetricGoodput)).Before(t.end)
		},
		Progress: func(p experiment.Progress) {
			t.status("final", fmt.Sprintf("recommendation vs %s vs rule of thumb, round %d", h.Baseline, p.Round))
		}}
	began := t.clock.Now()
	out, err := experiment.Run(ctx, t.d.tuned(es, MetricGoodput))
	if out == nil {
		return err
	}
	if out.Rounds == 0 {
		t.res.Headline = nil // nothing measured: no figures to print as if they were
		t.warn("the budget ended before the final comparison's first round: a larger --budget compares the recommendation with the baselines")
		return err
	}
	h.Rounds = out.Rounds
	h.RoundS = t.clock.Now().Sub(began).Seconds() / float64(out.Rounds)
	h.RecommendationRPS = medianOf(out.Arms[0].Trials, rate)
	h.DebianRPS = medianOf(out.Arms[1].Trials, rate)
	h.RuleOfThumbRPS = medianOf(out.Arms[2].Trials, rate)
	h.VsDebian, h.VsRuleOfThumb = invert(out.Arms[1].Vs), invert(out.Arms[2].Vs)
	h.RecommendationReqPerCPUS = medianOf(out.Arms[0].Trials, second)
	h.DebianReqPerCPUS = medianOf(out.Arms[1].Trials, second)
	h.RuleOfThumbReqPerCPUS = medianOf(out.Arms[2].Trials, second)
	h.CapacityVsDebian, h.CapacityVsRuleOfThumb = invert(out.Arms[1].Vs2), invert(out.Arms[2].Vs2)
	if out.Ended == experiment.EndBudget && t.clock.Now().Sub(began) < 10*time.Second {
		t.warn("the final comparison with the baselines was cut short by the budget")
	}
	return err
}

func second(o experiment.Observation) float64 { return o.Second }

// invert turns "B against A" into "A against B": the engine compares each baseline with the recommendation,
// the headline states the recommendation against each baseline.
func invert(c *stats.Comparison) *stats.Comparison {
	if c == nil {
		return nil
	}
	r := *c
	r.LogEstimate, r.LogLo, r.LogHi = -c.LogEstimate, -c.LogHi, -c.LogLo
	r.Estimate, r.Lo, r.Hi = math.Expm1(r.LogEstimate), math.Expm1(r.LogLo), math.Expm1(r.LogHi)
	switch c.Verdict {
	case stats.Better:
		r.Verdict = stats.Worse
	case stats.Worse:
		r.Verdict = stats.Better
	}
	return &r
}
