package tune

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/experiment"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
)

// trial runs one measured trial on w and records it. A trial during which the OOM killer struck in the stacks'
// cgroup fails: it measured the kills.
func (s *stacks) trial(ctx context.Context, spec TrialSpec, w *warmStack) (obs experiment.Observation, err error) {
	if err := w.st.Died(); err != nil {
		return experiment.Observation{}, fmt.Errorf("%s: %w", w.cfg, err)
	}
	kills := s.oom.count()
	defer func() {
		if oerr := s.oom.check(kills); oerr != nil && ctx.Err() == nil {
			obs, err = experiment.Observation{}, fmt.Errorf("%s: %w", w.cfg, oerr)
		}
	}()
	if spec.Metric == MetricCPU {
		obs, err = s.cpuTrial(ctx, spec, w)
	} else {
		obs, err = s.goodputTrial(ctx, spec, w)
	}
	// A server that died during the trial: what was measured is its death (nginx's 502s), not the configuration.
	if derr := w.st.Died(); derr != nil {
		return experiment.Observation{}, fmt.Errorf("%s: %w", w.cfg, derr)
	}
	return obs, err
}

// goodputTrial is a warm-up and a measured window of closed-loop load through nginx: successful requests a
// second. The workers' memory and CPU are sampled; with spec.Detail php-fpm's counters are read around it.
func (s *stacks) goodputTrial(ctx context.Context, spec TrialSpec, w *warmStack) (experiment.Observation, error) {
	began := time.Now()
	for attempt := 0; ; attempt++ {
		obs, stalled, err := s.goodputWindow(ctx, spec, w, began)
		if err != nil || !stalled || attempt == 2 || ctx.Err() != nil {
			return obs, err
		}
	}
}

// maxQueue bounds the wait a trial's window is stretched to outlast.
const maxQueue = 4 * time.Second

// goodputWindow is one try of goodputTrial; stalled says that it completed nothing in a window shorter than the
// longest it may stretch to (the next try is longer: the queue outlasted the window).
func (s *stacks) goodputWindow(ctx context.Context, spec TrialSpec, w *warmStack, began time.Time) (experiment.Observation, bool, error) {
	o := s.loadOptions(w, spec.Conc)
	o.Warmup, o.Duration = max(o.Warmup, w.queue*3/2), max(o.Duration, 2*w.queue)
	r, err := load.NewRunner(o)
	if err != nil {
		return experiment.Observation{}, false, err
	}
	var before *measure.FPMStatus
	if spec.Detail {
		sc, cancel := context.WithTimeout(ctx, 5*time.Second)
		before, _ = measure.ReadFPMStatus(sc, w.pool.Network, w.pool.Address, w.pool.StatusPath)
		cancel()
	}
	sampler := measure.NewSampler(map[string]int{"php-fpm": w.st.PID("php-fpm"), "nginx": w.st.PID("nginx")}, 200*time.Millisecond)
	_ = sampler.Start(ctx)
	cpu0, cpuErr := serverCPU(w)
	loadBegan := time.Now()
	res, err := r.Trial(ctx, 0, 0)
	loadWall := time.Since(loadBegan)
	cpu1, cpuErr1 := serverCPU(w)
	sample, _ := sampler.Stop()
	if ctx.Err() != nil {
		return experiment.Observation{}, false, ctx.Err() // interrupted: whatever the window held is no trial
	}
	if res == nil || !(res.DurationS > 0) {
		return experiment.Observation{}, false, s.trialError(w, err)
	}
	ok := res.Requests - res.Errors
	good := float64(ok) / res.DurationS
	if res.Requests > 0 {
		w.queue = min(time.Duration(float64(spec.Conc)/res.RPS*float64(time.Second)), maxQueue)
	} else if w.queue < maxQueue {
		w.queue = min(max(2*w.queue, o.Warmup+o.Duration), maxQueue)
		return experiment.Observation{}, true, nil
	}
	if errors.Is(err, load.ErrNoRequests) {
		// A stall is an observation, not a failure of the run: it counts as one request in its window.
		err = nil
		s.warn(fmt.Sprintf("a %s trial of %s completed no request in %s", spec.Phase, w.cfg, o.Duration.Round(time.Millisecond)))
	}
	if err != nil {
		return experiment.Observation{}, false, s.trialError(w, err)
	}
	rec := TrialRecord{Phase: spec.Phase, Config: w.cfg.String(), Concurrency: spec.Conc, Metric: MetricGoodput, RPS: res.RPS,
		Goodput: good, Requests: res.Requests, Errors: res.Errors, Latency: res.Latency, ClientCPUUs: res.ClientCPUUsPerReq}
	if sample != nil && res.Requests > 0 {
		rec.ServerCPU = map[string]float64{}
		// The sampler's window includes the warm-up: scale by the measured window's share of the time.
		share := o.Duration.Seconds() / (o.Duration + o.Warmup).Seconds()
		for g, d := range sample.CPU {
			rec.ServerCPU[g] = d.Seconds() * share * 1e6 / float64(res.Requests)
		}
		if wm, ok := sample.Workers["php-fpm"]; ok {
			rec.WorkerPSS, rec.WorkerUSS, rec.WorkerShared, rec.Workers = wm.MeanPSS, wm.PeakUSS, wm.Shared, wm.Count
		}
	}
	if before != nil && ctx.Err() == nil {
		sc, cancel := context.WithTimeout(ctx, 5*time.Second)
		if after, err := measure.ReadFPMStatus(sc, w.pool.Network, w.pool.Address, w.pool.StatusPath); err == nil {
			d := measure.Delta(before, after)
			rec.FPM = &d
		}
		cancel()
	}
	// A window that served nothing counts as one request in it: a usable (and damning) log ratio.
	rec.Value = max(good, 1/res.DurationS)
	rec.WallS = time.Since(began).Seconds()
	obs := experiment.Observation{Value: rec.Value, Requests: ok, Errors: res.Errors, Rate: good, Step: 1 / float64(max(ok, 1))}
	if cpuErr == nil && cpuErr1 == nil && cpu1 > cpu0 {
		// The servers' CPU was read around warm-up and window alike: the window's share of it is its share of
		// the time, the load being steady.
		cpu := (cpu1 - cpu0).Seconds() * res.DurationS / max(loadWall.Seconds(), res.DurationS)
		rec.ReqPerCPUS = float64(max(ok, 1)) / cpu
		obs.Second, obs.SecondStep = rec.ReqPerCPUS, obs.Step
	}
	s.record(rec)
	return obs, false, nil
}

// serverCPU is the CPU time php-fpm's and nginx's processes have used, from the scheduler's own clock
// (nanoseconds, where the sampler's ticks move in steps of 10 ms a process).
func serverCPU(w *warmStack) (time.Duration, error) {
	var total time.Duration
	for _, name := range []string{"php-fpm", "nginx"} {
		d, err := measure.GroupCPU(w.st.PID(name))
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// cpuTrial sends a fixed set of requests (every connection whole cycles of the mix, so every trial serves the
// same requests, whatever the URLs cost) and reads php-fpm's CPU time before the first and after the last:
// every request's whole cost falls inside, and nothing else does, so requests per CPU-second is exact for
// these requests, whatever else the machine is doing (a neighbour that takes a core slows throughput, not
// this).
func (s *stacks) cpuTrial(ctx context.Context, spec TrialSpec, w *warmStack) (experiment.Observation, error) {
	o := s.loadOptions(w, spec.Conc)
	o.Requests, o.Duration, o.Warmup, o.Even = int64(s.lengths.cpuN), 0, 0, true
	r, err := load.NewRunner(o)
	if err != nil {
		return experiment.Observation{}, err
	}
	pgid := w.st.PID("php-fpm")
	began := time.Now()
	before, err := measure.GroupCPU(pgid)
	if err != nil {
		return experiment.Observation{}, s.trialError(w, err)
	}
	res, err := r.Trial(ctx, 0, 0)
	if ctx.Err() != nil {
		return experiment.Observation{}, ctx.Err()
	}
	if res == nil || (err != nil && !errors.Is(err, load.ErrNoRequests)) {
		return experiment.Observation{}, s.trialError(w, err)
	}
	after, err := measure.GroupCPU(pgid)
	if err != nil {
		return experiment.Observation{}, s.trialError(w, err)
	}
	wall := time.Since(began)
	cpu := after - before
	ok := res.Requests - res.Errors
	rec := TrialRecord{Phase: spec.Phase, Config: w.cfg.String(), Concurrency: spec.Conc, Metric: MetricCPU,
		RPS: float64(res.Requests) / wall.Seconds(), Goodput: float64(ok) / wall.Seconds(), Requests: res.Requests,
		Errors: res.Errors, Latency: res.Latency, ClientCPUUs: res.ClientCPUUsPerReq, WallS: wall.Seconds()}
	if res.Requests > 0 && cpu > 0 {
		rec.CPUUsPerReq = float64(cpu/time.Microsecond) / float64(res.Requests)
		rec.ServerCPU = map[string]float64{"php-fpm": rec.CPUUsPerReq}
	}
	rec.Value = float64(max(ok, 1)) / max(cpu.Seconds(), 1e-6)
	s.record(rec)
	return experiment.Observation{Value: rec.Value, Requests: ok, Errors: res.Errors, Rate: rec.Goodput}, nil
}

// trialError says what went wrong in a trial, with the stack's own last word when one of its processes died.
func (s *stacks) trialError(w *warmStack, err error) error {
	if err == nil {
		err = errors.New("no result")
	}
	if derr := w.st.Died(); derr != nil {
		return fmt.Errorf("%s: %w (%v)", w.cfg, derr, err)
	}
	return fmt.Errorf("%s: %w", w.cfg, err)
}
