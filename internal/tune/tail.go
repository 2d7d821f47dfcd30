package tune

import (
	"fmt"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// tailNotes words what a guarded race (TrialSpec.Tail) traded for the p99: each value taken out for its p99 says
// by how much on its comparison; the one of them furthest ahead on goodput, if any was, gives traded ("apache-modphp
// +5.1% req/s but p99 24x worse: kept nginx-fpm"), with picked the race's pick and changed whether it is not the
// incumbent from. A pick whose p99 leans worse by minEffect or more, undecided, gives note: it was let through.
func tailNotes(from, picked string, changed bool, comps []Comparison, minEffect float64) (traded, note string) {
	best := -1
	for i := range comps {
		c := &comps[i]
		switch {
		case c.P99 == nil:
		case c.Status == experiment.StatusDropped && c.Note == "p99 worse than "+orUnset(from):
			c.Note = fmt.Sprintf("p99 %s than %s", timesWorse(c.P99.Estimate), orUnset(from))
			if c.Stats.LogEstimate > 0 && (best < 0 || c.Stats.LogEstimate > comps[best].Stats.LogEstimate) {
				best = i
			}
		case c.Accepted && c.P99.Verdict == stats.Inconclusive && c.P99.Estimate >= minEffect:
			note = fmt.Sprintf("its p99 %+.0f%% [%+.0f%%, %+.0f%%] against %s's, not shown worse", 100*c.P99.Estimate,
				100*c.P99.Lo, 100*c.P99.Hi, orUnset(from))
		}
	}
	if best < 0 {
		return "", note
	}
	c := comps[best]
	shown, outcome := "", "kept "+orUnset(picked)
	if c.Stats.Verdict != stats.Better {
		shown = " (" + string(c.Stats.Verdict) + ")"
	}
	if changed {
		outcome = orUnset(picked) + " taken instead"
	}
	return fmt.Sprintf("%s %+.1f%% req/s%s but p99 %s: %s", orUnset(c.B), 100*c.Stats.Estimate, shown,
		timesWorse(c.P99.Estimate), outcome), note
}

// timesWorse words a relative rise of a latency: "24x worse" from twice up, else "35% worse".
func timesWorse(rise float64) string {
	switch r := 1 + rise; {
	case r >= 9.95:
		return fmt.Sprintf("%.0fx worse", r)
	case r >= 2:
		return fmt.Sprintf("%.1fx worse", r)
	}
	return fmt.Sprintf("%.0f%% worse", 100*rise)
}

// outForTail says whether c's candidate left a guarded race with its p99 shown worse.
func (c Comparison) outForTail() bool {
	return c.Status == experiment.StatusDropped && c.P99 != nil && c.P99.Verdict == stats.Worse
}
