// Package cpuset pins a server's processes to a share of the CPUs: duet rounds (docs/engine.md, "Duet rounds") may
// give each arm's stack a CPU set of its own and swap the sets between rounds, so that neither arm keeps the
// better CPUs (a sibling's noise, a core's cache) for the whole race.
package cpuset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Set is a set of CPU numbers, ascending.
type Set []int

// Allowed is the set this process may run on: its affinity, which the kernel keeps within its cgroup's cpuset.
// The stacks it starts inherit it, so it is what their shares are cut from.
func Allowed() (Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return nil, fmt.Errorf("read this process's CPU affinity: %w", err)
	}
	return setOf(&m), nil
}

// setOf is the CPUs of mask m.
func setOf(m *unix.CPUSet) Set {
	var s Set
	for c := 0; c < len(m)*64 && len(s) < m.Count(); c++ {
		if m.IsSet(c) {
			s = append(s, c)
		}
	}
	return s
}

// mask is s as the kernel takes it.
func (s Set) mask() unix.CPUSet {
	var m unix.CPUSet
	for _, c := range s {
		m.Set(c)
	}
	return m
}

// String is s as a kernel CPU list, as /proc/PID/status's Cpus_allowed_list shows it: "0-3,8".
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Shares cuts all into k shares as even as whole CPUs allow, in order (share 0 the lowest CPUs); nil when there
// are fewer CPUs than shares, since two arms on one CPU would not be apart.
func Shares(all Set, k int) []Set {
	if k < 1 || len(all) < k {
		return nil
	}
	out := make([]Set, k)
	for i := range k {
		out[i] = slices.Clone(all[i*len(all)/k : (i+1)*len(all)/k])
	}
	return out
}

// Rotated is the share that the arm in slot (of k) takes in round (from 0): each round every arm moves to the next
// share, so that in any k rounds in a row every arm runs on every share once and no two arms share one.
func Rotated(slot, round, k int) int {
	if k < 1 {
		return 0
	}
	return ((slot+round)%k + k) % k
}
