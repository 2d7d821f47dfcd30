package tune

import (
	"math"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// The final comparison is kept finalLeast, a share of the budget, which on WordPress at 10 minutes bought 11
// rounds where its capacity against Debian's defaults (+10.3% [-6.5, +30.1]) needed about 22: the second looks
// had spent the rest on knobs that needed 145 rounds more (2026-11-26, ra16). The races that chose the changes
// from the starting point already measured what they gain and how much a round varies, so the rounds the final
// needs to decide them can be foreseen; the races after them and the second looks leave it those.

// foresee is the share of the adopted races' summed gain the final is planned to decide: at the gain itself a
// confidence sequence decides about half the time, and a race that stopped once its interval cleared zero
// overstates its gain. On a WordPress-like simulation (TestTheFinalKeepsWhatItIsForeseenToNeed) the final decided
// capacity in 8% of runs without a foreseen need, in 47% planned at the whole gain, 77% at three quarters and
// 85% at 0.6, where the final's unneeded rounds began to cost the second looks their gains (a +5% keepalive
// found in 8 runs of 40 against 15).
const foresee = 0.75

// finalKeep is what the races and second looks leave the final comparison: its least, or the time it is
// foreseen to need when that is more, as far as the time left holds it beside the second looks claimed (see
// finalShare): without the look at a leaning race's leader the recommendation stays the starting point, and the
// final would spend the time on the rule of thumb alone (WordPress, ra22: the JIT leaning +9%, 46 s from a
// decision, kept from its look by a need of some 40 rounds).
func (t *tuner) finalKeep() time.Duration {
	return t.finalShareAt(t.left()).keep()
}

// finalShareAt is what the final is kept and the looks beside it claim, with left the time left: the final's
// least and foreseen need, the look at the leaning race that need stands on, and the pool sizes' look (sizesOpen).
// The caller reads the clock once: a look that fits exactly beside a need capped to fit (keep + look = left)
// would not fit a second reading a microsecond later, and was dropped so from every claim that mattered (ra31,
// ra32: the look "not fitting" by the clock's advance).
func (t *tuner) finalShareAt(left time.Duration) finalShare {
	need, lean := t.finalNeed()
	s := finalShare{left: left, least: t.finalLeastAt(need), need: need}
	if lean != nil {
		s.looks = t.lookCost(lean)
	}
	if o, c := t.sizesOpen(left); o != nil {
		s.looks += c
	}
	return s
}

// sizesOpen is the pool sizes' race, with its look's cost, when it ended undecided, a second look still to come
// (lookable), and that look fits the bound sizesLookFits sets for a first look or a look again: the question a
// run is asked first (which pool size), to which the final's foreseen need, the later goodput races and the other
// second looks yield, as they do to a leaning race's look. WordPress at 10 minutes left it open after 4 rounds,
// 25 from a decision, while pm, listen and fastcgi_buffers raced 100 s at their turns and a second look each,
// deciding nothing, and the final was kept 2m55s (2026-11-27).
func (t *tuner) sizesOpen(left time.Duration) (*openRace, time.Duration) {
	for _, o := range t.open {
		if o.sizes == nil || !o.lookable() || o.rc.x.Look().Needed >= experiment.MaxRoundsNeeded {
			continue
		}
		// The final's least reads its need: only where a sizes' race is open (one a run).
		if c := t.lookCost(o); sizesLookFits(c, left, t.finalLeast(), t.o.Budget, o.looks > 0) {
			return o, c
		}
	}
	return nil, 0
}

// finalClaim is the time a deferred race that runs at its turn leaves: what the final is kept, and the second
// looks claimed beside it where they fit (finalShare.claim; WordPress, ra23: the pool sizes' race, run on the
// time beside the final's need, took 81 s, and the JIT's look then took its 60 s from the final: 11 rounds where
// 13 decided).
func (t *tuner) finalClaim() time.Duration {
	return t.finalShareAt(t.left()).claim()
}

// lookCost is what a second look at o is expected to take to decide: restarting its arms and the rounds its
// estimate still needs.
func (t *tuner) lookCost(o *openRace) time.Duration {
	l := o.rc.x.Look()
	starts, round := t.lookCosts(o, l)
	return starts + time.Duration(max(l.Needed-l.Rounds, 0))*round
}

// alternatingCPUSD is the spread of an alternating CPU round's log ratio on this machine, its two stacks' offsets
// included: the recorded noise (internal/experiment/testdata/noise-req_per_cpu_s.json, 4.1%) and two offsets of
// DefaultStackSD, sqrt(4.1² + 2 x 2²) = 5%. It is what the final's rounds are foreseen at when the CPU races that
// adopted its changes ran as duets. Simulated 3-minute runs (JIT +8%, 100 seeds): the headline decided on capacity
// in 24 with the duets' own spread, 49 with this, 56 with alternating races (whose JIT was adopted in 85, not 100).
const alternatingCPUSD = 0.05

// finalNeed is the time the final comparison is foreseen to need to decide the recommendation against the
// starting point on capacity: the rounds at which an interval of the adopted CPU races' spread would exclude
// no change at their summed gain, at the final's share of the error budget, with starting its arms; and the
// leaning race it stands on when nothing is adopted (see adoptedCPU). 0 when
// nothing foresees it: the recommendation is the starting point in a run and no CPU race leans to a gain, or
// no change was adopted or leans to be on CPU.
func (t *tuner) finalNeed() (time.Duration, *openRace) {
	gain, sd, lean := t.adoptedCPU()
	if !(gain > 0 && sd > 0) {
		return 0, nil
	}
	// The final's pair shares its alpha between its two figures (goodput and capacity).
	n := roundsToResolve(2, foresee*gain, sd, t.budget.PairShare()/2, t.mixture)
	reach := t.reach()
	cfgs, _ := distinct([]knob.Config{t.best, t.o.Base, t.ruleOfThumb()}, reach)
	nArms := len(cfgs)
	if inRun(t.best, reach) == inRun(t.o.Base, reach) {
		nArms++ // a leaning race's leader, once adopted, is an arm of its own
	}
	cold := nArms
	if t.src.Warm(t.best) {
		cold--
	}
	// Its arms move to fresh stacks side by side (arms.Stacks), every finalPer rounds once its own spread is read.
	start, round := t.costs.start(MetricGoodput), time.Duration(nArms)*t.finalTrial()
	moves := time.Duration(finalMoves(n, t.finalPer(start, round)))
	return startsCost(cold, start) + moves*startsCost(nArms, start) + time.Duration(n)*round, lean
}

// finalMoves is how often the final's arms move in n rounds at per rounds a stack: not before the first stacks
// served the rounds that read the final's own spread (arms.MinDiffs differences: arms.Spread keeps the most until
// then). Counted from the first round, a final foreseen at 8 rounds moving every round was kept 7 moves of 5 s
// (three dynamic pools settling), some 50 s, where it moved 3 times and took 22 s: the 3-minute demo ended with 40 s
// unused and two CPU races open that a second look would have decided (2026-11-27, quiet, demo1).
func finalMoves(n, per int) int {
	first := arms.MinDiffs + 1
	if n <= first {
		return 0
	}
	return (n - first + max(per, 1) - 1) / max(per, 1)
}

// finalPer is the rounds a stack will serve the final's arms, at a move's cost start and a round's: as the
// goodput races' capacity and goodput say its spread will set them (arms.FinalSpread), or the most before one was
// read. Counted at the most, WordPress's final, moving every round or two, was kept 185 s where the 20 rounds it
// needed took 232 (ra35).
func (t *tuner) finalPer(start, round time.Duration) int {
	if sigma, ok := t.src.FinalSpread(t.tellsTheFinal); ok {
		return arms.StackRounds(sigma, start, round, arms.PerStack(MetricGoodput), t.finalTold())
	}
	return arms.PerStack(MetricGoodput)
}

// tellsTheFinal says whether the experiment of phase tells the final's spread: any but the server's race, whose
// arms run other runtimes, unless the recommendation runs one. A 3-minute demo's server race (Apache's arms
// beside php-fpm's) set the final's foreseen moves at one a round, and its keep from 31 s to 71 s, where php-fpm's
// arms alone were to be compared (2026-11-29, run u).
func (t *tuner) tellsTheFinal(phase string) bool {
	return phase != knobPhase(knob.ServerName) || t.best.ServerName() != t.o.Base.ServerName()
}

// finalTold is what the final's engine will be told of stacks' offsets on goodput, as the run stands.
func (t *tuner) finalTold() float64 {
	if t.d == nil {
		return 0
	}
	return t.d.told(MetricGoodput, "final").Told
}

// adoptedCPU is what the CPU races that moved a knob off the starting point's value showed: their summed gain
// (log ratio) and the widest spread of a round among them. With none, it is what the undecided race leaning
// most to a gain showed of its leader: a second look may yet adopt it (WordPress's JIT was adopted so at 7 of 10
// minutes in three runs of three, 2026-11-26, and the final then had two minutes where it needed three). Gains
// that may yet be adopted beside adopted ones are left out: they could only make the final's task easier.
func (t *tuner) adoptedCPU() (gain, sd float64, leaning *openRace) {
	var lean, leanSD float64
	bar := math.Log1p(t.o.MinEffect) / 3 // a race's promising bar (experiment.Look.Promising)
	for _, o := range t.open {
		rc := o.rc
		k := rc.r.knob
		if rc.spec.Metric != MetricCPU {
			continue
		}
		adopted := rc.row.Verdict == stats.Better && k.Get(t.best) != k.Get(t.o.Base) && k.Get(t.best) == k.Get(rc.best)
		leans := rc.row.Verdict == stats.Inconclusive && k.Get(t.best) == k.Get(t.o.Base) && k.Get(rc.r.from) == k.Get(t.o.Base)
		for j, c := range rc.cfgs {
			m, s, ok := rc.x.Pair(j)
			if rc.spec.Duet {
				// A duet cancels the machine's noise the final's alternating rounds keep: its spread would
				// foresee the final at a fraction of the rounds it needs.
				s = math.Max(s, alternatingCPUSD)
			}
			switch {
			case !ok:
			case adopted && c.Key() == rc.best.Key():
				gain, sd = gain+m, math.Max(sd, s)
			case leans && m >= bar && m > lean:
				lean, leanSD, leaning = m, s, o
			}
		}
	}
	if gain > 0 {
		return gain, sd, nil
	}
	return lean, leanSD, leaning
}
