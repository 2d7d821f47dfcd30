package report

import (
	"math"
	"testing"

	"github.com/phptune/phptune/internal/experiment"
)

// A side at the engine's no-bound (four rounds of a race at a small alpha) reads as not bounded, not as a figure.
func TestIntervalText(t *testing.T) {
	pct := func(log float64) float64 { return 100 * math.Expm1(log) }
	cases := []struct {
		c    change
		want string
	}{
		{change{Est: 13.3, Lo: -99.9, Hi: 99900}, "[not bounded yet]"},
		{change{Est: 1, Lo: pct(-experiment.Unbounded), Hi: 25}, "[not bounded yet]"},
		{change{Est: 1, Lo: -20, Hi: pct(experiment.Unbounded)}, "[not bounded yet]"},
		{change{Est: 1, Lo: -99.8, Hi: 350.5}, "[-99.8%, +350%]"},
		{change{Est: 1, Lo: -2.5, Hi: 3.25}, "[-2.5%, +3.2%]"},
		// Below zero by a hair: not "-0.0%", which read as an interval that reaches zero.
		{change{Est: 17.9, Lo: -0.04, Hi: 39.1}, "[-0.04%, +39.1%]"},
		{change{Est: 0, Lo: 0, Hi: 39.1}, "[+0.0%, +39.1%]"},
	}
	for _, c := range cases {
		if got := intervalText(&c.c); got != c.want {
			t.Errorf("intervalText(%+v) = %q, want %q", c.c, got, c.want)
		}
	}
}
