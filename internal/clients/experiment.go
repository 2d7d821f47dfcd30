// Package clients measures concurrency models for I/O-bound PHP client code against private Tarantool and
// Redis servers: one connection (sync), Fibers, forked processes, processes with Fibers, and pipelining. Each
// iteration runs in a fresh `php -n` (phpbench's vocabulary: revolutions, iterations, warm-up, retry threshold);
// the sweeps, the picks' races and the comparisons with sync run on the experiment engine (internal/experiment),
// within one error budget.
package clients

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/stats"
)

// Models and clients.
const (
	ModelSync       = "sync"
	ModelFibers     = "fibers"
	ModelProcesses  = "processes"
	ModelProcFibers = "processes+fibers"
	ModelPipeline   = "pipeline"
	ModelSwoole     = "swoole"
	ModelParallel   = "parallel"

	ClientOurs     = "phptune"
	ClientPhpredis = "phpredis"
)

// Models is every model phptune runs, in report order.
var Models = []string{ModelSync, ModelFibers, ModelProcesses, ModelProcFibers, ModelPipeline}

// Ops lists each target's operations.
var Ops = map[string][]string{
	Tarantool: {"select", "insert", "replace", "update", "upsert", "delete",
		"sql_select", "sql_insert", "sql_replace", "sql_update", "sql_delete", "sleep", "check"},
	Redis: {"get", "set", "incr", "check"},
}

// Config is one run's plan.
type Config struct {
	Targets []string            // tarantool, redis
	Ops     map[string][]string // per target
	Models  []string            // of Models
	// Revs per iteration (split among the workers), Iterations per arm, Warmup revolutions (untimed, per
	// iteration), Pause before each iteration.
	Revs, Iterations, Warmup int
	Pause                    time.Duration
	// RetryThreshold (%): an iteration whose time deviates from its arm's mean by at least this much is re-run,
	// until none does or an arm has been retried RetryLimit times. 0 is off.
	RetryThreshold float64
	RetryLimit     int
	Sequential     bool // each arm's iterations back to back instead of interleaved rounds
	// Candidates swept for the best N (Fibers), P (Procs) and D (Depths); one value skips the sweep.
	Fibers, Procs, Depths []int
	// SweepIterations and SweepRevs size each candidate's short measurement in the sweep.
	SweepIterations, SweepRevs int
	// Neighbours re-measures each sweep's pick beside the candidates next to it in the main run; the best of a
	// model is then the best of that run.
	Neighbours bool
	// MinEffect is the smallest relative change that counts as faster or slower (0.03 = 3%); Alpha the run's
	// error budget (0: 0.05), shared by every sweep, race and comparison with sync.
	MinEffect, Alpha float64
	Phpredis         bool           // add phpredis rows (Redis) when the extension loads
	Ports            map[string]int // fixed server ports; 0 or absent: a free one
	Seed             int64
	Progress         func(string) // may be nil
}

// Row is one arm's result.
type Row struct {
	Arm
	Concurrency int    `json:"concurrency"`
	Available   bool   `json:"available"`
	Note        string `json:"note,omitempty"`
	Error       string `json:"error,omitempty"`
	// OpsPerS is the median of the iterations' ops/s; CILow..CIHigh its distribution-free 95% interval (order
	// statistics; null below 6 iterations).
	OpsPerS *float64 `json:"ops_per_s"`
	CILow   *float64 `json:"ci_low"`
	CIHigh  *float64 `json:"ci_high"`
	// Speedup over sync (same target and op, phptune's client): the engine's estimate of the ratio from the
	// paired rounds, with the confidence-sequence interval, p-value and verdict (nil for a neighbour not picked).
	Speedup     *float64          `json:"speedup"`
	SpeedupLow  *float64          `json:"speedup_ci_low"`
	SpeedupHigh *float64          `json:"speedup_ci_high"`
	Comparison  *stats.Comparison `json:"comparison,omitempty"`
	// Client and server CPU per op, in microseconds (the PHP workers' user + system time; the server's).
	ClientCPUPerOpUS float64 `json:"client_cpu_per_op_us,omitempty"`
	ServerCPUPerOpUS float64 `json:"server_cpu_per_op_us,omitempty"`
	// Best: the highest median ops/s among this model's rows of this target, op and client.
	Best       bool     `json:"best"`
	Iterations int      `json:"iterations"`
	Retries    int      `json:"retries"`
	Samples    []Sample `json:"samples,omitempty"`
}

// SweepPoint is one candidate of a sweep for the best N, P or D.
type SweepPoint struct {
	Arm
	Concurrency int     `json:"concurrency"`
	OpsPerS     float64 `json:"ops_per_s"` // median of the sweep's iterations
	Iterations  int     `json:"iterations"`
	Picked      bool    `json:"picked"`
	Note        string  `json:"note,omitempty"` // why the race dropped it
	Error       string  `json:"error,omitempty"`
}

// Ceiling is what the sync arm's figures imply: a single process cannot beat one op per client CPU per op;
// the machine cannot beat its CPUs over client plus server CPU per op.
type Ceiling struct {
	Target           string  `json:"target"`
	Op               string  `json:"op"`
	WallPerOpUS      float64 `json:"wall_per_op_us"`
	ClientCPUPerOpUS float64 `json:"client_cpu_per_op_us"`
	ServerCPUPerOpUS float64 `json:"server_cpu_per_op_us"`
	WaitPerOpUS      float64 `json:"wait_per_op_us"` // wall minus the client's CPU
	OneProcessOpsS   float64 `json:"one_process_ops_per_s"`
	OneProcessX      float64 `json:"one_process_speedup"`
	MachineOpsS      float64 `json:"machine_ops_per_s"`
	MachineX         float64 `json:"machine_speedup"`
	CPUs             int     `json:"cpus"`
}

// Outcome is everything a run measured; Run fills it as it goes, so that an interrupted run keeps its results.
type Outcome struct {
	Results  []Row        `json:"results"`
	Sweeps   []SweepPoint `json:"sweeps"`
	Ceilings []Ceiling    `json:"ceilings"`
	Errors   []string     `json:"errors,omitempty"`
	Servers  []string     `json:"-"` // versions, reported under environment
}

type runner struct {
	cfg    Config
	php    *PHP
	out    *Outcome
	seed   int64
	budget *experiment.Budget // the run's error budget, shared by every sweep, race and main comparison
	// started: an iteration has run, so the next one pauses first.
	started bool
}

// Run measures every target, op and model of cfg into out. On cancellation it returns the context's error with
// the rows measured so far filled in.
func Run(ctx context.Context, cfg Config, php *PHP, out *Outcome) error {
	// Every server's program first: a missing package stops the run before anything is measured.
	for _, target := range cfg.Targets {
		if err := Installed(target); err != nil {
			return err
		}
		if err := php.Needs(target); err != nil {
			return err
		}
	}
	r := newRunner(cfg, php, out)
	for _, target := range cfg.Targets {
		r.progress("starting %s", target)
		srv, err := Start(ctx, target, cfg.Ports[target])
		if err != nil {
			return err
		}
		out.Servers = append(out.Servers, srv.Version)
		err = r.target(ctx, srv)
		if serr := srv.Stop(); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func newRunner(cfg Config, php *PHP, out *Outcome) *runner {
	return &runner{cfg: cfg, php: php, out: out, seed: cfg.Seed, budget: experiment.NewBudget(cfg.alpha(), cfg.plannedPairs())}
}

func (r *runner) progress(format string, a ...any) {
	if r.cfg.Progress != nil {
		r.cfg.Progress(fmt.Sprintf(format, a...))
	}
}

func (r *runner) has(model string) bool { return slices.Contains(r.cfg.Models, model) }

func (r *runner) target(ctx context.Context, srv *Server) error {
	for _, op := range r.cfg.Ops[srv.Kind] {
		if err := r.op(ctx, srv, op); err != nil {
			return err
		}
	}
	return nil
}

// op runs the sweeps, races each pick against its neighbours, then compares sync with each model's pick.
func (r *runner) op(ctx context.Context, srv *Server, op string) error {
	base := Arm{Target: srv.Kind, Op: op, Client: ClientOurs}
	arm := func(model string, p, n, d int) Arm {
		a := base
		a.Model, a.Procs, a.Fibers, a.Depth = model, p, n, d
		return a
	}
	var first []Arm
	forkable := r.php.Pcntl
	if r.has(ModelFibers) {
		for _, n := range r.cfg.Fibers {
			first = append(first, arm(ModelFibers, 0, n, 0))
		}
	}
	if r.has(ModelProcesses) && forkable {
		for _, p := range r.cfg.Procs {
			first = append(first, arm(ModelProcesses, p, 0, 0))
		}
	}
	if r.has(ModelPipeline) {
		for _, d := range r.cfg.Depths {
			first = append(first, arm(ModelPipeline, 0, 0, d))
		}
	}
	picks, err := r.sweep(ctx, srv, first)
	if err != nil {
		return err
	}
	if r.has(ModelProcFibers) && forkable {
		n := r.cfg.Fibers[len(r.cfg.Fibers)-1]
		if pk, ok := picks[ModelFibers]; ok {
			n = pk.Fibers
		}
		var second []Arm
		for _, p := range r.cfg.Procs {
			second = append(second, arm(ModelProcFibers, p, n, 0))
		}
		more, err := r.sweep(ctx, srv, second)
		if err != nil {
			return err
		}
		for k, v := range more {
			picks[k] = v
		}
	}
	arms := []Arm{arm(ModelSync, 0, 0, 0)}
	var lost []Row
	var ours []Arm
	for _, m := range Models[1:] {
		a, ok := picks[m]
		if !ok {
			continue
		}
		if r.cfg.Neighbours {
			var rows []Row
			a, rows, err = r.neighbourRace(ctx, srv, a)
			lost = append(lost, rows...)
			if err != nil {
				r.out.Results = append(r.out.Results, lost...)
				return err
			}
		}
		ours = append(ours, a)
	}
	arms = append(arms, ours...)
	if srv.Kind == Redis && r.cfg.Phpredis && r.php.Phpredis && op != "check" {
		// The C baseline, with the same P and D as ours; phpredis blocks, so it has no Fiber rows.
		for _, a := range append([]Arm{arms[0]}, ours...) {
			if a.Model == ModelSync || a.Model == ModelProcesses || a.Model == ModelPipeline {
				a.Client = ClientPhpredis
				arms = append(arms, a)
			}
		}
	}
	rows, err := r.main(ctx, srv, arms)
	rows = append(rows, lost...)
	// Report order: sync first, then by client, model and concurrency.
	slices.SortStableFunc(rows[min(1, len(rows)):], func(a, b Row) int {
		if a.Client != b.Client {
			return strings.Compare(clientOrder(a.Client), clientOrder(b.Client))
		}
		if d := slices.Index(Models, a.Model) - slices.Index(Models, b.Model); d != 0 {
			return d
		}
		return a.Concurrency - b.Concurrency
	})
	r.out.Results = append(r.out.Results, rows...)
	r.addUnavailable(base)
	return err
}

func clientOrder(c string) string {
	if c == ClientOurs {
		return ""
	}
	return c
}

// neighbours are the sweep candidates next to a's pick (the value below and above in its sweep list), to be
// re-measured beside it: a sweep's best is a noisy maximum.
func (r *runner) neighbours(a Arm) []Arm {
	var list []int
	var get func(Arm) int
	var set func(*Arm, int)
	switch a.Model {
	case ModelFibers:
		list, get, set = r.cfg.Fibers, func(a Arm) int { return a.Fibers }, func(a *Arm, v int) { a.Fibers = v }
	case ModelProcesses, ModelProcFibers:
		list, get, set = r.cfg.Procs, func(a Arm) int { return a.Procs }, func(a *Arm, v int) { a.Procs = v }
	case ModelPipeline:
		list, get, set = r.cfg.Depths, func(a Arm) int { return a.Depth }, func(a *Arm, v int) { a.Depth = v }
	default:
		return nil
	}
	sorted := slices.Clone(list)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	i := slices.Index(sorted, get(a))
	var out []Arm
	for _, j := range []int{i - 1, i + 1} {
		if i >= 0 && j >= 0 && j < len(sorted) {
			b := a
			set(&b, sorted[j])
			out = append(out, b)
		}
	}
	return out
}

func (r *runner) iterate(ctx context.Context, srv *Server, a Arm, revs int) (Sample, error) {
	if r.started && r.cfg.Pause > 0 {
		select {
		case <-time.After(r.cfg.Pause):
		case <-ctx.Done():
			return Sample{}, ctx.Err()
		}
	}
	r.started = true
	select {
	case <-srv.Exited():
		return Sample{}, fmt.Errorf("%s exited: %s", srv.Kind, srv.LogTail(3))
	default:
	}
	r.seed++
	return r.php.Iterate(ctx, srv, a, revs, r.cfg.Warmup, r.seed)
}

func opsPerS(ss []Sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.OpsPerS()
	}
	return out
}

func ptr(v float64) *float64 { return &v }

func (r *runner) ceiling(row Row, ss []Sample) {
	var ops, sec, cpu, scpu float64
	for _, s := range ss {
		ops += float64(s.Ops)
		sec += s.Seconds
		cpu += s.CPUSeconds
		scpu += s.ServerCPU
	}
	if cpu <= 0 {
		return
	}
	cpus := runtime.NumCPU()
	c := Ceiling{Target: row.Target, Op: row.Op, CPUs: cpus,
		WallPerOpUS: sec / ops * 1e6, ClientCPUPerOpUS: cpu / ops * 1e6, ServerCPUPerOpUS: scpu / ops * 1e6}
	c.WaitPerOpUS = max(c.WallPerOpUS-c.ClientCPUPerOpUS, 0)
	c.OneProcessOpsS = 1e6 / c.ClientCPUPerOpUS
	c.OneProcessX = c.WallPerOpUS / c.ClientCPUPerOpUS
	c.MachineOpsS = float64(cpus) * 1e6 / (c.ClientCPUPerOpUS + c.ServerCPUPerOpUS)
	c.MachineX = c.MachineOpsS * c.WallPerOpUS / 1e6
	r.out.Ceilings = append(r.out.Ceilings, c)
}

// addUnavailable adds the rows of models this machine cannot run: Swoole coroutines and ext-parallel threads
// (no Debian bookworm package), forking without pcntl.
func (r *runner) addUnavailable(base Arm) {
	add := func(model, note string) {
		a := base
		a.Model = model
		r.out.Results = append(r.out.Results, Row{Arm: a, Note: note})
	}
	if !r.php.Pcntl {
		for _, m := range []string{ModelProcesses, ModelProcFibers} {
			if r.has(m) {
				add(m, "not available here: the PHP CLI has no pcntl (fork)")
			}
		}
	}
	if r.php.Swoole {
		add(ModelSwoole, "swoole is installed, but phptune has no Swoole runner yet")
	} else {
		add(ModelSwoole, "not available here: the swoole extension is not installed (no Debian bookworm package)")
	}
	if r.php.Parallel {
		add(ModelParallel, "parallel is installed, but phptune has no ext-parallel runner yet")
	} else {
		add(ModelParallel, "not available here: the parallel extension is not installed (needs a ZTS PHP; no Debian package)")
	}
}

// MedianCI is a distribution-free 95% interval for the median of x from its order statistics (binomial
// coverage at least 95%); ok is false below 6 values, where no such interval exists.
func MedianCI(x []float64) (lo, hi float64, ok bool) {
	n := len(x)
	if n < 6 {
		return 0, 0, false
	}
	s := slices.Clone(x)
	slices.Sort(s)
	// The largest k with P(Binomial(n, 1/2) < k) <= 2.5%: the interval is [x(k), x(n+1-k)] (1-based).
	k := 1
	for {
		if binomCDF(n, k) > 0.025 { // P(B <= k) = P(B < k+1)
			break
		}
		k++
	}
	return s[k-1], s[n-k], true
}

// binomCDF is P(Binomial(n, 1/2) <= k).
func binomCDF(n, k int) float64 {
	var sum float64
	c := 1.0
	for i := 0; i <= k; i++ {
		if i > 0 {
			c = c * float64(n-i+1) / float64(i)
		}
		sum += c
	}
	return sum / math.Pow(2, float64(n))
}

// Validate checks the plan; errors are the user's to fix.
func (c Config) Validate() error {
	if len(c.Targets) == 0 {
		return errors.New("no target: use --target tarantool,redis")
	}
	for _, t := range c.Targets {
		ops, ok := Ops[t]
		if !ok {
			return fmt.Errorf("unknown target %q: use tarantool or redis", t)
		}
		if len(c.Ops[t]) == 0 {
			return fmt.Errorf("no operation for %s: pick from %v", t, ops)
		}
		for _, op := range c.Ops[t] {
			if !slices.Contains(ops, op) {
				return fmt.Errorf("unknown %s operation %q: pick from %v", t, op, ops)
			}
		}
	}
	for _, m := range c.Models {
		if !slices.Contains(Models, m) {
			return fmt.Errorf("unknown model %q: pick from %v", m, Models)
		}
	}
	if c.Revs < 1 || c.Iterations < 1 || c.Warmup < 0 || c.SweepIterations < 1 || c.SweepRevs < 1 {
		return errors.New("--revs, --iterations, --sweep-iterations and --sweep-revs must be at least 1, --warmup not negative")
	}
	for name, l := range map[string][]int{"--fibers": c.Fibers, "--procs": c.Procs, "--depth": c.Depths} {
		if len(l) == 0 {
			return fmt.Errorf("%s needs at least one value", name)
		}
		for _, v := range l {
			if v < 1 || v > 10000 {
				return fmt.Errorf("%s %d: values must be between 1 and 10000", name, v)
			}
		}
	}
	if !(c.MinEffect >= 0 && c.MinEffect < 1) {
		return fmt.Errorf("--min-effect %g%%: want 0 to 100", 100*c.MinEffect)
	}
	if !(c.Alpha >= 0 && c.Alpha < 1) {
		return fmt.Errorf("--alpha %g: want a probability below 1, such as 0.05", c.Alpha)
	}
	if c.RetryThreshold < 0 || c.RetryLimit < 0 {
		return errors.New("--retry-threshold and --retry-limit must not be negative")
	}
	for _, t := range []string{Tarantool, Redis} {
		if p := c.Ports[t]; p < 0 || p > 65535 {
			return fmt.Errorf("port %d: want 1 to 65535, or 0 for a free one", p)
		}
	}
	return nil
}
