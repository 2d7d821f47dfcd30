package stats

import (
	"math"
	"slices"
)

// midRanks2 returns twice the mid-rank of each value (an integer, since mid-ranks are multiples of 1/2), the
// tie term sum(t^3 - t) over groups of t equal values, and whether there are ties.
func midRanks2(x []float64) (ranks2 []int, tieTerm float64, ties bool) {
	n := len(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		switch {
		case x[i] < x[j]:
			return -1
		case x[i] > x[j]:
			return 1
		}
		return 0
	})
	ranks2 = make([]int, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && x[order[j]] == x[order[i]] {
			j++
		}
		// positions i..j-1 (0-based) share ranks i+1..j; twice their mean is i+1+j.
		for k := i; k < j; k++ {
			ranks2[order[k]] = i + 1 + j
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
			ties = true
		}
		i = j
	}
	return ranks2, tieTerm, ties
}

// normalSF is P(Z > z) for a standard normal Z.
func normalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// normalQuantile is the p-quantile of the standard normal.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// twoSidedNormal is the two-sided p-value of a statistic with mean mu and standard deviation sd, observed at
// s, with continuity correction 1/2 towards the mean.
func twoSidedNormal(s, mu, sd float64) float64 {
	if !(sd > 0) {
		return 1
	}
	z := max(math.Abs(s-mu)-0.5, 0) / sd
	return min(1, 2*normalSF(z))
}

// twoSidedExact is min(1, 2 min(P(S <= s), P(S >= s))) for the distribution dist (dist[v] = P(S = v)).
func twoSidedExact(dist []float64, s int) float64 {
	lower, upper := 0.0, 0.0
	for v := 0; v <= s && v < len(dist); v++ {
		lower += dist[v]
	}
	for v := len(dist) - 1; v >= s && v >= 0; v-- {
		upper += dist[v]
	}
	return min(1, 2*min(lower, upper))
}

// lowerCritical returns k such that k-1 is the largest t with P(S <= t) <= tail, and P(S <= k-1). When no t
// qualifies (too few observations for the level), k is 1 and the mass returned is P(S <= 0), which exceeds
// tail.
func lowerCritical(dist []float64, tail float64) (k int, mass float64) {
	cum := 0.0
	t := -1
	for v, p := range dist {
		if cum+p > tail*(1+1e-12) {
			break
		}
		cum += p
		t = v
	}
	if t < 0 {
		return 1, dist[0]
	}
	return t + 1, cum
}

// signedRankDist is the distribution of the sum of a random subset of scores where each score is included
// independently with probability 1/2: dist[v] = P(sum = v).
func signedRankDist(scores []int) []float64 {
	total := 0
	for _, s := range scores {
		total += s
	}
	dist := make([]float64, total+1)
	dist[0] = 1
	top := 0
	for _, s := range scores {
		top += s
		for v := top; v >= 0; v-- {
			p := dist[v] / 2
			if v >= s {
				p += dist[v-s] / 2
			}
			dist[v] = p
		}
	}
	return dist
}

// signedRankTest returns the two-sided p-value of Wilcoxon's signed-rank test of r against a zero shift,
// whether it is exact, and the number of zeros dropped.
func signedRankTest(r []float64) (p float64, exact bool, zeros int) {
	abs := make([]float64, 0, len(r))
	pos := make([]bool, 0, len(r))
	for _, v := range r {
		if v == 0 {
			zeros++
			continue
		}
		abs = append(abs, math.Abs(v))
		pos = append(pos, v > 0)
	}
	n := len(abs)
	if n == 0 {
		return 1, true, zeros
	}
	ranks2, tieTerm, _ := midRanks2(abs)
	t2 := 0 // twice T+, the sum of the ranks of the positive differences
	for i, rk := range ranks2 {
		if pos[i] {
			t2 += rk
		}
	}
	if n <= ExactMax {
		// The sign-flip distribution of the doubled mid-ranks: exact, ties included.
		return twoSidedExact(signedRankDist(ranks2), t2), true, zeros
	}
	fn := float64(n)
	mu := fn * (fn + 1) / 4
	variance := fn*(fn+1)*(2*fn+1)/24 - tieTerm/48
	return twoSidedNormal(float64(t2)/2, mu, math.Sqrt(variance)), false, zeros
}

// signedRankCritical returns the 1-based order statistic k of the Walsh averages giving the interval
// [W_(k), W_(M+1-k)] for n pairs at level conf, and the interval's actual coverage.
func signedRankCritical(n int, conf float64) (k int, achieved float64) {
	tail := (1 - conf) / 2
	if n <= ExactMax {
		scores := make([]int, n)
		for i := range scores {
			scores[i] = i + 1
		}
		k, mass := lowerCritical(signedRankDist(scores), tail)
		return k, 1 - 2*mass
	}
	fn := float64(n)
	m := fn * (fn + 1) / 2
	return normalCritical(m/2, math.Sqrt(fn*(fn+1)*(2*fn+1)/24), tail, int(m))
}

// normalCritical is lowerCritical for an integer statistic on 0..m approximated by a normal with mean mu and
// standard deviation sd, with continuity correction: P(S <= t) ~ Phi((t + 1/2 - mu)/sd).
func normalCritical(mu, sd, tail float64, m int) (k int, achieved float64) {
	t := int(math.Floor(mu + normalQuantile(tail)*sd - 0.5))
	k = min(max(t+1, 1), (m+1)/2)
	return k, 1 - 2*normalSF(-(float64(k-1)+0.5-mu)/sd)
}

// subsetSumDist is the distribution of the sum of a uniformly random size-k subset of scores.
func subsetSumDist(scores []int, k int) []float64 {
	total := 0
	for _, s := range scores {
		total += s
	}
	w := total + 1
	// dp[j*w+v]: number of j-subsets of the scores seen so far with sum v.
	dp := make([]float64, (k+1)*w)
	dp[0] = 1
	top := 0
	for i, s := range scores {
		top += s
		for j := min(i+1, k); j >= 1; j-- {
			row, prev := dp[j*w:(j+1)*w], dp[(j-1)*w:j*w]
			for v := top; v >= s; v-- {
				row[v] += prev[v-s]
			}
		}
	}
	dist := dp[k*w:]
	sum := 0.0
	for _, c := range dist {
		sum += c
	}
	for v := range dist {
		dist[v] /= sum
	}
	return dist
}

// mannWhitneyDist is the null distribution of U (no ties) for samples of sizes m and n: dist[u] = P(U = u),
// u = 0..mn. The counts are the coefficients of the Gaussian binomial [m+n choose n]_q =
// prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i), built one factor at a time (each partial product is itself a
// Gaussian binomial, with non-negative coefficients). The upper half is cancellation-prone in floating point
// (it drifts by orders of magnitude at 50 x 50), so it is taken from the lower half by symmetry.
func mannWhitneyDist(m, n int) []float64 {
	c := make([]float64, m*n+1)
	c[0] = 1
	for i := 1; i <= n; i++ {
		for u := i; u < len(c); u++ { // divide by 1 - q^i
			c[u] += c[u-i]
		}
		for u := len(c) - 1; u >= m+i; u-- { // multiply by 1 - q^(m+i)
			c[u] -= c[u-m-i]
		}
	}
	for u := len(c) - 1; 2*u > m*n; u-- {
		c[u] = c[m*n-u]
	}
	sum := 0.0
	for _, v := range c {
		sum += v
	}
	for u := range c {
		c[u] /= sum
	}
	return c
}

// mannWhitneyTest returns the two-sided p-value of the Mann-Whitney U test of a against b and whether it is
// exact.
func mannWhitneyTest(a, b []float64) (p float64, exact bool) {
	m, n := len(a), len(b)
	all := make([]float64, 0, m+n)
	all = append(all, a...)
	all = append(all, b...)
	ranks2, tieTerm, ties := midRanks2(all)
	w2 := 0 // twice the rank sum of b
	for _, rk := range ranks2[m:] {
		w2 += rk
	}
	if m <= ExactMax && n <= ExactMax {
		if !ties {
			return twoSidedExact(mannWhitneyDist(m, n), w2/2-n*(n+1)/2), true
		}
		// Permutation distribution of the doubled mid-rank sum of the smaller sample: exact given the ties.
		if n <= m {
			return twoSidedExact(subsetSumDist(ranks2, n), w2), true
		}
		total := (m + n) * (m + n + 1) // twice the sum of all ranks
		return twoSidedExact(subsetSumDist(ranks2, m), total-w2), true
	}
	fm, fn := float64(m), float64(n)
	bigN := fm + fn
	u := float64(w2)/2 - fn*(fn+1)/2
	variance := fm * fn / 12 * ((bigN + 1) - tieTerm/(bigN*(bigN-1)))
	return twoSidedNormal(u, fm*fn/2, math.Sqrt(variance)), false
}

// mannWhitneyCritical returns the 1-based order statistic k of the m*n differences giving the interval
// [D_(k), D_(mn+1-k)] at level conf, and its actual coverage.
func mannWhitneyCritical(m, n int, conf float64) (k int, achieved float64) {
	tail := (1 - conf) / 2
	if m <= ExactMax && n <= ExactMax {
		k, mass := lowerCritical(mannWhitneyDist(m, n), tail)
		return k, 1 - 2*mass
	}
	fm, fn := float64(m), float64(n)
	return normalCritical(fm*fn/2, math.Sqrt(fm*fn*(fm+fn+1)/12), tail, m*n)
}
