package arms

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// Stacks serves tune's arms. The arms of races and final comparisons (Arm) run their trials on a succession of
// independently started stacks of their configuration, fresh ones every RoundsPerStack rounds, so that what a stack
// carries for its whole life (where php-fpm, its opcache and the app's copy land in memory: Mytkowicz et al.
// 2009) is part of the noise its interval accounts for, rather than an offset that every round makes more
// certain (see RoundsPerStack for the figures).
//
// The arms of one experiment (its spec's Phase) move together: the fresh stacks of all of them start side by
// side between two trials, so a move costs about one start for the experiment, not one an arm. They never
// start while a trial runs: measured on the 2 cores here (bench/stackspread.sh), a start overlapping a CPU trial
// took 5 to 10% off its figure and about doubled its spread, and one overlapping a goodput trial 41 to 49%.
type Stacks struct {
	*stackSet
	mu     sync.Mutex
	groups map[string]*moves // by Phase
}

// New serves o's app for arms, with trials of l's lengths (read at each trial: tune fits them once the app's
// speed is known); each trial's figures go to record, what a run should hear of to warn.
func New(o Config, l *Lengths, record func(TrialRecord), warn func(string)) *Stacks {
	return newReplicated(newStackSet(o, l, record, warn))
}

func newReplicated(s *stackSet) *Stacks { return &Stacks{stackSet: s, groups: map[string]*moves{}} }

// Arm is an arm whose trials move to fresh stacks of cfg (or of its twin: RunsOn) as the experiment goes on.
func (r *Stacks) Arm(cfg knob.Config, spec TrialSpec) experiment.Arm {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[spec.Phase]
	if g == nil {
		g = &moves{s: r.stackSet, phase: spec.Phase, most: RoundsPerStack(spec), arms: map[*replicaArm]bool{},
			sp: NewSpread(spec.Metric, spec.Capacity)}
		r.groups[spec.Phase] = g
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.made++
	return &replicaArm{g: g, cfg: RunsOn(cfg, spec), spec: spec, slot: g.made - 1}
}

// FinalSpread is FinalSpread of the experiments run so far whose phase counts says tell the final's.
func (r *Stacks) FinalSpread(counts func(phase string) bool) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sps []*Spread
	for phase, g := range r.groups {
		if !counts(phase) {
			continue
		}
		g.mu.Lock()
		sp := g.sp // a copy: its figures' sums are read after the lock
		g.mu.Unlock()
		sps = append(sps, &sp)
	}
	return FinalSpread(sps)
}

// StackOffset is OffsetOf the experiments of metric run so far other than phase's.
func (r *Stacks) StackOffset(metric, phase string) StackOffset {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sps []*Spread
	for p, g := range r.groups {
		if p == phase {
			continue
		}
		g.mu.Lock()
		sp := g.sp // a copy, as finalSpread reads it
		g.mu.Unlock()
		sps = append(sps, &sp)
	}
	return OffsetOf(sps, metric)
}

// Tell sets the offsets phase's engine allows for, which its moves are set at.
func (r *Stacks) Tell(phase string, sd float64) {
	r.mu.Lock()
	g := r.groups[phase]
	r.mu.Unlock()
	if g != nil {
		g.mu.Lock()
		g.sp.Tell(sd)
		g.mu.Unlock()
	}
}

// DefaultStackSD is the spread of a stack's own offset (log scale) tune's comparisons allow for (Spec.StackSD), on
// CPU and goodput trials: moving stacks alone does not make an offset of 2% against CPU rounds of 4% noise (the
// engine's replay, bench/engine.sh) average out fast enough (a false better or worse in 10 to 12% of simulated
// runs); allowed for, none, and moving stacks keeps what that costs small (the JIT decided in 97.8% of 3-minute
// runs, against 86.6% on one stack an arm). 2% is the upper end of what bench/stackspread.sh measured on CPU
// trials (0.4 to 2.0%) and what two goodput stacks differed by before; a busier machine's goodput stacks differed
// more (6.6% in one run of three, with rounds varying by 45%), where the rounds' own spread is wide enough.
const DefaultStackSD = 0.02

// RoundsPerStack is the rounds a stack serves an arm before fresh ones take over (see Stacks): 5 on CPU trials, 8
// on goodput. A stack's lasting offset was measured at up to a fifth of a trial's own noise, a third at the upper
// ends of its intervals (bench/stackspread.sh, docs/engine.md). Simulated at a third (TestReplicasKeepTheErrorRate:
// A/A races of at most 300 rounds at a knob's share of alpha, 0.25% a pair), one stack an arm gave a false better
// or worse in 14% of CPU races and 40% of goodput races; moving every 5 rounds on CPU 0.13%, every 8 on goodput
// 0.73%, and moving with the engine allowing for DefaultStackSD, as tune does, none. A move costs the experiment
// about one start (a static twin's: 1.1 to 1.9 s here) for k rounds of its arms' trials: a goodput round is longer
// and a goodput stack may be a dynamic pool that settles for seconds.
//
// Duet rounds move every round: their noise is a fraction of a percent, the two stacks' offsets (1.5 to 2% a stack
// on the demo, bench/duet.sh) are most of a round's figure, and rounds on fresh stacks each time are independent,
// offsets and all, so the engine need allow for none on top of their spread (internal/experiment/offsets.go).
func RoundsPerStack(spec TrialSpec) int {
	if spec.Duet {
		return 1
	}
	return PerStack(spec.Metric)
}

// PerStack is the rounds of metric's trials a stack serves an arm (RoundsPerStack), for the simulations' tables.
func PerStack(metric string) int {
	if metric == MetricCPU {
		return perStackCPU
	}
	return perStackGoodput
}

const (
	perStackCPU     = 5
	perStackGoodput = 8
)

// moves are the arms of one experiment, which move to fresh stacks together.
type moves struct {
	s     *stackSet
	phase string
	most  int // the most rounds a stack serves an arm (RoundsPerStack); fewer when its trials are steady (StackRounds)
	mu    sync.Mutex
	arms  map[*replicaArm]bool // the arms started and not stopped
	sp    Spread               // what the arms' trials and starts took, how much the trials varied, and per
	// ahead is closed when the fresh stacks started beside a duet round's trials are in (nil: none starting);
	// stopAhead cancels their starts, once no arm is left to take them.
	ahead     chan struct{}
	stopAhead context.CancelFunc
	// made counts the arms made for the experiment (their slots); pin is how its duet arms are pinned.
	made int
	pin  pinning
}

// per is the rounds a stack serves an arm now. The caller holds g.mu.
func (g *moves) per() int { return g.sp.Per(g.most) }

// due says whether a has served its stack's rounds.
func (g *moves) due(a *replicaArm) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return a.n >= g.per()
}

// tally counts a trial of a, of figures v and second (Spread.Trial), which at a round's end sets the rounds a
// stack serves from what the trials and starts took.
func (g *moves) tally(a *replicaArm, v, second float64, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sp.Trial(a, v, second, d, a.n == 0, g.most)
	a.n++
}

// replicaArm runs its trials on its current stack until it has served per of them and a fresh one is ready.
type replicaArm struct {
	g    *moves
	cfg  knob.Config // what its stacks serve
	spec TrialSpec
	w    *Stack       // the stack its trials run on
	n    int          // the trials w served
	next *Stack       // the fresh stack its next trial moves to
	used map[int]bool // the stacks it ran on: a race resumed in a second look does not go back to one
	// failed: a fresh stack of its did not start (said once).
	failed bool
	// prepared: it prepared for this duet round, so the next round's stack starts for it beside the trials.
	prepared bool
	// slot is its place among the experiment's arms, pinRound the pinned rounds it ran: its CPU share's (pin.go).
	// pinned is the stack it pinned, given all CPUs back once its trial is over.
	slot, pinRound int
	pinned         *Stack
}

func (a *replicaArm) Name() string { return a.cfg.String() }

// Cold says whether Start will start a stack: unless a warm one of its configuration is free for it (no arm
// uses it, and it has not run on it before).
func (a *replicaArm) Cold() bool {
	s := a.g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.warm[a.cfg.Key()]
	return a.w == nil && (a.spec.Fresh || w == nil || w.arms > 0 || a.used[w.serial])
}

// Start takes a warm stack of the configuration that no other arm uses (the tuner's best, held between
// races) and that it has not run on before, or starts one.
func (a *replicaArm) Start(ctx context.Context) error {
	if a.w != nil {
		return nil
	}
	u := own
	if w := a.g.s.WarmOf(a.cfg); a.spec.Fresh || w != nil && a.used[w.serial] {
		u = fresh
	}
	cold, t0 := a.Cold(), time.Now()
	w, err := a.g.s.acquire(ctx, a.cfg, a.spec, u)
	if err != nil {
		return err
	}
	a.runOn(w)
	a.g.mu.Lock()
	a.g.arms[a] = true
	if cold {
		a.g.sp.Start(time.Since(t0))
	}
	a.g.mu.Unlock()
	return nil
}

// Prepare moves to a fresh stack when this one has served its rounds: before a duet round's trials, since a start
// beside a trial skews it; then it pins the stack to the arm's CPU share of the round, where duet arms are pinned.
func (a *replicaArm) Prepare(ctx context.Context) error {
	if a.w == nil {
		return errors.New("arm not started")
	}
	a.unpin() // a round that ran no trial of it
	if err := a.moveIfDue(ctx); err != nil {
		return err
	}
	if err := a.pin(); err != nil {
		return err
	}
	a.g.mu.Lock()
	a.prepared = a.spec.Duet
	a.g.mu.Unlock()
	return nil
}

// Due says whether the arm's next trial first moves it to a fresh stack (its stack has served its rounds): a
// start of a stack before it, which a caller planning the time of its next round counts.
func (a *replicaArm) Due() bool {
	return a.w != nil && a.g.due(a)
}

// moveIfDue moves a to a fresh stack when its stack has served its rounds.
func (a *replicaArm) moveIfDue(ctx context.Context) error {
	if a.g.due(a) {
		return a.g.move(ctx, a)
	}
	return nil
}

// Trial moves to a fresh stack when this one has served its rounds (unless Prepare did), then runs a trial; in a
// duet round, the arms' next stacks start beside it.
func (a *replicaArm) Trial(ctx context.Context) (experiment.Observation, error) {
	if a.w == nil {
		return experiment.Observation{}, errors.New("arm not started")
	}
	defer a.unpin()
	if err := a.moveIfDue(ctx); err != nil {
		return experiment.Observation{}, err
	}
	if a.spec.Duet {
		a.g.startAhead(ctx)
	}
	t0 := time.Now()
	obs, err := a.g.s.trial(ctx, a.spec, a.w)
	v, second := obs.Value, obs.Second
	if err != nil {
		v, second = 0, 0
	}
	a.g.tally(a, v, second, time.Since(t0))
	return obs, err
}

// SplitTrial is the arm's duet trial of a split round (experiment.Splitter), its capacity read over a fixed set
// of requests (capacityTrial): on the stack its trial in turn just ran on, at the same time as its rivals',
// recorded as a duet trial and not counted in its stack's rounds or spread (a duet's goodput is not the arm's own).
func (a *replicaArm) SplitTrial(ctx context.Context) (experiment.Observation, error) {
	if a.w == nil {
		return experiment.Observation{}, errors.New("arm not started")
	}
	spec := a.spec
	spec.Duet = true // with Split: the round's duet (stackSet.trialOnce)
	return a.g.s.trial(ctx, spec, a.w)
}

// Fill keeps the arm's stack loaded at its trials' connections, unmeasured, until ctx ends: in a duet round, until
// the rivals' trials end (experiment.Filler). What it meets is not the round's: the trials were measured.
func (a *replicaArm) Fill(ctx context.Context) {
	if a.w == nil {
		return
	}
	o := a.g.s.LoadOptions(a.w, a.spec.Conc)
	o.Warmup, o.Duration = 0, maxFill
	_, _ = Unmeasured(ctx, o)
}

// maxFill bounds a Fill whose rivals' trials do not end (a stall): their own timeouts end them sooner.
const maxFill = time.Minute

// Stop lets go of the arm's stacks. The last arm to stop cancels the stacks starting ahead and waits for them, so
// that none is left running after the experiment.
func (a *replicaArm) Stop() {
	a.unpin()
	a.g.mu.Lock()
	delete(a.g.arms, a) // a stack starting ahead for it now goes back when it is in (startFor)
	last := len(a.g.arms) == 0
	if last && a.g.stopAhead != nil {
		a.g.stopAhead() // the experiment is over: its next round's stacks are not needed
	}
	a.g.mu.Unlock()
	if last {
		a.g.waitAhead()
	}
	a.g.mu.Lock()
	a.g.sp.Forget(a)
	next := a.next
	a.next = nil
	a.g.mu.Unlock()
	if next != nil {
		a.g.s.release(next, own)
	}
	if a.w != nil {
		a.g.s.release(a.w, own)
		a.w = nil
	}
}

// move gives a, due for a fresh stack, the one started for it. When it has none, fresh stacks start side by
// side for every arm of the experiment due within the round (they have served per-1 trials or more on theirs),
// a's among them. A start that fails (a huge-pages check never passing, a stall longer than the check's tries)
// leaves the arm on its stack for another per trials: only a cancelled run is an error.
func (g *moves) move(ctx context.Context, a *replicaArm) error {
	g.waitAhead()
	g.mu.Lock()
	if a.next == nil {
		var due []*replicaArm
		per := g.per()
		for b := range g.arms {
			if b.next == nil && b.n >= per-1 {
				due = append(due, b)
			}
		}
		g.mu.Unlock()
		t0 := time.Now()
		g.startFor(ctx, due)
		g.mu.Lock()
		if ctx.Err() == nil {
			g.sp.Start(time.Since(t0)) // side by side: the move's cost, whatever the number of arms
		}
	}
	next := a.next
	a.next = nil
	g.mu.Unlock()
	if ctx.Err() != nil {
		if next != nil {
			g.s.release(next, own)
		}
		return ctx.Err()
	}
	if next == nil {
		a.n = 0
		return nil
	}
	// What the last stack's trials saw of the app's queue holds for the next.
	next.queue, next.served = max(next.queue, a.w.queue), next.served || a.w.served
	g.s.succeed(a.w, next)
	g.s.release(a.w, own)
	a.runOn(next)
	return nil
}

// startAhead starts the next duet round's fresh stacks while this round's trials run, for every arm that prepared
// for it, unless they are starting already or would not fit the memory beside the running ones. A start beside a
// duet round's trials falls on all of them alike, as any other load on the machine does (bench/duet.sh -starts
// measures what it leaves), so a round costs the longer of a trial and a start rather than both: in duet every
// round moves (RoundsPerStack), and a start (1.1 to 1.9 s here) was most of a round.
func (g *moves) startAhead(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ahead != nil {
		return
	}
	var due []*replicaArm
	var cfgs []knob.Config
	for b := range g.arms {
		if b.prepared && b.next == nil {
			due = append(due, b)
		}
		b.prepared = false
		cfgs = append(cfgs, b.cfg)
	}
	if len(due) == 0 || !g.s.gate.holds(cfgs, 2) {
		return
	}
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	g.ahead, g.stopAhead = done, cancel
	go func() {
		g.startFor(ctx, due)
		g.mu.Lock()
		g.ahead, g.stopAhead = nil, nil
		g.mu.Unlock()
		cancel()
		close(done)
	}()
}

// waitAhead waits until the stacks starting ahead, if any, are in.
func (g *moves) waitAhead() {
	g.mu.Lock()
	done := g.ahead
	g.mu.Unlock()
	if done != nil {
		<-done
	}
}

// runOn makes w the stack a's trials run on.
func (a *replicaArm) runOn(w *Stack) {
	if a.used == nil {
		a.used = map[int]bool{}
	}
	a.w, a.n, a.used[w.serial] = w, 0, true
}

// startFor starts a fresh stack for each arm of due, side by side, and gives each its own as next.
func (g *moves) startFor(ctx context.Context, due []*replicaArm) {
	var wg sync.WaitGroup
	for _, b := range due {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := g.s.acquire(ctx, b.cfg, b.spec, fresh)
			if err != nil {
				if ctx.Err() == nil && !b.failed {
					b.failed = true
					g.s.warn(fmt.Sprintf("%s: a fresh stack did not start (%v); its trials stay on the one they ran on", b.cfg, err))
				}
				return
			}
			g.mu.Lock()
			if g.arms[b] {
				b.next = w
				w = nil
			}
			g.mu.Unlock()
			if w != nil { // stopped meanwhile
				g.s.release(w, own)
			}
		}()
	}
	wg.Wait()
}
