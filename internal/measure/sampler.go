package measure

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
)

// DefaultInterval is the Sampler's memory sampling interval when none is given.
const DefaultInterval = 200 * time.Millisecond

// Sampler watches process groups during a trial: the CPU each group used over the window, and the memory of
// each group's workers sampled every interval.
//
// Group CPU counts processes that exited during the window. A process that exits takes its utime+stime out of
// /proc, but the parent that reaps it (php-fpm's and nginx's masters wait for their workers) adds them, with
// the child's own reaped children, to its cutime+cstime. So group CPU = sum over live members of
// utime+stime+cutime+cstime, differenced between Start and Stop. It misses a member reaped by a process outside
// the group, or by a parent that ignores SIGCHLD (SIG_IGN reaps without accounting): neither happens to php-fpm
// or nginx. Precision is USER_HZ: each process's time is truncated to 10 ms at each end.
type Sampler struct {
	groups   map[string]int
	pgids    map[int]bool
	interval time.Duration

	mu      sync.Mutex
	state   int // 0 new, 1 running, 2 stopped
	cancel  context.CancelFunc
	done    chan struct{}
	start   time.Time
	ticks0  map[int]int64
	mem     map[int]*memAcc // the goroutine's until done is closed
	samples int
	cpuMu   sync.Mutex
	selfCPU time.Duration // this process's CPU spent sampling
	err     error         // the first error that is not a process going away
	buf     []byte
}

// Sample is what a Sampler saw between Start and Stop. Maps are keyed by the group names given to NewSampler.
type Sample struct {
	Elapsed time.Duration            `json:"elapsed_ns"`
	CPU     map[string]time.Duration `json:"cpu_ns"`  // per group over the window, exited processes included
	Workers map[string]WorkerMemory  `json:"workers"` // per group: workers only (the leader, pid == pgid, excluded)
	// GroupPSS is per group the peak over samples of the PSS summed over all its processes (leader included):
	// what the group really held at its fullest, shared pages counted once.
	GroupPSS map[string]int64 `json:"group_pss"`
	Samples  int              `json:"samples"` // memory samples taken
	// SamplerCPU is the CPU time the sampling took in this process, Start and Stop included (about 10 us per
	// process on the machine per sample): subtract it from a SelfCPU difference that spans the window.
	SamplerCPU time.Duration `json:"sampler_cpu_ns"`
}

// WorkerMemory is the memory of a group's workers in bytes. Means are over all (worker, sample) observations.
// Size a pool as Shared + N x PeakUSS (DESIGN 4): PSS shares the common pages out and falls as workers are added.
type WorkerMemory struct {
	Count   int   `json:"count"`    // distinct workers seen (pid and start time)
	PeakUSS int64 `json:"peak_uss"` // high-water of private memory, over workers and samples
	MeanUSS int64 `json:"mean_uss"`
	MeanPSS int64 `json:"mean_pss"`
	PeakPSS int64 `json:"peak_pss"`
	// Shared is a typical worker's RSS - USS (the median over observations): opcache's segment, the binary's
	// text, libraries: counted once for the pool.
	Shared int64 `json:"shared"`
}

type memAcc struct {
	seen             map[[2]uint64]bool // pid, start time
	n                int64
	sumUSS, sumPSS   int64
	peakUSS, peakPSS int64
	shared           []int64
	peakGroupPSS     int64
}

func newMemAcc() *memAcc { return &memAcc{seen: map[[2]uint64]bool{}} }

// add counts one observation of a worker (pid and start time tell it from a later process with its pid).
func (a *memAcc) add(pid int, start uint64, m memLine) {
	uss := m.privateClean + m.privateDirty
	a.seen[[2]uint64{uint64(pid), start}] = true
	a.n++
	a.sumUSS += uss
	a.sumPSS += m.pss
	a.peakUSS = max(a.peakUSS, uss)
	a.peakPSS = max(a.peakPSS, m.pss)
	a.shared = append(a.shared, m.rss-uss)
}

// memory sums up the observations.
func (a *memAcc) memory() WorkerMemory {
	w := WorkerMemory{Count: len(a.seen), PeakUSS: a.peakUSS, PeakPSS: a.peakPSS}
	if a.n > 0 {
		w.MeanUSS, w.MeanPSS = a.sumUSS/a.n, a.sumPSS/a.n
		slices.Sort(a.shared)
		w.Shared = a.shared[len(a.shared)/2]
	}
	return w
}

// NewSampler watches the process groups named in groups (name -> pgid, e.g. {"php-fpm": 1234, "nginx": 1240}),
// sampling memory every interval (DefaultInterval when interval <= 0).
func NewSampler(groups map[string]int, interval time.Duration) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	s := &Sampler{groups: map[string]int{}, pgids: map[int]bool{}, interval: interval, mem: map[int]*memAcc{}}
	for name, pgid := range groups {
		s.groups[name] = pgid
		s.pgids[pgid] = true
		s.mem[pgid] = newMemAcc()
	}
	return s
}

// Start reads the groups' CPU times and starts sampling memory in a goroutine, until Stop or ctx is done. It
// fails when a group has no process.
func (s *Sampler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != 0 {
		return errors.New("measure: sampler already started")
	}
	defer s.account()()
	ticks, err := groupTicks(s.pgids)
	if err != nil {
		return err
	}
	for name, pgid := range s.groups {
		if _, ok := ticks[pgid]; !ok {
			return fmt.Errorf("measure: no process in group %q (pgid %d)", name, pgid)
		}
	}
	s.start, s.ticks0 = time.Now(), ticks
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	s.state = 1
	go s.run(ctx)
	return nil
}

func (s *Sampler) run(ctx context.Context) {
	defer close(s.done)
	defer s.account()()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.sampleMemory()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop reads the groups' CPU times, ends the sampling goroutine (it has returned when Stop returns), takes a
// last memory sample and reports. It fails if sampling met an error other than processes going away.
func (s *Sampler) Stop() (*Sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != 1 {
		return nil, errors.New("measure: sampler not running")
	}
	s.state = 2
	stopAccount := s.account()
	ticks, err := groupTicks(s.pgids)
	elapsed := time.Since(s.start)
	s.cancel()
	<-s.done
	if err != nil {
		stopAccount()
		return nil, err
	}
	s.sampleMemory()
	stopAccount()
	if s.err != nil {
		return nil, s.err
	}
	out := &Sample{
		Elapsed: elapsed, Samples: s.samples, SamplerCPU: s.selfCPU,
		CPU: map[string]time.Duration{}, Workers: map[string]WorkerMemory{}, GroupPSS: map[string]int64{},
	}
	for name, pgid := range s.groups {
		// A group that died out during the window is reported as zero, not as minus its start.
		out.CPU[name] = ticksToDuration(max(ticks[pgid]-s.ticks0[pgid], 0))
		a := s.mem[pgid]
		out.Workers[name] = a.memory()
		out.GroupPSS[name] = a.peakGroupPSS
	}
	return out, nil
}

// sampleMemory reads smaps_rollup of every member of every group once. Only the goroutine calls it while
// running, and Stop after the goroutine is done.
func (s *Sampler) sampleMemory() {
	groups, buf, err := scanGroups(s.pgids, s.buf)
	s.buf = buf
	if err != nil {
		s.fail(err)
		return
	}
	s.samples++
	for pgid, members := range groups {
		a := s.mem[pgid]
		var groupPSS int64
		for _, st := range members {
			if st.state == 'Z' {
				continue // exited, not reaped yet: no memory
			}
			m, buf, err := readMem(st.pid, s.buf)
			s.buf = buf
			if err != nil {
				if !isGone(err) {
					s.fail(err)
				}
				continue
			}
			if m.rss == 0 {
				continue // a kernel thread, or a process tearing down its memory
			}
			groupPSS += m.pss
			if st.pid == pgid {
				continue // the leader (php-fpm's or nginx's master) is not a worker
			}
			a.add(st.pid, st.start, m)
		}
		a.peakGroupPSS = max(a.peakGroupPSS, groupPSS)
	}
}

// account locks the goroutine to its thread and returns the function that unlocks it and adds the thread's
// CPU time since to selfCPU (Start's accounting may end while the goroutine runs: hence cpuMu).
func (s *Sampler) account() func() {
	runtime.LockOSThread()
	t0 := threadCPU()
	return func() {
		d := threadCPU() - t0
		runtime.UnlockOSThread()
		s.cpuMu.Lock()
		s.selfCPU += d
		s.cpuMu.Unlock()
	}
}

func (s *Sampler) fail(err error) {
	if s.err == nil {
		s.err = fmt.Errorf("measure: sampling memory: %w", err)
	}
}

// groupTicks is, per process group, the sum over its members of utime+stime+cutime+cstime, in ticks; a group
// with no member has no entry.
//
// The sum must not catch a reap half-way: a worker read, then reaped, then its master read counts the worker
// twice; the master read first and the worker gone when read counts it nowhere. So the members found by a scan
// are read again, and the snapshot is taken only when no member went away and no member's cutime+cstime moved
// between the two reads (then no member reaped anything while the second reads ran). Under heavy churn it
// settles for the last try, off by at most the workers reaped during it.
func groupTicks(pgids map[int]bool) (map[int]int64, error) {
	buf := make([]byte, 4096)
	var totals map[int]int64
	for try := 0; try < 5; try++ {
		groups, b, err := scanGroups(pgids, buf)
		if err != nil {
			return nil, err
		}
		buf = b
		totals = make(map[int]int64, len(groups))
		settled := true
		for pgid, members := range groups {
			totals[pgid] = 0
			for _, first := range members {
				again, b, err := readStat(first.pid, buf)
				buf = b
				if err != nil && !isGone(err) {
					return nil, err
				}
				if err != nil || again.start != first.start || again.pgrp != pgid {
					settled = false
					continue
				}
				if again.childTicks != first.childTicks {
					settled = false
				}
				totals[pgid] += again.ticks + again.childTicks
			}
		}
		if settled {
			break
		}
	}
	return totals, nil
}
