package main

import (
	"math"
	"math/rand/v2"
)

// anova is the two-way analysis (stacks and rounds, no interaction) of log figures pooled over batches.
type anova struct {
	ssStack, msStack, msRes float64
	dfStack, dfRes, rounds  int
	// varStack is the stacks' variance component: (msStack - msRes) / rounds.
	varStack float64
}

// twoWay analyses tabs[batch][stack][round]: a round's effect (the machine's drift) and a stack's (its lasting
// offset) are taken out, and what a stack's mean varies by beyond the rounds' noise is its own.
func twoWay(tabs [][][]float64) anova {
	var a anova
	var ssRes float64
	for _, t := range tabs {
		ss, sr, rounds := batchSS(t)
		a.ssStack += ss
		ssRes += sr
		a.dfStack += len(t) - 1
		a.dfRes += (len(t) - 1) * (rounds - 1)
		a.rounds = rounds
	}
	a.msStack = a.ssStack / float64(a.dfStack)
	a.msRes = ssRes / float64(a.dfRes)
	a.varStack = (a.msStack - a.msRes) / float64(a.rounds)
	return a
}

// batchSS is one batch's sums of squares between stacks and of the residuals.
func batchSS(t [][]float64) (ssStack, ssRes float64, rounds int) {
	sm, rm, g := means(t)
	rounds = len(rm)
	for s, row := range t {
		ssStack += float64(rounds) * (sm[s] - g) * (sm[s] - g)
		for r, y := range row {
			e := y - sm[s] - rm[r] + g
			ssRes += e * e
		}
	}
	return ssStack, ssRes, rounds
}

// means are a table's stack (row) means, round (column) means and grand mean.
func means(t [][]float64) (sm, rm []float64, g float64) {
	rounds := len(t[0])
	sm, rm = make([]float64, len(t)), make([]float64, rounds)
	for s, row := range t {
		for r, y := range row[:rounds] {
			sm[s] += y / float64(rounds)
			rm[r] += y / float64(len(t))
			g += y / float64(rounds*len(t))
		}
	}
	return sm, rm, g
}

// interval is the stacks' sd at conf (two-sided), msStack's chi-square taken as exact and msRes as known (its
// degrees of freedom are many times msStack's).
func (a anova) interval(conf float64) (lo, hi float64) {
	tail := (1 - conf) / 2
	k := float64(a.dfStack)
	f := func(q float64) float64 {
		return math.Sqrt(max(a.msStack*k/q-a.msRes, 0) / float64(a.rounds))
	}
	return f(chi2Quantile(1-tail, k)), f(chi2Quantile(tail, k))
}

// chi2Quantile is Wilson and Hilferty's approximation of the chi-square quantile: within a percent or two from
// 10 degrees of freedom up.
func chi2Quantile(p, k float64) float64 {
	z := math.Sqrt2 * math.Erfinv(2*p-1)
	c := 2 / (9 * k)
	return k * math.Pow(1-c+z*math.Sqrt(c), 3)
}

// permutationP is the chance, were the stacks alike, of a spread between them as large as ss: each round's
// figures shuffled among its batch's stacks (their order in a round is balanced by rotation).
func permutationP(tabs [][][]float64, ss float64, n int, rng *rand.Rand) float64 {
	work := make([][][]float64, len(tabs))
	for b, t := range tabs {
		work[b] = make([][]float64, len(t))
		for s := range t {
			work[b][s] = append([]float64(nil), t[s]...)
		}
	}
	hits := 0
	for range n {
		total := 0.0
		for _, t := range work {
			for r := range t[0] {
				for i := len(t) - 1; i > 0; i-- {
					j := rng.IntN(i + 1)
					t[i][r], t[j][r] = t[j][r], t[i][r]
				}
			}
			s, _, _ := batchSS(t)
			total += s
		}
		if total >= ss*(1-1e-12) {
			hits++
		}
	}
	return float64(hits+1) / float64(n+1)
}

// lag1 is the mean lag-1 autocorrelation of a stack's residuals over its rounds: an offset that drifts within
// a stack's life shows as a positive one (about -1/rounds when there is none).
func lag1(tabs [][][]float64) float64 {
	sum, n := 0.0, 0
	for _, t := range tabs {
		sm, rm, g := means(t)
		for s, row := range t {
			var num, den float64
			prev := math.NaN()
			for r, y := range row {
				e := y - sm[s] - rm[r] + g
				den += e * e
				if !math.IsNaN(prev) {
					num += prev * e
				}
				prev = e
			}
			if den > 0 {
				sum += num / den
				n++
			}
		}
	}
	return sum / float64(max(n, 1))
}
