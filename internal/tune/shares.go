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
