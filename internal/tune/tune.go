// Package tune is the experiment: it serves the app in one warm stack per arm, measures the saturation curve,
// sizes the pool from the CPU knee and memory, decides each knob by interleaved paired trials against the
// current best (greedy coordinate ascent), and compares the recommendation with Debian's defaults and the
// "static, 2 x cores" rule of thumb.
package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
)

// Schema names the JSON form of a Result.
const Schema = "phptune/tune/v1"

// Options are what tune is asked.
type Options struct {
	Stack   stack.Config // the app and the binaries; pools, nginx pool and keep-alive are set per arm
	AppName string
	URLs    []load.MixItem
	Request load.Request
	Base    knob.Config // the starting point: Debian's pool or the user's files, pins applied
	// BaseName says what Base is, for the headline ("Debian's defaults", "your configuration").
	BaseName string
	Pins     map[string]string
	Knobs    []knob.Knob // decided in this order after the pool size
	Budget   time.Duration
	Memory   int64 // bytes the pool may use
	P99      time.Duration
	Rate     float64
	// MinEffect is relative (0.01 = 1%).
	MinEffect float64
	Pairs     int
	Timeout   time.Duration
	Progress  func(Status)
	// Screen, when set, counts the work a configuration makes PHP do per request (instructions, syscalls):
	// CPU-only knobs whose candidates leave it unchanged get no timed trials.
	Screen *Screener
}

// Screener counts the work a configuration makes PHP do per request, each count on its own: system calls are
// counted only for candidates whose instructions did not already differ.
type Screener struct {
	Instructions func(ctx context.Context, cfg knob.Config) (float64, error)
	Syscalls     func(ctx context.Context, cfg knob.Config) (float64, error)
	Method       string // how it counts, for the result
}

// Work is what a request costs PHP, counted rather than timed: repeatable, so equal counts mean a CPU-only
// knob has nothing to give.
type Work struct {
	InstructionsPerReq float64 `json:"instructions_per_req"`
	SyscallsPerReq     float64 `json:"syscalls_per_req"`
	// SyscallsCounted is false when the instructions alone decided: counting system calls takes a stack.
	SyscallsCounted bool   `json:"syscalls_counted"`
	Method          string `json:"method,omitempty"` // how it was counted
}

// Screen is one screened candidate of a CPU-only knob.
type Screen struct {
	Knob     string `json:"knob"`
	Value    string `json:"value"`
	From     string `json:"from"`
	Base     Work   `json:"base"`
	Cand     Work   `json:"candidate"`
	Survived bool   `json:"survived"` // the counts differ: timed trials decide
	Note     string `json:"note,omitempty"`
}

// Status is the progress line's content.
type Status struct {
	Elapsed, Budget time.Duration
	Phase           string // "saturation", "knob pm", "final", ...
	Detail          string
	Best            string // the best configuration so far
}

// Result is the outcome of a tune run; its JSON form is the schema phptune/tune/v1.
type Result struct {
	Schema      string      `json:"schema"`
	Partial     bool        `json:"partial"`
	Note        string      `json:"note"`
	App         string      `json:"app"`
	URLs        []URL       `json:"urls"`
	CommandLine []string    `json:"command_line"`
	Started     time.Time   `json:"started"`
	ElapsedS    float64     `json:"elapsed_s"`
	BudgetS     float64     `json:"budget_s"`
	Plan        Plan        `json:"plan"`
	Environment Environment `json:"environment"`

	Baseline       knob.Config  `json:"baseline"`
	Recommendation knob.Config  `json:"recommendation"`
	Saturation     *Saturation  `json:"saturation,omitempty"`
	PoolSize       *PoolSize    `json:"pool_size,omitempty"`
	Knobs          []KnobRow    `json:"knobs"`
	Comparisons    []Comparison `json:"comparisons"`
	Headline       *Headline    `json:"headline,omitempty"`
	P99Check       *P99Check    `json:"p99_check,omitempty"`
	Facts          knob.Facts   `json:"facts"`
	// Profile is why, per request: the baseline and the recommendation profiled side by side (tune --profile).
	Profile  *profile.Result   `json:"profile,omitempty"`
	Screens  []Screen          `json:"screens,omitempty"`
	Trials   []TrialRecord     `json:"trials"`
	Files    map[string]string `json:"files,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
}

// URL is one URL of the mix.
type URL struct {
	Path   string `json:"path"`
	Weight int    `json:"weight"`
}

// Plan is how the budget was spent: trial length and counts.
type Plan struct {
	Pairs       int     `json:"pairs"`
	WarmupS     float64 `json:"warmup_s"`
	WindowS     float64 `json:"window_s"`
	Comparisons int     `json:"comparisons_planned"`
	Trials      int     `json:"trials_planned"`
	Concurrency int     `json:"concurrency"` // load for the knob comparisons: the saturation peak's
	SweepTrials int     `json:"sweep_trials_per_point"`
	// Where the time went: trials and stack starts (settling included) as run, each one's mean wall time.
	TrialsRun   int     `json:"trials_run"`
	TrialWallS  float64 `json:"trial_wall_s"`
	StartsRun   int     `json:"starts_run"`
	StartWallS  float64 `json:"start_wall_s"`
	SettleWallS float64 `json:"settle_wall_s"` // of the start wall time
	// Counting each CPU-only candidate's work a request before the timed trials: how long, and how many
	// candidates it spared a timed comparison.
	ScreenWallS float64 `json:"screen_wall_s"`
	ScreenedOut int     `json:"screened_out"`
}

// KnobRow is one line of the answer: a knob, the value chosen and what the decisive comparison showed.
type KnobRow struct {
	Name      string        `json:"name"`
	Value     string        `json:"value"`
	From      string        `json:"from"`
	Metric    string        `json:"metric"`
	EffectPct float64       `json:"effect_pct"`
	CILowPct  float64       `json:"ci_low_pct"`
	CIHighPct float64       `json:"ci_high_pct"`
	Verdict   stats.Verdict `json:"verdict"`  // "" when the knob was not tried (Note says why)
	Compared  string        `json:"compared"` // the comparison the effect is from: "B vs A"
	Note      string        `json:"note,omitempty"`
}

// Comparison is one interleaved paired comparison of a candidate against the best so far.
type Comparison struct {
	Knob     string            `json:"knob"`
	A        string            `json:"a"` // value of the best so far
	B        string            `json:"b"` // candidate value
	Config   string            `json:"config_b"`
	Stats    stats.Comparison  `json:"stats"`
	P99      *stats.Comparison `json:"p99,omitempty"`
	RPSA     float64           `json:"rps_a"`
	RPSB     float64           `json:"rps_b"`
	ErrorsA  int64             `json:"errors_a"`
	ErrorsB  int64             `json:"errors_b"`
	Accepted bool              `json:"accepted"`
	Note     string            `json:"note,omitempty"`
}

// Headline is the recommendation against the defaults.
type Headline struct {
	RecommendationRPS float64           `json:"recommendation_rps"`
	DebianRPS         float64           `json:"debian_rps"`
	RuleOfThumbRPS    float64           `json:"rule_of_thumb_rps"`
	VsDebian          *stats.Comparison `json:"vs_debian,omitempty"`
	VsRuleOfThumb     *stats.Comparison `json:"vs_rule_of_thumb,omitempty"`
	RuleOfThumb       string            `json:"rule_of_thumb"`
	Baseline          string            `json:"baseline"` // what the "debian" figures are: Debian's defaults or the user's files
}

// P99Check is the latency goal judged open-loop at the user's rate.
type P99Check struct {
	MaxChildren int     `json:"max_children"`
	Rate        float64 `json:"rate"`
	GoalUs      float64 `json:"goal_us"`
	P99Us       float64 `json:"p99_us"`
	Met         bool    `json:"met"`
	Errors      int64   `json:"errors"`
	Unsent      int64   `json:"unsent"`
}

// TrialRecord is one trial's raw figures.
type TrialRecord struct {
	Phase        string             `json:"phase"`
	Config       string             `json:"config"`
	Concurrency  int                `json:"concurrency"`
	RPS          float64            `json:"rps"`
	Requests     int64              `json:"requests"`
	Errors       int64              `json:"errors"`
	Latency      load.Latency       `json:"latency_us"`
	ClientCPUUs  float64            `json:"client_cpu_us_per_req"`
	ServerCPU    map[string]float64 `json:"server_cpu_us_per_req,omitempty"` // php-fpm, nginx
	WorkerPSS    int64              `json:"worker_pss_bytes,omitempty"`
	WorkerUSS    int64              `json:"worker_peak_uss_bytes,omitempty"`
	WorkerShared int64              `json:"worker_shared_bytes,omitempty"`
	Workers      int                `json:"workers_seen,omitempty"`
	// BusyWorkers is the workers running a request in mid-window (from the status page's process list; all of
	// them when the status page could not get a worker); -1 when not read.
	BusyWorkers int               `json:"busy_workers"`
	FPM         *measure.FPMDelta `json:"fpm,omitempty"`
}

// Environment is where the results hold.
type Environment struct {
	Host  measure.Host `json:"host"`
	PHP   string       `json:"php"`
	Nginx string       `json:"nginx"`
	FPM   string       `json:"php_fpm_binary"`
}

func environment(sc stack.Config) Environment {
	var e Environment
	e.Host, _ = measure.ReadHost()
	if fpm, err := stack.FindPHPFPM(sc.PHPFPM); err == nil {
		e.FPM = fpm
		e.PHP = firstLine(runOut(fpm, "-v"))
	}
	if ngx, err := stack.FindNginx(sc.Nginx); err == nil {
		e.Nginx = firstLine(runOut(ngx, "-v"))
	}
	return e
}

func runOut(bin string, args ...string) string {
	out, _ := exec.Command(bin, args...).CombinedOutput()
	return string(out)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// ErrBudget says the budget cannot decide anything.
var ErrBudget = errors.New("budget too small")

// Run tunes. On a cancelled ctx or an error part-way it returns the result so far (Partial) with the error.
func Run(ctx context.Context, o Options) (*Result, error) {
	t, err := newTuner(o)
	if err != nil {
		return nil, err
	}
	defer t.stopAll()
	err = t.run(ctx)
	t.account()
	t.res.Facts = t.facts
	t.res.ElapsedS = time.Since(t.start).Seconds()
	if err != nil {
		t.res.Partial = true
	}
	return t.res, err
}

type tuner struct {
	o            Options
	res          *Result
	start        time.Time
	end          time.Time // the budget's end
	plan         Plan
	warm         time.Duration
	win          time.Duration
	conc         int
	arms         map[string]*arm // warm stacks by configuration
	best         knob.Config
	nComparisons int
	plannedComps int
	alpha        float64
	facts        knob.Facts
	skip         map[string]string          // knob -> why it is not tried
	screenedOut  map[string]map[string]bool // knob -> values the screen found no work difference for
	// Wall time of the trials and stack starts so far: on a loaded machine their overheads grow beyond the
	// plan's estimate, and the budget checks go by what they cost here.
	trials, starts                   int
	trialWall, startWall, settleWall time.Duration
	// trialExtra is the trials' wall time beyond their load (status reads, sampling): trial lengths change
	// when replan fits the remaining comparisons into the budget, and this part does not.
	trialExtra time.Duration
	// plannedPer is planBudget's trial length; replan shortens trials to at most minShorten of it.
	plannedPer time.Duration
	peakRPS    float64 // the saturation sweep's peak, for the coarse-trial warning
}

func newTuner(o Options) (*tuner, error) {
	if len(o.URLs) == 0 {
		o.URLs = []load.MixItem{{URI: "/", Weight: 1}}
	}
	if o.Pairs == 0 {
		o.Pairs = stats.DefaultPairs
	}
	if o.Pairs < stats.MinPairs {
		return nil, exitcode.UsageErrorf("--pairs %d: at least %d are needed for any verdict", o.Pairs, stats.MinPairs)
	}
	if o.Budget <= 0 {
		return nil, exitcode.UsageErrorf("--budget must be positive")
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if (o.P99 > 0) != (o.Rate > 0) {
		return nil, exitcode.UsageErrorf("--p99 is judged open-loop at a rate: give --p99 and --rate together")
	}
	t := &tuner{o: o, start: time.Now(), arms: map[string]*arm{}, best: o.Base.Clone(), alpha: stats.DefaultAlpha,
		skip: map[string]string{}, screenedOut: map[string]map[string]bool{}}
	t.end = t.start.Add(o.Budget)
	t.res = &Result{Schema: Schema, App: o.AppName, Started: t.start.UTC(), BudgetS: o.Budget.Seconds(), Baseline: o.Base,
		Recommendation: o.Base, Environment: environment(o.Stack),
		Note: "These results are valid for this host, this PHP and this load; measure again before applying them elsewhere."}
	for _, u := range o.URLs {
		t.res.URLs = append(t.res.URLs, URL{Path: u.URI, Weight: u.Weight})
	}
	return t, nil
}

func (t *tuner) status(phase, detail string) {
	if t.o.Progress != nil {
		t.o.Progress(Status{Elapsed: time.Since(t.start), Budget: t.o.Budget, Phase: phase, Detail: detail, Best: t.best.String()})
	}
}

func (t *tuner) run(ctx context.Context) error {
	// The first arm doubles as the check that the app works at all: each URL answers and passes its check.
	t.status("start", "serving the app")
	first, err := t.arm(ctx, t.best)
	if err != nil {
		return err
	}
	t.facts.MaxResponse = first.maxResponse
	t.facts.THP, t.facts.HugePages = t.res.Environment.Host.THP, t.res.Environment.Host.NrHugepages
	t.facts.Concurrency = t.sweepPool()
	t.readOpcache(ctx, first)
	var screenWall time.Duration
	if t.o.Screen != nil {
		began := time.Now()
		if err := t.screen(ctx); err != nil {
			return err
		}
		screenWall = time.Since(began)
	}
	if err := t.planBudget(); err != nil {
		return err
	}
	t.plan.ScreenWallS = screenWall.Seconds()
	for _, sc := range t.res.Screens {
		if !sc.Survived {
			t.plan.ScreenedOut++
		}
	}
	t.res.Plan = t.plan
	if err := t.saturation(ctx); err != nil {
		return err
	}
	t.replan(t.plannedComps)
	t.coarseWarning()
	t.facts.Concurrency = t.conc
	if err := t.poolSize(ctx); err != nil {
		return err
	}
	for i, k := range t.o.Knobs {
		if _, pinned := t.o.Pins[k.Name]; pinned {
			t.res.Knobs = append(t.res.Knobs, KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base), Note: "pinned"})
			continue
		}
		why := t.skip[k.Name]
		if why == "" && k.Skip != nil {
			why = k.Skip(t.facts, t.best) // an earlier decision may have made it moot
		}
		if why != "" {
			t.res.Knobs = append(t.res.Knobs, KnobRow{Name: k.Name, Value: k.Get(t.best), From: k.Get(t.o.Base), Note: "not tried: " + why})
			continue
		}
		t.replan(t.remainingComparisons(i))
		if err := t.decide(ctx, k); err != nil {
			return err
		}
	}
	t.res.Recommendation = t.best
	if err := t.final(ctx); err != nil {
		return err
	}
	if t.o.P99 > 0 {
		if err := t.p99(ctx); err != nil {
			return err
		}
	}
	t.holm()
	return nil
}

// account records in the plan what the trials and starts took.
func (t *tuner) account() {
	t.res.Plan.TrialsRun, t.res.Plan.StartsRun = t.trials, t.starts
	if t.trials > 0 {
		t.res.Plan.TrialWallS = (t.trialWall / time.Duration(t.trials)).Seconds()
	}
	if t.starts > 0 {
		t.res.Plan.StartWallS = (t.startWall / time.Duration(t.starts)).Seconds()
		t.res.Plan.SettleWallS = (t.settleWall / time.Duration(t.starts)).Seconds()
	}
}

// candidates are the values of k that timed trials must decide: not the current one, nor those the screen
// found to change nothing.
func (t *tuner) candidates(k knob.Knob) []string {
	var out []string
	for _, v := range k.Values(t.facts, t.best) {
		if v != k.Get(t.best) && !t.screenedOut[k.Name][v] {
			out = append(out, v)
		}
	}
	return out
}

// Trial lengths below these make trials too grainy to decide anything.
const minWindow, minWarm = 300 * time.Millisecond, 150 * time.Millisecond

// perTrialOverhead is what each trial costs besides its load: status reads, sampling, connection set-up.
const perTrialOverhead = 100 * time.Millisecond

// planBudget fits the trials into the budget: the comparisons planned, each of Pairs pairs, the saturation
// sweep and the final three-way comparison. Knobs are in order of importance: when the budget cannot cover
// them all at the shortest useful trial, the last are left out, and the report says which budget would do.
func (t *tuner) planBudget() error {
	base := 2 // max_children's neighbours
	if _, pinned := t.o.Pins["max_children"]; pinned {
		base = 0
	}
	type kc struct {
		name  string
		comps int
	}
	var ks []kc
	// A knob skipped for the starting point may become worth a trial once an earlier knob changes (JIT once
	// opcache is on): it is planned for when any single earlier change would make it so.
	reach := []knob.Config{t.best}
	for _, k := range t.o.Knobs {
		if _, pinned := t.o.Pins[k.Name]; pinned {
			continue
		}
		before := reach
		for _, v := range k.Values(t.facts, t.best) {
			c := t.best.Clone()
			if k.Set(&c, v) == nil {
				reach = append(reach, c)
			}
		}
		if k.Skip != nil {
			why := k.Skip(t.facts, t.best)
			for _, c := range before[1:] {
				if why != "" && k.Skip(t.facts, c) == "" {
					why = ""
				}
			}
			if why != "" {
				t.skip[k.Name] = why
				continue
			}
		}
		if n := len(t.candidates(k)); n > 0 {
			ks = append(ks, kc{k.Name, n})
		}
	}
	const sweepPoints, sweepTrials = 8, 4
	shape := func(comps int) (trials int, overhead time.Duration) {
		trials = sweepPoints*sweepTrials + comps*2*t.o.Pairs + 3*t.o.Pairs
		// Stack starts and reads between trials cost about a second per comparison; settling a fresh dynamic
		// or ondemand pool (settle) takes 2 to 8 s, by the pool size, for each comparison's new arm and the
		// final's Debian arm; keep 10% for slack.
		overhead = time.Duration(comps+6)*time.Second + t.o.Budget/10 + t.settleTime(comps)
		if t.o.P99 > 0 {
			overhead += 4 * max(2*time.Second, 4*(t.o.Budget/200)) // up to three sizing checks and the final one
		}
		return trials, overhead + time.Duration(trials)*perTrialOverhead
	}
	perTrial := func(comps int) time.Duration {
		trials, overhead := shape(comps)
		return (t.end.Sub(time.Now()) - overhead) / time.Duration(trials)
	}
	total := base
	for _, k := range ks {
		total += k.comps
	}
	comps := total
	for len(ks) > 0 && perTrial(comps) < minWindow+minWarm {
		last := ks[len(ks)-1]
		ks = ks[:len(ks)-1]
		comps -= last.comps
		t.skip[last.name] = "the budget" // completed below, once the budget that would cover all is known
	}
	per := perTrial(comps)
	if per < minWindow+minWarm {
		trials, overhead := shape(comps)
		need := overhead + time.Duration(trials)*(minWindow+minWarm) + time.Since(t.start)
		return exitcode.UsageErrorf("%w: --budget %s cannot decide %d comparisons of %d pairs; give at least --budget %s (or fewer knobs)",
			ErrBudget, t.o.Budget, comps, t.o.Pairs, (need + 10*time.Second).Truncate(10*time.Second))
	}
	if comps < total {
		trials, overhead := shape(total)
		need := (overhead + time.Duration(trials)*(minWindow+minWarm) + time.Since(t.start) + time.Minute).Truncate(time.Minute)
		for name, why := range t.skip {
			if why == "the budget" {
				t.skip[name] = fmt.Sprintf("--budget %s leaves no time for it; --budget %s would cover every knob", t.o.Budget, need)
			}
		}
	}
	t.warm = max(minWarm, per/4)
	t.win = per - t.warm
	t.plannedPer = per
	t.nComparisons = comps + 2
	t.plannedComps = comps
	t.plan = Plan{Pairs: t.o.Pairs, WarmupS: t.warm.Seconds(), WindowS: t.win.Seconds(), Comparisons: t.nComparisons,
		Trials: sweepPoints*sweepTrials + comps*2*t.o.Pairs + 3*t.o.Pairs, SweepTrials: sweepTrials}
	t.res.Plan = t.plan
	return nil
}

// settleTime is what settling the fresh arms of comps comparisons and the final's Debian arm will take: 2 to 8
// s each for dynamic and ondemand pools, by the pool size, and a second for static ones.
func (t *tuner) settleTime(comps int) time.Duration {
	if t.best.PM == "static" {
		return time.Duration(comps+1) * time.Second
	}
	return time.Duration(comps+1) * maxSettle / 2
}

// minShorten is how far replan may shorten the planned trials: noisier trials, but every knob decided.
const minShorten = 0.7

// replan fits the comparisons still to run (remaining, each of Pairs pairs, and the final's) into the time left,
// going by what trials and stack starts have cost here: the saturation sweep may leave time over (its curve
// flattened early), and starts of large pools cost more than the plan's guess. Trials get longer when there is
// time, and shorter, down to minShorten of the plan and never below the shortest useful trial, when there is
// not; each comparison is paired within itself, so trial lengths may differ between comparisons.
func (t *tuner) replan(remaining int) {
	trials := remaining*2*t.o.Pairs + 3*t.o.Pairs
	starts := time.Duration(remaining+2) * max(time.Second, t.perStart())
	if t.settleWall == 0 {
		starts += t.settleTime(remaining) // the starts so far were not settled: settling is still to come
	}
	extra := perTrialOverhead
	if t.trials >= 4 {
		extra = max(extra, t.trialExtra/time.Duration(t.trials))
	}
	overhead := starts + 2*time.Second + min(t.o.Budget, t.left())/10 + time.Duration(trials)*extra
	if t.o.P99 > 0 {
		overhead += 4 * max(2*time.Second, 4*(t.o.Budget/200))
	}
	per := (t.left() - overhead) / time.Duration(trials)
	per = max(per, minWindow+minWarm, time.Duration(minShorten*float64(t.plannedPer)))
	if per == t.warm+t.win {
		return
	}
	t.warm = max(minWarm, per/4)
	t.win = per - t.warm
	t.plan.WarmupS, t.plan.WindowS = t.warm.Seconds(), t.win.Seconds()
	t.res.Plan = t.plan
}

// remainingComparisons counts the comparisons the knobs from index i on would run as things stand.
func (t *tuner) remainingComparisons(from int) int {
	n := 0
	for _, k := range t.o.Knobs[from:] {
		if _, pinned := t.o.Pins[k.Name]; pinned || t.skip[k.Name] != "" || (k.Skip != nil && k.Skip(t.facts, t.best) != "") {
			continue
		}
		n += len(t.candidates(k))
	}
	return n
}

// readOpcache reads opcache's state and the realpath cache's use from a worker of a, once every URL was served.
func (t *tuner) readOpcache(ctx context.Context, a *arm) {
	path, err := measure.WriteOpcacheScript(a.st.RunDir)
	if err != nil {
		return
	}
	rc, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	oc, err := measure.ReadOpcache(rc, a.pool.Network, a.pool.Address, path)
	if err != nil {
		t.res.Warnings = append(t.res.Warnings, "opcache's state could not be read: "+err.Error())
		return
	}
	t.facts.RealpathUsed, t.facts.RealpathLimit = oc.RealpathUsed, oc.RealpathLimit
	if oc.Enabled {
		t.facts.Opcache = &knob.OpcacheUse{MemoryUsed: oc.MemoryUsed, MemoryFree: oc.MemoryFree, MemoryWasted: oc.MemoryWasted,
			InternedUsed: oc.InternedUsed, InternedFree: oc.InternedFree, Keys: oc.CachedKeys, MaxKeys: oc.MaxCachedKeys,
			CacheFull: oc.CacheFull, HitRate: oc.HitRate}
	}
}

// screen counts the work per request of each CPU-only knob's candidates against the starting point; a
// candidate that changes neither instructions nor syscalls by half the minimum effect has nothing to give,
// and gets no timed trials. The counts are repeatable, so this is a measurement, not a gamble.
func (t *tuner) screen(ctx context.Context) error {
	var base *Work
	tol := max(t.o.MinEffect/2, 0.005)
	// Counting is cheap next to timed trials, not free: it gets at most a sixth of the budget, the knobs
	// screened in order; candidates past that go to timed trials unscreened.
	limit := time.Now().Add(t.o.Budget / 6)
	for _, k := range t.o.Knobs {
		if _, pinned := t.o.Pins[k.Name]; pinned || !k.CPUOnly {
			continue
		}
		if k.Skip != nil && k.Skip(t.facts, t.best) != "" {
			continue
		}
		for _, v := range k.Values(t.facts, t.best) {
			if v == k.Get(t.best) {
				continue
			}
			if time.Now().After(limit) {
				return nil
			}
			if base == nil {
				t.status("screen", "counting the work of a request")
				n, err := t.o.Screen.Instructions(ctx, t.best)
				if err != nil {
					return fmt.Errorf("screen %s: %w", t.best, err)
				}
				base = &Work{InstructionsPerReq: n, Method: t.o.Screen.Method}
			}
			cand := t.best.Clone()
			if err := k.Set(&cand, v); err != nil {
				return exitcode.UsageErrorf("knob %s=%s: %v", k.Name, v, err)
			}
			t.status("screen", fmt.Sprintf("%s=%s", k.Name, orUnset(v)))
			w, err := t.screenCount(ctx, cand, base, tol)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				// A candidate the screen cannot run is left to the timed trials, which report its failure.
				t.res.Screens = append(t.res.Screens, Screen{Knob: k.Name, Value: v, From: k.Get(t.best), Base: *base,
					Survived: true, Note: "not screened: " + err.Error()})
				continue
			}
			sc := Screen{Knob: k.Name, Value: v, From: k.Get(t.best), Base: *base, Cand: *w}
			di := relDiff(w.InstructionsPerReq, base.InstructionsPerReq)
			if !w.SyscallsCounted {
				sc.Survived = true
				sc.Note = fmt.Sprintf("%s=%s: instructions/request %+.1f%% (system calls not counted: the instructions decide)",
					k.Name, orUnset(v), 100*di)
			} else {
				ds := relDiff(w.SyscallsPerReq, base.SyscallsPerReq)
				sc.Survived = math.Abs(di) >= tol || (math.Abs(ds) >= tol && math.Abs(w.SyscallsPerReq-base.SyscallsPerReq) >= 0.5)
				sc.Note = fmt.Sprintf("%s=%s: instructions/request %+.1f%%, syscalls/request %.1f -> %.1f", k.Name, orUnset(v),
					100*di, base.SyscallsPerReq, w.SyscallsPerReq)
			}
			if !sc.Survived {
				sc.Note = "screened out (" + sc.Note + "): no timed trial"
				if t.screenedOut[k.Name] == nil {
					t.screenedOut[k.Name] = map[string]bool{}
				}
				t.screenedOut[k.Name][v] = true
			}
			t.res.Screens = append(t.res.Screens, sc)
		}
	}
	return nil
}

// screenCount counts cand's instructions and, only when they are within tol of base's, its system calls (and
// base's, once): a candidate whose instructions differ goes to timed trials whatever its system calls, and
// counting them takes a php-fpm stack under strace, about as long as the instructions.
func (t *tuner) screenCount(ctx context.Context, cand knob.Config, base *Work, tol float64) (*Work, error) {
	n, err := t.o.Screen.Instructions(ctx, cand)
	if err != nil {
		return nil, err
	}
	w := &Work{InstructionsPerReq: n, Method: t.o.Screen.Method}
	if math.Abs(relDiff(n, base.InstructionsPerReq)) >= tol {
		return w, nil
	}
	if !base.SyscallsCounted {
		b, err := t.o.Screen.Syscalls(ctx, t.best)
		if err != nil {
			return nil, fmt.Errorf("count system calls of %s: %w", t.best, err)
		}
		base.SyscallsPerReq, base.SyscallsCounted = b, true
	}
	if w.SyscallsPerReq, err = t.o.Screen.Syscalls(ctx, cand); err != nil {
		return nil, err
	}
	w.SyscallsCounted = true
	return w, nil
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

// left is the time before the budget ends.
func (t *tuner) left() time.Duration { return time.Until(t.end) }

// ---- arms: one warm stack per configuration ----

type arm struct {
	cfg         knob.Config
	st          *stack.Stack
	pool        stack.Endpoint
	maxResponse int64 // the largest response of the check, headers included
}

func (t *tuner) arm(ctx context.Context, cfg knob.Config) (*arm, error) {
	key := cfg.String()
	if a, ok := t.arms[key]; ok {
		return a, nil
	}
	sc := t.o.Stack
	cfg.Apply(&sc, "tune")
	began := time.Now()
	st, err := stack.Start(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", key, err)
	}
	a := &arm{cfg: cfg, st: st, pool: st.Pools[0]}
	t.arms[key] = a
	if err := t.check(ctx, a); err != nil {
		t.drop(a)
		return nil, err
	}
	settled := time.Now()
	if err := t.settle(ctx, a, t.conc); err != nil {
		t.drop(a)
		return nil, err
	}
	t.settleWall += time.Since(settled)
	t.starts++
	t.startWall += time.Since(began)
	return a, nil
}

// maxSettle bounds settle: php-fpm doubles a dynamic pool's spawn rate each second up to 32 a second, so a
// pool of up to 64 workers reaches its size in about 6 s of steady load.
const maxSettle = 8 * time.Second

// settle brings a fresh pool to its steady state under the comparison load before it is measured. A
// pm=dynamic or ondemand pool starts with a few workers and php-fpm adds them at most once a second; the short
// warm-up of each trial does not cover that, so a fresh arm lost against one that had served for a while (on
// the demo, preload came out worse in every run for this reason alone). A static pool has its workers, but its
// opcache and JIT buffer start empty: it gets one step of load too (two demo runs disagreed on pm static vs
// dynamic, -5.4% and +5.1%, when static arms went in cold).
func (t *tuner) settle(ctx context.Context, a *arm, conc int) error {
	if conc <= 0 {
		return nil
	}
	if err := Settle(ctx, a.pool, t.loadOptions(a, conc), a.cfg.MaxChildren); err != nil {
		return fmt.Errorf("settle %s: %w", a.cfg, err)
	}
	return nil
}

// Settle runs o's load in unmeasured 1 s steps until the pool behind it stops growing or reaches maxChildren,
// for at most maxSettle: at least one step, which also fills opcache and the JIT buffer.
func Settle(ctx context.Context, pool stack.Endpoint, o load.Options, maxChildren int) error {
	o.Duration, o.Warmup = time.Second, 0
	prev := -1
	for end := time.Now().Add(maxSettle); time.Now().Before(end); {
		r, err := load.NewRunner(o)
		if err != nil {
			return err
		}
		if _, err := r.Trial(ctx, 0, 0); err != nil && !errors.Is(err, load.ErrNoRequests) {
			return err
		}
		sc, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := measure.ReadFPMStatus(sc, pool.Network, pool.Address, pool.StatusPath)
		cancel()
		if err != nil || st.TotalProcesses >= maxChildren || st.TotalProcesses <= prev {
			return ctx.Err()
		}
		prev = st.TotalProcesses
	}
	return ctx.Err()
}

func (t *tuner) drop(a *arm) {
	began := time.Now()
	a.st.Stop(context.Background())
	t.startWall += time.Since(began) // a start's cost includes its stop: a pool of 100+ workers takes a while
	delete(t.arms, a.cfg.String())
}

// keepOnly stops the arms not in keep, so idle stacks do not pile up.
func (t *tuner) keepOnly(keep ...*arm) {
	for _, a := range t.arms {
		found := false
		for _, k := range keep {
			found = found || k == a
		}
		if !found {
			t.drop(a)
		}
	}
}

func (t *tuner) stopAll() {
	for _, a := range t.arms {
		t.drop(a)
	}
}

// check sends each URL once and turns what makes tuning pointless into a clear error, with PHP's own message.
func (t *tuner) check(ctx context.Context, a *arm) error {
	o := t.loadOptions(a, 1)
	o.Requests, o.Duration, o.Warmup = int64(len(t.o.URLs)), 0, 0
	r, err := load.NewRunner(o)
	if err != nil {
		return err
	}
	if err := r.Preflight(ctx); err != nil {
		return err
	}
	res, err := r.Trial(ctx, 0, 0)
	if err != nil {
		return err
	}
	a.maxResponse = res.MaxBytes
	if res.Errors == 0 {
		return nil
	}
	why := ""
	for c, s := range res.ErrorSamples {
		why = c + ": " + s
	}
	if msg := phpMessage(a.st); msg != "" {
		why += "; PHP says: " + msg
	}
	return exitcode.UsageErrorf("the app fails under %s (%s): fix the app or the --url list before tuning", a.cfg, why)
}

// phpMessage is the last PHP message nginx logged from FastCGI stderr (a fatal error, a warning).
func phpMessage(st *stack.Stack) string {
	line := st.LogTail("nginx-error.log", 20)
	for _, l := range strings.Split(line, "\n") {
		if i := strings.Index(l, "PHP message: "); i >= 0 {
			msg := l[i+len("PHP message: "):]
			if j := strings.Index(msg, "\" while reading"); j >= 0 {
				msg = msg[:j]
			}
			line = msg
		}
	}
	if !strings.Contains(line, "PHP") {
		return ""
	}
	return strings.TrimSpace(line)
}

func (t *tuner) loadOptions(a *arm, conc int) load.Options {
	tg, _ := load.ParseTarget(a.st.HTTPURL)
	// Only 2xx counts: a redirect is an error here, since tuning the redirect is not tuning the page.
	return load.Options{Target: tg, Request: t.o.Request, Connections: conc, Duration: t.win, Warmup: t.warm,
		Timeout: t.o.Timeout, Mix: t.o.URLs, SkipPreflight: true, ExpectStatus: ok2xx}
}

var ok2xx = func() []int {
	var s []int
	for c := 200; c < 300; c++ {
		s = append(s, c)
	}
	return s
}()

// trial runs one measured trial on an arm and records it.
func (t *tuner) trial(ctx context.Context, phase string, a *arm, conc int) (*load.Result, error) {
	r, err := load.NewRunner(t.loadOptions(a, conc))
	if err != nil {
		return nil, err
	}
	began := time.Now()
	length := t.warm + t.win
	defer func() {
		t.trials++
		took := time.Since(began)
		t.trialWall += took
		t.trialExtra += max(0, took-length)
	}()
	var before *measure.FPMStatus
	sc, cancel := context.WithTimeout(ctx, 5*time.Second)
	before, _ = measure.ReadFPMStatus(sc, a.pool.Network, a.pool.Address, a.pool.StatusPath)
	cancel()
	sampler := measure.NewSampler(map[string]int{"php-fpm": a.st.PID("php-fpm"), "nginx": a.st.PID("nginx")}, 200*time.Millisecond)
	_ = sampler.Start(ctx)
	// Busy workers, counted from the status page's process list in the middle of the window. The read waits
	// for a free worker like any request: when none frees up soon, every worker was busy.
	busy := make(chan int, 1)
	go func() {
		select {
		case <-time.After(t.warm + t.win/2):
		case <-ctx.Done():
			busy <- -1
			return
		}
		rc, cancel := context.WithTimeout(ctx, min(t.win/4, 200*time.Millisecond))
		defer cancel()
		st, err := measure.ReadFPMStatus(rc, a.pool.Network, a.pool.Address, a.pool.StatusPath)
		if err != nil {
			busy <- a.cfg.MaxChildren
			return
		}
		busy <- max(st.States()["Running"]-1, 0) // the status request runs in a worker too
	}()
	res, err := r.Trial(ctx, 0, 0)
	sample, _ := sampler.Stop()
	busyWorkers := <-busy
	if res == nil {
		return nil, err
	}
	if errors.Is(err, load.ErrNoRequests) {
		// A stall is an observation, not a failure of the run; the comparison floors it at one request.
		err = nil
		t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("a %s trial of %s completed no request in %s", phase, a.cfg, t.win.Round(time.Millisecond)))
	}
	rec := TrialRecord{Phase: phase, Config: a.cfg.String(), Concurrency: conc, RPS: res.RPS, Requests: res.Requests,
		Errors: res.Errors, Latency: res.Latency, ClientCPUUs: res.ClientCPUUsPerReq, BusyWorkers: busyWorkers}
	if sample != nil && res.Requests > 0 {
		rec.ServerCPU = map[string]float64{}
		// The sampler's window includes the warm-up: scale by the requests of both phases' share of time.
		share := t.win.Seconds() / (t.win + t.warm).Seconds()
		for g, d := range sample.CPU {
			rec.ServerCPU[g] = d.Seconds() * share * 1e6 / float64(res.Requests)
		}
		if wm, ok := sample.Workers["php-fpm"]; ok {
			rec.WorkerPSS, rec.WorkerUSS, rec.WorkerShared, rec.Workers = wm.MeanPSS, wm.PeakUSS, wm.Shared, wm.Count
		}
	}
	if before != nil && ctx.Err() == nil {
		sc, cancel := context.WithTimeout(ctx, 5*time.Second)
		if after, err := measure.ReadFPMStatus(sc, a.pool.Network, a.pool.Address, a.pool.StatusPath); err == nil {
			d := measure.Delta(before, after)
			rec.FPM = &d
		}
		cancel()
	}
	t.res.Trials = append(t.res.Trials, rec)
	return res, err
}

// ---- saturation ----

// Saturation is the throughput-against-concurrency curve on a pool large enough not to cap it.
type Saturation struct {
	Pool   int     `json:"pool"` // static pool size used
	Points []Point `json:"points"`
	Knee   int     `json:"knee"` // smallest concurrency whose CI overlaps the peak's
	Peak   int     `json:"peak"`
}

// Point is one concurrency of the sweep.
type Point struct {
	Concurrency int     `json:"concurrency"`
	RPS         float64 `json:"rps"` // mean of the trials
	Lo          float64 `json:"lo"`  // 95% CI of the mean (t distribution)
	Hi          float64 `json:"hi"`
	P99Us       float64 `json:"p99_us"`
	Errors      int64   `json:"errors"`
}

func (t *tuner) sweepPool() int {
	n := 128
	if t.o.Memory > 0 {
		// Before anything is measured, assume a generous 64 MiB per worker plus 256 MiB shared.
		n = min(n, max(4, int((t.o.Memory-256<<20)/(64<<20))))
	}
	return n
}

func (t *tuner) saturation(ctx context.Context) error {
	cfg := t.best.Clone()
	cfg.PM, cfg.MaxChildren = "static", t.sweepPool()
	a, err := t.arm(ctx, cfg)
	if err != nil {
		return err
	}
	defer t.drop(a)
	sat := &Saturation{Pool: cfg.MaxChildren}
	t.res.Saturation = sat
	var peak *Point
	flat := 0
	// Concurrency never above the pool: the pool must not cap the curve.
	for c := 1; c <= cfg.MaxChildren; c *= 2 {
		t.status("saturation", fmt.Sprintf("%d connections", c))
		var rps []float64
		var p99 []float64
		var errs int64
		for i := 0; i < t.plan.SweepTrials; i++ {
			res, err := t.trial(ctx, "saturation", a, c)
			if err != nil {
				return err
			}
			rps = append(rps, res.RPS)
			p99 = append(p99, res.Latency.P99)
			errs += res.Errors
		}
		m, lo, hi := meanCI(rps)
		sort.Float64s(p99)
		p := Point{Concurrency: c, RPS: m, Lo: lo, Hi: hi, P99Us: p99[len(p99)/2], Errors: errs}
		sat.Points = append(sat.Points, p)
		// Rising means a clear gain (5% or more) over the best so far; two points in a row without one: flat.
		if peak == nil || p.RPS >= 1.05*peak.RPS {
			flat = 0
		} else {
			flat++
		}
		if peak == nil || p.RPS > peak.RPS {
			pp := p
			peak = &pp
		}
		if flat >= 2 {
			break
		}
	}
	sat.Peak = peak.Concurrency
	// The knee: the smallest concurrency whose CI overlaps the peak's (and, since a few short trials give wide
	// intervals, whose mean is within 10% of the peak's).
	for _, p := range sat.Points {
		if p.Hi >= peak.Lo && p.RPS >= 0.9*peak.RPS {
			sat.Knee = p.Concurrency
			break
		}
	}
	t.conc = max(sat.Peak, 2)
	t.plan.Concurrency = t.conc
	t.res.Plan = t.plan
	t.peakRPS = peak.RPS
	return nil
}

// coarseWarning says when trials hold few requests, and what budget would give about a hundred.
func (t *tuner) coarseWarning() {
	if perTrial := t.peakRPS * t.win.Seconds(); perTrial < 50 && t.peakRPS > 0 {
		need := time.Duration(float64(t.o.Budget) * 100 / math.Max(perTrial, 1))
		t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("at %.0f req/s a %s trial holds only %.0f requests: the comparisons will be coarse; --budget %s would give about 100 a trial",
			t.peakRPS, t.win.Round(10*time.Millisecond), perTrial, need.Round(time.Minute)))
	}
}

// meanCI is the mean and its 95% confidence interval from the t distribution.
func meanCI(x []float64) (mean, lo, hi float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	if len(x) < 2 {
		return mean, mean, mean
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	tq := tQuantile975(len(x) - 1)
	return mean, mean - tq*sd/math.Sqrt(n), mean + tq*sd/math.Sqrt(n)
}

// tQuantile975 is Student's t 0.975 quantile for small degrees of freedom.
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228}
	if df < len(table) {
		return table[df]
	}
	return 1.96 + 2.4/float64(df)
}

// ---- pool size ----

// PoolSize records the three limits on pm.max_children and the choice.
type PoolSize struct {
	Knee         int   `json:"cpu_knee"`
	MemoryLimit  int   `json:"memory_limit"` // children that fit in --memory; 0 = not limiting
	Memory       int64 `json:"memory_bytes"`
	SharedBytes  int64 `json:"shared_bytes"`
	PeakUSSBytes int64 `json:"peak_uss_bytes"`
	// PeakRequestBytes is php-fpm's own figure: the largest peak memory of a request seen.
	PeakRequestBytes int64 `json:"peak_request_bytes"`
	// PerWorkerBytes is what each child is counted at: the larger of the two.
	PerWorkerBytes int64  `json:"per_worker_bytes"`
	Initial        int    `json:"initial"`
	Chosen         int    `json:"chosen"`
	Note           string `json:"note,omitempty"`
	// P99Checks are the open-loop checks of the latency goal that sized the pool, when there is a goal.
	P99Checks []P99Check `json:"p99_checks,omitempty"`
}

func (t *tuner) poolSize(ctx context.Context) error {
	ps := &PoolSize{Knee: t.res.Saturation.Knee, Memory: t.o.Memory}
	t.res.PoolSize = ps
	// Memory per worker from the sweep's largest load: private memory high-water, and the shared part once.
	for _, tr := range t.res.Trials {
		if tr.Phase == "saturation" {
			ps.PeakUSSBytes = max(ps.PeakUSSBytes, tr.WorkerUSS)
			ps.SharedBytes = max(ps.SharedBytes, tr.WorkerShared)
			if tr.FPM != nil {
				ps.PeakRequestBytes = max(ps.PeakRequestBytes, tr.FPM.PeakRequestMemory)
			}
		}
	}
	n := max(ps.Knee, 1)
	// A worker counts at the larger of its private memory's high-water and PHP's own peak for a request.
	ps.PerWorkerBytes = max(ps.PeakUSSBytes, ps.PeakRequestBytes)
	if t.o.Memory > 0 && ps.PerWorkerBytes > 0 {
		ps.MemoryLimit = int((t.o.Memory - ps.SharedBytes) / ps.PerWorkerBytes)
		if ps.MemoryLimit < 1 {
			return exitcode.UsageErrorf("--memory %d MiB does not hold one worker (%d MiB private at peak, %d MiB shared)",
				t.o.Memory>>20, ps.PerWorkerBytes>>20, ps.SharedBytes>>20)
		}
		if n > ps.MemoryLimit {
			n = ps.MemoryLimit
			ps.Note = "memory limits the pool below the CPU knee"
		}
	}
	ps.Initial = n
	t.best.MaxChildren = n
	if t.o.P99 > 0 {
		if err := t.p99Limit(ctx, ps); err != nil {
			return err
		}
		ps.Initial = t.best.MaxChildren
	}
	if _, pinned := t.o.Pins["max_children"]; pinned {
		t.best.MaxChildren = t.o.Base.MaxChildren
		ps.Chosen = t.best.MaxChildren
		ps.Note = "pinned"
		return nil
	}
	// The knee is a noisy pick: re-measure it against its neighbours in fresh interleaved runs.
	// Neighbours within memory, and with a latency goal none below the size that met it.
	k := knob.MaxChildren()
	inner := k.Candidates
	floor := 0
	if t.o.P99 > 0 {
		floor = ps.Initial
	}
	k.Candidates = func(c knob.Config) []string {
		var out []string
		for _, v := range inner(c) {
			var cc knob.Config
			if k.Set(&cc, v) == nil && (ps.MemoryLimit == 0 || cc.MaxChildren <= ps.MemoryLimit) && cc.MaxChildren >= floor {
				out = append(out, v)
			}
		}
		return out
	}
	if err := t.decide(ctx, k); err != nil {
		return err
	}
	ps.Chosen = t.best.MaxChildren
	return nil
}

// ---- deciding a knob ----

// decide compares each candidate value of k against the best so far; a candidate replaces it only when better.
func (t *tuner) decide(ctx context.Context, k knob.Knob) error {
	from := k.Get(t.best)
	row := KnobRow{Name: k.Name, Value: from, From: from, Metric: "rps", Verdict: stats.NoDifference}
	var decisive *Comparison
	for _, sc := range t.res.Screens {
		if sc.Knob == k.Name && !sc.Survived {
			row.Note = strings.TrimSpace(row.Note + " " + sc.Note)
		}
	}
	for _, v := range t.candidates(k) {
		if t.left()-t.finalReserve() < t.comparisonTime() {
			row.Note = "not decided: the budget ran out"
			t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("%s=%s was not tried: the budget ran out", k.Name, v))
			continue
		}
		cand := t.best.Clone()
		if err := k.Set(&cand, v); err != nil {
			return exitcode.UsageErrorf("knob %s=%s: %v", k.Name, v, err)
		}
		cmp, err := t.compare(ctx, k.Name, k.Get(t.best), v, t.best, cand)
		if err != nil {
			return err
		}
		t.res.Comparisons = append(t.res.Comparisons, *cmp)
		c := &t.res.Comparisons[len(t.res.Comparisons)-1]
		if c.Accepted {
			t.best = cand
			decisive = c
		} else if decisive == nil || (!decisive.Accepted && math.Abs(c.Stats.Estimate) > math.Abs(decisive.Stats.Estimate)) {
			decisive = c
		}
	}
	row.Value = k.Get(t.best)
	screened := false
	for _, sc := range t.res.Screens {
		screened = screened || (sc.Knob == k.Name && !sc.Survived)
	}
	switch {
	case decisive == nil && screened:
		// Every candidate was screened out: the counts say there is nothing to gain.
		row.Metric = "work"
	case decisive == nil:
		row.Verdict = "" // nothing was compared: no verdict
	}
	if decisive != nil {
		row.EffectPct, row.CILowPct, row.CIHighPct = 100*decisive.Stats.Estimate, 100*decisive.Stats.Lo, 100*decisive.Stats.Hi
		row.Verdict = decisive.Stats.Verdict
		row.Compared = fmt.Sprintf("%s=%s vs %s", k.Name, orUnset(decisive.B), orUnset(decisive.A))
		row.Note = strings.TrimSpace(row.Note + " " + decisive.Note)
	} else if row.Note == "" {
		row.Note = "no alternative to try"
	}
	t.res.Knobs = append(t.res.Knobs, row)
	return nil
}

func orUnset(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// finalReserve is the least the final comparison takes: the two arms it may have to start (Debian's and the
// rule of thumb's, settling included) and its minimum rounds of three trials. A comparison that would eat into
// it is not started, so the run ends near its budget rather than overrunning it by the final's minimum.
func (t *tuner) finalReserve() time.Duration {
	r := 2*t.perStart() + time.Duration(3*stats.MinPairs)*t.perTrial()
	if t.o.P99 > 0 {
		r += max(2*time.Second, 4*(t.o.Budget/200))
	}
	return r
}

func (t *tuner) comparisonTime() time.Duration {
	return time.Duration(2*t.o.Pairs)*t.perTrial() + t.perStart() + time.Second
}

// perTrial is what a trial costs: its load plus the overhead trials had here beyond their load (status reads,
// sampling), at least the planned perTrialOverhead.
func (t *tuner) perTrial() time.Duration {
	if t.trials < 4 {
		return t.warm + t.win + perTrialOverhead
	}
	return t.warm + t.win + max(perTrialOverhead, t.trialExtra/time.Duration(t.trials))
}

// perStart is what starting and checking a stack took here on average (a second until measured).
func (t *tuner) perStart() time.Duration {
	if t.starts == 0 {
		return time.Second
	}
	return t.startWall / time.Duration(t.starts)
}

// compare runs Pairs interleaved pairs of trials (A B, B A, ...) on two warm stacks and decides with the
// signed-rank test; online, a verdict needs p below alpha over the planned number of comparisons (Bonferroni),
// which Holm at the end can only confirm.
func (t *tuner) compare(ctx context.Context, name, va, vb string, ca, cb knob.Config) (*Comparison, error) {
	a, err := t.arm(ctx, ca)
	if err != nil {
		return nil, err
	}
	b, err := t.arm(ctx, cb)
	if err != nil {
		// A candidate that breaks the app loses, with the reason.
		return &Comparison{Knob: name, A: va, B: vb, Config: cb.String(), Note: "fails: " + err.Error(),
			Stats: stats.Comparison{Verdict: stats.Worse}}, nil
	}
	t.keepOnly(a, b)
	hugeNote := ""
	if cb.Defines["opcache.huge_code_pages"] == "1" && ca.Defines["opcache.huge_code_pages"] != "1" {
		// Credited only when opcache really moved PHP's text to huge pages (DESIGN 4): otherwise the arms are
		// the same program and trials would only measure noise.
		// opcache moves only the 2 MiB-aligned pages inside the text, and where the loader puts the binary
		// (ASLR) decides whether a 3 MiB text holds one: a start that got none is tried again.
		var hp *measure.HugePages
		var err error
		starts := 1
		for ; ; starts++ {
			hp, err = measure.ReadHugePages(b.st.PID("php-fpm"), "1")
			if err != nil || (hp.TextRemapped && hp.TextHugeBytes > 0) || starts == 6 {
				break
			}
			t.drop(b)
			if b, err = t.arm(ctx, cb); err != nil {
				return nil, err
			}
			t.keepOnly(a, b)
		}
		if err != nil || !hp.TextRemapped || hp.TextHugeBytes == 0 {
			why := fmt.Sprintf("smaps shows PHP's text still on 4 KiB pages in %d starts of php-fpm", starts)
			if err != nil {
				why = err.Error()
			}
			return &Comparison{Knob: name, A: va, B: vb, Config: cb.String(), Note: "not credited: " + why,
				Stats: stats.Comparison{Verdict: stats.NoDifference}}, nil
		}
		how := "transparent huge pages"
		if hp.HugePagesTotal > 0 {
			how = "huge pages"
		}
		hugeNote = fmt.Sprintf("PHP's text on %s (%d of %d MiB; php-fpm start %d)", how, hp.TextHugeBytes>>20, hp.TextBytes>>20, starts)
	}
	conc := t.conc
	if name == "max_children" {
		conc = max(conc, ca.MaxChildren, cb.MaxChildren)
	}
	var ra, rb, pa, pb []float64
	var ea, eb int64
	for i := 0; i < t.o.Pairs; i++ {
		t.status("knob "+name, fmt.Sprintf("%s vs %s, pair %d/%d", vb, va, i+1, t.o.Pairs))
		order := []*arm{a, b}
		if i%2 == 1 {
			order = []*arm{b, a}
		}
		for _, x := range order {
			res, err := t.trial(ctx, "knob "+name, x, conc)
			if err != nil {
				return nil, err
			}
			rps, p99 := t.floor(res)
			if x == a {
				ra, pa, ea = append(ra, rps), append(pa, p99), ea+res.Errors
			} else {
				rb, pb, eb = append(rb, rps), append(pb, p99), eb+res.Errors
			}
		}
	}
	c := &Comparison{Knob: name, A: va, B: vb, Config: cb.String(), RPSA: stats.Median(ra), RPSB: stats.Median(rb), ErrorsA: ea, ErrorsB: eb}
	s, err := stats.Paired(ra, rb, stats.DefaultConf)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", name, err)
	}
	if p99, err := stats.Paired(pa, pb, stats.DefaultConf); err == nil {
		c.P99 = &p99
	}
	s.PAdjusted = math.Min(1, s.P*float64(t.nComparisons))
	s.Verdict = stats.Rule{MinEffect: t.o.MinEffect, Alpha: t.alpha, HigherIsBetter: true}.Decide(s)
	c.Stats = s
	c.Note = hugeNote
	c.Accepted = s.Verdict == stats.Better
	if eb > 0 && ea == 0 {
		c.Accepted = false
		c.Note = strings.TrimSpace(fmt.Sprintf("%d errors with %s=%s. %s", eb, name, vb, c.Note))
		if s.Verdict != stats.Worse {
			c.Stats.Verdict = stats.Worse
		}
	}
	return c, nil
}

// floor makes a trial usable for log ratios: one that completed no request counts as one request in its
// window, with its latency at the window (a conservative stand-in, and rare: the run warns about it).
func (t *tuner) floor(res *load.Result) (rps, p99 float64) {
	rps, p99 = res.RPS, res.Latency.P99
	if rps <= 0 {
		rps = 1 / t.win.Seconds()
	}
	if p99 <= 0 {
		p99 = float64(t.win / time.Microsecond)
	}
	return rps, p99
}

// ---- final comparison ----

func (t *tuner) final(ctx context.Context) error {
	rule := knob.RuleOfThumb()
	rule.INI, rule.Defines = t.o.Base.INI, t.o.Base.Defines
	h := &Headline{RuleOfThumb: rule.String(), Baseline: t.o.BaseName}
	if h.Baseline == "" {
		h.Baseline = "Debian's defaults"
	}
	t.res.Headline = h
	if t.left() < time.Duration(3*t.o.Pairs)*t.perTrial() {
		t.res.Warnings = append(t.res.Warnings, "the final comparison with Debian's defaults and the rule of thumb was cut short by the budget")
	}
	arms := []knob.Config{t.best, t.o.Base, rule}
	var running []*arm
	for _, c := range arms {
		a, err := t.arm(ctx, c)
		if err != nil {
			return err
		}
		running = append(running, a)
	}
	t.keepOnly(running...)
	rps := make([][]float64, len(arms))
	for i := 0; i < t.o.Pairs; i++ {
		if t.left() < time.Duration(len(arms))*t.perTrial() && i >= stats.MinPairs {
			break
		}
		t.status("final", fmt.Sprintf("recommendation vs Debian vs rule of thumb, round %d/%d", i+1, t.o.Pairs))
		order := []int{0, 1, 2}
		if i%2 == 1 {
			order = []int{2, 1, 0}
		}
		for _, j := range order {
			res, err := t.trial(ctx, "final", running[j], t.conc)
			if err != nil {
				return err
			}
			r, _ := t.floor(res)
			rps[j] = append(rps[j], r)
		}
	}
	h.RecommendationRPS, h.DebianRPS, h.RuleOfThumbRPS = stats.Median(rps[0]), stats.Median(rps[1]), stats.Median(rps[2])
	// Same configuration (the recommendation is Debian's, say): the comparison is of an arm with itself.
	if s, err := stats.Paired(rps[1], rps[0], stats.DefaultConf); err == nil {
		h.VsDebian = &s
	}
	if s, err := stats.Paired(rps[2], rps[0], stats.DefaultConf); err == nil {
		h.VsRuleOfThumb = &s
	}
	// Verdicts of the recommendation against each, Holm across the two.
	var fam []*stats.Comparison
	for _, c := range []*stats.Comparison{h.VsDebian, h.VsRuleOfThumb} {
		if c != nil {
			fam = append(fam, c)
		}
	}
	if len(fam) > 0 {
		stats.DecideAll(fam, []stats.Rule{{MinEffect: t.o.MinEffect, Alpha: t.alpha, HigherIsBetter: true}})
	}
	return nil
}

// p99 judges the latency goal open-loop at the user's rate on the recommendation.
func (t *tuner) p99(ctx context.Context) error {
	c, err := t.p99Check(ctx, t.best)
	if err != nil {
		return err
	}
	t.res.P99Check = c
	return nil
}

// p99Check runs the open model at the user's rate, through a bounded pool of connections large enough that the
// generator is never what queues, and compares the corrected p99 with the goal.
func (t *tuner) p99Check(ctx context.Context, cfg knob.Config) (*P99Check, error) {
	a, err := t.arm(ctx, cfg)
	if err != nil {
		return nil, err
	}
	t.status("p99", fmt.Sprintf("max_children %d, open loop at %.0f req/s", cfg.MaxChildren, t.o.Rate))
	inflight := max(4*cfg.MaxChildren, 64)
	o := t.loadOptions(a, inflight)
	o.Rate, o.MaxInflight = t.o.Rate, inflight
	o.Duration = max(t.win*4, 2*time.Second)
	res, err := load.Run(ctx, o)
	if res == nil {
		return nil, err
	}
	if err != nil && !errors.Is(err, load.ErrNoRequests) {
		return nil, err
	}
	goal := float64(t.o.P99 / time.Microsecond)
	return &P99Check{Rate: t.o.Rate, GoalUs: goal, P99Us: res.Latency.P99, MaxChildren: cfg.MaxChildren,
		Met: res.Requests > 0 && res.Latency.P99 <= goal && res.Errors == 0 && res.Unsent == 0, Errors: res.Errors, Unsent: res.Unsent}, nil
}

// p99Limit is the pool size's third limit: when the size from the knee misses the latency goal at the user's
// rate, the next larger sizes (within memory) are tried, and the smallest that meets it is taken.
func (t *tuner) p99Limit(ctx context.Context, ps *PoolSize) error {
	cfg := t.best.Clone()
	for step := 0; step < 3; step++ {
		c, err := t.p99Check(ctx, cfg)
		if err != nil {
			return err
		}
		ps.P99Checks = append(ps.P99Checks, *c)
		if c.Met {
			t.best.MaxChildren = cfg.MaxChildren
			return nil
		}
		nb := knob.Neighbours(cfg.MaxChildren)
		next := nb[len(nb)-1]
		if ps.MemoryLimit > 0 && next > ps.MemoryLimit {
			break
		}
		cfg.MaxChildren = next
	}
	ps.Note = strings.TrimSpace(ps.Note + " no pool size tried meets the p99 goal at this rate")
	return nil
}

// holm recomputes the knob comparisons' p-values with Holm's correction across the run, for the report; an
// online Bonferroni verdict stays a verdict under Holm.
func (t *tuner) holm() {
	var ps []float64
	for _, c := range t.res.Comparisons {
		ps = append(ps, c.Stats.P)
	}
	adj := stats.Holm(ps)
	for i := range t.res.Comparisons {
		t.res.Comparisons[i].Stats.PAdjusted = adj[i]
	}
}
