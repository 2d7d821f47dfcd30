package stats

import (
	"math"
	"testing"
)

// TestTQuantile against published tables (and the normal's quantile for many degrees of freedom).
func TestTQuantile(t *testing.T) {
	for _, c := range []struct {
		p    float64
		df   int
		want float64
	}{{0.975, 1, 12.706}, {0.975, 5, 2.571}, {0.975, 30, 2.042}, {0.995, 10, 3.169}, {0.999, 3, 10.215},
		{0.9995, 20, 3.850}, {0.025, 5, -2.571}, {0.99865, 100000, 3.0}} {
		if got := TQuantile(c.p, c.df); math.Abs(got-c.want) > 0.0015*math.Abs(c.want) {
			t.Errorf("TQuantile(%g, %d) = %.4f, want %.3f", c.p, c.df, got, c.want)
		}
	}
}

// TestFQuantile against identities: F(1, d) is t(d) squared, and 1/F(d1, d2) is F(d2, d1); a median of F(1, 1) is 1.
func TestFQuantile(t *testing.T) {
	for _, d := range []int{1, 4, 17, 200} {
		tq := TQuantile(0.95, d)
		if got := FQuantile(0.9, 1, float64(d)); math.Abs(got-tq*tq) > 1e-6*got {
			t.Errorf("FQuantile(0.9, 1, %d) = %g, want t's %g squared", d, got, tq)
		}
	}
	for _, c := range [][2]float64{{3, 17}, {30, 200}, {5, 10}} {
		lo, hi := FQuantile(0.1, c[0], c[1]), FQuantile(0.9, c[1], c[0])
		if math.Abs(lo*hi-1) > 1e-6 {
			t.Errorf("FQuantile(0.1, %g, %g) = %g, 1/FQuantile(0.9, %g, %g) = %g", c[0], c[1], lo, c[1], c[0], 1/hi)
		}
	}
	if got := FQuantile(0.5, 1, 1); math.Abs(got-1) > 1e-6 {
		t.Errorf("median of F(1, 1): %g", got)
	}
}
