package experiment

import "github.com/phptune/phptune/internal/stats"

// A comparison of two figures (Spec.Second) in Versus runs until both are decided, and one is often decided
// rounds before the other. A confidence sequence's verdict holds at whatever look first reaches it, so the rounds
// run on for the other figure do not take it back: each figure's verdict is kept with the look's comparison that
// reached it. Judged again at every look, a figure could lose its verdict to a later round's outlier: in runs of
// phptune gate on the demo (2026-11-28, docs/ci.md) a page's CPU read no difference after 6 rounds and, racing on
// for its p99, inconclusive at 7 (+0.1% [-3.5, +3.8]), where the run's budget ended.

// keep notes, for each arm still compared with Arms[0], the comparisons a figure first decides at this look.
func (e *run) keep() {
	if e.s.Mode != Versus {
		return
	}
	if e.kept[0] == nil {
		e.kept = [2][]*stats.Comparison{make([]*stats.Comparison, len(e.s.Arms)), make([]*stats.Comparison, len(e.s.Arms))}
	}
	for _, j := range e.live[1:] {
		if e.kept[0][j] == nil && e.judge(0, j) != "" {
			e.kept[0][j] = e.comparison(j)
		}
		if e.seq2 != nil && e.kept[1][j] == nil && e.rule().Judge(e.seq2[0][j]) != "" {
			e.kept[1][j] = e.secondComparison(j)
		}
	}
}

// decided says whether arm j's figure f (0 the Value, 1 the second) is decided against Arms[0]: kept in Versus,
// else judged on its rounds so far.
func (e *run) decided(f, j int) bool {
	if e.s.Mode == Versus && e.kept[f] != nil {
		return e.kept[f][j] != nil
	}
	if f == 0 {
		return e.judge(0, j) != ""
	}
	return e.rule().Judge(e.seq2[0][j]) != ""
}

// stated is arm j's comparison with Arms[0] on figure f as the run states it: on all its rounds while they bear
// out the verdict kept (then the most rounds' interval), else the kept one, failures deciding first as they do at
// the end. Both intervals hold at once (a confidence sequence's hold at every look together), so stating either
// is sound.
func (e *run) stated(f, j int) *stats.Comparison {
	now := e.secondComparison
	if f == 0 {
		now = e.comparison
	}
	c := now(j)
	if e.s.Mode != Versus || e.kept[f] == nil || e.kept[f][j] == nil || c.Verdict == e.kept[f][j].Verdict {
		return c
	}
	kept := *e.kept[f][j]
	return e.onFailures(j, &kept)
}

// secondComparison states arm j against Arms[0] on the second figure, on its rounds so far.
func (e *run) secondComparison(j int) *stats.Comparison {
	return e.onFailures(j, e.rule().Comparison(e.seq2[0][j], e.s.Second.HigherIsBetter))
}
