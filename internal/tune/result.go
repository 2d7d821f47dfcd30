package tune

import (
	"os/exec"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/profile"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/stats"
	"github.com/phptune/phptune/internal/textline"
)

// Schema names the JSON form of a Result.
const Schema = "phptune/tune/v1"

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

	Baseline       knob.Config `json:"baseline"`
	Recommendation knob.Config `json:"recommendation"`
	Saturation     *Saturation `json:"saturation,omitempty"`
	PoolSize       *PoolSize   `json:"pool_size,omitempty"`
	Soak           *Soak       `json:"soak,omitempty"`
	Knobs          []KnobRow   `json:"knobs"`
	// Turns say what each race was given at its turn and what the final's claim left: why time went where.
	Turns       []Turn       `json:"turns,omitempty"`
	Comparisons []Comparison `json:"comparisons"`
	Headline    *Headline    `json:"headline,omitempty"`
	P99Check    *P99Check    `json:"p99_check,omitempty"`
	Facts       knob.Facts   `json:"facts"`
	// Runtimes are the server race's runtimes side by side: sizes, memory, throughput and latency.
	Runtimes *Runtimes `json:"runtimes,omitempty"`
	// Profile is why, per request: the baseline and the recommendation profiled side by side (tune --profile).
	Profile *profile.Result   `json:"profile,omitempty"`
	Screens []Screen          `json:"screens,omitempty"`
	Trials  []TrialRecord     `json:"trials"`
	Files   map[string]string `json:"files,omitempty"`
	// Apply is how the files go onto a Debian server: where each goes, its diff against the starting
	// configuration, the commands that check and reload.
	Apply    *apply.Plan `json:"apply,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
	// Builds are the PHP builds made (or taken from the cache) for this run's mix before it (tune --build),
	// outside its budget; each races as a value of the knob php.
	Builds []Build `json:"builds,omitempty"`
	// LogLoad is the access log's load (tune --from-access-log); PeakCheck the recommendation against its peak.
	LogLoad   *accesslog.Load `json:"log_load,omitempty"`
	PeakCheck *PeakCheck      `json:"peak_check,omitempty"`
	// Memory is what the run's stacks met of the memory cgroup they ran in (nil: none to read).
	Memory *MemoryUse `json:"memory,omitempty"`
}

// URL is one URL of the mix.
type URL struct {
	Path   string `json:"path"`
	Weight int    `json:"weight"`
	Method string `json:"method,omitempty"` // when not GET
	// PeakMemory is PHP's peak memory for one request of this URL (php-fpm's "last request memory"), 0 when
	// unknown.
	PeakMemory int64 `json:"peak_memory_bytes,omitempty"`
}

// Plan is how the run decided and where its time went.
type Plan struct {
	// The decision rule: sequential comparisons (confidence sequences valid at every look), each knob a race
	// of its values; the run's error budget Alpha split over every pair of arms compared; MinEffect the
	// smallest change that counts.
	Method    string  `json:"method"`
	Alpha     float64 `json:"alpha"`
	MinEffect float64 `json:"min_effect"`
	// PoolMargin is how far below the best size's goodput the chosen pool size may serve (0 in results written
	// before it: the minimum effect was the margin; PoolMarginOr).
	PoolMargin float64 `json:"pool_margin,omitempty"`
	// Trials: a throughput trial is a warm-up and a measured window; a CPU trial is a fixed number of
	// requests with php-fpm's CPU time read before and after.
	WarmupS     float64 `json:"warmup_s"`
	WindowS     float64 `json:"window_s"`
	CPURequests int     `json:"cpu_trial_requests"`
	// SplitRequests are a split round's duet trial's requests (Options.Split; 0: no split rounds).
	SplitRequests int `json:"split_trial_requests,omitempty"`
	Concurrency   int `json:"concurrency"` // load for the knob comparisons: the knee's, then the decided pool's
	// ConcurrencyNote says how the load moved when the pool's size was decided (empty: it did not).
	ConcurrencyNote string `json:"concurrency_note,omitempty"`
	// CPUConcurrency is the CPU trials' load: the knee's, at most two connections a CPU.
	CPUConcurrency int `json:"cpu_concurrency,omitempty"`
	SweepTrials    int `json:"sweep_trials_per_point"`
	// StackSD is the spread of a stack's own offset the comparisons allow for, by metric, and PerStack the most
	// rounds a stack serves an arm before fresh ones take over, fewer where the trials are steady (arms.StackRounds;
	// docs/engine.md, "Replicated stacks").
	StackSD     map[string]float64 `json:"stack_sd,omitempty"`
	PerStack    map[string]int     `json:"rounds_per_stack,omitempty"`
	Experiments int                `json:"experiments_planned"` // races planned: the pool size, the knobs, the final
	// Where the time went: trials and stack starts (settling included) as run, each one's mean wall time.
	TrialsRun   int     `json:"trials_run"`
	TrialWallS  float64 `json:"trial_wall_s"`
	StartsRun   int     `json:"starts_run"`
	StartWallS  float64 `json:"start_wall_s"`
	SettleWallS float64 `json:"settle_wall_s"` // of the start wall time
	// Counting each CPU-only candidate's work a request before the timed trials: how long, and how many
	// candidates it spared a timed comparison; ScreenNote says why it ran or not.
	ScreenWallS float64 `json:"screen_wall_s"`
	ScreenedOut int     `json:"screened_out"`
	ScreenNote  string  `json:"screen_note,omitempty"`
	// SecondLooks says what the time before the final went to once the races were run: the looks taken, or why
	// none was (the time left, the final's keep, the nearest look's cost).
	SecondLooks string `json:"second_looks,omitempty"`
	// DuetPin says, by experiment (a race's phase), how its duet arms were pinned to CPU shares, or why they were
	// not (fewer CPUs than arms); empty where pinning was off (Options.DuetPin) or no duet ran.
	DuetPin map[string]string `json:"duet_pin,omitempty"`
}

// Screened is the verdict of a CPU-only knob whose every candidate the screen counted doing the same work per
// request as the kept value (instructions and system calls): it got no timed trial. It is a count, not a
// statistical verdict: no time was measured, there is no interval, and no share of the error budget was spent.
const Screened stats.Verdict = "screened"

// NonInferior is the verdict of a decided pool size: the smallest size shown not worse than any other size by
// more than the minimum effect (experiment.Smallest), a one-sided claim. Not no_difference, which claims both
// sides: a larger size may still be better by less than the margin, and the row's interval (the pick against
// the best) shows by how much at most.
const NonInferior stats.Verdict = "non_inferior"

// Metrics a knob is decided on.
const (
	// MetricGoodput is requests served successfully per second through nginx, over a trial's window.
	MetricGoodput = arms.MetricGoodput
	// MetricCPU is requests served per second of php-fpm's CPU time (arms.MetricCPU).
	MetricCPU = arms.MetricCPU
	// MetricWork is the screen's counts: instructions and system calls per request.
	MetricWork = "work"
	// MetricCapacity is requests served per second of the servers' CPU time (php-fpm and nginx, or Apache), read from the same
	// goodput trials: fewer servers for the same traffic. The final comparison decides on it beside goodput.
	MetricCapacity = "capacity"
)

// KnobRow is one line of the answer: a knob, the value chosen and what the decisive comparison showed.
type KnobRow struct {
	Name      string        `json:"name"`
	Value     string        `json:"value"`
	From      string        `json:"from"`
	Metric    string        `json:"metric"`
	EffectPct float64       `json:"effect_pct"`
	CILowPct  float64       `json:"ci_low_pct"`
	CIHighPct float64       `json:"ci_high_pct"`
	Verdict   stats.Verdict `json:"verdict"` // "" when the knob was not raced (State says why not)
	// State is how the row came by its value (raced, pinned, not tried, ...) and Reason why, without the state's
	// words; Note says both for a person. Code reads StateOf and ReasonOf, which read an older row's Note.
	State  RowState `json:"state"`
	Reason string   `json:"reason,omitempty"`
	// Vs is the comparison the effect is from: the value it is of against the value it was compared with.
	// Compared says the same in words ("NAME=B vs A"), for a person reading result.json; code reads
	// Versus(), which falls back to Compared only for a result written before rows carried Vs.
	Vs       *Versus `json:"vs,omitempty"`
	Compared string  `json:"compared"`
	Rounds   int     `json:"rounds,omitempty"`
	Note     string  `json:"note,omitempty"`
	// Need, for an inconclusive knob, says what would decide it: rounds and about how long.
	Need string `json:"need,omitempty"`
	// Traded, in a race that guards the p99, says what a value ahead on goodput but shown worse at the p99 would
	// have traded, and what was taken: "apache-modphp +5.1% req/s but p99 24x worse: kept nginx-fpm".
	Traded string `json:"traded,omitempty"`
	// StackSD is the spread of stacks' offsets the race's engine allowed for, and what the run had measured of
	// them on its metric before the race.
	StackSD *StackOffset `json:"stack_sd,omitempty"`
}

// Turn is where the time stood when a knob's race came up: its allowance, and what the final comparison and the
// second look it stands on claimed of the time left (finalClaim, finalKeep, the look's cost).
type Turn struct {
	Knob   string  `json:"knob"`
	AtS    float64 `json:"at_s"`
	LeftS  float64 `json:"left_s"`
	AllowS float64 `json:"allow_s"`
	KeepS  float64 `json:"final_keep_s"`
	LookS  float64 `json:"look_s"`
	ClaimS float64 `json:"final_claim_s"`
	// NeedS is what the final was foreseen to need (finalNeed), which KeepS holds as far as the time left does.
	NeedS float64 `json:"final_need_s"`
}

// Comparison is one candidate of a knob against the value it would replace, from the knob's race.
type Comparison struct {
	Knob   string           `json:"knob"`
	A      string           `json:"a"` // the incumbent's value
	B      string           `json:"b"` // the candidate's
	Config string           `json:"config_b"`
	Metric string           `json:"metric"`
	Stats  stats.Comparison `json:"stats"`
	// ValueA and ValueB are the medians of the metric over the rounds run; RPSA and RPSB the medians of goodput.
	ValueA   float64 `json:"value_a"`
	ValueB   float64 `json:"value_b"`
	RPSA     float64 `json:"rps_a"`
	RPSB     float64 `json:"rps_b"`
	ErrorsA  int64   `json:"errors_a"`
	ErrorsB  int64   `json:"errors_b"`
	Rounds   int     `json:"rounds"`
	Status   string  `json:"status"` // the candidate's end in the race: winner, dropped, open, error
	Accepted bool    `json:"accepted"`
	Note     string  `json:"note,omitempty"`
	// NotTried: the candidate's setting was not in effect in its stack, so it has no statistics (Note says why).
	NotTried bool `json:"not_tried,omitempty"`
	// P99, in a race that guards the p99 (the runtime's, pm's), is the candidate's p99 against the incumbent's from
	// the same rounds: its relative change, interval and verdict (worse: a higher p99).
	P99 *stats.Comparison `json:"p99,omitempty"`
}

// Headline is the recommendation against the defaults, on goodput at the load measured and on capacity
// (requests per CPU-second of php-fpm and nginx) from the same trials, one error budget over both.
type Headline struct {
	RecommendationRPS float64           `json:"recommendation_rps"`
	DebianRPS         float64           `json:"debian_rps"`
	RuleOfThumbRPS    float64           `json:"rule_of_thumb_rps"`
	VsDebian          *stats.Comparison `json:"vs_debian,omitempty"`
	VsRuleOfThumb     *stats.Comparison `json:"vs_rule_of_thumb,omitempty"`
	RuleOfThumb       string            `json:"rule_of_thumb"`
	// StackSD is what the final's engine allowed for of stacks' offsets on goodput (StackOffset).
	StackSD  *StackOffset `json:"stack_sd,omitempty"`
	Baseline string       `json:"baseline"` // what the "debian" figures are: Debian's defaults or the user's files
	// Same: the recommendation is the starting point (nothing was shown better), so it was not raced against it;
	// its figures are the recommendation's and VsDebian and CapacityVsDebian are nil. RuleSame: the same for the
	// rule of thumb. With Same, Rounds 0 says that the rule of thumb was not compared either.
	Same     bool `json:"same_as_baseline,omitempty"`
	RuleSame bool `json:"rule_of_thumb_same,omitempty"`
	// SameBut, with Same: the setting by which the recommendation differs from the starting point all the same,
	// one that cannot act within a run ("max_requests=230000": Reach bounds the requests a worker could serve
	// in it). It is about memory over hours, and is to be applied.
	SameBut string `json:"same_but,omitempty"`
	Reach   int64  `json:"same_but_reach,omitempty"`
	Rounds  int    `json:"rounds,omitempty"`
	// RoundS is what a round of the final took, on average: with an inconclusive comparison's rounds_needed,
	// the time that would have decided it.
	RoundS float64 `json:"round_s,omitempty"`
	// KeptS is what the races before it left the final when it began, and ForeseenS what deciding the changes
	// found was foreseen to need of it (finalNeed; 0 when nothing foresaw it): against Rounds x RoundS, how well
	// the time was planned.
	KeptS     float64 `json:"kept_s,omitempty"`
	ForeseenS float64 `json:"foreseen_s,omitempty"`

	// Capacity: the medians of requests per CPU-second and the recommendation's comparisons on it (nil when the
	// servers' CPU could not be read).
	RecommendationReqPerCPUS float64           `json:"recommendation_req_per_cpu_s,omitempty"`
	DebianReqPerCPUS         float64           `json:"debian_req_per_cpu_s,omitempty"`
	RuleOfThumbReqPerCPUS    float64           `json:"rule_of_thumb_req_per_cpu_s,omitempty"`
	CapacityVsDebian         *stats.Comparison `json:"capacity_vs_debian,omitempty"`
	CapacityVsRuleOfThumb    *stats.Comparison `json:"capacity_vs_rule_of_thumb,omitempty"`

	// The p99 at the final's load (finaltail.go): the medians of the recommendation's and the starting point's
	// goodput trials' p99s, microseconds, over the rounds they shared, and the recommendation's p99 against the
	// starting point's on those rounds (positive: the recommendation's is the higher; worse: shown higher by more
	// than the minimum effect). Nil when the recommendation is the starting point or no trial read a p99.
	RecommendationP99Us float64           `json:"recommendation_p99_us,omitempty"`
	DebianP99Us         float64           `json:"debian_p99_us,omitempty"`
	P99VsDebian         *stats.Comparison `json:"p99_vs_debian,omitempty"`
}

// P99Check is the latency goal judged open-loop at the user's rate.
type P99Check struct {
	MaxChildren int     `json:"max_children"`
	Rate        float64 `json:"rate"`
	GoalUs      float64 `json:"goal_us"`
	// P99Us is the 99th percentile over every request of the run, those that failed, were unfinished or never
	// sent counted as taking the timeout; P99LoUs and P99HiUs its 95% interval (order statistics).
	P99Us   float64 `json:"p99_us"`
	P99LoUs float64 `json:"p99_lo_us"`
	P99HiUs float64 `json:"p99_hi_us"`
	// Verdict is "met" (the interval below the goal), "missed" (above it) or "undecided"; Met is Verdict == "met".
	Verdict  string `json:"verdict"`
	Met      bool   `json:"met"`
	Requests int64  `json:"requests"`
	Errors   int64  `json:"errors"`
	Unsent   int64  `json:"unsent"`
	InFlight int64  `json:"in_flight_at_end"`
}

// Err is the run's error when the p99 goal was not shown to be met (exit 3); nil when it was, or none was set.
func (c *P99Check) Err() error {
	if c == nil || c.Met {
		return nil
	}
	return exitcode.ThresholdErrorf("the p99 goal %s at %.0f req/s was not shown to be met: p99 %.1f ms [%.1f, %.1f] (%s)",
		time.Duration(c.GoalUs*float64(time.Microsecond)), c.Rate, c.P99Us/1000, c.P99LoUs/1000, c.P99HiUs/1000, c.Verdict)
}

// The result's records of what the arms measured.
type (
	// TrialRecord is one trial's raw figures.
	TrialRecord = arms.TrialRecord
	// StackOffset is what a run measured of its stacks' offsets on one metric before an experiment.
	StackOffset = arms.StackOffset
	// MemoryUse is what the run's stacks met of their memory cgroup.
	MemoryUse = arms.MemoryUse
)

// Environment is where the results hold.
type Environment struct {
	Host measure.Host `json:"host"`
	// Limits are the place the pool was sized for: a cgroup's memory and CPUs, or the host's.
	Limits *measure.Limits `json:"limits,omitempty"`
	PHP    string          `json:"php"`
	Nginx  string          `json:"nginx"`
	FPM    string          `json:"php_fpm_binary"`
}

func environment(sc stack.Config) Environment {
	var e Environment
	e.Host, _ = measure.ReadHost()
	if fpm, err := stack.FindPHPFPM(sc.PHPFPM); err == nil {
		e.FPM = fpm
		e.PHP = textline.First(strings.TrimSpace(runOut(fpm, "-v")))
	}
	if ngx, err := stack.FindNginx(sc.Nginx); err == nil {
		e.Nginx = textline.First(strings.TrimSpace(runOut(ngx, "-v")))
	}
	return e
}

func runOut(bin string, args ...string) string {
	out, _ := exec.Command(bin, args...).CombinedOutput()
	return string(out)
}

func orUnset(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// Build is a PHP built for the tuned mix (tune --build).
type Build struct {
	Variant string  `json:"variant"` // pgo, pgo+lto, ...
	PHPFPM  string  `json:"php_fpm"` // its php-fpm, the value the knob php races
	Cached  bool    `json:"cached"`  // taken from the build cache
	Seconds float64 `json:"seconds"` // wall time of the build step, outside the tuning budget
}

// PoolMarginOr is the margin the pool's sizes were judged by: PoolMargin, or the minimum effect in a result
// written before the two were apart.
func (p Plan) PoolMarginOr() float64 {
	if p.PoolMargin > 0 {
		return p.PoolMargin
	}
	return p.MinEffect
}
