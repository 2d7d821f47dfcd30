package experiment

// Budget is a run's error budget: the chance, at most, that any of the run's verdicts is wrong (a difference
// declared where there is none, a direction reversed, or no difference declared where one of at least the
// minimum effect exists). Each experiment draws a share before it starts, in proportion to the pairs of arms it
// may compare, and the shares never add up to more than the whole: by the union bound over experiments (each
// run on fresh trials), the run's error rate stays within it whatever the experiments decide and in whatever
// order. Shares planned for experiments that do not run are handed to later ones (Release).
type Budget struct {
	total, left float64
	planned     int // weight planned and not yet drawn or released
}

// NewBudget is a budget of alpha for experiments planned to compare planned pairs in all.
func NewBudget(alpha float64, planned int) *Budget {
	return &Budget{total: alpha, left: alpha, planned: max(planned, 0)}
}

// Draw gives an experiment that may compare pairs pairs its share: what is left, times pairs over the pairs
// still planned. An experiment beyond the plan gets a share that leaves some for later ones.
func (b *Budget) Draw(pairs int) float64 {
	if pairs <= 0 || b.left <= 0 {
		return 0
	}
	denom := b.planned
	if denom < pairs {
		denom = pairs + 1
	}
	share := b.left * float64(pairs) / float64(denom)
	b.left -= share
	b.planned = max(b.planned-pairs, 0)
	return share
}

// Plan adds pairs to the plan (experiments that became possible).
func (b *Budget) Plan(pairs int) { b.planned += max(pairs, 0) }

// Release takes pairs out of the plan (experiments that will not run): their share goes to the rest.
func (b *Budget) Release(pairs int) { b.planned = max(b.planned-max(pairs, 0), 0) }

// PairShare is what one pair would draw now: what is left over the pairs still planned.
func (b *Budget) PairShare() float64 {
	return b.left / float64(max(b.planned, 1))
}

// Total is the run's whole budget.
func (b *Budget) Total() float64 { return b.total }

// Spent is what the experiments so far drew.
func (b *Budget) Spent() float64 { return b.total - b.left }

// Pairs is how many pairs of arms an experiment of mode with k arms may compare: its weight in the budget.
func Pairs(mode Mode, k int) int {
	if k < 2 {
		return 0
	}
	if mode == Race || mode == Smallest {
		return k * (k - 1) / 2
	}
	return k - 1
}
