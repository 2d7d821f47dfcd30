package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// final compares the recommendation with the starting point (Debian's defaults or the user's files) and the
// rule of thumb, in the same rounds, on goodput at the load measured and on capacity (requests per CPU-second of
// php-fpm and nginx) read from the same trials, each comparison until both are decided or the budget ends. The
// two figures share the comparison's alpha: one error budget over both. Goodput varies by 10 to 20% a round on
// a busy machine, the CPU a request by about 5%: capacity decides where goodput cannot.
//
// A baseline that is the recommendation itself is not raced against it: the answer is known (nothing to change),
// and an A/A race could only end inconclusive or, after a thousand rounds, as no difference. Each distinct
// configuration runs as one arm. A baseline that the time left cannot decide, while another can be, yields its
// rounds to it (Spec.RoundsLeft): on WordPress the rule of thumb needed 394 rounds and took a third of the rounds
// that Debian's defaults needed 22 of. Configurations that differ only in a pm.max_requests no worker could reach
// within the run are one arm too: they serve alike until then, so a race of them is an A/A race. The
// recommendation's p99 is judged against the starting point's on the same rounds, at a share of the same alpha
// (finaltail.go): a tail shown worse is said first, whatever the two figures show.
func (t *tuner) final(ctx context.Context) error {
	rule := t.ruleOfThumb()
	need, _ := t.finalNeed()
	h := &Headline{RuleOfThumb: rule.String(), Baseline: t.o.BaseName, KeptS: t.left().Seconds(), ForeseenS: need.Seconds()}
	if h.Baseline == "" {
		h.Baseline = "Debian's defaults"
	}
	t.log.headline = h
	spec := arms.TrialSpec{Phase: "final", Metric: MetricGoodput, Conc: t.conc, Capacity: true, Fresh: true}
	names := []string{"recommendation", h.Baseline, "rule of thumb"}
	reach := t.reach()
	cfgs, armOf := distinct([]knob.Config{t.best, t.o.Base, rule}, reach)
	h.Same, h.RuleSame = armOf[1] == 0, armOf[2] == 0
	if h.Same && t.best.MaxRequests != t.o.Base.MaxRequests {
		h.SameBut = fmt.Sprintf("max_requests=%d", t.best.MaxRequests)
		h.Reach = reach
	}
	t.budget.Release(experiment.Pairs(experiment.Versus, 3) - experiment.Pairs(experiment.Versus, len(cfgs)))
	if len(cfgs) == 1 {
		return nil // the recommendation is both baselines: nothing to compare
	}
	race := make([]experiment.Arm, len(cfgs))
	var others []string
	for i, c := range cfgs {
		name := names[slices.Index(armOf, i)]
		race[i] = &timedArm{Arm: t.src.Arm(c, spec), name: name, c: t.costs, clock: t.clock, metric: MetricGoodput}
		if i > 0 {
			others = append(others, name)
		}
	}
	defer stopAll(race)
	began := t.clock.Now()
	sofar := &pace{began: began}
	drawn := t.budget.Draw(experiment.Pairs(experiment.Versus, len(race)))
	tail := finalTailAlpha(drawn, len(race), h.Same) // the p99's share: finaltail.go
	es := experiment.Spec{Name: "final", Arms: race, Mode: experiment.Versus, HigherIsBetter: true, MinEffect: t.o.MinEffect,
		Second: &experiment.Figure{Name: "requests per CPU-second", HigherIsBetter: true, StackSD: t.d.stackSD[MetricCPU]},
		Alpha:  drawn - tail, RunAlpha: t.budget.Total(), ParallelStart: true,
		Continue: func(l experiment.Look) bool {
			return t.clock.Now().Add(t.finalRound(l.Live, movesDue(race))).Before(t.end)
		},
		RoundsLeft: func(live int) int {
			return int(t.end.Sub(t.clock.Now()) / (time.Duration(live) * sofar.per(t.clock.Now(), t.finalTrial())))
		},
		Progress: func(p experiment.Progress) {
			sofar.trials++
			t.status("final", fmt.Sprintf("recommendation vs %s, round %d", strings.Join(others, " vs "), p.Round))
		}}
	es, told := t.d.tuned(es, MetricGoodput, spec.Phase)
	judge := t.judgeTail(tail, es)
	if !h.Same {
		es.Hold = judge.hold(armOf[1])
	}
	h.StackSD = &told
	out, err := experiment.Run(ctx, es)
	if out == nil {
		return err
	}
	if errors.Is(err, arms.ErrOOM) && ctx.Err() == nil {
		// Memory, not a configuration's figure: the comparison ends with what its rounds showed, and the run's
		// files are still written.
		t.warn(fmt.Sprintf("the final comparison ended after %s: %v", plural(out.Rounds, "round", "rounds"), err))
		err = nil
	}
	if out.Rounds == 0 {
		if !h.Same {
			t.log.headline = nil // nothing measured: no figures to print as if they were
		}
		t.warn("the budget ended before the final comparison's first round: a larger --budget compares the recommendation with the baselines")
		return err
	}
	h.Rounds = out.Rounds
	h.RoundS = t.clock.Now().Sub(began).Seconds() / float64(out.Rounds)
	arm := func(i int) experiment.ArmResult { return out.Arms[armOf[i]] }
	h.RecommendationRPS, h.DebianRPS, h.RuleOfThumbRPS = medianOf(arm(0).Trials, rate), medianOf(arm(1).Trials, rate), medianOf(arm(2).Trials, rate)
	h.RecommendationReqPerCPUS, h.DebianReqPerCPUS = medianOf(arm(0).Trials, second), medianOf(arm(1).Trials, second)
	h.RuleOfThumbReqPerCPUS = medianOf(arm(2).Trials, second)
	if !h.Same {
		h.VsDebian, h.CapacityVsDebian = invert(arm(1).Vs), invert(arm(1).Vs2)
		judge.record(h, out, armOf[1])
	}
	if !h.RuleSame {
		h.VsRuleOfThumb, h.CapacityVsRuleOfThumb = invert(arm(2).Vs), invert(arm(2).Vs2)
	}
	if out.Ended == experiment.EndBudget && t.clock.Now().Sub(began) < 10*time.Second {
		t.warn("the final comparison with the baselines was cut short by the budget")
	}
	return err
}

// finalRound is what the final's next round is foreseen to take: a trial of each of its live arms, and a start
// of a stack for each that first moves to a fresh one (an alternating round's arms move in turn). Counted as three
// trials, WordPress's last round began 5.8 s before the budget's end, moved an arm (5.4 s) and ended 1.2 s past it
// (2026-11-29, ra51).
func (t *tuner) finalRound(live, moves int) time.Duration {
	return time.Duration(live)*t.finalTrial() + time.Duration(moves)*t.costs.start(MetricGoodput)
}

// finalTrial is what a trial of the final comparison costs. Its rounds alternate, not split: they compare pools
// of other shapes (Debian's dynamic pool against a static one), which a duet changes as it does the pool sizes'
// (Splits), and in the 10-minute demo (2026-11-29, run d1) its split rounds were no steadier.
func (t *tuner) finalTrial() time.Duration {
	return t.costs.trial(MetricGoodput)
}

// pace is what an experiment's trials have taken so far, its starts and moves to fresh stacks included: on
// WordPress the final's trials took 2.5 s each and its rounds of three 10.3 s.
type pace struct {
	began  time.Time
	trials int
}

// per is the time a trial has taken so far, or guess before three trials.
func (p *pace) per(now time.Time, guess time.Duration) time.Duration {
	if p.trials < 3 {
		return guess
	}
	return now.Sub(p.began) / time.Duration(p.trials)
}

// ruleOfThumb is the rule of thumb's pool on the starting point's php.ini and runtime.
func (t *tuner) ruleOfThumb() knob.Config {
	rule := knob.RuleOfThumb(t.cpus())
	rule.INI, rule.Defines = t.o.Base.INI, t.o.Base.Defines
	rule.Server, rule.Apache = t.o.Base.Server, t.o.Base.Apache
	return rule
}

// distinct is cfgs without repeats, and for each of cfgs the index of its configuration there: the first's is 0.
// Two configurations are one where they can differ only after a worker has served more than reach requests.
func distinct(cfgs []knob.Config, reach int64) ([]knob.Config, []int) {
	var out []knob.Config
	at := make([]int, len(cfgs))
	for i, c := range cfgs {
		at[i] = slices.IndexFunc(out, func(o knob.Config) bool { return inRun(o, reach) == inRun(c, reach) })
		if at[i] < 0 {
			at[i] = len(out)
			out = append(out, c)
		}
	}
	return out, at
}

// inRun is c's key as a run of reach requests a worker sees it: a pm.max_requests above reach never acts.
func inRun(c knob.Config, reach int64) string {
	if int64(c.MaxRequests) > reach {
		c.MaxRequests = 0
	}
	return c.Key()
}

// reach bounds the requests one worker can serve in the run: every request of the whole budget, at the fastest
// rate any trial measured, served by that one worker. Without a measured rate nothing is out of reach.
func (t *tuner) reach() int64 {
	var top float64
	for _, r := range t.log.trials {
		top = max(top, r.RPS)
	}
	if top <= 0 {
		return math.MaxInt64
	}
	return int64(math.Ceil(top * t.end.Sub(t.start).Seconds()))
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
