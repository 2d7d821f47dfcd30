package check

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/measure"
)

const (
	// statusTimeout bounds one status read: a pool whose every worker is held (kept connections, long
	// requests) may not answer at all, and that is itself a finding.
	statusTimeout = 10 * time.Second
	// opcacheReads is how many times opcache is read over a window (the first and the last frame it), at most
	// every opcacheMaxEvery: a cache that fills and restarts is full only part of the time.
	opcacheReads    = 10
	opcacheMaxEvery = 30 * time.Second
	// memReads is how many times the workers' memory is read over a window, at most every memMaxEvery and at
	// least every interval: a worker's smaps_rollup costs about 1.4 ms of CPU (measured beside a loaded demo pool),
	// most of what sampling costs, and memory moves slowly against a status read's every second.
	memReads    = 30
	memMaxEvery = 5 * time.Second
)

// observation is one status read and the workers' memory read right after it.
type observation struct {
	at     time.Time
	wait   time.Duration // the status request's own time: how long a request waited for a worker, plus ~1 ms
	status *measure.FPMStatus
	mem    map[int]procMem // by pid, for the workers in status; nil when not read at this sample
	queue  int             // the socket's accept queue right after, -1 unknown
	// ownBefore is how many requests check had sent the pool before this read: php-fpm's accepted conn counts
	// check's own, twice each (the read, and the kept connection's close), and they are not the app's.
	ownBefore int
}

type procMem struct{ uss, rss int64 }

// queueObs is one read of the kernel's accept queue.
type queueObs struct {
	at     time.Time
	queued int
}

// sampler samples one pool for the window.
type sampler struct {
	t        Target
	interval time.Duration
	probe    *opcacheProbe
	// opcacheEvery spaces opcache reads: a tenth of the window, at least an interval, at most opcacheMaxEvery;
	// memEvery the workers' memory reads likewise (memReads, memMaxEvery).
	opcacheEvery, memEvery time.Duration

	mu       sync.Mutex
	obs      []observation
	queue    []queueObs
	backlog  int
	queueErr error
	memErr   error // the first worker whose memory could not be read
	missed   int   // status reads that timed out
	held     []heldObs
	// lastMissed says the last status read timed out: the window's final read is then left out (it would too).
	lastMissed bool
	// abandoned are check's own unanswered status connections still in the accept queue: a closed connection
	// waits there until a worker accepts it, and the queue is first in, first out, so an answered read means
	// every older one is gone.
	abandoned int
	failed    int   // status reads that failed otherwise, twice in a row
	failErr   error // the first such failure
	own       int   // requests sent to the pool, answered or not
	opcache   []*measure.Opcache
	opErr     error
	lastOp    time.Time
	lastMem   time.Time
}

func newSampler(t Target, interval, window time.Duration, probe *opcacheProbe) *sampler {
	every := min(max(window/opcacheReads, interval), opcacheMaxEvery)
	mem := min(max(window/memReads, interval), memMaxEvery)
	s := &sampler{t: t, interval: interval, probe: probe, opcacheEvery: every, memEvery: mem}
	if t.unanswered {
		s.abandoned = 1
	}
	return s
}

// run samples until end or until ctx is done: the accept queue every interval, the status page (with the
// workers' memory) every interval when the last read has answered, opcache opcacheReads times. final adds a
// last status and opcache read once the window is over (not after an interrupt: nothing more is sent then).
func (s *sampler) run(ctx context.Context, end time.Time) {
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	stop := time.NewTimer(time.Until(end))
	defer stop.Stop()
	done := make(chan struct{}, 1)
	inflight := false
	start := func() {
		inflight = true
		go func() { s.readStatus(ctx, s.opcacheDue(), s.memDue()); done <- struct{}{} }()
	}
	s.readQueue(false)
	start()
	for {
		select {
		case <-tick.C:
			s.readQueue(inflight)
			if !inflight {
				start()
			}
		case <-done:
			inflight = false
		case <-stop.C:
			if inflight {
				<-done
			}
			if ctx.Err() == nil && !s.missedLast() {
				s.readStatus(ctx, s.opcacheWorks(), true)
			}
			return
		case <-ctx.Done():
			if inflight {
				<-done
			}
			return
		}
	}
}

func (s *sampler) missedLast() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastMissed
}

// opcacheWorks says whether opcache can be read (the script placed and answered, or not tried yet).
func (s *sampler) opcacheWorks() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probe != nil && s.opErr == nil
}

func (s *sampler) opcacheDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.probe != nil && s.opErr == nil && time.Since(s.lastOp) >= s.opcacheEvery
}

// memDue says whether the workers' memory is due: memEvery since the last read, less half an interval for the
// ticks' jitter.
func (s *sampler) memDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastMem) >= s.memEvery-s.interval/2
}

// readStatus reads the status page, then (when due) the memory of the workers it lists and opcache.
func (s *sampler) readStatus(ctx context.Context, withOpcache, withMem bool) {
	c, cancel := context.WithTimeout(ctx, statusTimeout)
	s.mu.Lock()
	ownBefore := s.own
	s.own++
	s.mu.Unlock()
	t0 := time.Now()
	st, err := measure.ReadFPMStatus(c, s.t.Network, s.t.Address, s.t.StatusPath)
	if err != nil && c.Err() == nil && !timedOut(err) {
		// Not a timeout: a read that failed outright (seen once in CI on a healthy pool, on a loaded machine) is
		// tried again before it counts.
		s.mu.Lock()
		s.own++
		s.mu.Unlock()
		st, err = measure.ReadFPMStatus(c, s.t.Network, s.t.Address, s.t.StatusPath)
	}
	wait := time.Since(t0)
	missed := c.Err() != nil || timedOut(err) // the dial's own deadline may fire before ctx says so
	cancel()
	var held *heldObs
	if err != nil && missed && ctx.Err() == nil {
		held = readHeld(s.t)
	}
	s.mu.Lock()
	s.lastMissed = err != nil && missed
	if s.lastMissed && !errors.Is(err, fcgi.ErrConnect) { // one never connected (a full backlog) is not in the queue
		s.abandoned++
	} else if err == nil {
		s.abandoned = 0
	}
	s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.mu.Lock()
			if missed {
				s.missed++
				if held != nil {
					s.held = append(s.held, *held)
				}
			} else if s.failed++; s.failErr == nil {
				s.failErr = err
			}
			s.mu.Unlock()
		}
		return
	}
	o := observation{at: time.Now(), wait: wait, status: st, queue: -1, ownBefore: ownBefore}
	var memErr error
	if withMem {
		o.mem = make(map[int]procMem, len(st.Processes))
		for _, p := range st.Processes {
			ps, err := measure.ReadProc(p.PID)
			if err == nil {
				o.mem[p.PID] = procMem{uss: ps.USS, rss: ps.RSS}
			} else if !errors.Is(err, os.ErrNotExist) && memErr == nil {
				memErr = err // another user's workers, when check is not root
			}
		}
	}
	if q, err := measure.ReadListenQueue(s.t.Network, s.t.Address); err == nil {
		o.queue = q.Queued
	} else if s.t.Network == "tcp" {
		o.queue = int(st.ListenQueue)
	}
	s.mu.Lock()
	s.obs = append(s.obs, o)
	if memErr != nil && s.memErr == nil {
		s.memErr = memErr
	}
	if withMem {
		s.lastMem = o.at
	}
	s.mu.Unlock()
	if withOpcache && ctx.Err() == nil {
		s.readOpcache(ctx)
	}
}

func (s *sampler) readOpcache(ctx context.Context) {
	c, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	s.mu.Lock()
	s.own++
	s.mu.Unlock()
	o, err := s.probe.read(c, s.t)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastOp = time.Now()
	if err != nil {
		if ctx.Err() == nil && len(s.opcache) == 0 {
			s.opErr = err // it will not work later either; a failure after a success is a missed read
		}
		return
	}
	s.opcache = append(s.opcache, o)
}

// readQueue reads the socket's accept queue from the kernel; own says check's status request is in flight, and
// may be one of the connections waiting: it is not counted, nor are check's abandoned ones.
func (s *sampler) readQueue(own bool) {
	q, err := measure.ReadListenQueue(s.t.Network, s.t.Address)
	s.mu.Lock()
	defer s.mu.Unlock()
	if own {
		q.Queued = max(q.Queued-1, 0)
	}
	q.Queued = max(q.Queued-s.abandoned, 0)
	if err != nil {
		if s.queueErr == nil && !errors.Is(err, context.Canceled) {
			s.queueErr = err
		}
		return
	}
	s.backlog = q.Backlog
	s.queue = append(s.queue, queueObs{at: time.Now(), queued: q.Queued})
}

// progress is what the status line shows of a pool: samples so far, busy workers and the queue last seen.
func (s *sampler) progress() (samples, busy, queue int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	samples, queue = len(s.obs), -1
	if n := len(s.obs); n > 0 {
		busy = busyOf(s.obs[n-1], s.t.StatusPath)
	}
	if n := len(s.queue); n > 0 {
		queue = s.queue[n-1].queued
	}
	return samples, busy, queue
}
