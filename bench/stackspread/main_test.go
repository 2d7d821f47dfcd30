package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestOptsCheck(t *testing.T) {
	good := opts{stacks: 2, batches: 1, rounds: 3, children: 1}
	if err := good.check(); err != nil {
		t.Errorf("%+v: %v", good, err)
	}
	for _, bad := range []opts{
		{stacks: 1, batches: 1, rounds: 3, children: 1},
		{stacks: 2, batches: 0, rounds: 3, children: 1},
		{stacks: 2, batches: 1, rounds: 2, children: 1},
		{stacks: 2, batches: 1, rounds: 3, children: 0},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// batchA: stacks 3 and 5 on average, rounds 3, 3 and 6, grand mean 4; residuals -1, 0, 1 and 1, 0, -1. So the
// stacks' sum of squares is 3 x (1 + 1) = 6 on 1 degree of freedom, the residuals' 4 on 2.
var batchA = [][]float64{{1, 2, 6}, {5, 4, 6}}

// batchB: three stacks at 0, 0 and 3 without residuals: the stacks' sum of squares 3 x (1 + 1 + 4) = 18 on 2.
var batchB = [][]float64{{0, 0, 0}, {0, 0, 0}, {3, 3, 3}}

func TestMeans(t *testing.T) {
	sm, rm, g := means(batchA)
	if !slices.Equal(sm, []float64{3, 5}) || !slices.Equal(rm, []float64{3, 3, 6}) || g != 4 {
		t.Errorf("means = %v, %v, %v; want [3 5], [3 3 6], 4", sm, rm, g)
	}
}

func TestTwoWay(t *testing.T) {
	a := twoWay([][][]float64{batchA})
	want := anova{ssStack: 6, msStack: 6, msRes: 2, dfStack: 1, dfRes: 2, rounds: 3, varStack: (6 - 2) / 3.0}
	if !sameAnova(a, want) {
		t.Errorf("one batch: %+v, want %+v", a, want)
	}
	// Pooled: 24 on 3 between stacks, 4 on 6 of residuals; the variance component (8 - 2/3) / 3.
	a = twoWay([][][]float64{batchA, batchB})
	want = anova{ssStack: 24, msStack: 8, msRes: 4 / 6.0, dfStack: 3, dfRes: 6, rounds: 3, varStack: (8 - 4/6.0) / 3}
	if !sameAnova(a, want) {
		t.Errorf("two batches: %+v, want %+v", a, want)
	}
}

func sameAnova(a, b anova) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return eq(a.ssStack, b.ssStack) && eq(a.msStack, b.msStack) && eq(a.msRes, b.msRes) && eq(a.varStack, b.varStack) &&
		a.dfStack == b.dfStack && a.dfRes == b.dfRes && a.rounds == b.rounds
}

// Wilson and Hilferty's approximation against a chi-square table, within 2% from 10 degrees of freedom.
func TestChi2Quantile(t *testing.T) {
	for _, c := range []struct{ p, k, want float64 }{
		{0.95, 10, 18.307}, {0.05, 10, 3.940}, {0.975, 30, 46.979}, {0.025, 30, 16.791}, {0.5, 20, 19.337},
	} {
		if got := chi2Quantile(c.p, c.k); math.Abs(got/c.want-1) > 0.02 {
			t.Errorf("chi2Quantile(%v, %v) = %.3f, want %.3f", c.p, c.k, got, c.want)
		}
	}
}

// Eleven stacks at 0 to 10 over three rounds, without residuals: their means' variance is 110 / 10 = 11, msStack
// 3 x 11 = 33 on 10 degrees of freedom, and the 90% interval of their sd is sqrt(33 x 10 / chi2 / 3) at the
// table's 18.307 and 3.940.
func TestInterval(t *testing.T) {
	var tab [][]float64
	for s := range 11 {
		tab = append(tab, []float64{float64(s), float64(s), float64(s)})
	}
	a := twoWay([][][]float64{tab})
	if math.Abs(a.varStack-11) > 1e-9 {
		t.Fatalf("varStack %v, want 11", a.varStack)
	}
	lo, hi := a.interval(0.90)
	wantLo, wantHi := math.Sqrt(330/18.307/3), math.Sqrt(330/3.940/3)
	if math.Abs(lo/wantLo-1) > 0.015 || math.Abs(hi/wantHi-1) > 0.015 {
		t.Errorf("interval [%.3f, %.3f], want about [%.3f, %.3f]", lo, hi, wantLo, wantHi)
	}
	// Stacks that differ less than the rounds' noise says they would by chance: an interval at 0.
	lo, hi = twoWay([][][]float64{{{1, 2, 6}, {3, 2, 4}}}).interval(0.90)
	if lo != 0 || hi != 0 {
		t.Errorf("no spread between stacks: [%v, %v], want [0, 0]", lo, hi)
	}
}

// Stacks alike to the last figure: every shuffle spreads them as much, p = 1. Stacks far apart in every round of
// four: no shuffle of 200 comes near, p = 1/201. The tables are not shuffled in place.
func TestPermutationP(t *testing.T) {
	alike := [][][]float64{{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}}
	if p := permutationP(alike, 0, 200, rand.New(rand.NewPCG(1, 2))); p != 1 {
		t.Errorf("stacks alike: p = %v, want 1", p)
	}
	var apart [][]float64
	for s := range 4 {
		var row []float64
		for r := range 10 {
			row = append(row, 10*float64(s)+0.1*float64((r*7+s*3)%5))
		}
		apart = append(apart, row)
	}
	tabs := [][][]float64{apart}
	before := slices.Clone(apart[0])
	ss, _, _ := batchSS(apart)
	if p := permutationP(tabs, ss, 200, rand.New(rand.NewPCG(1, 2))); p != 1.0/201 {
		t.Errorf("stacks far apart: p = %v, want 1/201", p)
	}
	if !slices.Equal(apart[0], before) {
		t.Error("permutationP shuffled the table it was given")
	}
}

// Residuals alternating in sign give a lag-1 autocorrelation of 3 x -1 / 4; residuals in runs of two, (1 - 1 +
// 1) / 4.
func TestLag1(t *testing.T) {
	if got := lag1([][][]float64{{{1, -1, 1, -1}, {-1, 1, -1, 1}}}); math.Abs(got+0.75) > 1e-12 {
		t.Errorf("alternating: %v, want -0.75", got)
	}
	if got := lag1([][][]float64{{{1, 1, -1, -1}, {-1, -1, 1, 1}}}); math.Abs(got-0.25) > 1e-12 {
		t.Errorf("in runs: %v, want 0.25", got)
	}
}

// Three stacks at levels 1, 2, 3 over two rounds of 10 s trials. A full start overlaps stack 0's first trial by
// 6 s; a launch overlaps stack 0's and stack 1's second by 5 s each. Round 1's clean trials (stacks 1 and 2) sit
// 0.1 and 0.3 above their levels, so its effect is 0.2; round 2's only clean trial, stack 2's, sits 0.4 below.
func TestResiduals(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tr := func(y float64, from int) trial { return trial{y: y, start: at(from), end: at(from + 10)} }
	got := [][]trial{
		{tr(1.5, 0), tr(0.9, 20)},
		{tr(2.1, 10), tr(2.3, 30)},
		{tr(3.3, 40), tr(2.6, 50)},
	}
	events := []event{{kind: fullStart, start: at(0), end: at(6)}, {kind: launchStart, start: at(25), end: at(35)}}
	res, over := residuals(got, []float64{1, 2, 3}, events)
	wantRes := [][]float64{{0.5 - 0.2, -0.1 + 0.4}, {0.1 - 0.2, 0.3 + 0.4}, {0.3 - 0.2, -0.4 + 0.4}}
	wantOver := [][][kinds]float64{{{0.6, 0}, {0, 0.5}}, {{0, 0}, {0, 0.5}}, {{0, 0}, {0, 0}}}
	for s := range got {
		for r := range got[s] {
			if math.Abs(res[s][r]-wantRes[s][r]) > 1e-9 {
				t.Errorf("stack %d round %d: residual %v, want %v", s, r, res[s][r], wantRes[s][r])
			}
			for k := range kinds {
				if math.Abs(over[s][r][k]-wantOver[s][r][k]) > 1e-9 {
					t.Errorf("stack %d round %d: overlapped %v, want %v", s, r, over[s][r], wantOver[s][r])
				}
			}
		}
	}
	// A round without a clean trial has no level to take out: its residuals are NaN.
	res, _ = residuals(got[:2], []float64{1, 2}, events)
	if !math.IsNaN(res[0][1]) || !math.IsNaN(res[1][1]) || math.IsNaN(res[0][0]) {
		t.Errorf("without stack 2, round 2 has no clean trial: residuals %v", res)
	}
}

// summarize groups clean trials and those half or more overlapped by a start (a full start's first), leaving out
// NaN and trials overlapped less.
func TestSummarize(t *testing.T) {
	res := [][]float64{{-0.1, 0.3, 0.5}, {0.1, 0.7, math.NaN()}, {0, 0.9, 2}}
	over := [][][kinds]float64{
		{{0, 0}, {0, 0.5}, {0.6, 0.6}},
		{{0, 0}, {0.2, 0.9}, {0, 1}},
		{{0, 0}, {0.4, 0}, {0.5, 0}},
	}
	got := summarize(res, over)
	want := []summary{
		{name: "clean", n: 3, mean: 0, sd: 0.1},
		{name: "launch+check", n: 2, mean: 0.5, sd: math.Sqrt(0.08)},
		{name: "full start", n: 2, mean: 1.25, sd: math.Sqrt(2 * 0.75 * 0.75)},
	}
	if len(got) != len(want) {
		t.Fatalf("summarize = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.name != w.name || g.n != w.n || math.Abs(g.mean-w.mean) > 1e-9 || math.Abs(g.sd-w.sd) > 1e-9 {
			t.Errorf("group %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestMedianDuration(t *testing.T) {
	d := []time.Duration{3, 1, 2}
	if median(d) != 2 || median([]time.Duration{4, 1, 3, 2}) != 3 || median(nil) != 0 {
		t.Errorf("median: of 3 1 2 %v, of 4 1 3 2 %v (the upper middle), of nothing %v",
			median(d), median([]time.Duration{4, 1, 3, 2}), median(nil))
	}
	if !slices.Equal(d, []time.Duration{3, 1, 2}) {
		t.Errorf("median sorted its input: %v", d)
	}
}

func TestValues(t *testing.T) {
	got := values([][]trial{{{y: 1}, {y: 2}}, {{y: 3}}})
	if len(got) != 2 || !slices.Equal(got[0], []float64{1, 2}) || !slices.Equal(got[1], []float64{3}) {
		t.Errorf("values = %v", got)
	}
}
