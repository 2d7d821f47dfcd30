package experiment

// A stack's own offset (where its code and data land in memory: Mytkowicz et al. 2009; Curtsinger and Berger
// 2013) lasts the stack's life. Rounds of one pair of stacks share their offsets, so the rounds' spread does not
// show them and more rounds make them more certain: read as the configurations' effect. When the spread of
// stacks' offsets is known (Spec.StackSD, measured with replicated stacks), a pair's sequence allows for the
// offsets of the stacks its rounds ran on (Observation.Stack): their weighted mean moves the pair's mean
// difference with variance StackSD² (H_a + H_b), H an arm's sum of its stacks' squared shares of the rounds
// (1 on one stack, 1/k on k stacks alike). Spread over the rounds, that is a variance of StackSD² n (H_a + H_b)
// a round, added to the rounds' own: an arm on one stack never gets an interval narrower than its offset
// allows, and an arm whose rounds run on fresh stacks as the race goes on gets one that narrows as they come.

// stackShares counts one side's rounds by the stack they ran on.
type stackShares struct {
	n     int
	count map[int]int
	sumSq float64 // the sum of the counts' squares
}

func (s *stackShares) add(stack int) {
	if s.count == nil {
		s.count = map[int]int{}
	}
	c := s.count[stack]
	s.sumSq += float64(2*c + 1) // (c+1)² - c²
	s.count[stack] = c + 1
	s.n++
}

// herfindahl is the sum of the stacks' squared shares of the rounds.
func (s *stackShares) herfindahl() float64 {
	if s.n == 0 {
		return 0
	}
	return s.sumSq / float64(s.n*s.n)
}

// offsets is what a pair's sequence knows of its stacks.
type offsets struct {
	sd   float64 // the spread of a stack's offset (log scale); 0: not allowed for
	a, b stackShares
}

func (o *offsets) add(a, b int) {
	o.a.add(a)
	o.b.add(b)
}

// variance is the variance a round the stacks' offsets add, over n rounds.
func (o *offsets) variance(n int) float64 {
	if o.sd == 0 {
		return 0
	}
	return o.sd * o.sd * float64(n) * (o.a.herfindahl() + o.b.herfindahl())
}
