// Package arms serves tune's arms: each configuration from warm nginx + php-fpm stacks started in a private
// directory, their CPU and goodput trials, the fresh stacks an arm moves to as its experiment goes on and how
// often (the spread of its rounds against what a start costs), the stacks' offsets measured in the run, duet arms
// pinned or spread over the CPUs, starts side by side within the memory, and the OOM killer's strikes.
//
// Files: spec.go (a trial's spec and record), stacks.go (warm stacks: start, check, settle, share), source.go
// (what tune's other phases take of them), trial.go (a trial), replicas.go (an arm's fresh stacks), pin.go (duet
// arms on CPU shares), stackrounds.go (how many rounds a stack serves), offsets.go (the stacks' offsets
// measured), startgate.go (starts within the memory), oom.go (the OOM killer).
package arms

import (
	"errors"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
)

// Metrics a trial measures.
const (
	// MetricGoodput is requests served successfully per second through nginx, over a trial's window.
	MetricGoodput = "goodput"
	// MetricCPU is requests served per second of php-fpm's CPU time: what a CPU-only knob changes, read from
	// the workers' own CPU clocks around a fixed number of requests, so every request counts.
	MetricCPU = "req_per_cpu_s"
)

// ErrOOM says the kernel's OOM killer struck during a trial: what it measured is no measurement.
var ErrOOM = errors.New("out of memory")

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
	Latency *Latency
	// Tail says that the race guards the trials' p99 (a Tail knob's, on goodput): a value better on goodput is
	// taken only if its p99 is not shown worse (experiment.Figure.Guard).
	Tail bool
	// Capacity says that the experiment decides on the trials' requests per CPU-second too (the final): its
	// stacks move as often as the steadier of the two figures pays for (spread).
	Capacity bool
	// Duet: the arms' trials of a round run at the same time (experiment.Spec.Duet).
	Duet bool
	// Split: the arms' goodput rounds are split rounds (experiment.Spec.Split), their trials run in turn and then
	// at the same time (SplitTrial).
	Split bool
	// Fresh starts every arm on a stack of its own, never on one tune holds warm: the stack the best so far won
	// its last race on carries an offset that helped it win (the final's recommendation on it read +0.4 to +0.5
	// of the offsets' spread better, an audit's simulation), which a comparison of it must not start from.
	Fresh bool
}

// twin says whether the spec's arms run on a twin of their configuration (cpuPool, steadyPool) rather than
// on the configuration itself, which tune holds warm.
func (s TrialSpec) Twin() bool { return s.Metric == MetricCPU || s.Steady }

// startKind is what an arm's start costs are kept under: a twin's static pool is ready in about a second, a
// goodput arm's own pool may be a dynamic one that settles for seconds.
func (s TrialSpec) StartKind() string {
	if s.Steady {
		return StartStatic
	}
	return s.Metric
}

// CostKind is what a trial's cost is kept under: its metric's, or a split round's (Split), whose trials cost their
// share of its duet too.
func (s TrialSpec) CostKind() string {
	if s.Split {
		return s.Metric + "+split"
	}
	return s.Metric
}

// StartStatic keeps the start costs of goodput arms on steady twins.
const StartStatic = "static"

// ErrNotInEffect says an arm's configuration did not take effect on this host (huge pages refused, say): the
// candidate is not tried rather than measured as the same program.
var ErrNotInEffect = errors.New("not in effect")

// TrialRecord is one trial's raw figures.
type TrialRecord struct {
	Phase       string `json:"phase"`
	Config      string `json:"config"`
	Concurrency int    `json:"concurrency"`
	// Stack is the number of the stack it ran on, among the run's (an arm's trials move to fresh stacks as its
	// race goes on): trials of one stack share whatever that stack carries for its life.
	Stack int `json:"stack,omitempty"`
	// Duet: the trial ran at the same time as its rivals' of the round (a duet round, or a split round's duet),
	// not in turn. A goodput figure of such a trial is not the arm's own: what it got of the machine depends on
	// its rivals.
	Duet bool `json:"duet,omitempty"`
	// CPUs is the CPU share its stack was pinned to in a pinned duet round (a kernel CPU list such as "1" or "2-3";
	// Options.DuetPin), "spread" where its workers were spread over the CPUs (Options.DuetSpread); empty where
	// neither.
	CPUs string `json:"cpus,omitempty"`
	// Fault says what made the trial no measurement, which it was measured again for (the OOM killer struck).
	Fault string `json:"fault,omitempty"`
	// Metric and Value are what the trial was decided on (MetricGoodput or MetricCPU).
	Metric   string       `json:"metric,omitempty"`
	Value    float64      `json:"value,omitempty"`
	RPS      float64      `json:"rps"`
	Goodput  float64      `json:"goodput"`
	Requests int64        `json:"requests"`
	Errors   int64        `json:"errors"`
	Latency  load.Latency `json:"latency_us"`
	// CPUUsPerReq is php-fpm's CPU time a request, exact, in CPU trials.
	CPUUsPerReq  float64            `json:"cpu_us_per_req,omitempty"`
	ClientCPUUs  float64            `json:"client_cpu_us_per_req"`
	ServerCPU    map[string]float64 `json:"server_cpu_us_per_req,omitempty"` // php-fpm, nginx
	WorkerPSS    int64              `json:"worker_pss_bytes,omitempty"`
	WorkerUSS    int64              `json:"worker_peak_uss_bytes,omitempty"`
	WorkerShared int64              `json:"worker_shared_bytes,omitempty"`
	Workers      int                `json:"workers_seen,omitempty"`
	FPM          *measure.FPMDelta  `json:"fpm,omitempty"`
	WallS        float64            `json:"wall_s,omitempty"`
	// ReqPerCPUS, in goodput trials, is requests served per second of the servers' CPU time (php-fpm's and
	// nginx's, or Apache's) from the first request sent to the last answered, warm-up and drain included
	// (capacity: fewer servers for the same traffic).
	ReqPerCPUS float64 `json:"req_per_cpu_s,omitempty"`
	// FrontPSS is the HTTP server's memory in front of php-fpm (nginx's or Apache's group, PSS at its peak).
	FrontPSS int64 `json:"front_pss_bytes,omitempty"`
	// AtS is when the trial began, in seconds from the run's start: the run's timeline.
	AtS float64 `json:"at_s"`
}

// Latency merges each arm's trial histograms: latency percentiles come from every request of its trials,
// never from averaging the trials' own.
type Latency struct {
	mu    sync.Mutex // arms run their trials one at a time, but start side by side
	hists map[string]*hdrhistogram.Histogram
}

// NewLatency is a tally with no trial yet.
func NewLatency() *Latency { return &Latency{hists: map[string]*hdrhistogram.Histogram{}} }

// Add merges a trial's histogram (microseconds) under its configuration.
func (l *Latency) Add(config string, h *hdrhistogram.Histogram) {
	if l == nil || h == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hists[config] == nil {
		l.hists[config] = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
	}
	l.hists[config].Merge(h)
}

// Quantiles are the median and the 99th percentile of config's requests, microseconds (0: none).
func (l *Latency) Quantiles(config string) (p50, p99 float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hists[config]
	if h == nil || h.TotalCount() == 0 {
		return 0, 0
	}
	return float64(h.ValueAtQuantile(50)), float64(h.ValueAtQuantile(99))
}

// phpPool is the endpoint of st's PHP workers: its php-fpm pool, or under mod_php Apache's processes, which have
// no status page (settling and the sweep go by the configuration's pm and size alone).
func phpPool(st *stack.Stack, cfg knob.Config) stack.Endpoint {
	if len(st.Pools) > 0 {
		return st.Pools[0]
	}
	return stack.Endpoint{Name: st.PHP(), PM: cfg.PM, MaxChildren: cfg.MaxChildren}
}
