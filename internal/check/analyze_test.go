package check

import (
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/measure"
)

func proc(pid int, state, uri string, reqs int64) measure.FPMProcess {
	return measure.FPMProcess{PID: pid, State: state, RequestURI: uri, Requests: reqs, Script: "/srv/app/index.php"}
}

// TestBusyLeavesOutCheckItself: the worker answering check's status request is not the app's, unless a
// connection was waiting for it.
func TestBusyLeavesOutCheckItself(t *testing.T) {
	st := &measure.FPMStatus{Processes: []measure.FPMProcess{
		proc(1, "Running", "/status?json&full", 5), proc(2, "Running", "/index.php", 9), proc(3, "Idle", "/index.php", 4)}}
	if n := busyOf(observation{status: st, queue: 0}, "/status"); n != 1 {
		t.Errorf("no queue: busy %d, want 1", n)
	}
	if n := busyOf(observation{status: st, queue: 3}, "/status"); n != 2 {
		t.Errorf("a queue: busy %d, want 2 (check's worker would serve a waiting request)", n)
	}
}

// TestTrafficCountsTheAppOnly: check's own requests (each counted twice by php-fpm) come out of accepted conn,
// and a pool reloaded mid-window starts its counters again.
func TestTrafficCountsTheAppOnly(t *testing.T) {
	t0 := time.Unix(0, 0)
	mk := func(sec int, accepted, reached int64, own int) observation {
		return observation{at: t0.Add(time.Duration(sec) * time.Second), ownBefore: own,
			status: &measure.FPMStatus{AcceptedConn: accepted, MaxChildrenReached: reached, StartSince: int64(sec)}}
	}
	w := window{start: t0, end: t0.Add(4 * time.Second), own: 5,
		obs: []observation{mk(0, 100, 1, 0), mk(1, 202, 2, 1), mk(2, 304, 2, 2), mk(3, 406, 3, 3)}}
	tr := traffic(w, 4)
	if tr.Accepted != 300 || tr.MaxChildrenReached != 2 || tr.MaxChildrenReachedTotal != 3 || tr.PerSecond != 100 {
		t.Errorf("traffic %+v, want 300 accepted (306 less 3 reads counted twice), 2 reached in the window, 3 in all", tr)
	}
	// A reload: the counter goes back, its new value counts.
	w.obs = append(w.obs, observation{at: t0.Add(4 * time.Second), ownBefore: 4, status: &measure.FPMStatus{AcceptedConn: 50, StartSince: 1}})
	if tr := traffic(w, 5); tr.Restarts != 1 || tr.Accepted != 300+50-2 {
		t.Errorf("after a reload: %+v", tr)
	}
}

// TestHealthyWindowHasNoFinding: a pool with room to spare, flat memory and a roomy opcache is reported
// healthy; the same pool at its limit with a queue is not.
func TestHealthyWindowHasNoFinding(t *testing.T) {
	t0 := time.Unix(0, 0)
	cfg := measure.FPMPoolConfig{Name: "www", PM: "dynamic", MaxChildren: 8, Settings: map[string]string{}}
	target := Target{Name: "www", Network: "unix", Address: "/run/x.sock", StatusPath: "/status", Pool: &cfg}
	var w window
	w.start, w.end = t0, t0.Add(30*time.Second)
	for k := 0; k < 30; k++ {
		var ps []measure.FPMProcess
		mem := map[int]procMem{}
		for i := 0; i < 4; i++ {
			state := "Idle"
			if (k+i)%3 == 0 {
				state = "Running"
			}
			ps = append(ps, proc(10+i, state, "/index.php", int64(100+10*k)))
			mem[10+i] = procMem{uss: 4 << 20, rss: 20 << 20}
		}
		ps = append(ps, proc(20, "Running", "/status?json&full", int64(k)))
		w.obs = append(w.obs, observation{at: t0.Add(time.Duration(k) * time.Second), status: &measure.FPMStatus{Processes: ps,
			AcceptedConn: int64(100 * k)}, mem: mem, ownBefore: k})
		w.queue = append(w.queue, queueObs{at: t0.Add(time.Duration(k) * time.Second)})
	}
	w.backlog = 511
	w.limits = &measure.Limits{HostMemTotal: 8 << 30, HostMemAvailable: 6 << 30, HostCPUs: 2}
	p := analyze(target, w)
	if len(p.Findings) != 0 || len(p.Suggestions) != 0 {
		t.Fatalf("healthy pool: findings %+v suggestions %+v", p.Findings, p.Suggestions)
	}
	if p.Busy.Peak < 1 || p.Busy.Peak > 4 || p.Memory.MaxUSS != 4<<20 || p.Memory.Shared != 16<<20 || p.Memory.AtMaxChildren == 0 {
		t.Errorf("busy %+v memory %+v", p.Busy, p.Memory)
	}
	// Now every worker busy with connections waiting, and php-fpm counting max_children reached.
	cfg.MaxChildren = 4
	for k := range w.obs {
		for i := range w.obs[k].status.Processes[:4] {
			w.obs[k].status.Processes[i].State = "Running"
		}
		w.obs[k].status.MaxChildrenReached = int64(k / 10)
		w.queue[k].queued = 6
	}
	p = analyze(target, w)
	if len(p.Findings) != 1 || p.Findings[0].ID != FindMaxChildren || len(p.Suggestions) != 1 || p.Suggestions[0].Suggested != "10" {
		t.Fatalf("saturated pool: findings %+v suggestions %+v", p.Findings, p.Suggestions)
	}
}

// TestOpcacheFindings: each of opcache's limits makes its finding from the reads alone, and a read just after a
// restart (an emptied cache) neither hides the full cache seen before nor sizes the suggestion.
func TestOpcacheFindings(t *testing.T) {
	ini := map[string]string{"opcache.memory_consumption": "64", "opcache.interned_strings_buffer": "8", "opcache.max_accelerated_files": "4000",
		"opcache.jit": "tracing", "opcache.jit_buffer_size": "64M"}
	roomy := func() *measure.Opcache {
		return &measure.Opcache{Loaded: true, Enabled: true, MemoryUsed: 20 << 20, MemoryFree: 44 << 20, InternedBuffer: 8 << 20,
			InternedUsed: 2 << 20, InternedFree: 6 << 20, CachedKeys: 500, MaxCachedKeys: 7963, Hits: 1000, Misses: 10, INI: ini,
			JITBufferSize: 64 << 20, JITBufferFree: 40 << 20}
	}
	ids := func(c OpcacheCheck) []string {
		var out []string
		for _, f := range opcacheFindings(&Pool{Opcache: c, ElapsedS: 60}, tuneCmd{base: "phptune tune /srv/app"}) {
			out = append(out, f.f.ID)
		}
		return out
	}
	a, b := roomy(), roomy()
	b.Hits, b.Misses = 200000, 20
	if got := ids(opcacheOf(window{opcache: []*measure.Opcache{a, b}})); len(got) != 0 {
		t.Errorf("a roomy opcache: %v", got)
	}
	full := roomy()
	full.MemoryUsed, full.MemoryFree, full.MemoryWasted, full.CacheFull, full.OOMRestarts = 60<<20, 1<<20, 3<<20, true, 1
	emptied := roomy()
	emptied.MemoryUsed, emptied.MemoryFree, emptied.OOMRestarts, emptied.Hits, emptied.Misses = 2<<20, 62<<20, 2, 100, 1000
	c := opcacheOf(window{opcache: []*measure.Opcache{roomy(), full, emptied}})
	got := ids(c)
	if len(got) != 3 || got[0] != FindOpcacheFull || got[1] != FindOpcacheRst || got[2] != FindOpcacheHits || c.Fullest != full {
		t.Errorf("full, then restarted: %v (fullest read %v)", got, c.Fullest == full)
	}
	s := opcacheSuggestion(c.Fullest, tuneCmd{base: "phptune tune /srv/app"})
	if s.Current != "64/8/4000" || s.Suggested != "128/8/10000" || s.Verify != "phptune tune /srv/app --only opcache_memory --knob opcache_memory=64/8/4000,128/8/10000" {
		t.Errorf("suggestion %+v", s)
	}
	jit := roomy()
	jit.JITBufferFree = 1 << 20
	if got := ids(opcacheOf(window{opcache: []*measure.Opcache{jit}})); len(got) != 1 || got[0] != FindJITBuffer {
		t.Errorf("a full JIT buffer: %v", got)
	}
	if got := ids(opcacheOf(window{opcache: []*measure.Opcache{{Loaded: true, INI: ini}}})); len(got) != 1 || got[0] != FindOpcacheOff {
		t.Errorf("opcache off: %v", got)
	}
}

// TestStatusFailuresSayWhatHappened: a status read that timed out is a pool whose every worker was held; one that
// failed otherwise (twice in a row) is said as it failed, not as a ten-second wait.
func TestStatusFailuresSayWhatHappened(t *testing.T) {
	if f, _ := unanswered(&Pool{Samples: 12, StatusFailed: 1, StatusError: "read: connection reset by peer"}, tuneCmd{}); f == nil ||
		!strings.Contains(f.Title, "failed 1 time(s), each after a second try: read: connection reset by peer") ||
		strings.Contains(f.Title, "unanswered") {
		t.Errorf("a failed read: %+v", f)
	}
	if f, _ := unanswered(&Pool{Samples: 12, StatusMissed: 1}, tuneCmd{}); f == nil || !strings.Contains(f.Title, "unanswered for 10s, 1 time(s)") {
		t.Errorf("a timed-out read: %+v", f)
	}
	if f, _ := unanswered(&Pool{Samples: 12}, tuneCmd{}); f != nil {
		t.Errorf("every read answered: %+v", f)
	}
}

// TestMemoryReadAtSomeSamples: the workers' memory is read at some status samples only (memReads a window); the
// pool's memory series has those samples alone, at their own times, and the figures come from them, never from
// a sample without memory read as none.
func TestMemoryReadAtSomeSamples(t *testing.T) {
	t0 := time.Unix(0, 0)
	w := window{start: t0}
	for k := 0; k < 12; k++ {
		st := &measure.FPMStatus{Processes: []measure.FPMProcess{proc(10, "Idle", "/index.php", int64(k)), proc(11, "Idle", "/index.php", int64(k))}}
		o := observation{at: t0.Add(time.Duration(k) * time.Second), status: st}
		if k%4 == 0 {
			o.mem = map[int]procMem{10: {uss: int64(k+1) << 20, rss: 10 << 20}, 11: {uss: 1 << 20, rss: 10 << 20}}
		}
		w.obs = append(w.obs, o)
	}
	m, ts, series := memory(w, 8)
	if len(ts) != 3 || len(series) != 3 || ts[1] != 4 || ts[2] != 8 {
		t.Fatalf("memory at %v: %v, want three reads at 0, 4 and 8 s", ts, series)
	}
	if m.MaxUSS != 9<<20 || m.Now != series[2] || m.Now == 0 || m.Workers != 2 {
		t.Errorf("memory %+v: want the largest worker 9 MiB and now the last read's", m)
	}
}
