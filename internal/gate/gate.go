// Package gate answers a CI job's question about a change to a PHP app: does the new version cost more CPU a
// request than the old one, or make its users wait longer? It serves both versions side by side with the same PHP
// and configuration (nginx + php-fpm in private stacks, package stack), checks that every URL answers in both, and
// races them, per URL and for the mix, in duet rounds (both versions' trials at the same time, so that what the
// machine does meanwhile falls on both alike) on fresh stacks every round (a stack carries an offset of its own
// for its life, which must not read as a version's effect). Each round gives two figures: what a request costs
// php-fpm's CPU, and the p99 latency at a fixed rate (a second figure on half of each comparison's alpha, held as
// tune holds its p99 guard). One error budget covers every comparison; each figure ends better, worse,
// no_difference or inconclusive, and the gate says worse (on either figure), not worse, or undecided.
//
// Files: gate.go (the options and the run), versions.go (a version's stacks: start, check, warm-up), calibrate.go
// (the connections and a trial's requests, from each page alone), trial.go (a round's trial of a version: CPU,
// then latency), latency.go (the latency trial and its rate), meet.go (where a round's two trials meet before
// their latency trials), rounds.go (the rounds across the comparisons, the moves to fresh stacks), result.go and
// latresult.go (the verdicts and the outcome), format.go and latformat.go (the terminal summary), markdown.go,
// junit.go and annotations.go (what a CI reads), git.go (revisions as worktrees).
package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/cpuset"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// Defaults.
const (
	// DefaultStackSD is the spread of a stack's own offset that the comparisons allow for, as tune does.
	DefaultStackSD = 0.02
	// DefaultConnections load each version in a round: two, as tune's CPU trials on two cores.
	DefaultConnections = 2
	// MinBudget is the least --budget: the first stacks, their checks and a few rounds.
	MinBudget = 10 * time.Second
)

// Version is one of the two versions of the app.
type Version struct {
	Label string `json:"label"`         // OLD or NEW
	Dir   string `json:"dir"`           // its docroot
	Rev   string `json:"rev,omitempty"` // the git commit it was checked out from (--git)
}

// Options say what to race.
type Options struct {
	Old, New Version
	// Stack is how both are served (PHP, nginx, the front controller, the workers' user); App is set per version.
	Stack   stack.Config
	URLs    []load.MixItem
	Request load.Request
	Budget  time.Duration
	// MinEffect is the smallest relative change of CPU a request, and of the p99, that counts (0.03 = 3%); Alpha
	// the run's error budget, shared by every comparison and, within one, by its two figures.
	MinEffect, Alpha float64
	Timeout          time.Duration
	// StackSD is what the comparisons allow for a stack's offset (0: DefaultStackSD); Connections load each
	// version (0: DefaultConnections), more when a page mostly waits (calibrate).
	StackSD     float64
	Connections int
	// NoLatency races CPU a request alone: no latency trials, each round a turn of CPU trials only (more rounds
	// in a budget), and the pair's alpha all CPU's.
	NoLatency bool
	// FailFast stops the rounds once a comparison is shown worse: the exit code is then certain (3), and a CI job
	// need not wait out the budget to learn the others, which are reported as they stood.
	FailFast bool
	// LogIn, when set, logs in on a version's first stack (base: http://HOST:PORT/) and returns the mix with that
	// session's cookies, in the order of URLs: each version is raced with a session of its own (a URL file's
	// login). The session outlives the stack: it is in the app's store, which its fresh stacks share.
	LogIn func(ctx context.Context, base string) ([]load.MixItem, error)
	// Progress hears where the run is (nil: nothing).
	Progress func(Status)
}

// Status is where a run is.
type Status struct {
	Elapsed time.Duration
	Phase   string // start, round N
	Detail  string
}

// Check says what is wrong with the options before anything starts (exit 2).
func (o Options) Check() error {
	for _, v := range []Version{o.Old, o.New} {
		if err := checkDocroot(v, o.Stack.Front); err != nil {
			return err
		}
	}
	return o.CheckSettings()
}

// CheckSettings is Check without the versions' docroots (revisions not yet checked out).
func (o Options) CheckSettings() error {
	for _, w := range o.Stack.Writable {
		if filepath.IsAbs(w) || !filepath.IsLocal(w) {
			return exitcode.UsageErrorf("--writable %s: give a path inside the docroot, relative to it (cache, public/uploads)", w)
		}
	}
	switch {
	case len(o.URLs) == 0:
		return exitcode.UsageErrorf("no URL to race: give --url, --url-file or --from-access-log")
	case o.Budget < MinBudget:
		return exitcode.UsageErrorf("--budget %s: give at least --budget %s (the stacks start, every URL is checked, then the rounds)", o.Budget, MinBudget)
	case !(o.MinEffect > 0 && o.MinEffect < 1):
		return exitcode.UsageErrorf("--min-effect %g: want more than 0 and less than 100 (a percentage)", 100*o.MinEffect)
	case !(o.Alpha > 0 && o.Alpha < 1):
		return exitcode.UsageErrorf("--alpha %g: want more than 0 and less than 1", o.Alpha)
	case o.Timeout <= 0:
		return exitcode.UsageErrorf("--timeout %s: want a positive duration", o.Timeout)
	}
	return nil
}

// checkDocroot says what is wrong with a version's docroot.
func checkDocroot(v Version, front string) error {
	if front == "" {
		front = "index.php"
	}
	st, err := os.Stat(v.Dir)
	if err != nil || !st.IsDir() {
		return exitcode.UsageErrorf("%s %s: not a directory: give the docroot of each version", v.Label, v.Dir)
	}
	if _, err := os.Stat(filepath.Join(v.Dir, front)); err != nil {
		return exitcode.UsageErrorf("%s %s has no front controller %s: pass --front FILE", v.Label, v.Dir, front)
	}
	return nil
}

// Run races NEW against OLD within the budget. It returns the result so far with the error that ended the run
// (the context's when interrupted: Partial); a nil result when nothing was measured.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	g := newGate(o)
	defer g.stopAll()
	if err := g.begin(ctx); err != nil {
		return nil, err
	}
	err := g.rounds(ctx)
	res := g.result()
	if err != nil && ctx.Err() != nil {
		res.Partial = true
		err = ctx.Err()
	}
	return res, err
}

// gate is one run.
type gate struct {
	o Options
	// clock is what the budget is kept by (the wall's; a simulation's moves only with its trials), began and
	// deadline read from it.
	clock    clock.Clock
	began    time.Time
	deadline time.Time
	conc     int
	ver      [2]Version
	// cur is each version's stack for the round: set between rounds only, read by the trials.
	cur [2]*live
	// calm, set between rounds only, is closed once the next pair of stacks, starting beside the round, has
	// started (nil: none starting): the latency trials wait for it, since a start's burst of work (php-fpm's fork,
	// every URL checked, the warm-up's load) would read as the versions' latency, which it does not fall on alike.
	calm <-chan struct{}
	// serial numbers the stacks started; startWall is what the last pair's start took.
	serial    int
	startWall time.Duration
	comps     []*comparison
	budget    *experiment.Budget
	roundsRun int // rounds run (every comparison racing took its turn on one pair of stacks)
	// watchWall is the wall time of the rounds run while some comparisons were watching their p99 and others
	// open: [1] of those in which the watching ones took their turns, [0] of those they sat out (takingTurns).
	watchWall [2]time.Duration
	// first: the run's first pair is starting (it logs in; an optional URL's failure is noted, not an error).
	first bool
	// urls are the mix as each version is sent it: o.URLs, with each version's session after a login.
	urls [2][]load.MixItem
	// warnings are what the result says beside the verdicts (the URLs left out).
	warnings []string
	// startOne and trialOne start a version's stack and run a trial on it: start and trial, or a simulation's.
	startOne func(ctx context.Context, v, serial int) (*live, error)
	trialOne func(ctx context.Context, v int, l *live, c *comparison) (experiment.Observation, error)
	// latencyOne runs a latency trial on l: latencyTrial, or a simulation's.
	latencyOne func(ctx context.Context, v int, l *live, c *comparison, rate float64, n int) (latTrial, error)
	// cpus are the CPUs each stack's workers are spread over (nil: this process's set could not be read).
	cpus cpuset.Set
}

func newGate(o Options) *gate {
	if o.StackSD == 0 {
		o.StackSD = DefaultStackSD
	}
	if o.Connections <= 0 {
		o.Connections = DefaultConnections
	}
	g := &gate{o: o, clock: clock.Wall{}, conc: o.Connections, ver: [2]Version{o.Old, o.New}}
	g.began = g.clock.Now()
	g.deadline = g.began.Add(o.Budget)
	g.cpus, _ = cpuset.Allowed() // unknown: the workers are left where the kernel puts them
	g.startOne, g.trialOne, g.latencyOne = g.start, g.trial, g.latencyTrial
	g.urls = [2][]load.MixItem{o.URLs, o.URLs}
	return g
}

// newRace is c's race: NEW against OLD (Versus), in duet rounds, on CPU a request (lower is better) with the p99
// at a fixed rate as its second figure (lower is better; half the pair's alpha each: one error budget), its
// share of the error budget drawn now; Continue lets it run the rounds the gate allows it, one at a time. The
// p99's own stack offsets are not measured: CPU's allowance stands for them, as for tune's p99 guard.
func (g *gate) newRace(c *comparison) *experiment.Experiment {
	spec := experiment.Spec{Name: c.Name, Mode: experiment.Versus, Duet: true, StackSD: g.o.StackSD,
		MinEffect: g.o.MinEffect, Alpha: g.budget.Draw(1), RunAlpha: g.o.Alpha,
		Arms:     []experiment.Arm{&arm{g: g, v: 0, c: c}, &arm{g: g, v: 1, c: c}},
		Continue: func(l experiment.Look) bool { return l.Rounds < c.allow }}
	if !g.o.NoLatency {
		spec.Second = &experiment.Figure{Name: latencyFigure, StackSD: g.o.StackSD, LeadSD: LatencyLeadSD, Sparse: true}
	}
	x, err := experiment.New(spec)
	if err != nil {
		panic(err) // two arms, always
	}
	return x
}

// progress tells Options.Progress.
func (g *gate) progress(phase, format string, a ...any) {
	if g.o.Progress != nil {
		g.o.Progress(Status{Elapsed: g.clock.Now().Sub(g.began), Phase: phase, Detail: fmt.Sprintf(format, a...)})
	}
}

// stopAll stops the stacks of the round.
func (g *gate) stopAll() {
	for v, l := range g.cur {
		if l != nil {
			l.stop()
			g.cur[v] = nil
		}
	}
}
