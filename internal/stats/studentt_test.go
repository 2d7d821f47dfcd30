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
