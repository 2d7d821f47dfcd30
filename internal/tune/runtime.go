package tune

import (
	"context"
	"fmt"
	"slices"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// Runtimes is the server race: each runtime sized by the pool's rule with its own memory, and what each served.
type Runtimes struct {
	// Rule is the sizing rule in words; Target the PHP workers the load needs (the pool's size, or the knee when
	// memory capped the pool), Memory what the workers may take.
	Rule   string    `json:"rule"`
	Target int       `json:"target"`
	Memory int64     `json:"memory_bytes"`
	List   []Runtime `json:"runtimes"`
}

// Runtime is one runtime of the server race.
type Runtime struct {
	Server string `json:"server"`
	// Size is its PHP workers (php-fpm's pm.max_children, prefork's MaxRequestWorkers): the smaller of the
	// target and MemoryLimit, the workers of PerWorkerBytes that fit in the memory beside SharedBytes and
	// FrontBytes, as measured when it was sized (SizedFrom).
	Size        int    `json:"size"`
	MemoryLimit int    `json:"memory_limit"`
	SizedFrom   string `json:"sized_from"`
	// The memory it took in the race, at its size: a worker's private memory at its peak, the shared memory
	// counted once (opcache, the binaries), the HTTP server's in front of php-fpm (none under mod_php), and all
	// of it at Size workers.
	PerWorkerBytes int64 `json:"per_worker_bytes"`
	SharedBytes    int64 `json:"shared_bytes"`
	FrontBytes     int64 `json:"front_bytes"`
	TotalBytes     int64 `json:"total_bytes"`
	// What it served in the race's rounds: median goodput, and per second of its servers' CPU time (all of
	// them: nginx and php-fpm, Apache and php-fpm, or Apache), latency from the merged histogram of its trials.
	RPS        float64 `json:"rps"`
	ReqPerCPUS float64 `json:"req_per_cpu_s,omitempty"`
	P50Us      float64 `json:"p50_us"`
	P99Us      float64 `json:"p99_us"`
	Rounds     int     `json:"rounds"`
	// Status is its end in the race (winner, dropped, open, error), Vs its comparison with the incumbent, and
	// P99Vs its p99's, the race's guard (worse: a higher p99).
	Status string            `json:"status"`
	Vs     *stats.Comparison `json:"vs_incumbent,omitempty"`
	P99Vs  *stats.Comparison `json:"p99_vs_incumbent,omitempty"`
	Note   string            `json:"note,omitempty"`
}

// runtimeRule says how every runtime is sized.
const runtimeRule = "each runtime's PHP workers (php-fpm's max_children, prefork's MaxRequestWorkers) are the target, " +
	"or fewer when the memory holds fewer: shared memory once, the HTTP server in front, and per worker the larger " +
	"of its processes' peak private memory and PHP's peak for a request, each measured on its own runtime"

// sizingTrials are the loaded trials a runtime's memory is measured in before its race.
const sizingTrials = 2

// runtimeRace is the server race as it goes: the sizes, and the latency of each arm's trials.
type runtimeRace struct {
	table   *Runtimes
	arms    map[string]string // server -> the configuration its arm runs (arms.RunsOn's), whose records are its trials
	latency *arms.Latency
	raced   *raced
}

// sizeRuntimes sizes each runtime the server race will try by the pool's memory rule and returns the knob with
// those sizes (Set gives each runtime its own) and the race's spec, which tallies each arm's latency. The best
// configuration's runtime keeps its size (the pool was sized by this rule); each other is served at the target,
// loaded, and its workers' memory measured.
func (t *tuner) sizeRuntimes(ctx context.Context, k knob.Knob, spec arms.TrialSpec, values []string) (knob.Knob, arms.TrialSpec, error) {
	rr := &runtimeRace{table: &Runtimes{Rule: runtimeRule, Target: t.runtimeTarget(), Memory: t.o.Memory},
		arms: map[string]string{}, latency: arms.NewLatency()}
	t.runtimes = rr
	sizes := map[string]int{k.Get(t.best): t.best.MaxChildren}
	inc := Runtime{Server: k.Get(t.best), Size: t.best.MaxChildren, SizedFrom: "the pool's size"}
	if ps := t.pool; ps != nil {
		inc.MemoryLimit, inc.SizedFrom = ps.MemoryLimit, "the pool's size, from the saturation sweep"
	}
	rr.table.List = append(rr.table.List, inc)
	for _, v := range values {
		cfg := t.best.Clone()
		if err := k.Set(&cfg, v); err != nil {
			return k, spec, err
		}
		cfg.MaxChildren = rr.table.Target
		t.status("knob "+k.Name, fmt.Sprintf("sizing %s: its memory at %d workers", v, cfg.MaxChildren))
		m, err := t.runtimeMemory(ctx, cfg, v)
		r := Runtime{Server: v, Size: rr.table.Target, SizedFrom: fmt.Sprintf("%d loaded trials at %d workers", sizingTrials, rr.table.Target)}
		if err != nil {
			if ctx.Err() != nil {
				return k, spec, ctx.Err()
			}
			r.Note = "not sized: " + err.Error() // its race shows the error too
		} else {
			r.Size, r.MemoryLimit = runtimeSize(rr.table.Target, t.o.Memory, m)
		}
		sizes[v] = r.Size
		rr.table.List = append(rr.table.List, r)
	}
	sized := k
	sized.Set = func(c *knob.Config, v string) error {
		if err := k.Set(c, v); err != nil {
			return err
		}
		if n := sizes[v]; n > 0 {
			c.MaxChildren = n
		}
		return nil
	}
	spec.Latency = rr.latency
	return sized, spec, nil
}

// runtimeTarget is the PHP workers the load needs: the pool's size as decided, or the knee's when memory capped
// the pool below it (a runtime that takes less memory a worker may then run more).
func (t *tuner) runtimeTarget() int {
	n := t.best.MaxChildren
	if _, pinned := t.o.Pins[knob.MaxChildren().Name]; pinned {
		return n
	}
	if ps := t.pool; ps != nil && ps.MemoryLimit > 0 && n >= ps.MemoryLimit && ps.Knee > n {
		return ps.Knee
	}
	return n
}

// workerMemory is what a runtime's memory measurement found.
type workerMemory struct {
	perWorker, shared, front int64
}

// runtimeSize is the rule: the target, or the workers of m that fit in memory when fewer (at least one), and
// that limit (0: memory unknown).
func runtimeSize(target int, memory int64, m workerMemory) (size, limit int) {
	if memory <= 0 || m.perWorker <= 0 {
		return target, 0
	}
	limit = max(int((memory-m.shared-m.front)/m.perWorker), 1)
	return min(target, limit), limit
}

// runtimeMemory serves cfg (runtime v) on its steady twin, loads it for sizingTrials trials and reads its
// workers' memory: a worker's private memory at its peak, or PHP's own peak for a request when larger (the
// same PHP and app under every runtime); the shared part; the HTTP server's in front of php-fpm.
func (t *tuner) runtimeMemory(ctx context.Context, cfg knob.Config, v string) (workerMemory, error) {
	spec := arms.TrialSpec{Phase: "sizing " + v, Metric: MetricGoodput, Conc: max(t.conc, cfg.MaxChildren), Detail: true, Steady: true}
	a := t.src.Arm(cfg, spec)
	defer a.Stop()
	if err := a.Start(ctx); err != nil {
		return workerMemory{}, err
	}
	for i := 0; i < sizingTrials; i++ {
		if _, err := a.Trial(ctx); err != nil {
			return workerMemory{}, err
		}
	}
	return t.memoryOf(spec.Phase, ""), nil
}

// memoryOf is the memory of the trials of phase (and of configuration config, when given): the peaks of
// private and front memory, and the largest shared figure. A worker counts at least PHP's own peak for a
// request (phpPeak), as the pool's sizing counts it: the same PHP and app under every runtime, and the one
// figure for all, since only php-fpm reports it.
func (t *tuner) memoryOf(phase, config string) workerMemory {
	var m workerMemory
	for _, tr := range t.log.trials {
		if tr.Phase != phase || (config != "" && tr.Config != config) {
			continue
		}
		m.perWorker, m.shared, m.front = max(m.perWorker, tr.WorkerUSS), max(m.shared, tr.WorkerShared), max(m.front, tr.FrontPSS)
	}
	if m.perWorker > 0 {
		m.perWorker = max(m.perWorker, t.phpPeak())
	}
	return m
}

// phpPeak is the largest memory PHP reported for a request in the run: the URLs' as checked, the sweep's and
// any trial's (php-fpm's status page).
func (t *tuner) phpPeak() int64 {
	var peak int64
	if ps := t.pool; ps != nil {
		peak = ps.PeakRequestBytes
	}
	for _, u := range t.log.urls {
		peak = max(peak, u.PeakMemory)
	}
	for _, tr := range t.log.trials {
		if tr.FPM != nil {
			peak = max(peak, tr.FPM.PeakRequestMemory)
		}
	}
	return peak
}

// runtimesDone notes the server race for the table (made at the end, when second looks have run too).
func (t *tuner) runtimesDone(rc *raced) {
	if rc.r.knob.Name != knob.ServerName || t.runtimes == nil {
		return
	}
	t.runtimes.raced = rc
	for _, c := range rc.cfgs {
		t.runtimes.arms[rc.r.knob.Get(c)] = arms.RunsOn(c, rc.spec).String()
	}
}

// runtimesTable fills in what each runtime served and took in the race, beside its size.
func (t *tuner) runtimesTable() *Runtimes {
	rr := t.runtimes
	if rr == nil || rr.raced == nil {
		return nil
	}
	table := *rr.table
	table.List = slices.Clone(rr.table.List)
	rc := rr.raced
	status := map[string]Comparison{}
	for _, c := range rc.comps {
		status[c.B] = c
	}
	phase := rc.spec.Phase
	for i := range table.List {
		r := &table.List[i]
		config := rr.arms[r.Server]
		m := t.memoryOf(phase, config)
		r.PerWorkerBytes, r.SharedBytes, r.FrontBytes = m.perWorker, m.shared, m.front
		r.TotalBytes = m.shared + m.front + int64(r.Size)*m.perWorker
		var good, perCPU []float64
		for _, tr := range t.log.trials {
			if tr.Phase == phase && tr.Config == config && !tr.Duet {
				good = append(good, tr.Goodput)
				if tr.ReqPerCPUS > 0 {
					perCPU = append(perCPU, tr.ReqPerCPUS)
				}
			}
		}
		r.Rounds = len(good)
		if len(good) > 0 {
			r.RPS = stats.Median(good)
		}
		if len(perCPU) > 0 {
			r.ReqPerCPUS = stats.Median(perCPU)
		}
		r.P50Us, r.P99Us = rr.latency.Quantiles(config)
		if i == 0 {
			r.Status = experiment.StatusWinner
			if k := rc.r.knob.Get(rc.best); k != r.Server {
				r.Status = "incumbent"
			}
			continue
		}
		if c, ok := status[r.Server]; ok {
			r.Status = c.Status
			if c.Stats.Verdict != "" {
				vs := c.Stats
				r.Vs = &vs
			}
			r.P99Vs = c.P99
			if c.Note != "" {
				r.Note = joinNote(r.Note, c.Note)
			}
		}
	}
	return &table
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
