package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/bench/internal/capture"
	"github.com/phptune/phptune/internal/cpuset"
)

// Pinned rounds' log ratios 2, 4, 6 and 8%: mean 5%, sd sqrt((9+1+1+9)/3) = 2.58%; rounds 0 and 2 (stack 1 on the
// first share) average 4%, rounds 1 and 3 6%; against an unpinned duet's sd of 1%, 2.58 times, variance 6.67x.
func TestPrintPinned(t *testing.T) {
	out := capture.Stdout(t, func() { printPinned([]float64{0.02, 0.04, 0.06, 0.08}, 0.01) })
	for _, want := range []string{
		"duet pinned       5.00%      2.58%  (each stack on a CPU share of its own, swapped every round)\n",
		"pinned's mean with stack 1 on the first share 4.00%, on the second 6.00%\n",
		"duet pinned's sd 2.58 x unpinned duet's; variance 6.67x\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printPinned lacks %q:\n%s", want, out)
		}
	}
}

// -pin needs a CPU for each stack: more stacks than CPUs is an error that says so; two stacks on a machine of two
// CPUs or more get disjoint shares that together are every CPU allowed.
func TestNewPinner(t *testing.T) {
	all, err := cpuset.Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := newPinner(len(all) + 1); err == nil || !strings.Contains(err.Error(), "-pin") {
		t.Errorf("newPinner(%d) on %d CPUs = %v, %v; want a -pin error", len(all)+1, len(all), p, err)
	}
	if len(all) < 2 {
		t.Skipf("%d CPU allowed: no two shares to check", len(all))
	}
	p, err := newPinner(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.shares) != 2 || len(p.shares[0]) == 0 || len(p.shares[1]) == 0 {
		t.Fatalf("shares %v of %v, want two non-empty", p.shares, all)
	}
	union := slices.Concat(p.shares[0], p.shares[1])
	slices.Sort(union)
	if !slices.Equal(union, []int(all)) || !slices.Equal(p.all, all) {
		t.Errorf("shares %v (all %v), want every CPU of %v in exactly one", p.shares, p.all, all)
	}
}

// An unknown -preset fails before any stack starts, naming it.
func TestRunRejectsUnknownPreset(t *testing.T) {
	err := run(opts{preset: "no-such-preset", rounds: 1, conc: 1, n: 1})
	if err == nil || !strings.Contains(err.Error(), `"no-such-preset"`) {
		t.Errorf("run with an unknown preset: %v", err)
	}
}
