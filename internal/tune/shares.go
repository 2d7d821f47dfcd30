package tune

import "time"

// raceShare is what one race asks of the time left, in plain terms: a round of it (its arms' trials), the starts of
// its cold arms, and the rounds it keeps for itself when a race before it stretches into its time.
type raceShare struct {
	round, starts time.Duration
	reserve       time.Duration // reserveRounds of its rounds
}

// timeShares is how the races share the time left: each is given, besides its own starts, its part of what is
// left once every remaining race's starts and the final comparison's least are kept, in proportion to what a
// round of it costs (the final sharing beyond its least as a race of three goodput trials); a promising race may
// stretch into the later races' time down to what they need at the least.
type timeShares struct {
	left       time.Duration // the time left
	finalLeast time.Duration // what the final comparison is kept at the least
	finalRound time.Duration // a round of the final, for its part beyond that
}

// allowance is the time race this may take, with later the races still to come after it.
func (s timeShares) allowance(this raceShare, later []raceShare) time.Duration {
	starts, total := this.starts, float64(this.round+s.finalRound)
	for _, l := range later {
		starts += l.starts
		total += float64(l.round)
	}
	pool := s.left - starts - s.finalLeast
	if pool <= 0 || total <= 0 {
		return this.starts
	}
	return this.starts + time.Duration(float64(pool)*float64(this.round)/total)
}

// stretch is what a promising race may take: the time left less the later races' starts and reserves and the
// final's least.
func (s timeShares) stretch(later []raceShare) time.Duration {
	need := s.finalLeast
	for _, l := range later {
		need += l.starts + l.reserve
	}
	return s.left - need
}

// finalShare is what the final comparison is kept of the time left, in plain terms, and what the second looks
// beside it claim: the final's least and the time it is foreseen to need (finalNeed), and the looks that must
// come before it (a leaning race's, whose leader the final would otherwise never see; the pool sizes').
type finalShare struct {
	left, least, need time.Duration
	looks             time.Duration // the claimed looks' costs, summed
}

// keep is the final's: its need as far as the time left holds it beside the looks, and at least its least.
func (s finalShare) keep() time.Duration {
	need := s.need
	if s.looks > 0 {
		need = min(need, s.left-s.looks)
	}
	return max(s.least, need)
}

// claim is what a race run on the time the others leave must leave them: the final's keep, and the looks where
// they fit beside it. Looks that do not are no claim: they could not run in time (MediaWiki's JIT, leaning +4%
// and hundreds of rounds from a decision).
func (s finalShare) claim() time.Duration {
	keep := s.keep()
	if keep+s.looks <= s.left {
		return keep + s.looks
	}
	return keep
}

// sizesLookFits says whether the pool sizes' look, at cost c, may claim its time before the final (sizesOpen):
// the first, at most half of what the final's least leaves of left, and a sixth of the budget; a look again, once
// the first has run and only second looks and the final are left, what the final's least leaves. Unbounded, the
// first look took a 3-minute demo's later races and second looks for sizes 100 rounds from a decision (replayed:
// preload shown worse in 85% of runs, 98% without). Bound so, the second never ran: the 10-minute demo left its
// sizes 32 s from a decision, with 104 s left and the final kept 107 s, which decided in 9 rounds and 18 s
// (2026-11-28, t3).
func sizesLookFits(c, left, least, budget time.Duration, again bool) bool {
	if again {
		return c <= left-least
	}
	return c <= sizesLookBound(left, least, budget)
}

// sizesLookBound is the most the sizes' first look may claim (sizesLookFits).
func sizesLookBound(left, least, budget time.Duration) time.Duration {
	return min((left-least)/2, budget/6)
}

// The rounds the final comparison is kept: a sixth of the budget (at least minRounds: the knobs come first), and
// no more than finalRounds or finalRoundsPerMinute of the budget, whichever is more. Ten rounds show a gain of
// a fifth; at 10 minutes the five presets' finals ended after 8 to 10 rounds with capacity intervals of +-22 to
// 50% (2026-11-26), Symfony's +17.1% needing about 39 rounds to decide, a minute of a budget that held 348.
// Forty rounds at 10 minutes cost the knobs under a minute on those apps (WordPress, whose rounds take 11 s,
// keeps its 9), where every goodput knob ended needing hundreds of rounds more; the demo's 3 minutes keep 12.
const (
	finalRounds          = 10
	finalRoundsPerMinute = 4
)

// tailRounds is what the final is kept at the least where its need on capacity is foreseen: the rounds its p99
// check has to show a tail twice the starting point's worse, which nothing before it foresees (the JIT's, on a
// CPU race). At 5 minutes, kept 20, it showed one in 95% or more of simulated runs; kept 10, in 28%
// (TestTheFinalShowsAWorseTail).
const tailRounds = 20

// finalLeast is what the final comparison is kept: starting the baselines (side by side) and its rounds of
// three; no more than tailRounds of them once the changes found foresee its need on capacity (finalNeed), which
// then keeps it the rest. A sixth of the budget kept the 10-minute demo's final 88 s (27 rounds) where it decided
// in 38 s (11 rounds), with huge_code_pages left 5 s from a decision and the run ending 44 s early (2026-11-29,
// t5).
func (t *tuner) finalLeast() time.Duration {
	need, _ := t.finalNeed()
	return t.finalLeastAt(need)
}

// finalLeastAt is finalLeast where the final is foreseen to need need.
func (t *tuner) finalLeastAt(need time.Duration) time.Duration {
	cold := 2 // the baselines
	if !t.src.Warm(t.best) {
		cold++ // the recommendation, when no goodput race has run it (CPU races run static twins)
	}
	round, starts := 3*t.finalTrial(), startsCost(cold, t.costs.start(MetricGoodput))
	least := finalLeastOf(t.o.Budget, round, starts)
	if need > 0 {
		return min(least, starts+tailRounds*round)
	}
	return least
}

// finalLeastOf is the final's least for a budget, a round of it and the starts of its cold arms: a sixth of the
// budget in rounds, at least minRounds, at most finalRounds or finalRoundsPerMinute of the budget.
func finalLeastOf(budget, round, starts time.Duration) time.Duration {
	rounds := min(max(int(budget/6/round), minRounds), max(finalRounds, int(finalRoundsPerMinute*budget.Minutes())))
	return starts + time.Duration(rounds)*round
}
