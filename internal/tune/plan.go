package tune

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
)

// Trial lengths: a throughput trial's window holds about windowRequests requests, within these bounds; a CPU
// trial sends about cpuSeconds' worth of requests. The rounds' noise is mostly the machine's, and falls about
// as the square root of a trial's length, so shorter trials lose little and let large effects be decided in a
// few seconds.
const (
	windowRequests = 40
	minWindow      = 300 * time.Millisecond
	maxWindow      = 3 * time.Second
	minWarm        = 100 * time.Millisecond
	cpuSeconds     = 0.4
	minCPURequests = 20
	// cpuDuetSeconds is a CPU trial's length in duet rounds (Options.Duet), at the app's rate alone: the arms run
	// side by side, each at about its share of the machine. What a duet cancels is the noise both trials share
	// while both run, so its rounds steady with length faster than alternating ones (bench/duet.sh on the demo, 2
	// connections, quiet: 250 requests 0.58% against 1.61% a round). Past that, a round's figure is mostly the two
	// stacks' own offsets (1.5 to 2% a stack), which only more stacks average out: the rounds are kept short, since
	// each moves to fresh stacks.
	cpuDuetSeconds = 0.8
	// splitSeconds is a split round's duet trial's length (Options.Split), at the app's rate alone.
	splitSeconds   = 0.3
	maxCPURequests = 4000
	// SplitShare is what a split round's duet adds to an arm's trial: the arms send splitSeconds of requests each,
	// side by side, at about their share of the machine.
	SplitShare = time.Duration(splitSeconds*float64(time.Second)) + 30*time.Millisecond
)

// splitKind is what a split round's trial's cost is kept under (arms.TrialSpec.CostKind).
var splitKind = arms.TrialSpec{Metric: MetricGoodput, Split: true}.CostKind()

// fit sets the trials' lengths from the app's speed at the comparisons' load, and refuses a budget that cannot
// hold even the final comparison's least.
func (t *tuner) fit() error {
	peak := max(t.peakRPS, 0.1)
	t.lengths.Win = clampDur(time.Duration(windowRequests/peak*float64(time.Second)), minWindow, maxWindow)
	t.lengths.Warm = clampDur(t.lengths.Win/4, minWarm, 500*time.Millisecond)
	secs := cpuSeconds
	if t.o.Duet {
		secs = cpuDuetSeconds
	}
	t.lengths.CPURequests = int(math.Min(math.Max(math.Round(secs*peak), minCPURequests), maxCPURequests))
	t.lengths.SplitRequests = int(math.Min(math.Max(math.Round(splitSeconds*peak), minCPURequests), maxCPURequests))
	// A CPU trial keeps the CPUs busy, no more: more connections would only queue, and every connection sends
	// whole cycles of the mix (the same requests each trial), so they would round the trial up to more requests.
	// Not the knee's: a few short sweep trials put it at 1 in one run of the demo and 8 in the next, and the CPU
	// races' load and pools with it (poolSize caps it by memory).
	t.cpuConc = cpuConcPerCore * t.cpus()
	sent := evenRequests(t.lengths.CPURequests, t.cpuConc, len(load.MixSequence(t.o.URLs)))
	t.costs.guess[MetricGoodput] = t.lengths.Warm + t.lengths.Win + 50*time.Millisecond
	t.costs.guess[splitKind] = t.costs.guess[MetricGoodput] + SplitShare
	t.costs.guess[MetricCPU] = time.Duration(float64(sent)/t.rateAt(t.cpuConc)*float64(time.Second)) + 30*time.Millisecond
	if st := t.startsSoFar(); st.N > 0 {
		// The run's first stacks settled no dynamic pool: a CPU trial's static twin starts about as fast; a
		// goodput arm's dynamic pool grows for seconds more, php-fpm doubling its spawn rate each second.
		first := st.Wall/time.Duration(st.N) + time.Second
		t.costs.startGuess[MetricCPU], t.costs.startGuess[arms.StartStatic] = first, first
		t.costs.startGuess[MetricGoodput] = first + min(time.Duration(bits.Len(uint(t.conc))+1)*time.Second, arms.MaxSettle)
	}
	t.plan.WarmupS, t.plan.WindowS, t.plan.CPURequests = t.lengths.Warm.Seconds(), t.lengths.Win.Seconds(), t.lengths.CPURequests
	if t.o.Split {
		t.plan.SplitRequests = t.lengths.SplitRequests
	}
	t.plan.Concurrency, t.plan.CPUConcurrency = t.conc, t.cpuConc
	if n := peak * t.lengths.Win.Seconds(); n < 20 {
		t.warn(fmt.Sprintf("at %.1f req/s a %s trial holds only %.0f requests: the comparisons will be coarse and slow to decide",
			peak, t.lengths.Win.Round(10*time.Millisecond), n))
	}
	least := startsCost(2, t.costs.start(MetricGoodput)) + time.Duration(minRounds*3)*t.finalTrial()
	what := "the final comparison needs"
	if d := t.soakTime(); t.o.Soak == 0 && d > 0 { // within the budget; --soak's is on top of it
		least, what = least+d, "the soak and the final comparison need"
	}
	if t.left() < least {
		need := t.clock.Now().Sub(t.start) + 3*least + 10*time.Second
		return exitcode.UsageErrorf("%w: --budget %s leaves %s after measuring the app's speed, less than the %s %s at the least; give at least --budget %s",
			ErrBudget, t.o.Budget, max(t.left(), 0).Round(time.Second), least.Round(time.Second), what, need.Round(10*time.Second))
	}
	return nil
}

func clampDur(d, lo, hi time.Duration) time.Duration { return min(max(d, lo), hi) }

// cpuConcPerCore is a CPU trial's connections per CPU: enough to keep every CPU busy while nginx and the load
// generator take their turns.
const cpuConcPerCore = 2

// evenRequests is what a CPU trial of n requests sends over conc connections that each send whole cycles of
// a mix of cycle requests (load.Options.Even).
func evenRequests(n, conc, cycle int) int {
	conc, cycle = max(conc, 1), max(cycle, 1)
	perConn := (n + conc - 1) / conc
	return conc * ((perConn + cycle - 1) / cycle * cycle)
}

// rateAt is the sweep's median throughput at conc connections (the nearest point below it), or the peak's.
func (t *tuner) rateAt(conc int) float64 {
	rate := t.peakRPS
	if s := t.sat; s != nil {
		for _, p := range s.Points {
			if p.Concurrency <= conc && p.Median > 0 {
				rate = p.Median
			}
		}
	}
	return max(rate, 0.1)
}

// planned is a knob's place in the plan: the arms its race will have, at the time of planning, and what its
// trials measure (the spec's Metric and Steady).
type planned struct {
	arms int
	spec arms.TrialSpec
}

// coldArms is how many of the race's arms will start: the challengers, and for trials on a twin the incumbent
// too (a twin of the best configuration is not the one held warm).
func (p planned) coldArms() int {
	if p.spec.Twin() {
		return p.arms
	}
	return p.arms - 1
}

// planExperiments says which knobs will race and draws up the error budget: every pair of arms any experiment
// may compare gets an equal share of the run's alpha, and the shares of experiments that do not run go to the
// later ones. A knob skipped for the starting point may become worth a race once an earlier knob changes (JIT
// once opcache is on): it is planned for when any single earlier change would make it so.
func (t *tuner) planExperiments() {
	t.plans = map[string]planned{}
	pairs := 0
	if _, pinned := t.o.Pins[knob.MaxChildren().Name]; !pinned {
		n := 3 // the sizes as the sweep leaves them (the latency goal may narrow them later)
		if t.pool != nil {
			n = max(2, len(poolCandidates(t.sat, t.best.MaxChildren, t.pool.MemoryLimit, 0, t.o.poolMargin())))
		}
		t.plans[knob.MaxChildren().Name] = planned{arms: n, spec: arms.TrialSpec{Metric: MetricGoodput, Steady: true}}
		pairs += experiment.Pairs(experiment.Smallest, n)
	}
	reach := []knob.Config{t.best}
	for _, k := range t.o.Knobs {
		if _, pinned := t.o.Pins[k.Name]; pinned {
			continue
		}
		if _, ok := t.decided[k.Name]; ok {
			continue
		}
		before := reach
		for _, v := range k.Values(t.facts, t.best) {
			c := t.best.Clone()
			if k.Set(&c, v) == nil {
				reach = append(reach, c)
			}
		}
		if k.Skip != nil {
			why := k.Skip(t.facts, t.best)
			for _, c := range before[1:] {
				if why != "" && k.Skip(t.facts, c) == "" {
					why = ""
				}
			}
			if why != "" {
				t.skip[k.Name] = why
				continue
			}
		}
		if n := len(t.candidates(k, t.best)); n > 0 {
			t.plans[k.Name] = planned{arms: n + 1, spec: t.specOf(k)}
			pairs += experiment.Pairs(experiment.Race, n+1)
		}
	}
	pairs += experiment.Pairs(experiment.Versus, 3)
	t.budget = experiment.NewBudget(t.o.Alpha, pairs)
	t.plan.Experiments = len(t.plans) + 2
}

// candidates are the values of k that a race must decide from cur: not the current one, nor those the screen
// found to change nothing.
func (t *tuner) candidates(k knob.Knob, cur knob.Config) []string {
	var out []string
	for _, v := range k.Values(t.facts, cur) {
		if v != k.Get(cur) && !t.screens[k.Name][v] {
			out = append(out, v)
		}
	}
	return out
}

// allowance is the time the race of knob name (arms arms, cold of them to start) may take, with later the races
// after it (timeShares). The races that decide early leave their time to the later ones.
func (t *tuner) allowance(name string, nArms, cold int, spec arms.TrialSpec, later []string) time.Duration {
	this := raceShare{round: time.Duration(nArms) * t.costs.trial(spec.CostKind()), starts: startsCost(cold, t.costs.start(spec.StartKind()))}
	return t.shares().allowance(this, t.laterShares(name, later))
}

// shares is the time left as the races share it.
func (t *tuner) shares() timeShares {
	return timeShares{left: t.left(), finalLeast: t.finalLeast(), finalRound: 3 * t.finalTrial()}
}

// laterShares are the shares of the races planned among later (but name), not deferred.
func (t *tuner) laterShares(name string, later []string) []raceShare {
	var out []raceShare
	for _, n := range later {
		if p, ok := t.plans[n]; ok && n != name && !t.deferred[n] {
			round := time.Duration(p.arms) * t.costs.trial(p.spec.CostKind())
			out = append(out, raceShare{round: round, starts: startsCost(p.coldArms(), t.costs.start(p.spec.StartKind())),
				reserve: reserveRounds * round})
		}
	}
	return out
}

// reserveRounds are the rounds a promising race leaves to each later race when it stretches into their time:
// enough for a large effect to be decided.
const reserveRounds = 12

// stretch is what a promising race may take: the time left less what the later races need at the least
// (their starts and reserveRounds rounds each) and the final's least.
func (t *tuner) stretch(name string, later []string) time.Duration {
	return t.shares().stretch(t.laterShares(name, later))
}

// startsSoFar is what the run's stacks' starts took so far (none in a simulation).
func (t *tuner) startsSoFar() arms.Starts {
	if t.stacks == nil {
		return arms.Starts{}
	}
	return t.stacks.Starts()
}
