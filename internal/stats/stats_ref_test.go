package stats

import (
	"math"
	"testing"
)

// Reference values from testdata/ref.py (scipy 1.10.1 on Debian bookworm, plus brute-force enumeration for
// exact p-values with ties, and test inversion for the intervals of untied data); see its docstring. Re-run:
//
//	/usr/bin/python3 internal/stats/testdata/ref.py
//
// The data sets are defined identically there.

type refCase struct {
	name          string
	p, hl, lo, hi float64
	conf          float64 // coverage achieved by the interval
	exact         bool
	zeros         int
	a, b          []float64
	diffs         []float64 // paired on raw differences instead of a, b
	unpaired      bool
}

func ints(n int, f func(i int) int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(f(i))
	}
	return x
}

func refCases() []refCase {
	rx := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	ry := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	rd := make([]float64, len(rx))
	for i := range rx {
		rd[i] = rx[i] - ry[i]
	}
	return []refCase{
		// P1: n=10, no ties; p scipy wilcoxon exact; CI k=9, equal to inversion of scipy's exact test.
		{name: "P1", p: 0.00390625, hl: 0.027047375747904848, lo: 0.014606591181426962, hi: 0.040544179343253814, conf: 0.951171875, exact: true,
			a: []float64{1012, 987, 1043, 998, 1021, 1005, 979, 1030, 1016, 992},
			b: []float64{1049, 1003, 1061, 1040, 1019, 1052, 1010, 1041, 1068, 1015}},
		// P2: n=12, one zero, ties in |r| (1.05 three times, one of them negative; 1.03 twice); p by brute-force
		// sign flips over the mid-ranks; CI k=14.
		{name: "P2", p: 0.1162109375, hl: 0.022520279525794079, lo: -0.0038222648592685874, hi: 0.041836237862057563, conf: 0.95751953125, exact: true, zeros: 1,
			a: []float64{100, 200, 105, 300, 100, 250, 120, 100, 400, 90, 110, 130},
			b: []float64{105, 210, 100, 300, 103, 260, 118, 97, 412, 95, 115, 133}},
		// P3: n=60, 4 zeros, heavy ties; p scipy wilcoxon approx (correction=True, zero_method=wilcox); CI k=649.
		{name: "P3", p: 0.0023575912623387506, hl: 0.018599720494553211, lo: 0.0087234568018603117, hi: 0.028804156310156679, conf: 0.95022205256740599, zeros: 4,
			a: ints(60, func(i int) int { return 100 * (1 + i%3) }),
			b: ints(60, func(i int) int { return 100*(1+i%3) + ((i*7)%13-4)*(1+i%3) })},
		// P4: n=60, no ties; p scipy wilcoxon approx; CI k=649, equal to inversion of scipy's approx test.
		{name: "P4", p: 0.022267265050189063, hl: 0.012162788036197646, lo: 0.0019363131638363675, hi: 0.022817945171070317, conf: 0.95022205256740599,
			a: ints(60, func(i int) int { return 10000 + (i*7919)%1009 }),
			b: ints(60, func(i int) int { return 10000 + (i*104729)%1013 + 150 })},
		// P5: n=30, no ties; p scipy wilcoxon exact; CI k=138, equal to inversion.
		{name: "P5", p: 0.90322647243738174, hl: -0.0061443254441449699, lo: -0.039670697553156956, hi: 0.033052243291342875, conf: 0.95028987899422646, exact: true,
			a: ints(30, func(i int) int { return 5000 + (i*7919)%997 }),
			b: ints(30, func(i int) int { return 5060 + (i*6007)%991 })},
		// RD: R's ?wilcox.test paired example (Hollander & Wolfe), raw differences x - y; R documents the
		// one-sided p 0.01953 (= half of this); CI k=6, equal to inversion.
		{name: "RD", p: 0.0390625, hl: 0.46000000000000008, lo: 0.010000000000000009, hi: 0.78600000000000003, conf: 0.9609375, exact: true,
			diffs: rd},
		// U1: R's ?wilcox.test two-sample example; R documents one-sided p 0.1272; scipy mannwhitneyu exact.
		{name: "U1", p: 0.2544122544122544, hl: -0.27137518778627184, lo: -0.67266864921640468, hi: 0.15139964645536835, conf: 0.96003996003996006, exact: true, unpaired: true,
			a: []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			b: []float64{1.15, 0.88, 0.90, 0.74, 1.21}},
		// U2: m=7, n=8 with ties; p by brute-force enumeration of all splits of the mid-ranks (scipy's
		// asymptotic p would be 0.0461239); CI k=11.
		{name: "U2", p: 0.04537684537684538, hl: 0.14131450230019471, lo: 0, hi: 0.29479954022064492, conf: 0.95990675990675989, exact: true, unpaired: true,
			a: []float64{31, 35, 35, 40, 42, 42, 42},
			b: []float64{35, 38, 42, 44, 44, 47, 50, 51}},
		// U3: m=60, n=55 with ties; p scipy mannwhitneyu asymptotic (use_continuity=True); CI k=1300 (normal).
		{name: "U3", p: 0.025262107571920437, hl: 0.024846105117471762, lo: 0.0043196611445166511, hi: 0.04609110720026699, conf: 0.95028677201246503, unpaired: true,
			a: ints(60, func(i int) int { return 200 + (i*37)%41 }),
			b: ints(55, func(i int) int { return 205 + (i*53)%43 })},
		// U4: m=60, n=70, no ties; p scipy asymptotic; CI k=1680, equal to inversion of scipy's asymptotic test.
		{name: "U4", p: 0.70695656417801833, hl: 0.00173977603177633, lo: -0.0086184853635611347, hi: 0.011553943024072311, conf: 0.95044622435322101, unpaired: true,
			a: ints(60, func(i int) int { return 20000 + 2*((i*7919)%1009) }),
			b: ints(70, func(i int) int { return 20081 + 2*((i*104729)%1013) })},
		// U5: m=18, n=22, no ties; p scipy mannwhitneyu exact; CI k=126, equal to inversion.
		{name: "U5", p: 0.15506923179462972, hl: -0.033006335344240689, lo: -0.080020221867700414, hi: 0.012388320856953072, conf: 0.95208595634059479, exact: true, unpaired: true,
			a: ints(18, func(i int) int { return 3000 + 2*((i*389)%401) }),
			b: ints(22, func(i int) int { return 3041 + 2*((i*577)%409) })},
	}
}

func approx(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestReferenceValues(t *testing.T) {
	for _, rc := range refCases() {
		t.Run(rc.name, func(t *testing.T) {
			var c Comparison
			var err error
			switch {
			case rc.diffs != nil:
				c = pairedFrom(rc.diffs, 0.95)
			case rc.unpaired:
				c, err = Unpaired(rc.a, rc.b, 0.95)
			default:
				c, err = Paired(rc.a, rc.b, 0.95)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !approx(c.P, rc.p, 1e-9) {
				t.Errorf("p = %.17g, want %.17g", c.P, rc.p)
			}
			if !approx(c.LogEstimate, rc.hl, 1e-12) || !approx(c.LogLo, rc.lo, 1e-12) || !approx(c.LogHi, rc.hi, 1e-12) {
				t.Errorf("HL %.17g [%.17g, %.17g], want %.17g [%.17g, %.17g]", c.LogEstimate, c.LogLo, c.LogHi, rc.hl, rc.lo, rc.hi)
			}
			if !approx(c.ConfAchieved, rc.conf, 1e-9) {
				t.Errorf("achieved coverage %.17g, want %.17g", c.ConfAchieved, rc.conf)
			}
			if c.Exact != rc.exact {
				t.Errorf("exact = %v, want %v", c.Exact, rc.exact)
			}
			if c.Zeros != rc.zeros {
				t.Errorf("zeros = %d, want %d", c.Zeros, rc.zeros)
			}
			if !approx(c.Estimate, math.Expm1(rc.hl), 1e-12) || !approx(c.Lo, math.Expm1(rc.lo), 1e-12) || !approx(c.Hi, math.Expm1(rc.hi), 1e-12) {
				t.Errorf("relative %v [%v, %v] does not match exp(log) - 1", c.Estimate, c.Lo, c.Hi)
			}
		})
	}
}

// The exact two-sided 0.05 critical values of the signed-rank statistic (k-1 below) are the classical table
// (e.g. n=10: 8, n=20: 52, n=50: 434); these k come from testdata/ref.py (brute force for n <= 16, scipy's
// exact distribution above).
func TestSignedRankCriticalTable(t *testing.T) {
	want := map[int]int{6: 1, 7: 3, 8: 4, 9: 6, 10: 9, 11: 11, 12: 14, 13: 18, 14: 22, 15: 26, 16: 30, 17: 35, 18: 41,
		19: 47, 20: 53, 21: 59, 22: 66, 23: 74, 24: 82, 25: 90, 26: 99, 27: 108, 28: 117, 29: 127, 30: 138, 31: 148,
		32: 160, 33: 171, 34: 183, 35: 196, 36: 209, 37: 222, 38: 236, 39: 250, 40: 265, 41: 280, 42: 295, 43: 311,
		44: 328, 45: 344, 46: 362, 47: 379, 48: 397, 49: 416, 50: 435}
	for n, k := range want {
		got, ach := signedRankCritical(n, 0.95)
		if got != k {
			t.Errorf("n=%d: k=%d, want %d", n, got, k)
		}
		if n > 6 && ach < 0.95 {
			t.Errorf("n=%d: achieved coverage %v < 0.95", n, ach)
		}
	}
	// n=6: the widest interval covers only 1 - 2/64.
	if _, ach := signedRankCritical(6, 0.95); !approx(ach, 1-2.0/64, 1e-12) {
		t.Errorf("n=6 achieved %v", ach)
	}
	// The normal approximation just beyond the exact range is within one of the exact value at n=50.
	fn := 50.0
	kn, _ := normalCritical(fn*(fn+1)/4, math.Sqrt(fn*(fn+1)*(2*fn+1)/24), 0.025, 1275)
	if kn < 434 || kn > 436 {
		t.Errorf("normal critical at n=50: %d, exact 435", kn)
	}
}
