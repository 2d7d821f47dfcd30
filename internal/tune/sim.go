package tune

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
)

// SimOptions describe a simulated tune run: the decisions of a real run (pool size, every knob's race, the
// final comparison, the budget and the error budget), with arms that replay recorded noise around planted true
// effects and a clock that advances by what trials and starts cost. Thousands of runs take seconds: it is how
// the engine's error rates and power are shown (tests, bench/engine).
type SimOptions struct {
	Knobs []knob.Knob
	Base  knob.Config
	// Effect is the true log ratio of cfg's figure of metric against Base's (0: no effect).
	Effect func(cfg knob.Config, metric string) float64
	// Noise is the replayed noise by NoiseKey; a key without its own uses its metric's, then goodput's.
	Noise     map[string]*experiment.Replay
	Budget    time.Duration
	TrialCost map[string]time.Duration
	// StartCost is what starting a goodput arm's own stack costs (settling a dynamic pool), TwinStartCost an
	// arm's on a twin (a static pool: CPU races and steady goodput races; 0: StartCost).
	StartCost, TwinStartCost time.Duration
	MinEffect                float64
	// PoolMargin is the margin the pool's sizes are judged within (0: tune's own, DefaultPoolMargin).
	PoolMargin float64
	Alpha      float64
	Facts      knob.Facts
	Conc       int
	// Pool is the pool size the sweep would pick (0: no pool-size race).
	Pool int
	// Sweep is the sweep's median goodput by concurrency, its trials varying by SweepSD (a log's spread), where
	// the pool's sizes and how large a change they plausibly make should come from a sweep, as in a real run
	// (nil: the ladder's neighbours of Pool, judged at plausibleWideLog).
	Sweep   map[int]float64
	SweepSD float64
	// Mixture and MinRounds are the engine's parameters to try (0: tune's own): the confidence sequences' g and
	// the fewest rounds a race is given.
	Mixture   float64
	MinRounds int
	// StackSD is the spread of stacks' offsets the engine is told, by metric (Spec.StackSD); the replays
	// plant their own (ReplayOptions.StackSD). MeasuredStackSD tells a later experiment the upper bound of what
	// the run's experiments before measured where larger (tuner.measuredStackSD).
	StackSD         map[string]float64
	MeasuredStackSD bool
	// RoundSD is the spread of a round's log ratio the planner assumes, by metric (nil: tune's assumptions, as in
	// a real run before it measures: see roundSD).
	RoundSD map[string]float64
	// Plausible is the largest change a small goodput knob (pm, listen, keepalive) is taken to make, as a relative
	// change (0: tune's own, plausibleLog): a test of what goodput races do under the time pressure they met
	// before duet rounds sets 0.25.
	Plausible float64
	// Asked are the knobs the user named to race (Options.Asked).
	Asked map[string]bool
	// Duet runs the CPU races' rounds as duets, as tune does by default (Options.Duet): on the noise of duet
	// rounds (Noise[NoiseKey(MetricCPU, "", true)], which must be given), every arm on a fresh stack each round.
	// TrialCost[MetricCPU] is then a duet trial's time at the app's rate alone: a round's trials run at once,
	// each at its share of the machine, so a round costs that times its arms (as real runs charge it), and its
	// next stacks start beside its trials (a move waits only for what a start takes beyond them).
	Duet bool
	// Split runs the goodput races tune runs in split rounds (Options.Split) that way, on the noise of split
	// rounds' figures (Noise[NoiseKey(MetricGoodput, "", true)], which must be given: what a real split round
	// reads, its turn's share of the machine times its duet's capacity, extracted by bench/engine). A split
	// round's trial costs TrialCost's for its kind (arms.TrialSpec.CostKind; none: a goodput trial and
	// SplitShare), its duet's share taken before its trial in turn.
	Split bool
	// Tail is the true log ratio of cfg's p99 against Base's in goodput trials (nil: none: every trial's p99 the
	// same), TailSD the spread of a trial's log p99 about it (0: 0.3), drawn from the goodput replay's source.
	Tail   func(cfg knob.Config) float64
	TailSD float64
	// Progress hears the run's status lines, as a real run's (Options.Progress).
	Progress func(Status)
}

// Simulate runs the decisions of a tune run on replayed arms.
func Simulate(ctx context.Context, so SimOptions) (*Result, error) {
	if key := NoiseKey(MetricCPU, "", true); so.Duet && so.Noise[key] == nil {
		return nil, fmt.Errorf("simulate: duet races replay duet rounds' noise, and none is given (%s)", key)
	}
	if key := NoiseKey(MetricGoodput, "", true); so.Split && so.Noise[key] == nil {
		return nil, fmt.Errorf("simulate: split races replay split rounds' noise, and none is given (%s)", key)
	}
	t, err := newTuner(Options{Base: so.Base, Knobs: so.Knobs, Budget: so.Budget, MinEffect: so.MinEffect, PoolMargin: so.PoolMargin,
		Alpha: so.Alpha, Asked: so.Asked, Duet: so.Duet, Split: so.Split, Progress: so.Progress})
	if err != nil {
		return nil, err
	}
	if _, ok := so.TrialCost[splitKind]; !ok && so.Split {
		costs := map[string]time.Duration{splitKind: so.TrialCost[MetricGoodput] + SplitShare}
		maps.Copy(costs, so.TrialCost) // the caller's map stays as it was
		so.TrialCost = costs
	}
	clk := clock.NewSim(time.Microsecond)
	t.clock, t.start, t.end = clk, clk.Now(), clk.Now().Add(so.Budget)
	t.mixture, t.minRounds, t.stackSD, t.roundSDs, t.measuredStackSD = so.Mixture, so.MinRounds, so.StackSD, so.RoundSD, so.MeasuredStackSD
	if so.Plausible > 0 {
		t.plausibleSmall = math.Log1p(so.Plausible)
	}
	src := &simSource{o: so, clock: clk, warm: map[string]int{}, offsets: map[int]map[string]float64{}, warmStack: map[string]int{},
		busy: map[int]bool{}}
	t.src = src
	src.Hold(t.best) // the first stack, started before any decision
	t.facts, t.conc = so.Facts, so.Conc
	t.costs.guess = so.TrialCost
	t.costs.startGuess[MetricGoodput] = so.StartCost
	t.costs.startGuess[MetricCPU] = cmp.Or(so.TwinStartCost, so.StartCost)
	t.costs.startGuess[arms.StartStatic] = t.costs.startGuess[MetricCPU]
	var size func(context.Context) error
	if so.Pool > 0 {
		t.best.MaxChildren = so.Pool
		src.Hold(t.best)
		t.sat, t.pool = simSweep(so.Sweep, so.SweepSD)
		size = func(ctx context.Context) error { return t.sizePool(ctx, 0, 0) }
	}
	err = t.decideAll(ctx, size)
	return t.finish(err), err
}

// simSweep is the sweep a simulation's pool sizes are drawn from, and the pool it leaves (nil, nil: none).
func simSweep(medians map[int]float64, sd float64) (*Saturation, *PoolSize) {
	if len(medians) == 0 {
		return nil, nil
	}
	sat := &Saturation{NoiseSD: sd}
	for _, c := range slices.Sorted(maps.Keys(medians)) {
		sat.Points = append(sat.Points, Point{Concurrency: c, RPS: medians[c], Median: medians[c]})
		if sat.Peak == 0 || medians[c] > medians[sat.Peak] {
			sat.Peak = c
		}
	}
	return sat, &PoolSize{}
}

type simSource struct {
	mu    sync.Mutex // arms start side by side
	o     SimOptions
	clock *clock.Sim
	// charged is the replay round of the last experiment whose starts were paid: arms of one experiment start
	// side by side, so their starts cost the time of one.
	charged int
	warm    map[string]int // configuration -> arms holding it, the tuner's hold included
	held    string
	moves   map[string]*simMoves // by Phase, as replicated keeps them
	// Stacks are numbered as tune numbers them (serial), each with an offset of its own by noise, drawn when first
	// read. warmStack is a configuration's warm stack (the last one an arm of it ran on, or the one held), which
	// the next arm of it takes when no arm runs on it and it has not run there before; busy, the stacks arms run on.
	serial    int
	offsets   map[int]map[string]float64
	warmStack map[string]int
	busy      map[int]bool
}

// newStack numbers a fresh stack. The caller holds the lock.
func (s *simSource) newStack() int {
	s.serial++
	return s.serial
}

// simMoves is what an experiment's arms have paid for moving to fresh stacks (see arms.Stacks): each move costs the
// experiment its live arms' starts side by side. Like moves, it sets the rounds a stack serves at each round's
// end from the trials' spread and costs (arms.StackRounds).
type simMoves struct {
	live, paid int
	arms       map[*simArm]bool
	sp         arms.Spread
}

// tally counts a's trial and, at a round's end, sets the rounds a stack serves. The caller holds the lock.
func (g *simMoves) tally(a *simArm, v, second float64, first bool) {
	g.sp.Trial(a, v, second, a.cost, first, a.per)
}

// FinalSpread is arms.FinalSpread of the experiments run so far that counts says tell the final's, as
// arms.Stacks reads it.
func (s *simSource) FinalSpread(counts func(phase string) bool) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sps []*arms.Spread
	for phase, g := range s.moves {
		if counts(phase) {
			sps = append(sps, &g.sp)
		}
	}
	return arms.FinalSpread(sps)
}

// StackOffset is arms.OffsetOf the experiments of metric run so far other than phase's, as arms.Stacks reads it.
func (s *simSource) StackOffset(metric, phase string) StackOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sps []*arms.Spread
	for p, g := range s.moves {
		if p != phase {
			sps = append(sps, &g.sp)
		}
	}
	return arms.OffsetOf(sps, metric)
}

// Tell sets the offsets phase's engine allows for, which its moves are set at.
func (s *simSource) Tell(phase string, sd float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.moves[phase]; g != nil {
		g.sp.Tell(sd)
	}
}

// Hold keeps cfg warm for the tuner, as arms.Stacks.Hold does.
func (s *simSource) Hold(cfg knob.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key := cfg.Key(); key != s.held {
		s.warm[key]++
		if s.held != "" {
			s.warm[s.held]--
		}
		s.held = key
		if _, ok := s.warmStack[key]; !ok {
			s.warmStack[key] = s.newStack()
		}
	}
}

// Warm says whether a stack of cfg runs: one an arm or the tuner holds.
func (s *simSource) Warm(cfg knob.Config) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warm[cfg.Key()] > 0
}

// Fit says that the stacks fit the memory: a simulation has no limit.
func (s *simSource) Fit([]knob.Config) bool { return true }

func (s *simSource) Arm(cfg knob.Config, spec arms.TrialSpec) experiment.Arm {
	effect := s.o.Effect(cfg, spec.Metric)
	run := arms.RunsOn(cfg, spec) // as arms.Stacks runs it: a twin is not the configuration held warm
	// Every arm of an experiment replays one record, so that they share its rounds (the machine's drift, a
	// neighbour's burst), as arms that run in the same rounds do: twins' static pools, or the pools as written
	// (the pm race's arms too, whose incumbent is the dynamic pool the noise was recorded on).
	pm := ""
	if spec.Twin() && !spec.Split { // split rounds' figures are kept under one key (bench/engine)
		pm = "static"
	}
	noise := s.noiseKey(spec.Metric, pm, spec.Duet || spec.Split)
	start := s.o.StartCost
	if spec.Twin() && s.o.TwinStartCost > 0 {
		start = s.o.TwinStartCost
	}
	s.mu.Lock()
	if s.moves == nil {
		s.moves = map[string]*simMoves{}
	}
	g := s.moves[spec.Phase]
	if g == nil {
		g = &simMoves{arms: map[*simArm]bool{}, sp: arms.NewSpread(spec.Metric, spec.Capacity)}
		s.moves[spec.Phase] = g
	}
	s.mu.Unlock()
	a := &simArm{ReplayArm: s.o.Noise[noise].Arm(run.String(), effect), s: s, key: run.Key(), cost: s.o.TrialCost[spec.Metric], start: start,
		moves: g, readsSecond: spec.Metric == MetricGoodput, fresh: spec.Fresh, duet: spec.Duet, split: spec.Split}
	if spec.Split {
		a.splitCost = s.o.TrialCost[splitKind] - a.cost
	}
	if s.o.Tail != nil {
		a.tail = s.o.Tail(cfg)
	}
	if s.o.Noise[noise].Options().NewStackEvery > 0 || spec.Duet {
		// Replicated stacks, as tune runs them (a duet's every round); else one stack an arm, as it did before.
		a.per = arms.RoundsPerStack(spec)
	}
	a.ReplayArm.Stack = s.stack(noise, a.stackOf)
	if r := s.o.Noise[MetricCPU]; spec.Metric == MetricGoodput && r != nil && r != s.o.Noise[noise] {
		// A goodput trial reads the servers' CPU too: capacity, replayed from the CPU trials' noise (without
		// a replay of its own, the trial's figure stands for it).
		a.capacity = r.Arm(run.String(), s.o.Effect(cfg, MetricCPU))
		a.capacity.Stack = s.stack(MetricCPU, a.stackOf)
	}
	return a
}

// noiseKey is the replay a trial of metric on a pool of pm replays: its own, its metric's, or goodput's. A duet
// trial replays duet rounds' (Simulate checks they are given): alternating rounds' noise holds the machine's
// drift between trials, which a duet cancels.
func (s *simSource) noiseKey(metric, pm string, duet bool) string {
	if duet {
		return NoiseKey(metric, pm, true)
	}
	for _, k := range []string{NoiseKey(metric, pm, false), metric} {
		if s.o.Noise[k] != nil {
			return k
		}
	}
	return MetricGoodput
}

// stack is the stack an arm's trial runs on (stackOf: its serial) and that stack's offset in noise's replay,
// drawn when first read: a stack kept warm across races (the best so far, held) keeps its offset, a fresh one
// (a cold start, a move) draws its own.
func (s *simSource) stack(noise string, stackOf func() int) func(i int) (int, float64) {
	r := s.o.Noise[noise]
	o := r.Options()
	return func(int) (int, float64) {
		s.mu.Lock()
		defer s.mu.Unlock()
		k := stackOf()
		if o.StackSD == 0 {
			return k, 0
		}
		if s.offsets[k] == nil {
			s.offsets[k] = map[string]float64{}
		}
		v, ok := s.offsets[k][noise]
		if !ok {
			v = o.StackSD * r.Rand().NormFloat64()
			s.offsets[k][noise] = v
		}
		return k, v
	}
}

type simArm struct {
	*experiment.ReplayArm
	s     *simSource
	key   string
	cost  time.Duration
	start time.Duration
	// capacity replays the requests per CPU-second a goodput trial also reads (nil for CPU trials).
	capacity *experiment.ReplayArm
	// readsSecond: a goodput trial reads capacity too, as a real one does (the final decides on it, and its
	// spread foresees the final's moves: capacitySpread), and its p99, of log ratio tail against Base's.
	readsSecond bool
	tail        float64
	holding     bool
	fresh       bool // arms.TrialSpec.Fresh: never the warm stack
	// duet: its rounds are duets (TrialSpec.Duet); split: split rounds (TrialSpec.Split), whose duet trials cost
	// splitCost each; prepared: Prepare readied this round's trial.
	duet, split, prepared bool
	splitCost             time.Duration
	moves                 *simMoves
	per, n                int // the most trials a stack serves (0: one for its life); trials on this one
	// cur is the stack it runs on, used the ones it ran on; epoch its moves since it started.
	cur, epoch int
	used       map[int]bool
}

// stackOf is the arm's stack. The caller holds the source's lock.
func (a *simArm) stackOf() int { return a.cur }

// warm is the configuration's warm stack when the arm may take it: no arm runs on it, and it has not run there.
// The caller holds the source's lock.
func (a *simArm) warm() (int, bool) {
	w, ok := a.s.warmStack[a.key]
	return w, ok && !a.fresh && a.s.warm[a.key] > 0 && !a.s.busy[w] && !a.used[w]
}

// runOn makes k the stack its trials run on. The caller holds the source's lock.
func (a *simArm) runOn(k int) {
	if a.used == nil {
		a.used = map[int]bool{}
	}
	delete(a.s.busy, a.cur)
	a.cur, a.used[k], a.s.busy[k], a.s.warmStack[a.key] = k, true, true, k
}

func (a *simArm) Cold() bool {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	_, ok := a.warm()
	return !ok
}

func (a *simArm) Start(ctx context.Context) error {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.holding {
		return nil
	}
	if w, ok := a.warm(); ok {
		a.runOn(w)
	} else {
		if a.First()+1 != a.s.charged {
			a.s.clock.Add(a.start)
			a.s.charged = a.First() + 1
			a.moves.sp.Start(a.start)
		}
		a.runOn(a.s.newStack()) // a cold start: a fresh stack
	}
	a.s.warm[a.key]++
	a.holding = true
	if a.moves.live == 0 {
		a.moves.paid = 0
	}
	a.moves.live++
	a.moves.arms[a] = true
	a.n, a.epoch = 0, 0
	if a.capacity != nil {
		_ = a.capacity.Start(ctx)
	}
	return a.ReplayArm.Start(ctx)
}

// Prepare readies a duet round's trial, or a split round's (experiment.Preparer): the engine prepares the round's
// arms one after another, in the round's order, before their trials run (a duet's at once, a split round's in
// turn and then at once). The arm moves when due and the clock advances by its share of what runs at once here
// rather than in the trials, so that what the run's clock and draws read does not depend on the order the
// trials' goroutines run in: a seed's run is reproducible. A split round's figure is drawn in turn (Trial).
func (a *simArm) Prepare(ctx context.Context) error {
	if !a.duet && !a.split {
		return nil
	}
	a.prepared = true
	a.move()
	if a.split {
		a.s.clock.Add(a.splitCost)
		return ctx.Err()
	}
	a.s.clock.Add(a.cost)
	return a.ReplayArm.Prepare(ctx)
}

// move moves the arm to a fresh stack when its stack has served its rounds. The experiment's first arm to move
// pays the arms' starts side by side; in a duet round only what they take beyond the round before's trials,
// beside which they started (moves.startAhead: a round costs the longer of its trials and a start).
func (a *simArm) move() {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.per == 0 || a.n == 0 || a.n < a.moves.sp.Per(a.per) {
		return
	}
	a.epoch++
	if a.moves.paid < a.epoch {
		a.moves.paid = a.epoch
		starts := startsCost(a.moves.live, a.start)
		if a.duet {
			a.s.clock.Add(max(starts-time.Duration(a.moves.live)*a.cost, 0))
		} else {
			a.s.clock.Add(starts)
			a.moves.sp.Start(starts)
		}
	}
	a.n = 0
	a.runOn(a.s.newStack())
}

// Trial runs the arm's trial: in turn, it moves when due and takes its time here; in a duet round Prepare did,
// in a split round Prepare moved it.
func (a *simArm) Trial(ctx context.Context) (experiment.Observation, error) {
	if !a.prepared {
		a.move()
	}
	if !a.prepared || a.split {
		a.s.clock.Add(a.cost)
	}
	a.prepared = false
	a.s.mu.Lock()
	first := a.n == 0
	a.s.mu.Unlock()
	o, err := a.ReplayArm.Trial(ctx)
	o.Rate = o.Value
	o.Second = o.Value
	if a.split {
		o.Capacity = 1 // the figure drawn is the round's: its share of the machine (SplitTrial)
	}
	if a.capacity != nil && err == nil {
		c, _ := a.capacity.Trial(ctx)
		o.Second = c.Value
	}
	second := 0.0
	if a.readsSecond {
		second, o.P99 = o.Second, a.p99()
	}
	a.s.mu.Lock()
	a.n++
	if a.per > 0 {
		a.moves.tally(a, o.Value, second, first)
	}
	a.s.mu.Unlock()
	return o, err
}

// SplitTrial is a split round's duet trial (experiment.Splitter): Trial drew the round's figure as the arm's share
// of the machine, and this trial reads capacity 1; Prepare took its time.
func (a *simArm) SplitTrial(ctx context.Context) (experiment.Observation, error) {
	if err := ctx.Err(); err != nil {
		return experiment.Observation{}, err
	}
	return experiment.Observation{Value: 1, Capacity: 1}, nil
}

// p99 is a goodput trial's p99, microseconds: 5 ms, times its true ratio and its noise when SimOptions.Tail is set.
func (a *simArm) p99() float64 {
	const base = 5000
	if a.s.o.Tail == nil {
		return base
	}
	sd := cmp.Or(a.s.o.TailSD, 0.3)
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	return base * math.Exp(a.tail+sd*a.s.o.Noise[MetricGoodput].Rand().NormFloat64())
}

func (a *simArm) Stop() {
	if a.capacity != nil {
		a.capacity.Stop()
	}
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.holding {
		a.s.warm[a.key]--
		a.holding = false
		a.moves.live--
		delete(a.moves.arms, a)
		a.moves.sp.Forget(a)
		delete(a.s.busy, a.cur)
	}
}

// NoiseKey is what a trial's noise is kept and replayed under: its metric, for goodput whether its pool was
// static (interleaved trials leave a dynamic pool to shrink and regrow, which a static one never does:
// steadyPool), and whether it ran in a duet round, whose trials share the machine's noise (kept apart: replayed
// as alternating rounds, it would hold drift a duet cancels, and the other way round). Goodput's duet noise is
// split rounds' figures (SimOptions.Split), whatever their pools.
func NoiseKey(metric, pm string, duet bool) string {
	key := metric
	if metric == MetricGoodput && pm == "static" {
		key = MetricGoodput + "_static"
	}
	if duet {
		key += "_duet"
	}
	return key
}

// Planted is a knob's planted effect in a simulation, against the value it starts from.
func Planted(effects map[string]map[string]float64) func(cfg knob.Config, metric string) float64 {
	return func(cfg knob.Config, metric string) float64 {
		total := 0.0
		for name, byValue := range effects {
			k, ok := knob.ByName(name)
			if !ok {
				continue
			}
			total += byValue[k.Get(cfg)]
		}
		return total
	}
}

// LogEffect is the log ratio of a relative change (+0.2: 20% more).
func LogEffect(rel float64) float64 { return math.Log1p(rel) }
