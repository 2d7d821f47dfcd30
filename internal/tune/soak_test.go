package tune

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
)

// soakTuner is a tuner whose pool was sized at 8 workers of sized bytes each in memory (0: no limit).
func soakTuner(t *testing.T, knobs []knob.Knob, pins map[string]string, memory, sized int64) *tuner {
	t.Helper()
	tu, err := newTuner(Options{Base: knob.Debian(), Knobs: knobs, Pins: pins, Budget: 10 * time.Minute, Memory: memory})
	if err != nil {
		t.Fatal(err)
	}
	tu.best.MaxChildren = 8
	tu.pool = &PoolSize{Knee: 8, Memory: memory, SharedBytes: 20 << 20, PerWorkerBytes: sized, Initial: 8, Chosen: 8}
	return tu
}

// soakOf is a soak that measured growth g (shown or not) on workers whose first reads, after 100 requests, hold
// 2 MiB plus their growth.
func soakOf(g measure.Growth) *Soak {
	sk := &Soak{Workers: 8, RPS: 800, Growth: g}
	for i := 0; i < 3; i++ {
		sk.Series = append(sk.Series, measure.WorkerSeries{PID: i, Points: []measure.MemPoint{{Requests: 100, USS: 2<<20 + int64(100*g.PerRequest)}}})
	}
	return sk
}

// TestSoakSizesMaxRequests: shown growth gives the max_requests after which a worker, at the interval's upper
// end, reaches the memory the pool was sized with, as its row's value and in the recommendation; no growth
// shown keeps the starting value and says so.
func TestSoakSizesMaxRequests(t *testing.T) {
	tu := soakTuner(t, knob.All("", nil), nil, 0, 25<<20)
	sk := soakOf(measure.Growth{PerRequest: 51 << 10, Lo: 49 << 10, Hi: 53 << 10, Workers: 8, Requests: 6000, Shown: true})
	sk.URLs = []URLGrowth{{Path: "/", Growth: measure.Growth{Workers: 1}}, {Path: "/leak.php", Growth: measure.Growth{PerRequest: 1 << 20, Lo: 1 << 20, Hi: 1 << 20, Workers: 1, Shown: true}}}
	tu.soakSizing(sk)
	n := sk.MaxRequests
	if n < minMaxRequests || sk.StartBytes != 2<<20 || sk.StartBytes+int64(n)*(53<<10) > 25<<20 || n < 400 {
		t.Errorf("max_requests %d from 2 MiB at +53 KiB a request: want the most that stays within 25 MiB (at least 400)", n)
	}
	if tu.best.MaxRequests != n || tu.pool.GrownPerWorkerBytes != 0 {
		t.Errorf("recommendation %s, pool %+v", tu.best, tu.pool)
	}
	row := tu.decided["max_requests"]
	if row.Value != knob.MaxRequests().Get(tu.best) || !strings.Contains(row.Note, "+51.0 KiB [49.0, 53.0] a request") ||
		!strings.Contains(row.Note, "/leak.php grows a worker by 1.0 MiB a request") {
		t.Errorf("row %+v", row)
	}
	if d := sk.Day; len(d) != 1 || d[0].Requests != 800*86400/8 {
		t.Errorf("a day at 800 req/s on 8 workers: %+v", d)
	}

	tu = soakTuner(t, knob.All("", nil), nil, 0, 25<<20)
	sk = soakOf(measure.Growth{PerRequest: 100, Lo: -300, Hi: 500, Workers: 8, Requests: 6000})
	tu.soakSizing(sk)
	if row := tu.decided["max_requests"]; tu.best.MaxRequests != 0 || row.Value != "0" || !strings.Contains(row.Note, "no growth shown") {
		t.Errorf("no growth shown: %s, row %+v", tu.best, row)
	}
	// A growth not shown is not projected over a day from its interval's upper end.
	if len(sk.Day) != 0 {
		t.Errorf("no growth shown, yet a day projected: %+v", sk.Day)
	}
}

// TestSoakSmallGrowthRecyclesRarely: a worker sized at what it starts with, growing 52 bytes a request (Laravel,
// 2026-11-26), is allowed measure.GrowthRoom before it is recycled, not the minimum of 100 requests, and the pool
// counts it at what it grows to.
func TestSoakSmallGrowthRecyclesRarely(t *testing.T) {
	tu := soakTuner(t, knob.All("", nil), nil, 0, 2<<20+100*52)
	sk := soakOf(measure.Growth{PerRequest: 52, Lo: 34, Hi: 70, Workers: 8, Requests: 9600, Shown: true})
	tu.soakSizing(sk)
	room := measure.GrowthRoom(sk.StartBytes)
	if n := sk.MaxRequests; n < 200000 || sk.StartBytes+int64(n)*70 > sk.StartBytes+room || tu.best.MaxRequests != n {
		t.Errorf("max_requests %d at +70 B a request from %d bytes: want the most within %d bytes of growth", n, sk.StartBytes, room)
	}
	if g := tu.pool.GrownPerWorkerBytes; g != sk.GrownBytes || g <= 2<<20+100*52 {
		t.Errorf("the pool counts a worker at %d bytes, the soak's grown figure %d", g, sk.GrownBytes)
	}
}

// TestSoakBoundsThePool: a worker that outgrows the memory the pool was sized with before minMaxRequests is
// counted at what it grows to, and the pool shrinks to fit --memory; when not even one such worker fits,
// max_requests falls until one does, with a warning.
func TestSoakBoundsThePool(t *testing.T) {
	tu := soakTuner(t, knob.All("", nil), nil, 600<<20, 14<<20)
	sk := soakOf(measure.Growth{PerRequest: 1 << 20, Lo: 1000 << 10, Hi: 1048 << 10, Workers: 8, Requests: 3000, Shown: true})
	tu.soakSizing(sk)
	ps := tu.pool
	if sk.MaxRequests != minMaxRequests || ps.GrownPerWorkerBytes != sk.GrownBytes || sk.GrownBytes < 100<<20 {
		t.Fatalf("soak %+v, pool %+v", sk, ps)
	}
	if want := int((600<<20 - 20<<20) / sk.GrownBytes); ps.MemoryLimit != want || tu.best.MaxChildren != want || ps.Chosen != want {
		t.Errorf("pool %+v, best %s: want %d children of %d MiB", ps, tu.best, want, sk.GrownBytes>>20)
	}

	tu = soakTuner(t, knob.All("", nil), nil, 64<<20, 14<<20)
	sk = soakOf(measure.Growth{PerRequest: 1 << 20, Lo: 1000 << 10, Hi: 1 << 20, Workers: 8, Requests: 3000, Shown: true})
	tu.soakSizing(sk)
	if ps := tu.pool; sk.MaxRequests >= minMaxRequests || tu.best.MaxChildren != 1 || ps.SharedBytes+sk.GrownBytes > 64<<20 ||
		len(tu.log.warnings) != 1 {
		t.Errorf("64 MiB: soak %+v, pool %+v, warnings %q", sk, ps, tu.log.warnings)
	}

	// A tighter bound (the OOM killer's in the sweep) holds; a pinned size is kept, with a warning.
	g := measure.Growth{PerRequest: 1 << 20, Lo: 1000 << 10, Hi: 1048 << 10, Workers: 8, Requests: 3000, Shown: true}
	tu = soakTuner(t, knob.All("", nil), nil, 600<<20, 14<<20)
	tu.pool.MemoryLimit = 2
	tu.soakSizing(soakOf(g))
	if ps := tu.pool; ps.MemoryLimit != 2 {
		t.Errorf("the sweep's OOM bound of 2 became %d", ps.MemoryLimit)
	}
	tu = soakTuner(t, knob.All("", nil), map[string]string{"max_children": "8"}, 600<<20, 14<<20)
	tu.soakSizing(soakOf(g))
	if tu.best.MaxChildren != 8 || len(tu.log.warnings) != 1 || !strings.Contains(tu.log.warnings[0], "pm.max_children 8 is pinned") {
		t.Errorf("pinned max_children: best %s, warnings %q", tu.best, tu.log.warnings)
	}
}

// TestSoakLeavesUsersValuesAlone: a pinned max_requests keeps its value and row, the soak's bound counted at it;
// values the user names to race are raced; without the knob in the run, nothing is set.
func TestSoakLeavesUsersValuesAlone(t *testing.T) {
	g := measure.Growth{PerRequest: 1 << 20, Lo: 1 << 20, Hi: 1 << 20, Workers: 8, Requests: 3000, Shown: true}
	tu := soakTuner(t, knob.All("", nil), map[string]string{"max_requests": "500"}, 0, 14<<20)
	tu.best.MaxRequests = 500
	sk := soakOf(g)
	tu.soakSizing(sk)
	if _, ok := tu.decided["max_requests"]; ok || sk.MaxRequests != 500 || sk.GrownBytes != 2<<20+500<<20 || tu.best.MaxRequests != 500 {
		t.Errorf("pinned: soak %+v, decided %v", sk, tu.decided)
	}
	fixed, err := knob.Fixed("max_requests", []string{"0", "500"})
	if err != nil {
		t.Fatal(err)
	}
	tu = soakTuner(t, []knob.Knob{fixed}, nil, 0, 14<<20)
	sk = soakOf(g)
	tu.soakSizing(sk)
	if _, ok := tu.decided["max_requests"]; ok || tu.best.MaxRequests != 0 || tu.pool.GrownPerWorkerBytes != 0 ||
		len(tu.log.warnings) != 1 || !strings.Contains(sk.Note, "100 would keep it within 102 MiB") {
		t.Errorf("raced on the user's values: decided %v, best %s, soak %+v, warnings %q", tu.decided, tu.best, sk, tu.log.warnings)
	}
	tu = soakTuner(t, []knob.Knob{knob.Opcache()}, nil, 0, 14<<20)
	tu.soakSizing(soakOf(g))
	if len(tu.decided) != 0 || tu.best.MaxRequests != 0 || len(tu.log.warnings) != 1 {
		t.Errorf("--only opcache: decided %v, best %s", tu.decided, tu.best)
	}
	tu = soakTuner(t, knob.All("", nil), map[string]string{"max_requests": "0"}, 0, 14<<20)
	tu.soakSizing(soakOf(g))
	if len(tu.decided) != 0 || tu.best.MaxRequests != 0 || len(tu.log.warnings) != 1 || !strings.Contains(tu.log.warnings[0], "nothing bounds it") {
		t.Errorf("pinned at 0: decided %v, warnings %q", tu.decided, tu.log.warnings)
	}
}

func TestMaxRequestsFor(t *testing.T) {
	for _, c := range []struct {
		headroom int64
		growth   float64
		want     int
	}{{23 << 20, 53 << 10, 440}, {1 << 30, 10, 100000000}, {12345 * 100, 1, 1200000}, {1 << 20, 1 << 20, minMaxRequests},
		{-5, 1, minMaxRequests}, {1 << 20, 0, 0}} {
		if got := maxRequestsFor(c.headroom, c.growth); got != c.want {
			t.Errorf("maxRequestsFor(%d, %g) = %d, want %d", c.headroom, c.growth, got, c.want)
		}
	}
}

// TestWorkerReader: a worker is read only when idle, at its count of requests less the status reads it served
// (the one serving the read is read from the next, which another worker serves); a worker still serving is
// left for the next step.
func TestWorkerReader(t *testing.T) {
	r := newWorkerReader("/fpm-status")
	r.tracker.Warm = 0
	mem := map[int]int64{1: 10 << 20, 2: 20 << 20, 3: 30 << 20}
	uss := func(pid int) (int64, error) { return mem[pid], nil }
	st := func(ps ...measure.FPMProcess) *measure.FPMStatus { return &measure.FPMStatus{Processes: ps} }
	idle := func(pid int, n int64) measure.FPMProcess {
		return measure.FPMProcess{PID: pid, State: "Idle", Requests: n, RequestURI: "/index.php"}
	}
	serving := func(pid int, n int64) measure.FPMProcess {
		return measure.FPMProcess{PID: pid, State: "Running", Requests: n, RequestURI: "/fpm-status?json&full"}
	}
	busy := measure.FPMProcess{PID: 3, State: "Running", Requests: 7, RequestURI: "/leak.php"}
	seen := map[int]bool{}
	if left := r.take(st(serving(1, 101), idle(2, 50), busy), seen, uss); !left {
		t.Error("the worker serving the read is left to read")
	}
	if left := r.take(st(idle(1, 101), serving(2, 51), busy), seen, uss); left {
		t.Error("every worker but the busy one is read")
	}
	seen = map[int]bool{}
	r.take(st(idle(1, 201), idle(2, 151), idle(3, 80)), seen, uss)
	got := map[int][]measure.MemPoint{}
	for _, s := range r.tracker.Series {
		got[s.PID] = s.Points
	}
	want := map[int][]measure.MemPoint{1: {{Requests: 100, USS: 10 << 20}, {Requests: 200, USS: 10 << 20}},
		2: {{Requests: 50, USS: 20 << 20}, {Requests: 150, USS: 20 << 20}}, 3: {{Requests: 80, USS: 30 << 20}}}
	for pid, w := range want {
		if !slices.Equal(got[pid], w) {
			t.Errorf("worker %d: %+v, want %+v", pid, got[pid], w)
		}
	}
}

// TestSoakTime: the soak takes a tenth of the budget when it decides a knob of the run (max_requests, pinned or
// not), none when --only or --skip leave max_requests out or --knob names values to race, or the budget is under
// SoakBudget, unless --soak says how long; --soak off turns it off.
func TestSoakTime(t *testing.T) {
	fixed, err := knob.Fixed("max_requests", []string{"0", "500"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		knobs []knob.Knob
		soak  time.Duration
		want  time.Duration
		short bool // a budget under SoakBudget
	}{{"every knob", knob.All("", nil), 0, time.Minute, false}, {"--only opcache", []knob.Knob{knob.Opcache()}, 0, 0, false},
		{"--knob max_requests=0,500", []knob.Knob{fixed}, 0, 0, false},
		{"--only opcache --soak 5s", []knob.Knob{knob.Opcache()}, 5 * time.Second, 5 * time.Second, false},
		{"--soak off", knob.All("", nil), -1, 0, false}, {"--budget 3m", knob.All("", nil), 0, 0, true},
		{"--budget 3m --soak 20s", knob.All("", nil), 20 * time.Second, 20 * time.Second, true}} {
		budget := 10 * time.Minute
		if c.short {
			budget = SoakBudget - time.Second
		}
		tu, err := newTuner(Options{Base: knob.Debian(), Knobs: c.knobs, Budget: budget, Soak: c.soak})
		if err != nil {
			t.Fatal(err)
		}
		if got := tu.soakTime(); got != c.want {
			t.Errorf("%s: soak %s, want %s", c.name, got, c.want)
		}
	}
}

// TestSoakAdvice: the soak's growth, without a tuner, makes the max_requests that keeps a worker within the
// memory the pool was sized with (or lets it grow by measure.GrowthRoom, and never fewer than minMaxRequests),
// and a day's worth at the log's rate and the soak's; no growth shown projects nothing.
func TestSoakAdvice(t *testing.T) {
	const mib = 1 << 20
	fresh := []measure.WorkerSeries{{Points: []measure.MemPoint{{Requests: 100, USS: 20*mib + 100*1000}}}}
	cases := []struct {
		name    string
		growth  measure.Growth
		sized   int64
		logRate float64
		want    int
		days    []float64 // the days' rates
	}{
		{"no growth shown", measure.Growth{PerRequest: 1000, Hi: 3000}, 64 * mib, 2, 0, nil},
		{"within the sized memory", measure.Growth{PerRequest: 1000, Hi: 100 << 10, Shown: true}, 64 * mib, 2, 450, []float64{2, 10}},
		{"no pool size: the growth room", measure.Growth{PerRequest: 1000, Hi: 100 << 10, Shown: true}, 0, 0, 160, []float64{10}},
		{"fast growth: the fewest", measure.Growth{PerRequest: 1000, Hi: mib, Shown: true}, 64 * mib, 0, minMaxRequests, []float64{10}},
	}
	for _, c := range cases {
		sk := &Soak{Workers: 4, RPS: 10, Growth: c.growth, Series: fresh}
		n := soakAdvice(sk, c.sized, c.logRate)
		var days []float64
		for _, d := range sk.Day {
			days = append(days, d.Rate)
		}
		if n != c.want || sk.StartBytes != 20*mib || sk.SizedBytes != c.sized || !slices.Equal(days, c.days) {
			t.Errorf("%s: max_requests %d, start %d, sized %d, days at %v; want %d, %d, %d, %v", c.name, n, sk.StartBytes,
				sk.SizedBytes, days, c.want, 20*mib, c.sized, c.days)
		}
		if len(sk.Day) > 0 && sk.Day[len(sk.Day)-1].Requests != 10*86400/4 {
			t.Errorf("%s: a day at the soak's rate is %d requests a worker, want %d", c.name, sk.Day[len(sk.Day)-1].Requests, 10*86400/4)
		}
	}
}
