package check

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/measure"
)

// Defaults of a check.
const (
	DefaultFor      = 2 * time.Minute
	DefaultInterval = time.Second
)

// Options are a check's pools and window.
type Options struct {
	Targets  []Target
	Skipped  []Skipped
	For      time.Duration
	Interval time.Duration
	// Progress, when set, is called about once an interval while sampling.
	Progress func(Progress)
}

// Progress is where sampling is.
type Progress struct {
	Elapsed, Total time.Duration
	Pools          []PoolProgress
}

// PoolProgress is one pool's sampling so far.
type PoolProgress struct {
	Name    string
	Samples int
	Busy    int
	Queue   int // -1 unknown
}

// Preflight reads each pool's status page once: a pool that does not answer is bad input (exit 2), found before
// anything is written. It fills in what the page tells of each pool (its name, its master through a worker).
func Preflight(ctx context.Context, targets []Target, prefix string) ([]Target, error) {
	running, _ := measure.RunningPools(prefix)
	out := make([]Target, len(targets))
	for i, t := range targets {
		if err := preflight(ctx, &t, running); err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// Run samples the pools (Preflight's targets) for o.For, then sums up. Interrupted (ctx done), it returns what it
// has, marked partial, with ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.For <= 0 || o.Interval <= 0 {
		return nil, exitcode.UsageErrorf("--for and --interval must be positive")
	}
	if o.Interval > o.For {
		return nil, exitcode.UsageErrorf("--interval %s is longer than --for %s: give a window of several intervals", o.Interval, o.For)
	}
	res := &Result{Schema: Schema, Started: time.Now().UTC(), ForS: o.For.Seconds(), IntervalS: o.Interval.Seconds(), Skipped: o.Skipped}
	if len(o.Targets) == 0 {
		return res, nil
	}
	targets := o.Targets
	if l, err := measure.ReadLimits(""); err == nil {
		res.Host = Host{CPUs: l.HostCPUs, MemTotal: l.HostMemTotal, MemAvailable: l.HostMemAvailable}
	}

	start := time.Now()
	end := start.Add(o.For)
	runs := make([]*poolRun, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		runs[i] = newPoolRun(t, o.Interval, o.For)
		runs[i].before()
		wg.Add(1)
		go func(r *poolRun) {
			defer wg.Done()
			r.s.run(ctx, end)
		}(runs[i])
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	reportProgress(ctx, o, runs, start, done)
	<-done
	stopped := time.Now()
	res.ElapsedS = stopped.Sub(start).Seconds()
	res.Partial = ctx.Err() != nil
	for _, r := range runs {
		w := r.after(start, stopped)
		res.Pools = append(res.Pools, analyze(r.t, w))
	}
	if res.Partial {
		return res, ctx.Err()
	}
	return res, nil
}

func reportProgress(ctx context.Context, o Options, runs []*poolRun, start time.Time, done <-chan struct{}) {
	if o.Progress == nil {
		return
	}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		p := Progress{Elapsed: time.Since(start), Total: o.For}
		for _, r := range runs {
			n, b, q := r.s.progress()
			p.Pools = append(p.Pools, PoolProgress{Name: r.t.Name, Samples: n, Busy: b, Queue: q})
		}
		o.Progress(p)
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// preflight reads a pool's status page once: where nothing answers, or no status page does, the check stops
// with what to do. It fills what the page tells of the pool (its name, its master through a worker).
func preflight(ctx context.Context, t *Target, running []measure.RunningPool) error {
	c, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	st, err := measure.ReadFPMStatus(c, t.Network, t.Address, t.StatusPath)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if timedOut(err) {
			// Every worker is held, a finding; a connection made waits in the queue.
			t.unanswered = !errors.Is(err, fcgi.ErrConnect)
			return nil
		}
		return exitcode.WithCode(exitcode.Usage, statusError(*t, err))
	}
	if t.Name == "" {
		t.Name = st.Pool
	}
	if len(st.Processes) > 0 {
		linkByWorker(t, st.Processes[0].PID, running)
		if t.WorkerGID < 0 {
			// An ondemand pool idle when it was found had no worker: the status request started one.
			t.WorkerUID, t.WorkerGID = measure.ProcIDs(st.Processes[0].PID)
		}
	}
	return nil
}

// statusError says why a pool's status page could not be read, and what to do.
func statusError(t Target, err error) error {
	where := t.String()
	file := "the pool's file"
	if t.Pool != nil {
		file = t.Pool.File
	}
	switch {
	case isRefused(err):
		return fmt.Errorf("pool %s: nothing listens there (%v): is php-fpm running, and is this its listen address?", where, unwrapAll(err))
	case isPermission(err):
		return fmt.Errorf("pool %s: %v: run check as root, or as a user in the socket's group (listen.group)", where, unwrapAll(err))
	}
	if t.Pool != nil && t.Pool.StatusPath != "" && t.Pool.StatusPath != t.StatusPath {
		return fmt.Errorf("pool %s: %v at %s: %s sets pm.status_path = %s: give --fpm-status %s", where, err, t.StatusPath, file,
			t.Pool.StatusPath, t.Pool.StatusPath)
	}
	return fmt.Errorf("pool %s: %v: set pm.status_path = %s in the pool's section of %s, then %s; or give --fpm-status",
		where, err, t.StatusPath, file, reloadHint(t.MasterPID))
}

// poolRun is one pool's sampling, with what is read before and after it.
type poolRun struct {
	t     Target
	s     *sampler
	opWhy string
	w     window
}

func newPoolRun(t Target, interval, window time.Duration) *poolRun {
	probe, why := newOpcacheProbe(t)
	return &poolRun{t: t, s: newSampler(t, interval, window, probe), opWhy: why}
}

// before reads what frames the window: the master's memory, its cgroup's limits and OOM count, the pool's
// CPU time so far.
func (r *poolRun) before() {
	r.w.cpuOK = false
	pid := r.t.MasterPID
	if pid == 0 {
		r.w.limitsErr = errors.New("the pool's master was not found, so its cgroup is unknown")
		return
	}
	l, err := measure.ReadLimitsOf(pid)
	if err != nil {
		r.w.limitsErr = err
	} else {
		r.w.limits = &l
		r.w.oomBefore, r.w.oomOK = l.OOMKills()
	}
	if st, err := measure.ReadProc(pid); err == nil && st.PGID == pid {
		// php-fpm's master leads its process group: the group's CPU is the pool's (every pool of the master).
		if cpu, err := measure.GroupCPU(pid); err == nil {
			r.w.cpuUsed, r.w.cpuOK = -cpu, true
		}
	}
}

// after reads the frame's other side and hands over what the sampler gathered.
func (r *poolRun) after(start, end time.Time) window {
	w := r.w
	w.start, w.end = start, end
	pid := r.t.MasterPID
	if pid > 0 {
		if st, err := measure.ReadProc(pid); err == nil {
			w.masterUSS = st.USS
		}
		if w.cpuOK {
			if cpu, err := measure.GroupCPU(pid); err == nil {
				w.cpuUsed += cpu
			} else {
				w.cpuOK = false
			}
		}
		if w.limits != nil {
			if n, ok := w.limits.OOMKills(); ok && w.oomOK {
				w.oomAfter = n
			} else {
				w.oomOK = false
			}
		}
	}
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	w.obs, w.queue, w.backlog, w.queueErr, w.missed, w.own = s.obs, s.queue, s.backlog, s.queueErr, s.missed, s.own
	w.memErr, w.failed, w.failErr, w.held = s.memErr, s.failed, s.failErr, s.held
	w.opcache, w.opWhy = s.opcache, r.opWhy
	if s.opErr != nil {
		w.opWhy = s.opErr.Error()
	}
	return w
}

func timedOut(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

func isPermission(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// unwrapAll is the innermost error's text ("connection refused" rather than the dial's whole chain).
func unwrapAll(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
