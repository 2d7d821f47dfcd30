package tune

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stats"
)

// TestRuntimeSizeRule plants the unfair comparison (prefork + mod_php at Apache's 150 workers against php-fpm
// at Debian's 5) and sizes both by the one rule: the PHP workers the load needs, or fewer where the memory holds
// fewer, each runtime at its own measured memory; neither keeps the size it came with.
func TestRuntimeSizeRule(t *testing.T) {
	const mib = 1 << 20
	prefork := workerMemory{perWorker: 40 * mib, shared: 30 * mib}             // Apache and PHP in each process
	fpm := workerMemory{perWorker: 32 * mib, shared: 28 * mib, front: 8 * mib} // nginx in front
	for _, c := range []struct {
		name                   string
		target                 int
		memory                 int64
		preforkSize, fpmSize   int
		preforkLimit, fpmLimit int
	}{
		{"memory ample: both at the target", 6, 4096 * mib, 6, 6, 101, 126},
		{"memory binds: each at what it holds", 12, 400 * mib, 9, 11, 9, 11},
		{"memory holds less than one: one", 4, 20 * mib, 1, 1, 1, 1},
	} {
		ps, pl := runtimeSize(c.target, c.memory, prefork)
		fs, fl := runtimeSize(c.target, c.memory, fpm)
		if ps != c.preforkSize || fs != c.fpmSize || pl != c.preforkLimit || fl != c.fpmLimit {
			t.Errorf("%s: prefork %d (limit %d), php-fpm %d (limit %d); want %d (%d), %d (%d)", c.name, ps, pl, fs, fl,
				c.preforkSize, c.preforkLimit, c.fpmSize, c.fpmLimit)
		}
		for _, n := range []int{ps, fs} {
			if n == 150 || n > c.target {
				t.Errorf("%s: a runtime sized %d, above the target %d", c.name, n, c.target)
			}
		}
	}
	if n, limit := runtimeSize(8, 0, prefork); n != 8 || limit != 0 {
		t.Errorf("memory unknown: %d (limit %d), want the target", n, limit)
	}
}

// TestRuntimeTarget: the target is the pool's size as decided, or the knee when memory capped the pool.
func TestRuntimeTarget(t *testing.T) {
	tu := &tuner{o: Options{Pins: map[string]string{}}, pool: &PoolSize{Knee: 16, MemoryLimit: 6}}
	tu.best.MaxChildren = 6
	if n := tu.runtimeTarget(); n != 16 {
		t.Errorf("memory-capped pool of 6 under a knee of 16: target %d, want 16", n)
	}
	tu.pool.MemoryLimit = 100
	if n := tu.runtimeTarget(); n != 6 {
		t.Errorf("pool of 6 within memory: target %d, want 6", n)
	}
	tu.o.Pins["max_children"] = "6"
	tu.pool.MemoryLimit = 6
	if n := tu.runtimeTarget(); n != 6 {
		t.Errorf("pinned pool of 6: target %d, want 6", n)
	}
}

// TestSimulatedServerRace: the runtime races like any goodput knob, before the pool's size, each runtime at its
// own size; a runtime shown better is adopted, and the knobs it has no use for are then not tried, with why.
func TestSimulatedServerRace(t *testing.T) {
	so := demoSim(3, 0.04, 3*time.Minute)
	so.Knobs = knob.UnderServer([]knob.Knob{knob.Opcache(), knob.Server(""), knob.PM(), knob.Listen(), knob.Keepalive(), knob.MaxRequests()})
	so.Effect = Planted(map[string]map[string]float64{"server": {knob.ApacheModPHP: LogEffect(0.25)}})
	res, err := Simulate(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsByName(res)
	if r := rows["server"]; r.Value != knob.ApacheModPHP || r.Verdict != stats.Better {
		t.Errorf("server: %+v", r)
	}
	for _, n := range []string{"listen", "keepalive", "max_requests"} {
		if r := rows[n]; r.Verdict != "" || !strings.Contains(r.Note, "apache-modphp") {
			t.Errorf("%s under mod_php: %+v, want not tried with the reason", n, r)
		}
	}
	rt := res.Runtimes
	if rt == nil || len(rt.List) != 3 {
		t.Fatalf("runtimes: %+v; want three", rt)
	}
	// At the pool's starting size: the sizes' race comes after them (cpuFirst).
	if rt.Target != so.Pool {
		t.Errorf("runtimes raced at %d workers; want the pool's starting size, %d", rt.Target, so.Pool)
	}
	for _, r := range rt.List {
		if r.Size != rt.Target {
			t.Errorf("%s raced at %d workers, want the target %d", r.Server, r.Size, rt.Target)
		}
	}
	if res.Recommendation.Server != knob.ApacheModPHP {
		t.Errorf("recommendation %s", res.Recommendation)
	}
}

// serverTailSim is TestSimulatedServerRace's run with mod_php 25% ahead on goodput and its p99 tail times Base's
// (each trial's log p99 varying by 0.3).
func serverTailSim(seed int64, tail float64) SimOptions {
	so := demoSim(seed, 0.04, 3*time.Minute)
	so.Knobs = knob.UnderServer([]knob.Knob{knob.Opcache(), knob.Server(""), knob.PM(), knob.Listen(), knob.Keepalive(), knob.MaxRequests()})
	so.Effect = Planted(map[string]map[string]float64{"server": {knob.ApacheModPHP: LogEffect(0.25)}})
	so.Tail = func(cfg knob.Config) float64 {
		if cfg.Server == knob.ApacheModPHP {
			return math.Log(tail)
		}
		return 0
	}
	return so
}

// TestAFasterServerAtAWorseTailIsNotTaken: mod_php 25% ahead on goodput at a p99 24 times nginx-fpm's (issue 53's
// held-out memory case) is not recommended, and the server's row and the runtimes' table say what it would have
// traded.
func TestAFasterServerAtAWorseTailIsNotTaken(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		res, rows := simulated(t, serverTailSim(seed, 24))
		r := rows["server"]
		if res.Recommendation.Server != "" || r.Value != knob.NginxFPM {
			t.Errorf("seed %d: recommended %s (server row %+v), want nginx-fpm kept", seed, res.Recommendation, r)
		}
		if !strings.HasPrefix(r.Traded, "apache-modphp +") || !strings.Contains(r.Traded, "x worse: kept nginx-fpm") ||
			!strings.Contains(r.Note, r.Traded) {
			t.Errorf("seed %d: server row traded %q, note %q: want what mod_php would have traded", seed, r.Traded, r.Note)
		}
		if res.Runtimes == nil {
			t.Fatalf("seed %d: no runtimes' table: the server was not raced (%+v)", seed, r)
		}
		for _, rt := range res.Runtimes.List {
			if rt.Server == knob.ApacheModPHP && (rt.P99Vs == nil || rt.P99Vs.Verdict != stats.Worse || !strings.Contains(rt.Note, "p99")) {
				t.Errorf("seed %d: mod_php in the runtimes' table: %+v, want its p99 shown worse", seed, rt)
			}
		}
		t.Logf("seed %d: %s; %s", seed, r.Traded, r.Note)
	}
}

// TestAFasterServerAtTheSameTailIsTaken: at the same p99 (each trial's varying by 0.3) the guard lets mod_php's
// 25% through: it is recommended as without one, and nothing is said traded.
func TestAFasterServerAtTheSameTailIsTaken(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		res, rows := simulated(t, serverTailSim(seed, 1))
		if r := rows["server"]; res.Recommendation.Server != knob.ApacheModPHP || r.Verdict != stats.Better || r.Traded != "" {
			t.Errorf("seed %d: recommended %s, server row %+v: want mod_php taken, nothing traded", seed, res.Recommendation, r)
		}
	}
}
