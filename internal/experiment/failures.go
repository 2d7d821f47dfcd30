package experiment

import (
	"fmt"
	"math"

	"github.com/phptune/phptune/internal/stats"
)

// A pair's alpha is spent once, on everything that may decide it: its confidence sequences get seqShare (split
// evenly between the figures decided on) and its failure tests the rest, half to the count of failing trials
// and half to broken values (a quarter each way). Failures rarely decide, so most of it goes to the figures: at
// a knob's share of a few thousandths, three quarters of the alpha widen an interval by about 2%.
const seqShare = 0.75

// The broken-value rule: a value that serves none of its requests in each of its first trials, where the other
// arm serves in all of them, is shown at once. With the same chance p of an empty trial for both arms, that
// happens in n trials with chance p^n (1-p)^n, at most 4^-n whatever p is: the rule assumes nothing of how often
// a working value empties a trial (it assumed at most once in a hundred, and stalls longer than a trial
// broke that: with empty trials at 10% on both arms, 1.75% of races called one broken in 2 trials). A stack that
// empties every trial it serves makes its trials one draw, so when stacks are told to differ the unit is a
// block of rounds on one pair of stacks, as for the count of failing trials.

// failTally is what a pair's shared rounds showed of failures: the unit is a trial with failures, not a
// request, because failures come in bursts (a stall times out every request in flight) and a burst's
// requests are not independent coins.
type failTally struct {
	// onlyA, onlyB: units in which only the first (second) arm's trial had failed requests. Units in which
	// both or neither did say nothing about which fails more. A unit is a round, or with byStack a block of
	// rounds on one pair of stacks (its first round in which one arm failed alone).
	onlyA, onlyB int
	// rounds is the pair's shared rounds; emptyA, emptyB the rounds in which the arm's trial served none of
	// its requests (all failed).
	rounds, emptyA, emptyB int
	// byStack counts a block of rounds on one pair of stacks once: a stack that fails often fails in every
	// round it serves, and those rounds are one stack's draw, not independent coins. block is the current
	// block's pair of stacks, counted whether it has been; blocks how many there have been.
	byStack, started, counted bool
	block                     [2]int
	blocks                    int
}

// add counts one shared round of the pair's trials a and b; spilled says that a stall of the round before may
// have failed one of them (roundSpill), so that the round says nothing of which arm fails more.
func (f *failTally) add(a, b Observation, spilled bool) {
	f.rounds++
	if empty(a) {
		f.emptyA++
	}
	if empty(b) {
		f.emptyB++
	}
	if pair := [2]int{a.Stack, b.Stack}; !f.started || pair != f.block {
		f.block, f.started, f.counted = pair, true, false
		f.blocks++
	}
	if spilled || f.byStack && f.counted {
		return
	}
	switch fa, fb := a.Errors > 0, b.Errors > 0; {
	case fa && !fb:
		f.onlyA++
	case fb && !fa:
		f.onlyB++
	default:
		return
	}
	f.counted = true
}

// empty says that a trial served none of its requests: every one failed.
func empty(o Observation) bool { return o.Requests == 0 && o.Errors > 0 }

// worse says which arm of the pair the failures show to fail more at level alpha (the pair's failure share):
// -1 the first, +1 the second, 0 neither; broken says it was shown on trials that served nothing.
//
// The count of failing trials is a sign test, made sequential: with equal rates of failure (whatever their
// bursts), each round in which one arm's trial failed and the other's did not is that arm's with chance 1/2,
// whatever came before. The mixture of the binomial likelihood ratios over the Jeffreys prior (the
// Krichevsky-Trofimov estimator) is then a nonnegative martingale, and Ville's inequality bounds the chance it
// ever reaches 1/alpha by alpha: valid at every look, two-sided. Shown in 15 discordant rounds at a few
// ten-thousandths when all fall on one arm, whatever their size.
func (f *failTally) worse(alpha float64) (side int, broken bool) {
	if n := brokenTrials(alpha / 4); f.units() >= n {
		if f.emptyB == f.rounds && f.emptyA == 0 {
			return +1, true
		}
		if f.emptyA == f.rounds && f.emptyB == 0 {
			return -1, true
		}
	}
	if ktLogE(f.onlyA, f.onlyB) < math.Log(2/alpha) {
		return 0, false
	}
	if f.onlyB > f.onlyA {
		return +1, false
	}
	return -1, false
}

// units is how many independent draws the rounds are: the rounds, or with byStack the blocks of one pair of
// stacks.
func (f *failTally) units() int {
	if f.byStack {
		return f.blocks
	}
	return f.rounds
}

// brokenTrials is the least number of units in which one arm's trials all served none and the other's all
// served that chance puts below alpha: 4^-n <= alpha.
func brokenTrials(alpha float64) int {
	return max(1, int(math.Ceil(math.Log(alpha)/math.Log(0.25)-1e-9)))
}

// ktLogE is the log of the Krichevsky-Trofimov mixture's likelihood ratio against a fair coin after a heads
// and b tails: 2^(a+b) B(a+1/2, b+1/2) / B(1/2, 1/2).
func ktLogE(a, b int) float64 {
	x, y := float64(a), float64(b)
	lb := func(p, q float64) float64 {
		lp, _ := math.Lgamma(p)
		lq, _ := math.Lgamma(q)
		lpq, _ := math.Lgamma(p + q)
		return lp + lq - lpq
	}
	return (x+y)*math.Ln2 + lb(x+0.5, y+0.5) - math.Log(math.Pi)
}

// failVerdict is what failures show about arm j against arm i: Worse when j is shown to fail more, Better the
// other way round, "" otherwise.
func (e *run) failVerdict(i, j int) stats.Verdict {
	side, _ := e.tally(i, j).worse(e.failAlpha())
	if i > j {
		side = -side
	}
	switch side {
	case +1:
		return stats.Worse
	case -1:
		return stats.Better
	}
	return ""
}

// holdFailing is how many more rounds with failures than its rival hold a verdict in an arm's favour.
const holdFailing = 2

// held says whether verdict v of arm j against arm i (oriented by goodness) favours an arm that failed in
// holdFailing rounds or more where the other did not, beyond the other way round. Shown by counting trials,
// failures take more rounds than a figure (15 failing rounds at a knob's share of alpha, against 4 for a large
// effect on the figure), and a value that is faster but fails is no gain: the verdict waits for the failure
// test or for the rival's failures to even the count. Waiting is a stopping rule like any other, so it changes
// no error rate, only when a comparison ends.
func (e *run) held(i, j int, v stats.Verdict) bool {
	t := e.tally(i, j)
	diff := t.onlyB - t.onlyA // the second arm's lead in failing rounds
	if i > j {
		diff = -diff
	}
	switch v {
	case stats.Better:
		return diff >= holdFailing
	case stats.Worse:
		return -diff >= holdFailing
	}
	return false
}

// tally is the failure tally of the pair (i, j), in index order.
func (e *run) tally(i, j int) *failTally { return &e.fails[min(i, j)][max(i, j)] }

// failAlpha is the pair's share of alpha for its failure tests.
func (e *run) failAlpha() float64 { return e.pairAlpha * (1 - seqShare) }

// failNote says how the arm that fails more (bad) compares with the other (good).
func (e *run) failNote(bad, good int) string {
	t := e.tally(bad, good)
	_, broken := t.worse(e.failAlpha())
	r := e.out.Arms[bad]
	if broken {
		return fmt.Sprintf("%s: served none of its requests in each of its %s (%d of %d failed), where %s served", r.Name,
			plural(t.rounds, "trial", "trials"), r.Errors, r.Errors+r.Requests, e.s.Arms[good].Name())
	}
	mine, theirs := t.onlyA, t.onlyB
	if bad > good {
		mine, theirs = t.onlyB, t.onlyA
	}
	unit := "rounds"
	if t.byStack {
		unit = "pairs of stacks"
	}
	const note = "%s: requests failed in %d %s where %s's did not, the other way round in %d (%d of %d requests failed)"
	return fmt.Sprintf(note, r.Name, mine, unit, e.s.Arms[good].Name(), theirs, r.Errors, r.Errors+r.Requests)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
