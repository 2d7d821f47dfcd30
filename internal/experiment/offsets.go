package experiment

// A stack's own offset (where its code and data land in memory: Mytkowicz et al. 2009; Curtsinger and Berger
// 2013) lasts the stack's life. Rounds of one pair of stacks share their offsets, so the rounds' spread does not
// show them and more rounds make them more certain: read as the configurations' effect. When the spread of
// stacks' offsets is known (Spec.StackSD, measured with replicated stacks), a pair's sequence allows for the
// offsets of the stacks its rounds ran on (Observation.Stack): their weighted mean moves the pair's mean
// difference with variance StackSD² (H_a + H_b), H an arm's sum of its stacks' squared shares of the rounds
// (1 on one stack, 1/k on k stacks alike). Spread over the rounds, and less what the rounds' own spread already
// shows of the offsets (offsets.variance), that is added to the rounds' own: an arm on one stack never gets an
// interval narrower than its offset allows, and an arm whose rounds run on fresh stacks as the race goes on gets
// one that narrows as they come.

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

// variance is the variance a round the stacks' offsets add to the rounds' own spread, over n rounds: what the
// offsets add to the mean's variance, StackSD² (H_a + H_b), less what the rounds' spread already shows of them.
// Offsets that differ from round to round vary the rounds: the sample variance's expectation holds StackSD² (2 -
// H_a - H_b) n/(n-1) of them. Spread over the rounds, the rest is StackSD² (n (H_a + H_b) - (2 - H_a - H_b)
// n/(n-1)) a round: 2 n StackSD² for arms on one stack each, and none for arms that move to fresh stacks every
// round, whose rounds are independent, offsets and all (duet rounds that move each round need no allowance).
func (o *offsets) variance(n int) float64 {
	if o.sd == 0 || n < 2 {
		return 0
	}
	h := o.a.herfindahl() + o.b.herfindahl()
	nf := float64(n)
	return o.sd * o.sd * max(nf*h-(2-h)*nf/(nf-1), 0)
}
