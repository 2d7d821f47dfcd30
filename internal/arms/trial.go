package arms

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
// cgroup measured the kills, not the configuration: it is a fault of that trial, measured again once the pool
// has respawned its workers, up to oomTries times (a neighbour's start or a burst of the page cache passes);
// after that it fails with ErrOOM, which ends the race, not the run.
func (s *stackSet) trial(ctx context.Context, spec TrialSpec, w *Stack) (experiment.Observation, error) {
	for try := 1; ; try++ {
		obs, err := s.trialOnce(ctx, spec, w)
		if !errors.Is(err, ErrOOM) || try == oomTries || w.Server.Died() != nil || ctx.Err() != nil {
			return obs, err
		}
		s.oomOnce.Do(func() {
			s.warn(fmt.Sprintf("%v; such trials are measured again, and a race whose trials keep meeting it ends there", err))
		})
		select {
		case <-ctx.Done():
			return experiment.Observation{}, ctx.Err()
		case <-time.After(oomPause):
		}
	}
}

// oomTries is how often a trial the OOM killer struck in is run; oomPause the wait before the next, while php-fpm
// respawns the killed workers and the kernel settles.
const (
	oomTries = 3
	oomPause = 500 * time.Millisecond
)

// faulted is rec as recorded: marked when the OOM killer struck during its trial on w.
func (s *stackSet) faulted(rec TrialRecord, w *Stack) TrialRecord {
	if n := s.oom.count() - w.kills; n > 0 {
		rec.Fault = fmt.Sprintf("the OOM killer killed %d process(es) during the trial", n)
	}
	return rec
}

// trialOnce is one try of trial.
func (s *stackSet) trialOnce(ctx context.Context, spec TrialSpec, w *Stack) (obs experiment.Observation, err error) {
	if err := w.Server.Died(); err != nil {
		return experiment.Observation{}, fmt.Errorf("%s: %w", w.Config, err)
	}
	kills := s.oom.count()
	w.kills = kills
	defer func() {
		if oerr := s.oom.check(kills); oerr != nil && ctx.Err() == nil {
			obs, err = experiment.Observation{}, fmt.Errorf("%s: %w", w.Config, oerr)
		}
	}()
	switch {
	case spec.Metric == MetricCPU:
		obs, err = s.cpuTrial(ctx, spec, w)
	case spec.Split && spec.Duet:
		obs, err = s.capacityTrial(ctx, spec, w)
	default:
		obs, err = s.goodputTrial(ctx, spec, w)
	}
	// A server that died during the trial: what was measured is its death (nginx's 502s), not the configuration.
	if derr := w.Server.Died(); derr != nil {
		return experiment.Observation{}, fmt.Errorf("%s: %w", w.Config, derr)
	}
	return obs, err
}

// goodputTrial is a warm-up and a measured window of closed-loop load through nginx: successful requests a
// second. The workers' memory and CPU are sampled; with spec.Detail php-fpm's counters are read around it.
func (s *stackSet) goodputTrial(ctx context.Context, spec TrialSpec, w *Stack) (experiment.Observation, error) {
	began := time.Now()
	for attempt := 0; ; attempt++ {
		obs, stalled, err := s.goodputWindow(ctx, spec, w, began, attempt == goodputTries-1)
		if err != nil || !stalled || ctx.Err() != nil {
			return obs, err
		}
	}
}

// goodputTries is how often a goodput trial that completed nothing, while the queue is not known yet, is tried with
// a longer window before it counts as it is (before, the last try's empty window reached the engine as a figure
// of zero, which ended the run).
const goodputTries = 3

// maxQueue bounds the wait a trial's window is stretched to outlast.
const maxQueue = 4 * time.Second

// goodputWindow is one try of goodputTrial; stalled says that it completed nothing in a window shorter than the
// longest it may stretch to, before any window of the stack completed a request (the next try is longer: the
// queue outlasted the window), unless it is the last. Once the queue is known, the window is twice as long as it:
// a window that completes nothing then is a stall of the app's own (a lock, a stampede), part of what it serves,
// and counts as one request in its window. (Stretched again, each stall of an app that held every request 3 s
// once in 400 cost a goodput trial 8.5 s, and the stall was not counted.)
func (s *stackSet) goodputWindow(ctx context.Context, spec TrialSpec, w *Stack, began time.Time, last bool) (experiment.Observation, bool, error) {
	o := s.LoadOptions(w, spec.Conc)
	o.Warmup, o.Duration = max(o.Warmup, w.queue*3/2), max(o.Duration, 2*w.queue)
	o.Drain = true // every request sent is answered before the CPU is read: capacity counts all of the work
	r, err := load.NewRunner(o)
	if err != nil {
		return experiment.Observation{}, false, err
	}
	var before *measure.FPMStatus
	if spec.Detail {
		sc, cancel := context.WithTimeout(ctx, 5*time.Second)
		before, _ = measure.ReadFPMStatus(sc, w.Pool.Network, w.Pool.Address, w.Pool.StatusPath)
		cancel()
	}
	sampler := measure.NewSampler(w.Server.Groups(), 200*time.Millisecond)
	_ = sampler.Start(ctx)
	cpu0, cpuErr := w.Server.ServersCPU()
	res, err := r.Trial(ctx, 0, 0)
	cpu1, cpuErr1 := w.Server.ServersCPU()
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
		w.queue, w.served = min(time.Duration(float64(spec.Conc)/res.RPS*float64(time.Second)), maxQueue), true
	} else if !w.served && w.queue < maxQueue && !last {
		w.queue = min(max(2*w.queue, o.Warmup+o.Duration), maxQueue)
		return experiment.Observation{}, true, nil
	}
	if errors.Is(err, load.ErrNoRequests) {
		// A stall is an observation, not a failure of the run: it counts as one request in its window.
		err = nil
		s.stallOnce.Do(func() {
			s.warn(fmt.Sprintf("a %s trial of %s completed no request in %s: the app stalls now and then (or its pool "+
				"is overwhelmed), and such windows count as one request in them", spec.Phase, w.Config, o.Duration.Round(time.Millisecond)))
		})
	}
	if err != nil {
		return experiment.Observation{}, false, s.trialError(w, err)
	}
	rec := TrialRecord{Phase: spec.Phase, Config: w.Config.String(), Stack: w.serial, Concurrency: spec.Conc, Metric: MetricGoodput, RPS: res.RPS,
		Goodput: good, Requests: res.Requests, Errors: res.Errors, Latency: res.Latency, ClientCPUUs: res.ClientCPUUsPerReq}
	if sample != nil && res.Requests > 0 {
		rec.ServerCPU = map[string]float64{}
		for g, d := range sample.CPU {
			rec.ServerCPU[g] = d.Seconds() * 1e6 / float64(served(res))
		}
		if wm, ok := sample.Workers[w.Server.PHP()]; ok {
			rec.WorkerPSS, rec.WorkerUSS, rec.WorkerShared, rec.Workers = wm.MeanPSS, wm.PeakUSS, wm.Shared, wm.Count
		}
		if g := w.Server.HTTPServer(); g != w.Server.PHP() {
			rec.FrontPSS = sample.GroupPSS[g]
		}
	}
	if before != nil && ctx.Err() == nil {
		sc, cancel := context.WithTimeout(ctx, 5*time.Second)
		if after, err := measure.ReadFPMStatus(sc, w.Pool.Network, w.Pool.Address, w.Pool.StatusPath); err == nil {
			d := measure.Delta(before, after)
			rec.FPM = &d
		}
		cancel()
	}
	spec.Latency.Add(rec.Config, res.Histogram())
	// A window that served nothing counts as one request in it: a usable (and damning) log ratio.
	rec.Value = max(good, 1/res.DurationS)
	rec.WallS = time.Since(began).Seconds()
	obs := experiment.Observation{Value: rec.Value, Requests: ok, Errors: res.Errors, Rate: good, Step: 1 / float64(max(ok, 1)), Stack: w.serial,
		P99: windowP99(res, o.Duration)}
	if cpuErr == nil && cpuErr1 == nil && cpu1 > cpu0 {
		// The servers' CPU was read before the first request was sent and after the last was answered (the
		// load drains): all of its work, and nothing else, is inside, as in a CPU trial. Counted as the window's
		// answers against the window's share of that CPU by time, capacity varied a round as much as goodput
		// on the presets; drained, 1.5 to 5.5% against goodput's 3.7 to 7.8% on WordPress, MediaWiki and DokuWiki.
		n := served(res)
		rec.ReqPerCPUS = float64(n) / (cpu1 - cpu0).Seconds()
		obs.Second, obs.SecondStep, obs.Capacity = rec.ReqPerCPUS, 1/float64(n), rec.ReqPerCPUS
	}
	s.record(s.faulted(rec, w))
	return obs, false, nil
}

// windowP99 is a goodput window's p99, microseconds, the requests in flight at its close counted (answered in
// the drain: load.Result.TailP99), since a tail longer than the window would be in flight then: a window holds
// 40 requests at the peak's rate, 0.3 s at the least. A window that completed nothing held its requests for
// longer than itself.
func windowP99(res *load.Result, window time.Duration) float64 {
	if p := res.TailP99(); p > 0 {
		return p
	}
	return float64(max(window/time.Microsecond, 1))
}

// served is the count of requests a goodput trial's servers did the work of: all answered well, the
// warm-up's and the drain's too; where the engine does not count them (k6), the window's.
func served(res *load.Result) int64 {
	if res.Served > 0 {
		return res.Served
	}
	return max(res.Requests-res.Errors, 1)
}

// cpuTrial sends a fixed set of requests (fixedSet) and reads php-fpm's CPU time before the first and after the
// last: every request's whole cost falls inside, and nothing else does, so requests per CPU-second is exact for
// these requests, whatever else the machine is doing (a neighbour that takes a core slows throughput, not this).
func (s *stackSet) cpuTrial(ctx context.Context, spec TrialSpec, w *Stack) (experiment.Observation, error) {
	pgid := w.Server.PID(w.Server.PHP())
	res, cpu, wall, err := s.fixedSet(ctx, w, spec.Conc, s.lengths.CPURequests, func() (time.Duration, error) {
		return measure.GroupCPU(pgid)
	})
	if err != nil {
		return experiment.Observation{}, err
	}
	ok := res.Requests - res.Errors
	rec := fixedRecord(spec, w, MetricCPU, res, wall)
	rec.CPUs = w.cpus
	if res.Requests > 0 && cpu > 0 {
		rec.CPUUsPerReq = float64(cpu/time.Microsecond) / float64(res.Requests)
		rec.ServerCPU = map[string]float64{w.Server.PHP(): rec.CPUUsPerReq}
	}
	rec.Value = float64(max(ok, 1)) / max(cpu.Seconds(), 1e-6)
	s.record(s.faulted(rec, w))
	return experiment.Observation{Value: rec.Value, Requests: ok, Errors: res.Errors, Rate: rec.Goodput, Stack: w.serial}, nil
}

// capacityTrial is a split round's duet trial (replicaArm.SplitTrial): the fixed set of requests a CPU trial
// sends (fixedSet), at the race's connections, with the servers' CPU time (php-fpm's and nginx's, as a goodput
// trial's capacity reads it) around them. Every arm's duet serves the same requests, so what the URLs cost
// cancels in their ratio as the machine's noise does; a goodput window's count of them does not (the demo's 0.3 s
// windows, 22 to 77 requests an arm in a duet of three: capacity varied 8 to 9% a round).
func (s *stackSet) capacityTrial(ctx context.Context, spec TrialSpec, w *Stack) (experiment.Observation, error) {
	res, cpu, wall, err := s.fixedSet(ctx, w, spec.Conc, max(s.lengths.SplitRequests, 1), w.Server.ServersCPU)
	if err != nil {
		return experiment.Observation{}, err
	}
	ok := res.Requests - res.Errors
	rec := fixedRecord(spec, w, MetricGoodput, res, wall)
	rec.ReqPerCPUS = float64(max(ok, 1)) / max(cpu.Seconds(), 1e-6)
	rec.Value = rec.Goodput
	s.record(s.faulted(rec, w))
	return experiment.Observation{Value: rec.ReqPerCPUS, Capacity: rec.ReqPerCPUS, Second: rec.ReqPerCPUS,
		Requests: ok, Errors: res.Errors, Rate: rec.Goodput, Stack: w.serial}, nil
}

// fixedSet sends n requests over conc connections to w, every connection whole cycles of the mix (so every such
// trial serves the same requests, whatever the URLs cost), and reads cpu before the first and after the last:
// the result, the CPU time between, and the wall time the set took.
func (s *stackSet) fixedSet(ctx context.Context, w *Stack, conc, n int,
	cpu func() (time.Duration, error)) (*load.Result, time.Duration, time.Duration, error) {
	o := s.LoadOptions(w, conc)
	o.Requests, o.Duration, o.Warmup, o.Even = int64(n), 0, 0, true
	r, err := load.NewRunner(o)
	if err != nil {
		return nil, 0, 0, err
	}
	began := time.Now()
	before, err := cpu()
	if err != nil {
		return nil, 0, 0, s.trialError(w, err)
	}
	res, err := r.Trial(ctx, 0, 0)
	if ctx.Err() != nil {
		return nil, 0, 0, ctx.Err()
	}
	if res == nil || (err != nil && !errors.Is(err, load.ErrNoRequests)) {
		return nil, 0, 0, s.trialError(w, err)
	}
	after, err := cpu()
	if err != nil {
		return nil, 0, 0, s.trialError(w, err)
	}
	return res, after - before, time.Since(began), nil
}

// fixedRecord is the record of a fixed set's trial on w of metric: its rates over the wall time it took.
func fixedRecord(spec TrialSpec, w *Stack, metric string, res *load.Result, wall time.Duration) TrialRecord {
	ok := res.Requests - res.Errors
	return TrialRecord{Phase: spec.Phase, Config: w.Config.String(), Stack: w.serial, Duet: spec.Duet,
		Concurrency: spec.Conc, Metric: metric, RPS: float64(res.Requests) / wall.Seconds(),
		Goodput: float64(ok) / wall.Seconds(), Requests: res.Requests, Errors: res.Errors, Latency: res.Latency,
		ClientCPUUs: res.ClientCPUUsPerReq, WallS: wall.Seconds()}
}

// trialError says what went wrong in a trial, with the stack's own last word when one of its processes died.
func (s *stackSet) trialError(w *Stack, err error) error {
	if err == nil {
		err = errors.New("no result")
	}
	if derr := w.Server.Died(); derr != nil {
		return fmt.Errorf("%s: %w (%v)", w.Config, derr, err)
	}
	return fmt.Errorf("%s: %w", w.Config, err)
}
