package tune

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// TrialSpec is how an arm's trials run: the phase they are recorded under, the metric they measure and the
// connections that load them.
type TrialSpec struct {
	Phase  string
	Metric string
	Conc   int
	// Check, when set, says whether the arm's configuration took effect once it runs (given php-fpm's master
	// pid): huge code pages need smaps to show PHP's text on them. An arm for which it never does fails to
	// start with an error wrapping ErrNotInEffect.
	Check func(fpmPID int) (note string, err error)
	// Detail asks for the workers' memory and php-fpm's status counters around each trial (pool sizing).
	Detail bool
	// Steady runs goodput trials on the configuration's steady twin (steadyPool): for knobs that do not shape
	// the pool.
	Steady bool
	// Latency, when set, merges each goodput trial's latency histogram under its configuration (the server race).
	Latency *latencyTally
	// Tail says that the race guards the trials' p99 (a Tail knob's, on goodput): a value better on goodput is
	// taken only if its p99 is not shown worse (experiment.Figure.Guard).
	Tail bool
	// Capacity says that the experiment decides on the trials' requests per CPU-second too (the final): its
	// stacks move as often as the steadier of the two figures pays for (spread).
	Capacity bool
	// Duet: the arms' trials of a round run at the same time (experiment.Spec.Duet).
	Duet bool
	// Fresh starts every arm on a stack of its own, never on one tune holds warm: the stack the best so far won
	// its last race on carries an offset that helped it win (the final's recommendation on it read +0.4 to +0.5
	// of the offsets' spread better, an audit's simulation), which a comparison of it must not start from.
	Fresh bool
}

// twin says whether the spec's arms run on a twin of their configuration (cpuPool, steadyPool) rather than
// on the configuration itself, which tune holds warm.
func (s TrialSpec) twin() bool { return s.Metric == MetricCPU || s.Steady }

// startKind is what an arm's start costs are kept under: a twin's static pool is ready in about a second, a
// goodput arm's own pool may be a dynamic one that settles for seconds.
func (s TrialSpec) startKind() string {
	if s.Steady {
		return startStatic
	}
	return s.Metric
}

// startStatic keeps the start costs of goodput arms on steady twins.
const startStatic = "static"

// ErrNotInEffect says an arm's configuration did not take effect on this host (huge pages refused, say): the
// candidate is not tried rather than measured as the same program.
var ErrNotInEffect = errors.New("not in effect")

// ArmSource makes the arms tune races: a configuration under a trial spec. The real one serves each
// configuration from a warm nginx + php-fpm stack; tests and the replay harness give fakes.
type ArmSource interface {
	Arm(cfg knob.Config, spec TrialSpec) experiment.Arm
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
	kind   string // the start's (TrialSpec.startKind; "": metric)
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
	f := a.c.takeOff(a.metric)
	began := a.clock.Now()
	o, err := a.Arm.Trial(ctx)
	a.c.mu.Lock()
	delete(a.c.inFlight[a.metric], f)
	a.c.trials[a.metric]++
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
