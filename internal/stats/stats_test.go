package stats

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestHolmHandWorked(t *testing.T) {
	// Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> max with 0.06 = 0.06.
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !approx(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	// Capped at 1, NaN counts as 1, ties keep their order.
	got = Holm([]float64{0.5, 0.6, math.NaN(), 0.02, 0.02})
	want = []float64{1, 1, 1, 0.1, 0.1}
	for i := range want {
		if !approx(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	if len(Holm(nil)) != 0 {
		t.Fatal("Holm(nil) not empty")
	}
	if g := Holm([]float64{0.03}); g[0] != 0.03 {
		t.Fatalf("single p adjusted to %v", g[0])
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		conf float64
	}{
		{"mismatch", []float64{1, 2}, []float64{1}, 0},
		{"empty", nil, nil, 0},
		{"zero", []float64{1, 0}, []float64{1, 1}, 0},
		{"negative", []float64{1, 1}, []float64{1, -1}, 0},
		{"nan", []float64{1, math.NaN()}, []float64{1, 1}, 0},
		{"inf", []float64{1, 1}, []float64{math.Inf(1), 1}, 0},
		{"conf", []float64{1, 1}, []float64{1, 1}, 1},
		{"conf<0", []float64{1, 1}, []float64{1, 1}, -0.5},
	} {
		if _, err := Paired(tc.a, tc.b, tc.conf); err == nil {
			t.Errorf("Paired %s: no error", tc.name)
		}
		if tc.name != "mismatch" {
			if _, err := Unpaired(tc.a, tc.b, tc.conf); err == nil {
				t.Errorf("Unpaired %s: no error", tc.name)
			}
		}
	}
	if _, err := Unpaired([]float64{1, 2, 3}, []float64{2}, 0); err != nil {
		t.Errorf("Unpaired with different sizes: %v", err)
	}
}

func TestDefaultsAndJSON(t *testing.T) {
	c, err := Paired([]float64{1, 2, 3, 4, 5, 6}, []float64{1.1, 2.2, 3.3, 4.4, 5.5, 6.6}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Conf != DefaultConf || c.N != 6 || !c.Paired || c.PAdjusted != c.P {
		t.Fatalf("%+v", c)
	}
	c.Verdict = DefaultRule(true).Decide(c)
	js, _ := json.Marshal(c)
	for _, key := range []string{`"n":`, `"paired":`, `"estimate":`, `"lo":`, `"hi":`, `"log_estimate":`, `"log_lo":`,
		`"log_hi":`, `"conf":`, `"conf_achieved":`, `"p":`, `"p_adjusted":`, `"verdict":"better"`, `"exact":true`, `"zeros":0`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("JSON %s lacks %s", js, key)
		}
	}
	// All six ratios are 1.1 (to rounding): the exact p is 2/64, the smallest there is with 6 pairs, and the
	// interval is (nearly) a point.
	if !approx(c.P, 2.0/64, 1e-12) || !approx(c.Estimate, 0.1, 1e-12) || !approx(c.Lo, 0.1, 1e-12) || !approx(c.Hi, 0.1, 1e-12) {
		t.Errorf("constant ratio: p %v estimate %v [%v, %v]", c.P, c.Estimate, c.Lo, c.Hi)
	}
	if Median(nil) == Median(nil) {
		t.Error("Median(nil) is not NaN")
	}
	x := []float64{3, 1, 2, 10}
	if Median(x) != 2.5 || x[0] != 3 || Median([]float64{5, 1, 3}) != 3 {
		t.Error("Median")
	}
}

func TestAllZeros(t *testing.T) {
	a := []float64{5, 6, 7, 8, 9, 10, 11}
	c, err := Paired(a, a, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.P != 1 || c.Zeros != 7 || c.LogEstimate != 0 || c.LogLo != 0 || c.LogHi != 0 {
		t.Fatalf("%+v", c)
	}
	if v := DefaultRule(true).Decide(c); v != NoDifference {
		t.Fatalf("verdict %s", v)
	}
}

func TestDecide(t *testing.T) {
	base := Comparison{N: 10, P: 0.001, PAdjusted: 0.001, Estimate: 0.05, LogEstimate: math.Log1p(0.05),
		Lo: 0.02, LogLo: math.Log1p(0.02), Hi: 0.08, LogHi: math.Log1p(0.08)}
	up, down := DefaultRule(true), DefaultRule(false)
	if v := up.Decide(base); v != Better {
		t.Errorf("higher is better, +5%%: %s", v)
	}
	if v := down.Decide(base); v != Worse {
		t.Errorf("lower is better, +5%%: %s", v)
	}
	neg := base
	neg.Estimate, neg.LogEstimate = -0.05, math.Log1p(-0.05)
	neg.Lo, neg.LogLo, neg.Hi, neg.LogHi = -0.08, math.Log1p(-0.08), -0.02, math.Log1p(-0.02)
	if v := up.Decide(neg); v != Worse {
		t.Errorf("higher is better, -5%%: %s", v)
	}
	if v := down.Decide(neg); v != Better {
		t.Errorf("lower is better, -5%%: %s", v)
	}
	c := base
	c.PAdjusted = 0.06 // raw p is small but the adjusted one is not
	if v := up.Decide(c); v != NoDifference {
		t.Errorf("adjusted p 0.06: %s", v)
	}
	c = base
	c.Lo, c.LogLo = -0.001, math.Log1p(-0.001)
	if v := up.Decide(c); v != NoDifference {
		t.Errorf("CI includes 0: %s", v)
	}
	c = base
	c.Estimate, c.LogEstimate, c.Lo, c.LogLo = 0.008, math.Log1p(0.008), 0.004, math.Log1p(0.004)
	if v := up.Decide(c); v != NoDifference {
		t.Errorf("0.8%% < min effect: %s", v)
	}
	if v := (Rule{MinEffect: 0.005, Alpha: 0.05, HigherIsBetter: true}).Decide(c); v != Better {
		t.Errorf("0.8%% with min effect 0.5%%: %s", v)
	}
	if v := (Rule{HigherIsBetter: true}).Decide(c); v != Better {
		t.Errorf("zero Rule (alpha defaults, no min effect): %s", v)
	}
	c = base
	c.N = MinPairs - 1
	if v := up.Decide(c); v != Insufficient {
		t.Errorf("n=5: %s", v)
	}
	c = base
	c.PAdjusted = math.NaN()
	if v := up.Decide(c); v != NoDifference {
		t.Errorf("NaN p: %s", v)
	}
}

func TestDecideAll(t *testing.T) {
	mk := func(n int, p float64) *Comparison {
		return &Comparison{N: n, P: p, PAdjusted: p, Estimate: 0.05, LogEstimate: 0.0488, Lo: 0.02, LogLo: 0.0198, Hi: 0.08, LogHi: 0.077}
	}
	// The n=4 comparison stays out of the family: the other three are adjusted as a family of 3.
	cs := []*Comparison{mk(10, 0.01), mk(10, 0.04), nil, mk(4, 0.001), mk(10, 0.02)}
	DecideAll(cs, []Rule{DefaultRule(true)})
	wantAdj := []float64{0.03, 0.04, 0, 0.001, 0.04}
	wantV := []Verdict{Better, Better, "", Insufficient, Better}
	for i, c := range cs {
		if c == nil {
			continue
		}
		if !approx(c.PAdjusted, wantAdj[i], 1e-12) || c.Verdict != wantV[i] {
			t.Errorf("%d: adjusted %v verdict %s, want %v %s", i, c.PAdjusted, c.Verdict, wantAdj[i], wantV[i])
		}
	}
	// Per-comparison rules, and a family where Holm removes a raw p < 0.05.
	cs = []*Comparison{mk(10, 0.04), mk(10, 0.03)}
	DecideAll(cs, []Rule{DefaultRule(true), DefaultRule(false)})
	if cs[0].Verdict != NoDifference || cs[1].Verdict != NoDifference {
		t.Errorf("Holm should leave both at no_difference: %+v %+v", *cs[0], *cs[1])
	}
	cs = []*Comparison{mk(10, 0.01), mk(10, 0.02)}
	DecideAll(cs, []Rule{DefaultRule(true), DefaultRule(false)})
	if cs[0].Verdict != Better || cs[1].Verdict != Worse {
		t.Errorf("per-comparison rules: %s %s", cs[0].Verdict, cs[1].Verdict)
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic with 2 rules for 3 comparisons")
		}
	}()
	DecideAll([]*Comparison{mk(10, 0.1), mk(10, 0.1), mk(10, 0.1)}, []Rule{{}, {}})
}

func lognormalPairs(rng *rand.Rand, n int, effect, sigma float64) (a, b []float64) {
	a = make([]float64, n)
	b = make([]float64, n)
	for i := range a {
		level := 1000 * math.Exp(0.2*rng.NormFloat64()) // the machine's state drifts between pairs
		a[i] = level * math.Exp(sigma*rng.NormFloat64())
		b[i] = level * (1 + effect) * math.Exp(sigma*rng.NormFloat64())
	}
	return a, b
}

func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		n := 6 + rng.IntN(60)
		a, b := lognormalPairs(rng, n, 0.02*rng.NormFloat64(), 0.03)
		for _, unpaired := range []bool{false, true} {
			f := Paired
			if unpaired {
				f = Unpaired
				b = b[:max(n-rng.IntN(5), 6)]
			}
			c, err := f(a, b, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if !(c.LogLo <= c.LogEstimate && c.LogEstimate <= c.LogHi && c.Lo <= c.Estimate && c.Estimate <= c.Hi) {
				t.Fatalf("CI does not contain the estimate: %+v", c)
			}
			if !(c.P > 0 && c.P <= 1) || c.ConfAchieved < 0.95 {
				t.Fatalf("p %v, achieved %v", c.P, c.ConfAchieved)
			}
			// Swapping the arms negates the log estimate and interval (exactly) and keeps p.
			s, _ := f(b, a, 0.95)
			if s.LogEstimate != -c.LogEstimate || s.LogLo != -c.LogHi || s.LogHi != -c.LogLo || !approx(s.P, c.P, 1e-12) {
				t.Fatalf("swap: %+v vs %+v", s, c)
			}
			// Scaling both arms changes nothing: exactly by a power of two, to rounding otherwise.
			for _, k := range []float64{4, 1e-3, 37.7} {
				ka, kb := slices.Clone(a), slices.Clone(b)
				for i := range ka {
					ka[i] *= k
				}
				for i := range kb {
					kb[i] *= k
				}
				sc, _ := f(ka, kb, 0.95)
				tol := 1e-9
				if k == 4 {
					tol = 0
				}
				if !approx(sc.LogEstimate, c.LogEstimate, tol) || !approx(sc.LogLo, c.LogLo, tol) || !approx(sc.LogHi, c.LogHi, tol) || !approx(sc.P, c.P, tol) {
					t.Fatalf("scale by %v: %+v vs %+v", k, sc, c)
				}
			}
		}
	}
}

func TestClearEffectDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := lognormalPairs(rng, DefaultPairs, 0.10, 0.01)
	c, err := Paired(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	DecideAll([]*Comparison{&c}, []Rule{DefaultRule(true)})
	t.Logf("10%% effect, 1%% noise, 10 pairs: %+.4f [%+.4f, %+.4f] p=%.4g %s", c.Estimate, c.Lo, c.Hi, c.P, c.Verdict)
	if c.Verdict != Better || !(c.Lo <= 0.10 && 0.10 <= c.Hi) || c.P > 0.002 {
		t.Fatalf("%+v", c)
	}
	u, err := Unpaired(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	// Unpaired, the drift between pairs (20%) swamps the effect: no verdict is the honest answer.
	t.Logf("same data unpaired: %+.4f [%+.4f, %+.4f] p=%.4g", u.Estimate, u.Lo, u.Hi, u.P)
	if DefaultRule(true).Decide(u) == Worse {
		t.Fatalf("unpaired says worse: %+v", u)
	}
}

// slack is three standard errors of a rate near p estimated from runs trials.
func slack(p float64, runs int) float64 { return 3 * math.Sqrt(p*(1-p)/float64(runs)) }

// Calibration by simulation: identical arms, 3% lognormal noise on every measurement, 10 pairs.
func TestCalibrationNull(t *testing.T) {
	const runs = 10000
	rng := rand.New(rand.NewPCG(5, 6))
	rule := DefaultRule(true)
	noDiff, falseNoMin := 0, 0
	for range runs {
		a, b := lognormalPairs(rng, DefaultPairs, 0, 0.03)
		c, err := Paired(a, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if rule.Decide(c) == NoDifference {
			noDiff++
		}
		if (Rule{Alpha: 0.05}).Decide(c) != NoDifference {
			falseNoMin++
		}
	}
	rate := float64(noDiff) / runs
	t.Logf("identical arms, n=10, %d runs: no_difference %.2f%%; false verdicts without min effect %.2f%% (exact size 4.88%%)",
		runs, 100*rate, 100*float64(falseNoMin)/runs)
	if rate < 0.95-slack(0.05, runs) {
		t.Errorf("no_difference in %.2f%% of runs", 100*rate)
	}
	if f := float64(falseNoMin) / runs; f > 0.0488+slack(0.0488, runs) {
		t.Errorf("false verdict rate %.2f%% without min effect, exact size 4.88%%", 100*f)
	}
}

func TestCalibrationHolmFamily(t *testing.T) {
	const runs, family = 10000, 5
	rng := rand.New(rand.NewPCG(7, 8))
	rules := []Rule{DefaultRule(true)}
	bad := 0
	for range runs {
		cs := make([]*Comparison, family)
		for j := range cs {
			a, b := lognormalPairs(rng, DefaultPairs, 0, 0.03)
			c, err := Paired(a, b, 0)
			if err != nil {
				t.Fatal(err)
			}
			cs[j] = &c
		}
		DecideAll(cs, rules)
		for _, c := range cs {
			if c.Verdict != NoDifference {
				bad++
				break
			}
		}
	}
	rate := float64(bad) / runs
	t.Logf("family of %d identical comparisons, n=10, %d runs: family-wise false verdict rate %.2f%%", family, runs, 100*rate)
	if rate > 0.05+slack(0.05, runs) {
		t.Errorf("family-wise false verdict rate %.2f%%", 100*rate)
	}
}

func TestCoverageAndPower(t *testing.T) {
	const runs = 4000
	rng := rand.New(rand.NewPCG(9, 10))
	truth := math.Log(1.05)
	covered, right, wrong := 0, 0, 0
	for range runs {
		a, b := lognormalPairs(rng, DefaultPairs, 0.05, 0.03)
		c, err := Paired(a, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.LogLo <= truth && truth <= c.LogHi {
			covered++
		}
		switch DefaultRule(true).Decide(c) {
		case Better:
			right++
		case Worse:
			wrong++
		}
	}
	cov, power := float64(covered)/runs, float64(right)/runs
	t.Logf("true +5%%, 3%% noise, n=10, %d runs: CI coverage %.2f%% (exact 95.12%%); better %.2f%%, worse %.2f%%",
		runs, 100*cov, 100*power, 100*float64(wrong)/runs)
	if cov < 0.93 {
		t.Errorf("coverage %.2f%%", 100*cov)
	}
	if power <= 0.5 || wrong > 0 {
		t.Errorf("power %.2f%%, %d in the wrong direction", 100*power, wrong)
	}
}

// Unpaired on independent samples (no drift): null calibration and coverage, 10 against 12.
func TestCalibrationUnpaired(t *testing.T) {
	const runs = 4000
	rng := rand.New(rand.NewPCG(11, 12))
	sample := func(n int, effect float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 1000 * (1 + effect) * math.Exp(0.03*rng.NormFloat64())
		}
		return x
	}
	truth := math.Log(1.05)
	falseV, covered, right := 0, 0, 0
	for range runs {
		c, err := Unpaired(sample(10, 0), sample(12, 0), 0)
		if err != nil {
			t.Fatal(err)
		}
		if DefaultRule(true).Decide(c) != NoDifference {
			falseV++
		}
		c, _ = Unpaired(sample(10, 0), sample(12, 0.05), 0)
		if c.LogLo <= truth && truth <= c.LogHi {
			covered++
		}
		if DefaultRule(true).Decide(c) == Better {
			right++
		}
	}
	fr, cov := float64(falseV)/runs, float64(covered)/runs
	t.Logf("unpaired 10 vs 12, 3%% noise, %d runs: false verdicts %.2f%%; true +5%%: CI coverage %.2f%%, better %.2f%%",
		runs, 100*fr, 100*cov, 100*float64(right)/runs)
	if fr > 0.05+slack(0.05, runs) || cov < 0.93 {
		t.Errorf("false verdicts %.2f%%, coverage %.2f%%", 100*fr, 100*cov)
	}
}

func TestMannWhitneyDist(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {1, 5}, {5, 1}, {3, 4}, {10, 12}, {25, 7}, {50, 50}, {50, 13}} {
		m, n := mn[0], mn[1]
		scores := make([]int, m+n)
		for i := range scores {
			scores[i] = i + 1
		}
		want := subsetSumDist(scores, n)[n*(n+1)/2:]
		got := mannWhitneyDist(m, n)
		if len(got) != m*n+1 {
			t.Fatalf("%v: len %d, want %d", mn, len(got), m*n+1)
		}
		for _, p := range want[len(got):] {
			if p != 0 {
				t.Fatalf("%v: U > mn has probability %g", mn, p)
			}
		}
		for u := range got {
			if math.Abs(got[u]-want[u]) > 1e-12*want[u]+1e-300 {
				t.Fatalf("%v: P(U=%d) = %g, want %g", mn, u, got[u], want[u])
			}
		}
	}
}

// Complete separation at the largest exact sizes: p = 2/C(100, 50) either way round (the upper tail of U is
// where a naive floating-point Gaussian binomial loses all precision).
func TestMannWhitneyExtreme(t *testing.T) {
	a, b := make([]float64, 50), make([]float64, 50)
	for i := range a {
		a[i] = float64(1 + i)
		b[i] = float64(101 + i)
	}
	want := 2 / 1.0089134454556419e29 // C(100, 50)
	for _, swap := range []bool{false, true} {
		x, y := a, b
		if swap {
			x, y = b, a
		}
		c, err := Unpaired(x, y, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Exact || !approx(c.P/want, 1, 1e-9) {
			t.Errorf("swap=%v: p = %g, want %g", swap, c.P, want)
		}
	}
}
