package arms

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/cpuset"
	"github.com/phptune/phptune/internal/stack"
)

// pinning is how an experiment's duet arms are pinned (Options.DuetPin), decided at its first pinned round: each
// arm's stack on a share of the CPUs of its own, the shares rotating round by round (cpuset.Rotated) so that every
// arm runs on every share. The load generator (this process) is not pinned.
type pinning struct {
	decided bool
	all     cpuset.Set   // the CPUs this process may run on: an unpinned stack's
	shares  []cpuset.Set // nil: not pinned (fewer CPUs than arms)
}

// shares are the experiment's CPU shares, nil when its arms are not pinned; the first call decides and says why in
// the run's plan.
func (g *moves) shares() ([]cpuset.Set, cpuset.Set) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pin.decided {
		return g.pin.shares, g.pin.all
	}
	g.pin.decided = true
	all, err := cpuset.Allowed()
	if err != nil {
		g.s.notePin(g.phase, fmt.Sprintf("not pinned: %v", err))
		return nil, nil
	}
	g.pin.all, g.pin.shares = all, cpuset.Shares(all, g.made)
	if g.pin.shares == nil {
		g.s.notePin(g.phase, fmt.Sprintf("not pinned: %d arms and %d CPUs (%s), and each arm needs one of its own",
			g.made, len(all), all))
		return nil, all
	}
	var sh []string
	for _, s := range g.pin.shares {
		sh = append(sh, s.String())
	}
	g.s.notePin(g.phase, fmt.Sprintf("pinned: %d arms on CPUs %s, each on its own share (%s), rotated every round",
		g.made, all, strings.Join(sh, " | ")))
	return g.pin.shares, all
}

// pin pins a's stack to its share of this round, where the experiment's duet arms are pinned: a fresh stack (Prepare
// moved it) and a round that starts no trial before every arm is pinned.
func (a *replicaArm) pin() error {
	switch {
	case !a.spec.Duet:
		return nil
	case !a.g.s.o.DuetPin:
		return a.spread()
	}
	shares, _ := a.g.shares()
	if shares == nil {
		return nil
	}
	sh := shares[cpuset.Rotated(a.slot, a.pinRound, len(shares))]
	a.pinRound++
	a.pinned = a.w
	if err := pinStack(a.w.Server, sh); err != nil {
		return fmt.Errorf("%s: %w", a.cfg, err)
	}
	a.w.cpus = sh.String()
	return nil
}

// unpin gives the stack a pinned back all of the CPUs, once its trial is over: a stack tune holds warm, or one a
// later race takes, must not stay on one arm's share.
func (a *replicaArm) unpin() {
	w := a.pinned
	if w == nil {
		return
	}
	a.pinned, w.cpus = nil, ""
	if err := pinStack(w.Server, a.g.allCPUs()); err != nil && w.Server.Died() == nil {
		a.g.s.warn(fmt.Sprintf("%s: its stack could not be given all CPUs back: %v", a.cfg, err))
	}
}

// spread spreads a's stack's php-fpm workers over the CPUs, one to each in turn, for a duet round where the arms
// are not pinned apart (Options.DuetSpread): a CPU that a neighbour slows then slows every arm's workers alike,
// where left to the kernel one arm's may sit on it for the trial (gate's rounds varied by 1.2 to 4.6% so, 0.7 to
// 1.5% spread: docs/ci.md). Once its trial is over the stack is back on all CPUs (unpin).
func (a *replicaArm) spread() error {
	all := a.g.allCPUs()
	if !a.g.s.o.DuetSpread || len(all) < 2 {
		return nil
	}
	a.pinned = a.w
	if err := cpuset.Spread(a.w.Server.PID(a.w.Server.PHP()), all); err != nil {
		return fmt.Errorf("%s: %w", a.cfg, err)
	}
	a.w.cpus = "spread"
	return nil
}

// allCPUs are the CPUs this process may run on, read once (nil when they cannot be read: nothing is pinned).
func (g *moves) allCPUs() cpuset.Set {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pin.all == nil {
		g.pin.all, _ = cpuset.Allowed()
	}
	return g.pin.all
}

// pinStack pins every process of st's process groups (php-fpm's master and workers, nginx's) to cpus.
func pinStack(st *stack.Stack, cpus cpuset.Set) error {
	for name, pgid := range st.Groups() {
		if err := cpuset.PinGroup(pgid, cpus); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// notePin keeps what a duet experiment's pinning was (Plan.DuetPin).
func (s *stackSet) notePin(phase, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pins == nil {
		s.pins = map[string]string{}
	}
	s.pins[phase] = note
}
