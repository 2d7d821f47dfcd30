package main

import (
	"math"
	"strings"
	"testing"

	"github.com/phptune/phptune/bench/internal/capture"
)

// Blocks' log ratios of -2, -4 and -6%: mean -4% (a change of e^-0.04 - 1 = -3.9%), sd 2%, t(2) 4.303: the
// interval -4% +- 4.97% as log ratios, [-8.6, +1.0] as changes.
func TestPrintSummary(t *testing.T) {
	logs := []float64{-0.02, -0.04, -0.06}
	out := capture.Stdout(t, func() { printSummary(logs, opts{jit: "tracing", skip: 1, blocks: 4}) })
	want := "blocks 1 to 3: tracing costs -3.9% CPU a request [-8.6, +1.0] (95%, t), a block varying by 2.0%\n"
	if out != want {
		t.Errorf("printSummary = %q, want %q", out, want)
	}
	if lo := math.Expm1(-0.04 - 4.303*0.02/math.Sqrt(3)); math.Abs(100*lo+8.6) > 0.05 {
		t.Errorf("the interval's low end is %.2f%%, the test's own arithmetic wrong", 100*lo)
	}
}

// A bad flag is an error before anything starts: no preset is looked up, no service started.
func TestRunRefusesBadFlags(t *testing.T) {
	for _, o := range []opts{
		{preset: "wordpress", jit: "fast", blocks: 4, skip: 1, n: 8, conc: 2},
		{preset: "wordpress", jit: "tracing", blocks: 1, skip: 1, n: 8, conc: 2},
		{preset: "wordpress", jit: "tracing", blocks: 4, skip: 1, n: 0, conc: 2},
	} {
		if err := run(o); err == nil || !strings.Contains(err.Error(), "-") {
			t.Errorf("run(%+v) = %v, want an error naming the flag", o, err)
		}
	}
}
