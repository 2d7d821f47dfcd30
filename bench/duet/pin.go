package main

import (
	"fmt"

	"github.com/phptune/phptune/internal/cpuset"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
)

// pinner pins the two stacks of a pinned duet round to a CPU share each, as tune --duet-pin does: the shares swap
// every round, and between rounds both stacks are back on all CPUs. The load generator (this process) is not
// pinned.
type pinner struct {
	all    cpuset.Set
	shares []cpuset.Set
}

func newPinner(stacks int) (*pinner, error) {
	all, err := cpuset.Allowed()
	if err != nil {
		return nil, err
	}
	shares := cpuset.Shares(all, stacks)
	if shares == nil {
		return nil, fmt.Errorf("-pin: %d stacks need a CPU each, and there are %d (%s)", stacks, len(all), all)
	}
	return &pinner{all: all, shares: shares}, nil
}

// spread spreads each stack's php-fpm workers over all CPUs, one to each in turn (gate's stacks).
func (p *pinner) spread(sts []*stack.Stack) error {
	for _, st := range sts {
		if err := cpuset.Spread(st.PID(st.PHP()), p.all); err != nil {
			return err
		}
	}
	return nil
}

// pin puts stack i of sts on its share of round r.
func (p *pinner) pin(sts []*stack.Stack, r int) error {
	for i, st := range sts {
		if err := pinStack(st, p.shares[cpuset.Rotated(i, r, len(p.shares))]); err != nil {
			return err
		}
	}
	return nil
}

// unpin gives every stack all CPUs back.
func (p *pinner) unpin(sts []*stack.Stack) error {
	for _, st := range sts {
		if err := pinStack(st, p.all); err != nil {
			return err
		}
	}
	return nil
}

func pinStack(st *stack.Stack, cpus cpuset.Set) error {
	for name, pgid := range st.Groups() {
		if err := cpuset.PinGroup(pgid, cpus); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// printPinned prints the pinned duet rounds' mean and sd beside the others, the mean of the rounds on each of the
// two assignments of shares (their difference is what the CPUs do to the ratio, which the swap cancels over
// pairs of rounds) and the sd's ratio to the unpinned duet's (sd).
func printPinned(pinned []float64, sd float64) {
	mp, sp := stats.MeanSD(pinned)
	fmt.Printf("%-12s %9.2f%% %9.2f%%  (each stack on a CPU share of its own, swapped every round)\n", "duet pinned", 100*mp, 100*sp)
	var even, odd []float64
	for r, v := range pinned {
		if r%2 == 0 {
			even = append(even, v)
		} else {
			odd = append(odd, v)
		}
	}
	me, _ := stats.MeanSD(even)
	mo, _ := stats.MeanSD(odd)
	fmt.Printf("pinned's mean with stack 1 on the first share %.2f%%, on the second %.2f%%\n", 100*me, 100*mo)
	fmt.Printf("duet pinned's sd %.2f x unpinned duet's; variance %.2fx\n", sp/sd, (sp*sp)/(sd*sd))
}
