package tune

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
// move every 2 rounds; noisy goodput ones (σ 10 to 20%) every 5 to 8. perStack (5 on CPU, 8 on goodput), the
// rounds the error rates were simulated at (TestReplicasKeepTheErrorRate), is the most: fewer rounds a stack
// only average the offsets out faster, and TestReplicasKeepTheErrorRate holds at every k from 1 up.

// stackRounds is k* rounded, within [1, most], for a pair's σ a round, a move's cost and a round's.
func stackRounds(sigma float64, start, round time.Duration, most int) int {
	if sigma <= 0 || start <= 0 || round <= 0 {
		return most
	}
	k := sigma / DefaultStackSD * math.Sqrt(float64(start)/(2*float64(round)))
	return min(max(int(math.Round(k)), 1), most)
}

// spread tallies what stackRounds needs from an experiment's own trials: successive trials of an arm on one
// stack (their log difference's mean square is twice an arm's variance a trial, whatever the stack's offset and
// a slow drift), the trials' wall time and the starts'.
type spread struct {
	sqDiff    float64
	diffs     int
	trialWall time.Duration
	trials    int
	startWall time.Duration
	starts    int
	last      map[any]float64 // an arm's last trial's log figure on its current stack
}

// trial counts a trial of a, of figure v (0: failed), that took d; first says it was the first on its stack.
func (s *spread) trial(a any, v float64, d time.Duration, first bool) {
	if s.last == nil {
		s.last = map[any]float64{}
	}
	s.trialWall += d
	s.trials++
	prev, ok := s.last[a]
	delete(s.last, a)
	if v <= 0 {
		return
	}
	l := math.Log(v)
	if ok && !first {
		s.sqDiff += (l - prev) * (l - prev)
		s.diffs++
	}
	s.last[a] = l
}

// start counts a start (or the side by side starts of one move) that took d.
func (s *spread) start(d time.Duration) {
	s.startWall += d
	s.starts++
}

// minDiffs is how many within-stack differences the rule waits for before it moves off the default.
const minDiffs = 3

// rounds is the rounds a stack serves an arm of an experiment of arms arms, most at the most, from what was seen.
func (s *spread) rounds(arms, most int) int {
	if s.diffs < minDiffs || s.starts == 0 || s.trials == 0 {
		return most
	}
	// A pair's log ratio varies as two arms' trials: twice an arm's variance, which is half the mean square.
	sigma := math.Sqrt(s.sqDiff / float64(s.diffs))
	round := time.Duration(max(arms, 2)) * (s.trialWall / time.Duration(s.trials))
	return stackRounds(sigma, s.startWall/time.Duration(s.starts), round, most)
}
