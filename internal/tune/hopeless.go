package tune

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// A race whose share of the budget can resolve only changes larger than any the knob plausibly makes would
// end inconclusive at +-50% or more and spend its share on nothing: the time shares (allowance) give every race
// about the same rounds, so in a short budget a goodput race (10 to 20% a round) gets 5 to 7 rounds, where the
// confidence sequence's half-width is about 5 round-sds (2 at 13 rounds). Such a race is deferred at plan time:
// the races that can decide get its time, and at its turn it runs only if the time left then can decide it.

// plausibleLog is the largest change a small goodput knob (pm, listen, keepalive) is taken to make, as a log ratio
// (15%), where nothing says more: what the runs on this machine measured for them reached +12.3% at the most
// (Symfony's keep-alive, ra40). CPU knobs are never deferred: their effects run from none to opcache off's -44
// to -92%, no bound holds for them, and their rounds are cheap. At 25%, chosen on replays of the noisy demo
// runs before duet rounds (docs/engine.md), a 3-minute demo still raced these knobs at +-20 to +-30% and left a
// CPU race a few rounds short; replayed with duet rounds (bench/engine -duet, 300 runs), 15% decides 4.7 of the
// 5 CPU knobs a 3-minute run (4.4 at 25%) and the final on capacity in 90% of runs (22%), with the 10-minute runs
// unchanged; 10% deferred goodput races at 10 minutes too (the planted 5% found in 36% of runs, 66% at 15%).
var plausibleLog = math.Log(1.15)

// plausibleWideLog is the bound for a change of runtime (the server knob: a worker-mode server serves several
// times what php-fpm does) and the floor for the pool's sizes (which the sweep's spread widens): 25%, as every
// goodput knob's was before duet rounds.
var plausibleWideLog = math.Log(1.25)

// goodputRoundSD is the spread of a goodput round's log ratio assumed when the sweep measured none: real apps
// gave 0.1 to 0.19.
const goodputRoundSD = 0.15

// roundSD is what a round's log ratio of metric is taken to vary by: for goodput twice the variance of the
// sweep's trials (a round is the ratio of two trials); a simulation may say (roundSDs).
func (t *tuner) roundSD(metric string) float64 {
	if sd := t.roundSDs[metric]; sd > 0 {
		return sd
	}
	if s := t.sat; s != nil && s.NoiseSD > 0 {
		return math.Sqrt2 * s.NoiseSD
	}
	return goodputRoundSD
}

// resolves is the half-width, as a log ratio, that n rounds of metric can reach at a pair's share of the alpha
// left: what the smallest change a race of that many rounds could decide.
func (t *tuner) resolves(n int, metric string) float64 {
	return experiment.HalfWidthAt(n, t.roundSD(metric), t.budget.PairShare(), t.mixture)
}

// hopeless says why the race of name, given rounds rounds, cannot decide a change it plausibly makes ("" when
// it can): its rounds resolve no change of up to the plausible one. It is the row's Reason (StateNotRaced).
func (t *tuner) hopeless(name string, rounds int) string {
	p, ok := t.plans[name]
	if !ok || p.spec.Metric != MetricGoodput {
		return ""
	}
	plausible := t.plausible(name)
	hw := t.resolves(rounds, p.spec.Metric)
	if hw <= plausible {
		return ""
	}
	n := roundsToResolve(max(rounds, 2), plausible, t.roundSD(p.spec.Metric), t.budget.PairShare(), t.mixture)
	round := time.Duration(p.arms) * t.costs.trial(p.spec.CostKind())
	need := fmt.Sprintf("it needs about %d rounds (%s) to show %s: a larger --budget races it", n,
		(time.Duration(n) * round).Round(time.Second), pctWide(plausible))
	if rounds < 2 {
		return fmt.Sprintf("the time left buys it at most a round, too few to decide anything; %s", need)
	}
	makes := "a knob like it makes"
	if name == knob.MaxChildren().Name {
		makes = "a pool's sizes plausibly differ by"
	}
	return fmt.Sprintf("the budget leaves it about %d rounds, which could tell apart only changes larger than %s in "+
		"requests/s (a round varies about %.0f%%), more than %s; %s", rounds, pctWide(hw), 100*t.roundSD(p.spec.Metric),
		makes, need)
}

// roundsToResolve is the fewest rounds from from on whose half-width, at a round's spread sd and alpha, is within
// width (a log ratio); experiment.MaxRoundsNeeded at the most.
func roundsToResolve(from int, width, sd, alpha, g float64) int {
	n := from
	for n < experiment.MaxRoundsNeeded && experiment.HalfWidthAt(n, sd, alpha, g) > width {
		n++
	}
	return n
}

// pctWide is a log half-width as the wider of its two relative changes ("+-65%"; "tenfold" from there on).
func pctWide(hw float64) string {
	if !(hw < math.Log(10)) {
		return "tenfold"
	}
	return fmt.Sprintf("+-%.0f%%", 100*math.Expm1(hw))
}

// plausible is the largest change, as a log ratio, that the race of name is taken to be able to show: for the
// server plausibleWideLog; for the pool size the spread of the sweep's medians over the sizes to race where that
// is wider than plausibleWideLog; else plausibleLog.
func (t *tuner) plausible(name string) float64 {
	switch {
	case name == knob.ServerName:
		return plausibleWideLog
	case name != knob.MaxChildren().Name && t.plausibleSmall > 0:
		return t.plausibleSmall
	case name != knob.MaxChildren().Name:
		return plausibleLog
	case t.sat == nil || t.pool == nil:
		return plausibleWideLog
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range poolCandidates(t.sat, t.best.MaxChildren, t.pool.MemoryLimit, 0, t.o.poolMargin()) {
		for _, p := range t.sat.Points {
			if p.Concurrency == s && p.Median > 0 {
				lo, hi = min(lo, math.Log(p.Median)), max(hi, math.Log(p.Median))
			}
		}
	}
	if hi < lo {
		return plausibleWideLog // no size the sweep measured
	}
	return max(plausibleWideLog, hi-lo)
}

// deferHopeless marks, before any race runs, the goodput races (order: the order they run in) that the budget's
// equal shares of rounds cannot let decide, the least able first, until every race left can: the time they
// would have taken goes to the rest. A deferred race is tried again at its turn (decideKnobs, sizePool). A knob
// the user asked for races all the same.
func (t *tuner) deferHopeless(order []string) {
	t.deferred = map[string]bool{}
	for {
		n := t.sharedRounds(order)
		worst, over := "", 1.0
		for _, name := range order {
			p, ok := t.plans[name]
			if !ok || t.deferred[name] || p.spec.Metric != MetricGoodput || t.o.Asked[name] {
				continue
			}
			if r := t.resolves(n, p.spec.Metric) / t.plausible(name); r > over {
				worst, over = name, r
			}
		}
		if worst == "" {
			return
		}
		t.deferred[worst] = true
	}
}

// sharedRounds is the rounds every race not deferred would get, sharing the time left after their starts and
// the final's least by what a round of each costs, as allowance shares it.
func (t *tuner) sharedRounds(order []string) int {
	var starts, rounds time.Duration
	for _, name := range order {
		if p, ok := t.plans[name]; ok && !t.deferred[name] {
			starts += startsCost(p.coldArms(), t.costs.start(p.spec.StartKind()))
			rounds += time.Duration(p.arms) * t.costs.trial(p.spec.CostKind())
		}
	}
	rounds += 3 * t.finalTrial() // the final shares like a race of three
	pool := t.left() - starts - t.finalLeast()
	if pool <= 0 || rounds <= 0 {
		return 0
	}
	return int(pool / rounds)
}

// roundsAt is the rounds the race of arms arms (cold of them to start) on spec would get at its turn: what its
// allowance buys, at least what its least costs (least), within what claim leaves of the time (turnClaim: a
// deferred race runs on time the others left, to which they have the first claim: WordPress's pool sizes took
// 87 s of the final's), else none.
func (t *tuner) roundsAt(claim, allow, least time.Duration, nArms, cold int, spec arms.TrialSpec) int {
	spare := t.left() - claim
	if spare < least {
		return 0
	}
	return t.roundsIn(min(max(allow, least), spare), nArms, cold, spec)
}

// turnClaim is what a race held to the final's claim (atTurn) must leave at its turn, were it to take allow: the
// final's claim (finalClaim), and the second looks at the open races that would cost less each and fit beside
// it, whose knobs it names. Looks go to the cheapest first; a race run on the time the others leave yields to
// them as it does to the final: a 3-minute demo's server race took 24 s for 7 rounds that could not decide it,
// where validate_timestamps and huge_code_pages were each about 12 s from a decision (2026-11-29, run o). Looks
// dearer than the race do not hold it back: a race never run may show more than one already near its end
// (yielding to every look that fit, a planted +5% keep-alive was found in 45 runs of 200, 63 so:
// TestLastLookGoesToAGain).
func (t *tuner) turnClaim(allow time.Duration) (claim time.Duration, nearer []string) {
	left := t.left()
	s := t.finalShareAt(left)
	claim = s.claim()
	counted := map[*openRace]bool{}
	if claim > s.keep() { // the looks beside the final are in its claim
		if _, lean := t.finalNeed(); lean != nil {
			counted[lean] = true
		}
		if o, _ := t.sizesOpen(left); o != nil {
			counted[o] = true
		}
	}
	type look struct {
		name string
		cost time.Duration
	}
	var looks []look
	for _, o := range t.open {
		if !counted[o] && o.lookable() && o.rc.x.Look().Needed < experiment.MaxRoundsNeeded {
			if c := t.lookCost(o); c <= allow {
				looks = append(looks, look{o.rc.r.knob.Name, c})
			}
		}
	}
	slices.SortStableFunc(looks, func(a, b look) int { return cmp.Compare(a.cost, b.cost) })
	for _, l := range looks {
		if claim+l.cost > left {
			break
		}
		claim += l.cost
		nearer = append(nearer, l.name)
	}
	return claim, nearer
}

// roundsIn is the rounds allow buys the race of arms arms (cold of them to start) on spec, once they started.
func (t *tuner) roundsIn(allow time.Duration, nArms, cold int, spec arms.TrialSpec) int {
	allow -= startsCost(cold, t.costs.start(spec.StartKind()))
	return max(0, int(allow/(time.Duration(nArms)*t.costs.trial(spec.CostKind()))))
}

// sizesNote is why the pool sizes' race does not run at its turn, given its allowance and least ("" when it runs).
// Held to the final's claim only where it was deferred (atTurn), it still does not run where its allowance and
// the most its look may claim (sizesLookFits, as the time stands now) could not buy the rounds that show a size
// within the pool's margin of the best, even at the steadiest spread a sizes' round showed here (sizesRoundSD): a
// 3-minute demo's raced 4 rounds to intervals of +-60 to 70% and stopped, 10 to 14 s its CPU races lacked
// (2026-11-28 and 29, runs k to s; huge_code_pages open in 8 of 9). WordPress's at 10 minutes is decided in its
// look (TestTheSizesLookComesFirst).
func (t *tuner) sizesNote(allow, least time.Duration, nArms int, spec arms.TrialSpec) string {
	name := knob.MaxChildren().Name
	if t.atTurn(name) {
		return t.atTurnNote(name, allow, least, nArms, nArms, spec)
	}
	look := max(sizesLookBound(t.left(), t.finalLeast(), t.o.Budget), 0)
	n := t.roundsIn(max(allow, least)+look, nArms, nArms, spec)
	margin := math.Log1p(t.o.poolMargin())
	need := roundsToResolve(2, margin, sizesRoundSD, t.budget.PairShare(), t.mixture)
	if n >= need {
		return ""
	}
	round := time.Duration(nArms) * t.costs.trial(spec.CostKind())
	return fmt.Sprintf("the budget leaves it about %d rounds with a second look, and a size shown within %.0f%% of "+
		"the best needs %d at the least (%s; a round of sizes varies %.0f%% at the steadiest here): a larger --budget "+
		"races it", n, 100*t.o.poolMargin(), need, (time.Duration(need) * round).Round(time.Second), 100*sizesRoundSD)
}

// sizesRoundSD is the steadiest spread of a pool sizes' round (the log ratio of two sizes' requests/s on static
// pools) the demo's races showed here: 2.6 to 3.3% (runs m and n), 3.8 to 7.5% elsewhere (t1, t3, t4, r, s). The
// sweep's spread does not tell it: its dynamic pools varied 4 to 17% a round in the same runs.
const sizesRoundSD = 0.03

// noteTurn records where the time stood at the turn of name's race, given allow (Result.Turns).
func (t *tuner) noteTurn(name string, allow time.Duration) {
	left := t.left()
	s := t.finalShareAt(left)
	t.log.turns = append(t.log.turns, Turn{Knob: name, AtS: t.clock.Now().Sub(t.start).Seconds(), LeftS: left.Seconds(),
		AllowS: allow.Seconds(), KeepS: s.keep().Seconds(), LookS: s.looks.Seconds(), ClaimS: s.claim().Seconds(),
		NeedS: s.need.Seconds()})
}

// atTurnNote is why the race of name, of arms arms (cold of them to start) on spec, given allow and at least
// least, cannot decide at its turn: its row's Reason ("" when it can, or it is not held to the final's claim:
// atTurn).
func (t *tuner) atTurnNote(name string, allow, least time.Duration, nArms, cold int, spec arms.TrialSpec) string {
	if !t.atTurn(name) {
		return ""
	}
	claim, nearer := t.turnClaim(max(allow, least))
	why := t.hopeless(name, t.roundsAt(claim, allow, least, nArms, cold, spec))
	switch {
	case why == "":
	case len(nearer) > 0:
		why += fmt.Sprintf(" (kept for the final comparison and second looks at %s: %s)", strings.Join(nearer, ", "),
			claim.Round(time.Second))
	case !t.deferred[name]:
		why += fmt.Sprintf(" (the final comparison is kept %s, what deciding the changes found is foreseen to need)",
			claim.Round(time.Second))
	}
	return why
}

// atTurnAllow is the time a race held to the final's claim (atTurn) is given at its turn: its allowance, within
// what the final and the cheaper second looks claim (turnClaim), and at least its least. Others keep their
// allowance.
func (t *tuner) atTurnAllow(name string, allow, least time.Duration) time.Duration {
	if !t.atTurn(name) {
		return allow
	}
	claim, _ := t.turnClaim(max(allow, least))
	return max(min(allow, t.left()-claim), least)
}

// atTurn says whether the race of name runs at its turn only on what the final and a leaning race's look leave
// (finalClaim), and only if that can decide it: a race deferred at plan time, and once the final is foreseen to
// need more than its least, any goodput knob's but the pool size's (the issue's own question, which stops on its
// own: sizesGoOn) and those the user asked for. On WordPress (ra30) listen's race took 64 s for an inconclusive
// +-27% while the final, left 98 s, ended a round short of deciding the JIT's gain against Debian's defaults.
func (t *tuner) atTurn(name string) bool {
	if t.deferred[name] {
		return true
	}
	p, ok := t.plans[name]
	if !ok || p.spec.Metric != MetricGoodput || t.o.Asked[name] || name == knob.MaxChildren().Name {
		return false
	}
	return t.finalClaim() > t.finalLeast()
}
