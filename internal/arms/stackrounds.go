package arms

import (
	"math"
	"time"
)

// How many rounds a stack serves an arm before fresh ones take over. Each stack's lasting offset (sd s, allowed
// for as DefaultStackSD) adds to a pair's variance a round 2 s² k when arms move every k rounds (offsets.go in
// the engine); a move costs the experiment one start c_s (the arms' fresh stacks start side by side), a round
// c_r. The time to a given precision goes as (σ² + 2 s² k)(c_r + c_s/k), least at
//
//	k* = (σ/s) sqrt(c_s / (2 c_r))
//
// with σ the sd of a pair's log ratio a round. Steady CPU trials (σ about 4%, starts about as long as a round)
// move every 2 rounds; noisy goodput ones (σ 10 to 20%) every 5 to 8. RoundsPerStack (5 on CPU, 8 on goodput), the
// rounds the error rates were simulated at (TestReplicasKeepTheErrorRate), is the most: fewer rounds a stack
// only average the offsets out faster, and TestReplicasKeepTheErrorRate holds at every k from 1 up.

// StackRounds is k* rounded, within [1, most], for a pair's σ a round, a move's cost and a round's, at offsets of
// told (DefaultStackSD at the least: an engine told more, as a run that measured larger offsets tells it, moves
// its arms more often).
func StackRounds(sigma float64, start, round time.Duration, most int, told float64) int {
	if sigma <= 0 || start <= 0 || round <= 0 {
		return most
	}
	k := sigma / max(told, DefaultStackSD) * math.Sqrt(float64(start)/(2*float64(round)))
	return min(max(int(math.Round(k)), 1), most)
}

// Spread tallies what StackRounds needs from an experiment's own trials and starts. The spread a round is read
// from each arm's deviation from its round's mean (what the round shares, the machine's drift or a neighbour's
// burst, is not a pair's noise: it cancels in their ratio), differenced from round to round while the arms stay
// on their stacks (which takes their offsets out): for m arms, the mean square of a change of deviation is
// 2 σ_a² (1 - 1/m), and a pair's variance a round is 2 σ_a². An experiment that decides on a second figure
// (the final's requests per CPU-second) reads its spread too, and the steadier figure sets the moves. On
// WordPress capacity varies by 1.8% a round on one pair of stacks and by 7.9% across fresh ones (ra35): its
// stacks' offsets, some 5% a stack, are most of its spread, so its arms move every round.
type Spread struct {
	figs [2]deviations // the trials' figure and their second, the servers' capacity (unused: none read)
	// second says the experiment decides on the second figure too, so its spread counts in the moves; read
	// otherwise, it tells the final comparison's foreseen moves (capacitySpread).
	second bool
	metric string // its trials' (MetricCPU or MetricGoodput)
	// inRound are the arms that have run a trial in the round so far. A round ends when one of them runs again:
	// an arm the experiment has benched (a comparison that yielded its rounds) runs no trials but is not
	// stopped, so waiting for every started arm would never end a round again (ra32: the final's rule of thumb
	// yielded after 4 rounds, and its arms stayed on stacks of 8 where capacity's spread asked for 1 or 2).
	inRound   map[any]bool
	trialWall time.Duration
	trials    int
	startWall time.Duration
	starts    int
	fresh     bool // a trial of this round was the first on its stack
	firsts    int  // the trials of this round that were the first on their stack
	// told is the spread of stacks' offsets the experiment's engine allows for (0: DefaultStackSD), which the
	// moves are set at too.
	told float64
	// k is the rounds a stack serves an arm (0: the most), set at a round's end so that every arm of a round
	// reads the same.
	k int
}

// NewSpread is the tally of an experiment whose trials are of metric; second says that it decides on their
// second figure too.
func NewSpread(metric string, second bool) Spread { return Spread{metric: metric, second: second} }

// Tell sets the spread of stacks' offsets the experiment's engine allows for, which the moves are set at.
func (s *Spread) Tell(sd float64) { s.told = sd }

// deviations is one figure's part of Spread.
type deviations struct {
	sqDiff float64 // the rounds' estimates of a pair's variance, summed
	diffs  int     // the rounds that gave one
	df     int     // their degrees of freedom: m-1 a round of m arms
	// moved is the same tally across the rounds in which every arm moved to a fresh stack: its estimates hold
	// the offsets' variance too (OffsetOf).
	moved tally
	cur   map[any]float64 // this round's log figures by arm (a failed trial has none)
	prev  map[any]float64 // last round's deviations, when every arm stayed on its stack since
}

// Per is the rounds a stack serves an arm now, most at the most.
func (s *Spread) Per(most int) int {
	if s.k == 0 {
		return most
	}
	return s.k
}

// closeRound ends a round of arms arms (every one has run its trial) and sets the rounds a stack serves.
func (s *Spread) closeRound(arms, most int) {
	s.roundEnd()
	s.k = s.rounds(arms, most)
}

// Trial counts a trial of a, of figures v and second (0: failed, or not read), that took d; first says it was
// the first on its stack. When a has run in this round already, the round is closed first, and the rounds a
// stack serves set from it (most at the most).
func (s *Spread) Trial(a any, v, second float64, d time.Duration, first bool, most int) {
	if s.inRound[a] {
		s.closeRound(len(s.inRound), most)
	}
	if s.inRound == nil {
		s.inRound = map[any]bool{}
	}
	s.inRound[a] = true
	s.trialWall += d
	s.trials++
	s.fresh = s.fresh || first
	if first {
		s.firsts++
	}
	s.figs[0].read(a, v)
	s.figs[1].read(a, second)
}

func (f *deviations) read(a any, v float64) {
	if f.cur == nil {
		f.cur = map[any]float64{}
	}
	if v > 0 {
		f.cur[a] = math.Log(v)
	}
}

// roundEnd closes a round: every arm has run its trial.
func (s *Spread) roundEnd() {
	all := s.firsts > 0 && s.firsts == len(s.inRound)
	for i := range s.figs {
		s.figs[i].roundEnd(s.fresh, all)
	}
	s.fresh, s.firsts, s.inRound = false, 0, nil
}

// roundEnd tallies the round's change of deviations: among the rounds on the same stacks, or when every arm
// moved (moved), among those across a move; a round in which only some moved counts in neither.
func (f *deviations) roundEnd(fresh, moved bool) {
	m := len(f.cur)
	mean := 0.0
	for _, x := range f.cur {
		mean += x / float64(m)
	}
	dev := map[any]float64{}
	for a, x := range f.cur {
		dev[a] = x - mean
	}
	if sq, ok := f.change(dev); ok && m >= 2 {
		switch {
		case !fresh:
			f.sqDiff += sq / float64(m-1)
			f.diffs++
			f.df += m - 1
		case moved:
			f.moved.add(sq/float64(m-1), m-1)
		}
	}
	f.prev, f.cur = dev, map[any]float64{}
	if m < 2 {
		f.prev = nil
	}
}

// change is the sum of squares of the arms' change of deviation from last round's (ok false: not every arm has
// both).
func (f *deviations) change(dev map[any]float64) (float64, bool) {
	if len(f.prev) != len(dev) {
		return 0, false
	}
	sq := 0.0
	for a, d := range dev {
		p, ok := f.prev[a]
		if !ok {
			return 0, false
		}
		sq += (d - p) * (d - p)
	}
	return sq, true
}

// tally sums rounds' estimates of a pair's variance a round.
type tally struct {
	sq     float64
	rounds int
	df     int
}

func (t *tally) add(v float64, df int) {
	t.sq += v
	t.rounds++
	t.df += df
}

// sigma is the spread of a pair's log ratio a round on one pair of stacks, once MinDiffs rounds gave it.
func (f *deviations) sigma() (float64, bool) {
	if f.diffs < MinDiffs {
		return 0, false
	}
	return math.Sqrt(f.sqDiff / float64(f.diffs)), true
}

// Forget drops a stopped arm.
func (s *Spread) Forget(a any) {
	delete(s.inRound, a)
	for i := range s.figs {
		delete(s.figs[i].cur, a)
		s.figs[i].prev = nil
	}
}

// Start counts a start (or the side by side starts of one move) that took d.
func (s *Spread) Start(d time.Duration) {
	s.startWall += d
	s.starts++
}

// MinDiffs is how many rounds' estimates the rule waits for before it moves off the most: the first stack's.
const MinDiffs = 4

// rounds is the rounds a stack serves an arm of an experiment of arms arms, most at the most, from what was seen:
// at the spread of the steadier figure read.
func (s *Spread) rounds(arms, most int) int {
	if s.starts == 0 || s.trials == 0 {
		return most
	}
	sigma, ok := s.figs[0].sigma()
	if s.second {
		sigma, ok = s.steadier()
	}
	if !ok {
		return most
	}
	round := time.Duration(max(arms, 2)) * (s.trialWall / time.Duration(s.trials))
	return StackRounds(sigma, s.startWall/time.Duration(s.starts), round, most, s.told)
}

// steadier is the spread a round that sets the moves of an experiment deciding on both figures, as the
// final comparison does: the steadier figure's of those read (ok false: neither yet).
func (s *Spread) steadier() (float64, bool) {
	a, aok := s.figs[0].sigma()
	b, bok := s.figs[1].sigma()
	switch {
	case aok && bok:
		return min(a, b), true
	case bok:
		return b, true
	}
	return a, aok
}

// FinalSpread is what the final comparison's moves will be set at, foreseen before it runs (finalNeed), from
// the experiments sps run so far: steadier of the goodput experiment that read capacity most rounds, or before
// one has, the spread of the CPU experiment that read most (on WordPress a CPU race's pair varied by 6.3% a round
// on its stacks where the final's capacity varied by 6.8%, ra39).
func FinalSpread(sps []*Spread) (float64, bool) {
	var good, cpu *Spread
	for _, s := range sps {
		switch {
		case s.metric == MetricGoodput && (good == nil || s.figs[1].diffs > good.figs[1].diffs):
			good = s
		case s.metric == MetricCPU && (cpu == nil || s.figs[0].diffs > cpu.figs[0].diffs):
			cpu = s
		}
	}
	if good != nil {
		if sigma, ok := good.steadier(); ok {
			return sigma, true
		}
	}
	if cpu != nil {
		return cpu.figs[0].sigma()
	}
	return 0, false
}
