package tune

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// armSource is what the phases race their arms on: the real stacks (arms.Stacks), or a simulation's replay of
// recorded noise (simSource).
type armSource interface {
	// Arm is an arm of cfg whose trials run as spec says, moving to fresh stacks as its experiment goes on.
	Arm(cfg knob.Config, spec arms.TrialSpec) experiment.Arm
	// Hold keeps cfg's stack warm for the tuner (the best so far), letting go of the one held before.
	Hold(cfg knob.Config)
	// Warm says whether a stack of cfg is running for an arm to take without a start.
	Warm(cfg knob.Config) bool
	// Fit says whether the stacks of cfgs fit the memory loaded all at once (a duet round).
	Fit(cfgs []knob.Config) bool
	// FinalSpread is what the final comparison's moves will be set at, from the experiments run so far whose
	// phase counts says tell the final's.
	FinalSpread(counts func(phase string) bool) (float64, bool)
	// StackOffset pools what the experiments of metric other than phase's measured of their stacks' offsets;
	// Tell says what phase's engine allows for, which its moves are set at.
	StackOffset(metric, phase string) StackOffset
	Tell(phase string, sd float64)
}

// costs is what trials and arm starts have taken here, by metric: the budget goes by them rather than by
// plans, since a loaded machine makes both slower.
type costs struct {
	mu        sync.Mutex // arms start side by side
	trials    map[string]int
	trialWall map[string]time.Duration
	// starts and startWall by metric: a CPU trial's stack (a static pool) starts in a fraction of the time a
	// goodput trial's (settled under load) takes.
	starts     map[string]int
	startWall  map[string]time.Duration
	guess      map[string]time.Duration // a trial's cost before any was measured
	startGuess map[string]time.Duration // an arm's start before two were measured (0: a second)
	// inFlight are the trials of metric running now: trials that run at once (a duet round) share the time,
	// so each is charged its share, and a round costs its arms' trials added up either way.
	inFlight map[string]map[*flight]bool
}

// flight is a trial running: shared is the most trials that ran at once with it at any time of its life (at its
// start or its end alone, the first of a duet to start that ends last would see only itself, and a round be
// charged half again its wall time).
type flight struct{ shared int }

// coldStarter is an arm that knows whether Start will start something (a warm arm costs nothing to start).
type coldStarter interface{ Cold() bool }

// mover is an arm that knows whether its next trial first moves it to a fresh stack (arms.Stacks' arms).
type mover interface{ Due() bool }

// movesDue counts the arms whose next trial first starts a fresh stack.
func movesDue(race []experiment.Arm) int {
	n := 0
	for _, a := range race {
		if t, ok := a.(*timedArm); ok {
			a = t.Arm
		}
		if m, ok := a.(mover); ok && m.Due() {
			n++
		}
	}
	return n
}

func newCosts() *costs {
	return &costs{trials: map[string]int{}, trialWall: map[string]time.Duration{}, guess: map[string]time.Duration{},
		starts: map[string]int{}, startWall: map[string]time.Duration{}, startGuess: map[string]time.Duration{},
		inFlight: map[string]map[*flight]bool{}}
}

// trial is the mean wall time of a trial of metric, or the guess before three were measured.
func (c *costs) trial(metric string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.trials[metric]; n >= 3 {
		return c.trialWall[metric] / time.Duration(n)
	}
	if g := c.guess[metric]; g > 0 {
		return g
	}
	return time.Second
}

// start is the mean wall time of starting an arm for trials of metric (start, check, settle), or the guess
// until two were measured (the run's first stacks, which settle no dynamic pool, and a second more).
func (c *costs) start(metric string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.starts[metric]; n >= 2 {
		return c.startWall[metric] / time.Duration(n)
	}
	guess := c.startGuess[metric]
	if guess <= 0 {
		guess = time.Second
	}
	return max(guess, c.startWall[metric]/time.Duration(max(c.starts[metric], 1)))
}

// timedArm counts what its arm's starts and trials take.
type timedArm struct {
	experiment.Arm
	name   string // "" = the arm's own
	c      *costs
	clock  clock.Clock
	metric string
	kind   string // the start's (arms.TrialSpec.StartKind; "": metric)
}

func (a *timedArm) Name() string {
	if a.name != "" {
		return a.name
	}
	return a.Arm.Name()
}

func (a *timedArm) Start(ctx context.Context) error {
	cold := true
	if cs, ok := a.Arm.(coldStarter); ok {
		cold = cs.Cold()
	}
	began := a.clock.Now()
	err := a.Arm.Start(ctx)
	if cold {
		a.c.mu.Lock()
		kind := cmp.Or(a.kind, a.metric)
		a.c.starts[kind]++
		a.c.startWall[kind] += a.clock.Now().Sub(began)
		a.c.mu.Unlock()
	}
	return err
}

// Trial runs the arm's trial and charges it its share of the time: the wall time over the most trials that ran
// at once with it at any time (flight).
func (a *timedArm) Trial(ctx context.Context) (experiment.Observation, error) {
	return a.timed(ctx, a.Arm.Trial, true)
}

// SplitTrial runs the arm's duet trial of a split round (experiment.Splitter; its trial where the arm has none)
// and charges its share of the time to the arm's trials without counting one: a trial then costs its round's
// share, its duet's included, which the races' rounds are foreseen at.
func (a *timedArm) SplitTrial(ctx context.Context) (experiment.Observation, error) {
	if sp, ok := a.Arm.(experiment.Splitter); ok {
		return a.timed(ctx, sp.SplitTrial, false)
	}
	return a.timed(ctx, a.Arm.Trial, false)
}

// timed runs trial and charges its share of the time, counted as a trial where count says so.
func (a *timedArm) timed(ctx context.Context, trial func(context.Context) (experiment.Observation, error),
	count bool) (experiment.Observation, error) {
	f := a.c.takeOff(a.metric)
	began := a.clock.Now()
	o, err := trial(ctx)
	a.c.mu.Lock()
	delete(a.c.inFlight[a.metric], f)
	if count {
		a.c.trials[a.metric]++
	}
	a.c.trialWall[a.metric] += a.clock.Now().Sub(began) / time.Duration(f.shared)
	a.c.mu.Unlock()
	return o, err
}

// takeOff counts a trial of metric in flight, and every trial in flight as sharing its time with as many.
func (c *costs) takeOff(metric string) *flight {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight[metric] == nil {
		c.inFlight[metric] = map[*flight]bool{}
	}
	f := &flight{}
	c.inFlight[metric][f] = true
	n := len(c.inFlight[metric])
	for g := range c.inFlight[metric] {
		g.shared = max(g.shared, n)
	}
	return f
}

// Prepare prepares the arm when it has preparing to do (experiment.Preparer): a duet round's move to fresh stacks.
// What it takes is charged to the trials, as a move within Trial is: a duet round that moves every round costs a
// start besides its trials, which the races' rounds must be foreseen at.
func (a *timedArm) Prepare(ctx context.Context) error {
	p, ok := a.Arm.(experiment.Preparer)
	if !ok {
		return nil
	}
	began := a.clock.Now()
	err := p.Prepare(ctx)
	a.c.mu.Lock()
	a.c.trialWall[a.metric] += a.clock.Now().Sub(began)
	a.c.mu.Unlock()
	return err
}

// tailArm gives the engine its arm's trials with their p99 as the second figure, which a guarded race judges
// (TrialSpec.Tail). Below it the trials keep capacity there: the stacks' moves read its spread for the final.
type tailArm struct{ *timedArm }

func (a tailArm) Trial(ctx context.Context) (experiment.Observation, error) {
	o, err := a.timedArm.Trial(ctx)
	o.Second, o.SecondStep = o.P99, 0
	return o, err
}
