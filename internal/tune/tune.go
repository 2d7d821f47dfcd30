// Package tune is the experiment: it serves the app in one warm stack per configuration, measures the saturation
// curve, sizes the pool from the CPU knee and memory, decides each knob by a race of its values against the best so
// far (greedy coordinate ascent), and compares the recommendation with Debian's defaults and the "static, 2 x cores"
// rule of thumb. Every comparison is decided by package experiment: sequential, interleaved, within one error budget
// for the run.
//
// Files (TestFileMap keeps this list whole): tune.go (options, the run's phases), plan.go (trial lengths and the
// time each experiment gets), shares.go (how the races and the final share the time left), arms.go (what the
// phases race their arms on: package arms's stacks or a simulation's; what starts and trials cost), limits.go
// (memory limits of the sweep's pool), otherpools.go (the pools already running in the same memory),
// saturation.go, poolsize.go, soak.go (memory over a long series of requests: pm.max_requests), screen.go (a
// configuration's work per request), knobs.go (the knob races' order), ordertext.go (that order in words, for the
// help), decide.go (a race on the engine, its report), hopeless.go (races the budget cannot decide), revisit.go
// (second looks at open races), sizeslook.go (the pool sizes' second look), runtime.go (the server race), tail.go
// (what a race guarded by the p99 traded, in words), final.go, finaltail.go and finalneed.go (against the
// baselines, its p99 against the starting point's, and the time that comparison keeps), p99.go, peak.go (the pool
// against an access log's busiest second), result.go (the result and its JSON), ledger.go (what the phases record
// for it, which finish assembles), applyfiles.go (its files for a Debian server, and read back), after.go (tune
// --profile, after the run), versus.go (what a row was compared on), rowstate.go (how a row came by its value:
// raced, pinned, not tried, ...), sim.go (simulated runs on recorded noise), progress.go (the progress line: the
// best so far in knob words).
package tune

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/clock"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
)

// Options are what tune is asked.
type Options struct {
	Stack   stack.Config // the app and the binaries; pools, nginx pool and keep-alive are set per arm
	AppName string
	URLs    []load.MixItem
	Request load.Request
	// LogIn, when set, is sent once on the first stack before the URLs are checked; the URLs it returns (with
	// the session's cookies) are the run's.
	LogIn func(ctx context.Context, base string) ([]load.MixItem, error)
	Base  knob.Config // the starting point: Debian's pool or the user's files, pins applied
	// BaseName says what Base is, for the headline ("Debian's defaults", "your configuration").
	BaseName string
	Pins     map[string]string
	Knobs    []knob.Knob // decided in this order after the pool size
	// Asked are the knobs the user named to race (--only, or --knob with values): they race whatever their share
	// can decide, where another knob's race that cannot decide gives its time to the rest (deferHopeless).
	Asked  map[string]bool
	Budget time.Duration
	Memory int64 // bytes the pool may use
	// MemoryFrom says what set Memory: "--memory", the host's available memory, or a cgroup's limit, less what
	// the other pools there may still take.
	MemoryFrom string
	// OtherPools are the php-fpm pools running in the same memory, whose growth was kept out of Memory.
	OtherPools []OtherPool
	// Limits are the place the pool is sized for (this process's cgroup, or a named one): its CPUs size the
	// rule of thumb, the CPU trials' load and nginx's workers (nil: the host's).
	Limits *measure.Limits
	P99    time.Duration
	Rate   float64
	// MinEffect is relative (0.03 = 3%): the smallest change that counts as better or worse, and the bound
	// within which an interval shows no difference.
	MinEffect float64
	// PoolMargin is relative (0.05 = 5%; 0: DefaultPoolMargin): the pool size chosen is the smallest shown to
	// serve within it of the best size raced (non_inferior).
	PoolMargin float64
	// Alpha is the run's error budget: the chance, at most, that any of its verdicts is wrong (0: 0.05).
	Alpha    float64
	Timeout  time.Duration
	Progress func(Status)
	// Screen, when set, counts the work a configuration makes PHP do per request (instructions, syscalls):
	// CPU-only knobs whose candidates leave it unchanged get no timed trials, where that saves time. It runs
	// with a budget of ScreenBudget or more, or always with ForceScreen.
	Screen      *Screener
	ForceScreen bool
	// Soak is how long the workers' memory is measured over a long series of requests (pm.max_requests and the
	// pool's memory bound come from it), on top of Budget: 0 takes a tenth of a Budget of SoakBudget or more
	// instead, < 0 turns it off.
	Soak time.Duration
	// LogLoad is the access log's load, when the mix is from one: the pool sized is checked against its peak.
	LogLoad *accesslog.Load
	// Duet runs the CPU races' rounds as duets: the arms' trials at the same time (experiment.Spec.Duet), where
	// the machine's noise cancels in their ratio. Off, the trials alternate.
	Duet bool
	// DuetPin pins each duet arm's stack (php-fpm's and nginx's processes) to a share of the CPUs of its own, the
	// shares rotating round by round, where there are at least as many CPUs as arms (docs/engine.md, "Duet rounds").
	DuetPin bool
	// DuetSpread spreads each duet arm's php-fpm workers over the CPUs for its trial, one to each in turn, where
	// the arms are not pinned apart (DuetPin): a CPU a neighbour slows then slows every arm alike.
	DuetSpread bool
	// Split runs the goodput races' rounds as split rounds (experiment.Spec.Split): the trials in turn, then at
	// the same time, goodput read as the share of the machine an arm got in turn times the capacity it showed in
	// the duet (docs/engine.md, "Split rounds"). The pool sizes', keep-alive's and the final's alternate (Splits,
	// finalTrial); off, all of them do.
	Split bool
}

// ScreenBudget is the least budget with which screening runs unless forced: counting takes seconds of valgrind a
// candidate, and a shorter run cannot race no-op candidates to a decision anyway.
const ScreenBudget = 5 * time.Minute

// DefaultMinEffect is tune's default minimum effect. Measured on the 2-core test machine: the rounds of an
// interleaved comparison vary by 2 to 5% (sd of the log ratio), and two stacks of one configuration differ by up
// to 2% in throughput (where each lands in memory): a smaller effect is within what the machine itself does,
// and showing no difference within +-1% would take hundreds of rounds.
const DefaultMinEffect = 0.03

// DefaultPoolMargin is how much of the best size's goodput a smaller pool may give up and still be chosen. At
// 3% (the minimum effect) no pool was decided in most 10-minute runs of the demo: its sizes past 4 lie within 2
// to 4% of each other and a goodput round varies by 4 to 5%, so showing a size within 3% of one 2% better takes
// 380 to 650 rounds (experiment.HalfWidthAt at a pair's alpha), where 5% takes 46 to 80. A pool 5% short of the
// best at the same load keeps the memory of the workers it does not start.
const DefaultPoolMargin = 0.05

// poolMargin is the run's PoolMargin, or the default.
func (o Options) poolMargin() float64 {
	if o.PoolMargin > 0 {
		return o.PoolMargin
	}
	return DefaultPoolMargin
}

// MinBudget is the least budget tune takes: the saturation sweep and the final comparison's least.
const MinBudget = 30 * time.Second

// ErrBudget says the budget cannot decide anything.
var ErrBudget = errors.New("budget too small")

// Run tunes. On a cancelled ctx or an error part-way it returns the result so far (Partial) with the error.
func Run(ctx context.Context, o Options) (*Result, error) {
	t, err := newTuner(o)
	if err != nil {
		return nil, err
	}
	t.env = environment(o.Stack)
	t.env.Limits = o.Limits
	t.serve()
	defer t.stacks.StopAll()
	err = t.run(ctx)
	return t.finish(err), err
}

// serve makes real stacks of the app the run's arms.
func (t *tuner) serve() {
	t.stacks = arms.New(arms.Config{Stack: t.o.Stack, URLs: t.o.URLs, Request: t.o.Request, Timeout: t.o.Timeout, LogIn: t.o.LogIn,
		DuetPin: t.o.DuetPin, DuetSpread: t.o.DuetSpread}, &t.lengths, t.record, t.warn)
	t.src = t.stacks
}

// Check finds the options' usage errors: the command calls it before it creates anything (its run dir).
func (o Options) Check() error {
	if o.Budget < MinBudget {
		return exitcode.UsageErrorf("%w: --budget %s cannot measure the app and decide anything; give at least --budget %s", ErrBudget, o.Budget, MinBudget)
	}
	if o.Alpha != 0 && !(o.Alpha > 0 && o.Alpha < 1) {
		return exitcode.UsageErrorf("--alpha %g: want a chance between 0 and 1, such as 0.05", o.Alpha)
	}
	if o.MinEffect < 0 {
		return exitcode.UsageErrorf("--min-effect must not be negative")
	}
	if o.PoolMargin < 0 || o.PoolMargin >= 1 {
		return exitcode.UsageErrorf("--pool-margin %g: want a percentage above 0 and below 100, such as 5", 100*o.PoolMargin)
	}
	if o.Timeout < 0 {
		return exitcode.UsageErrorf("--timeout %s: want a positive duration", o.Timeout)
	}
	if (o.P99 > 0) != (o.Rate > 0) {
		return exitcode.UsageErrorf("--p99 is judged open-loop at a rate: give --p99 and --rate together")
	}
	return nil
}

// RaceBuilds adds the builds of tune --build to the knob php's values (knob.WithBinaries): the run starts from
// the first of them.
func (o *Options) RaceBuilds(builds []Build) (err error) {
	var bins []string
	for _, b := range builds {
		bins = append(bins, b.PHPFPM)
	}
	o.Knobs, err = knob.WithBinaries(o.Knobs, &o.Base, o.Stack.PHPFPM, bins)
	return err
}

type tuner struct {
	o      Options
	log    ledger // what the phases record for the result (finish)
	env    Environment
	clock  clock.Clock
	start  time.Time
	end    time.Time // the budget's end
	src    armSource
	stacks *arms.Stacks // the real arms, src in real runs; nil in simulations
	d      *decider
	budget *experiment.Budget
	costs  *costs
	plan   Plan
	// lengths are the trials' lengths, conc the load of the knob comparisons.
	lengths arms.Lengths
	conc    int
	cpuConc int // the load of CPU trials
	best    knob.Config
	facts   knob.Facts
	plans   map[string]planned         // knob -> its race as planned
	open    []*openRace                // races kept for a second look
	skip    map[string]string          // knob -> why it is not tried
	screens map[string]map[string]bool // knob -> values the screen found no work difference for
	decided map[string]KnobRow         // knob -> its row, decided without a race (max_requests by the soak)
	// deferred are the races the budget's shares could not let decide (deferHopeless): they take no share of
	// the time until their turn.
	deferred map[string]bool
	// plausibleSmall is the largest change a small goodput knob is taken to make (a log ratio; 0: plausibleLog),
	// where a simulation says.
	plausibleSmall float64
	// roundSDs are the spreads of a round's log ratio to plan with, by metric, where a simulation knows them
	// (nil: roundSD's estimates).
	roundSDs map[string]float64
	peakRPS  float64
	// sat is the saturation phase's curve (nil in simulations), the result's Saturation (finish).
	sat *Saturation
	// pool is the pool's sizing (poolSize; sizesRow's in simulations), the result's PoolSize (finish).
	pool *PoolSize
	// mixture and minRounds are the decider's (0: the defaults): a simulation may try others. stackSD is the
	// spread of stacks' offsets the engine allows for, by metric (DefaultStackSD in real runs).
	mixture   float64
	minRounds int
	stackSD   map[string]float64
	// measuredStackSD tells a later experiment the upper bound of what the run measured of its stacks' offsets
	// where it is larger than stackSD (StackOffset). Off in real runs: simulated, it neither lowered false verdicts
	// nor kept the final's power where offsets are large (docs/engine.md, "The offsets measured in the run").
	measuredStackSD bool
	// runtimes is the server race's sizing and latency, for the runtimes' table (nil: no server race).
	runtimes *runtimeRace
}

func newTuner(o Options) (*tuner, error) {
	if len(o.URLs) == 0 {
		o.URLs = []load.MixItem{{URI: "/", Weight: 1}}
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Timeout == 0 {
		o.Timeout = load.DefaultTimeout
	}
	if o.Alpha == 0 {
		o.Alpha = stats.DefaultAlpha
	}
	if o.Pins == nil {
		o.Pins = map[string]string{}
	}
	t := &tuner{o: o, clock: clock.Wall{}, best: o.Base.Clone(), skip: map[string]string{}, screens: map[string]map[string]bool{},
		costs: newCosts(), stackSD: map[string]float64{MetricCPU: arms.DefaultStackSD, MetricGoodput: arms.DefaultStackSD}}
	t.start = t.clock.Now()
	t.end = t.start.Add(o.Budget)
	if o.P99 > 0 {
		// The goal's last check, on the recommendation, comes after the races: its time is kept from them.
		t.end = t.end.Add(-p99Window(o.Rate, 0) - time.Second)
	}
	if o.Soak > 0 {
		t.end = t.end.Add(o.Soak) // --soak is on top of the budget
	}
	t.recordURLs(nil)
	t.plan = Plan{Method: "sequential: each knob a race of its values in interleaved rounds, decided by confidence sequences valid at every look",
		Alpha: o.Alpha, MinEffect: o.MinEffect, PoolMargin: o.poolMargin(), PerStack: map[string]int{MetricCPU: arms.PerStack(MetricCPU), MetricGoodput: arms.PerStack(MetricGoodput)}}
	return t, nil
}

func (t *tuner) status(phase, detail string) {
	if t.o.Progress != nil {
		t.o.Progress(Status{Elapsed: t.clock.Now().Sub(t.start), Budget: t.o.Budget, Phase: phase, Detail: detail, Best: t.bestWords()})
	}
}

func (t *tuner) record(r TrialRecord) {
	r.AtS = t.clock.Now().Sub(t.start).Seconds() - r.WallS
	t.log.addTrial(r)
}

func (t *tuner) warn(s string) { t.log.warn(s) }

// recordURLs puts the mix in the result, each URL with its peak memory when known.
func (t *tuner) recordURLs(memory []int64) {
	t.log.urls = nil
	for i, u := range t.o.URLs {
		m := u.RequestOver(t.o.Request).Method
		if m == "GET" {
			m = ""
		}
		r := URL{Path: u.URI, Weight: u.Weight, Method: m}
		if i < len(memory) {
			r.PeakMemory = memory[i]
		}
		t.log.urls = append(t.log.urls, r)
	}
}

// commandOf is a process's command and first argument, as ps shows them ("" when it is gone).
func commandOf(pid int) string {
	st, err := measure.ReadProc(pid)
	if err != nil {
		return ""
	}
	args := strings.Fields(st.Cmdline)
	if len(args) > 2 {
		args = args[:2]
	}
	if len(args) > 0 {
		args[0] = filepath.Base(args[0])
	}
	return strings.Join(args, " ")
}

// cpus is the whole CPUs the pool may use: the limits' (a cgroup's quota or cpuset), else the host's.
func (t *tuner) cpus() int {
	if t.o.Limits != nil {
		return t.o.Limits.WholeCPUs()
	}
	return runtime.NumCPU()
}

// left is the time before the budget ends.
func (t *tuner) left() time.Duration { return t.end.Sub(t.clock.Now()) }

func (t *tuner) run(ctx context.Context) error {
	// The first stack doubles as the check that the app works at all: each URL answers and passes its check.
	t.status("start", "serving the app")
	first := t.stacks.Shared(t.best, arms.TrialSpec{Phase: "check"})
	if err := first.Start(ctx); err != nil {
		return err
	}
	defer first.Stop()
	for _, pid := range stack.OtherRuns() {
		who := fmt.Sprintf("pid %d", pid)
		if cmd := commandOf(pid); cmd != "" {
			who += ", " + cmd
		}
		t.warn(fmt.Sprintf("another phptune run (%s) was running on this machine when this one began: while it serves "+
			"load or measures, it shares the CPUs, so figures are lower and verdicts slower; run one at a time", who))
	}
	w := t.stacks.WarmOf(t.best)
	t.o.URLs = t.stacks.URLs()
	t.recordURLs(w.URLMemory) // the URLs as checked: with optional ones that failed left out
	t.facts.MaxResponse = w.MaxResponse
	t.facts.THP, t.facts.HugePages = t.env.Host.THP, t.env.Host.NrHugepages
	t.facts.Concurrency = sweepPool(t.o.Memory, urlPeak(t.log.urls))
	t.readOpcache(ctx, w)
	if err := t.saturation(ctx); err != nil {
		return err
	}
	if err := t.fit(); err != nil {
		return err
	}
	if err := t.poolSize(); err != nil {
		return err
	}
	if err := t.soak(ctx); err != nil {
		return err
	}
	t.facts.Concurrency = t.conc
	t.facts.NginxWorkers = t.cpus() // knob.Config.Apply's worker_processes
	switch {
	case t.o.Screen == nil:
	case t.o.ForceScreen || t.o.Budget >= ScreenBudget:
		if err := t.screen(ctx); err != nil {
			return err
		}
	default:
		t.plan.ScreenNote = fmt.Sprintf("off: a budget under %s cannot spare the time (--screen turns it on)", ScreenBudget)
	}
	if err := t.decideAll(ctx, t.poolRace); err != nil {
		return err
	}
	t.checkPeak()
	if t.o.P99 > 0 {
		return t.p99(ctx)
	}
	return nil
}

// finish assembles the result: what the phases recorded (the ledger), the run's plan and what it took, marked
// partial when the run did not end.
func (t *tuner) finish(err error) *Result {
	res := &Result{Schema: Schema, App: t.o.AppName, Started: t.start.UTC(), BudgetS: t.o.Budget.Seconds(),
		Baseline: t.o.Base, LogLoad: t.o.LogLoad, Environment: t.env,
		Note: "These results are valid for this host, this PHP and this load; measure again before applying them elsewhere."}
	t.log.into(res)
	t.plan.TrialsRun = len(t.log.trials)
	var wall float64
	for _, tr := range t.log.trials {
		wall += tr.WallS
	}
	if t.plan.TrialsRun > 0 {
		t.plan.TrialWallS = wall / float64(t.plan.TrialsRun)
	}
	t.plan.StackSD = t.stackSD
	if s := t.stacks; s != nil {
		if st := t.startsSoFar(); st.N > 0 {
			t.plan.StartsRun = st.N
			t.plan.StartWallS = (st.Wall / time.Duration(st.N)).Seconds()
			t.plan.SettleWallS = (st.Settled / time.Duration(st.N)).Seconds()
		}
		res.Memory = s.MemoryUse()
		t.plan.DuetPin = s.Pins()
	}
	res.Plan = t.plan
	res.Saturation, res.PoolSize = t.sat, t.pool
	res.Facts = t.facts
	res.Recommendation = t.best
	res.Runtimes = t.runtimesTable()
	res.ElapsedS = t.clock.Now().Sub(t.start).Seconds()
	res.Partial = err != nil
	return res
}

// decider is what decides the run's races: the engine's parameters (the spread of stacks' offsets it allows for
// among them) are the tuner's.
func (t *tuner) decider() *decider {
	d := &decider{src: t.src, clock: t.clock, end: t.end, budget: t.budget, minEffect: t.o.MinEffect, costs: t.costs,
		progress: t.status, hold: t.setBest, fit: t.src.Fit, mixture: t.mixture, minRounds: t.minRounds, stackSD: t.stackSD, measuredStackSD: t.measuredStackSD, duet: t.o.Duet}
	return d
}

// decideAll decides the CPU knobs, the pool size (sizePool), the other knobs, then the final comparison, on the
// engine (see cpuFirst).
func (t *tuner) decideAll(ctx context.Context, sizePool func(context.Context) error) error {
	t.planExperiments()
	t.d = t.decider()
	cpu, rest := cpuFirst(t.o.Knobs)
	after := names(rest)
	if _, ok := t.plans[knob.MaxChildren().Name]; ok {
		after = append([]string{knob.MaxChildren().Name}, after...)
	}
	t.deferHopeless(append(names(cpu), after...))
	if err := t.decideKnobs(ctx, cpu, after); err != nil {
		return err
	}
	if sizePool != nil {
		if err := sizePool(ctx); err != nil {
			return err
		}
	}
	if err := t.decideKnobs(ctx, rest, nil); err != nil {
		return err
	}
	if err := t.revisit(ctx); err != nil {
		return err
	}
	return t.final(ctx)
}

// setBest makes cfg the best so far and keeps its stack warm.
func (t *tuner) setBest(cfg knob.Config) {
	t.best = cfg
	t.src.Hold(cfg)
}

func relDiff(b, a float64) float64 {
	if a == 0 {
		if b == 0 {
			return 0
		}
		return 1
	}
	return b/a - 1
}

func metricOf(k knob.Knob) string {
	if k.CPUOnly || k.CPUTime {
		return MetricCPU
	}
	return MetricGoodput
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
