package check

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/measure"
)

// simPool is a simulated pool's window: workers serving requests at a rate, their USS read every interval.
type simPool struct {
	workers  int
	rate     float64 // requests a second per worker
	samples  int
	interval time.Duration
	start    int64 // requests each worker had served before the window
	// uss is a worker's private memory after req requests, given its own random draws.
	uss func(r *rand.Rand, worker int, req int64, step int64) int64
}

func (s simPool) window(r *rand.Rand) window {
	t0 := time.Unix(1_700_000_000, 0)
	reqs := make([]int64, s.workers)
	steps := make([]int64, s.workers) // where each worker's one-off step happens, in requests
	for i := range reqs {
		reqs[i] = s.start
		steps[i] = s.start + int64(r.Float64()*s.rate*float64(s.samples)*s.interval.Seconds())
	}
	w := window{start: t0, end: t0.Add(time.Duration(s.samples) * s.interval)}
	for k := 0; k < s.samples; k++ {
		o := observation{at: t0.Add(time.Duration(k) * s.interval), status: &measure.FPMStatus{}, mem: map[int]procMem{}}
		for i := range reqs {
			// Poisson arrivals at the rate over one interval.
			lambda := s.rate * s.interval.Seconds()
			reqs[i] += int64(poisson(r, lambda))
			pid := 100 + i
			o.status.Processes = append(o.status.Processes, measure.FPMProcess{PID: pid, State: "Idle", Requests: reqs[i]})
			o.mem[pid] = procMem{uss: s.uss(r, i, reqs[i], steps[i])}
		}
		w.obs = append(w.obs, o)
	}
	return w
}

func poisson(r *rand.Rand, lambda float64) int {
	if lambda > 30 {
		return max(0, int(math.Round(lambda+math.Sqrt(lambda)*r.NormFloat64())))
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= r.Float64()
		if p < l {
			return k
		}
		k++
	}
}

const mb = 1 << 20

// noisy is a worker's USS at base: a third of the reads catch it mid-request with up to 2 MiB more, and pages
// jitter.
func noisy(r *rand.Rand, base int64) int64 { return noisyBy(r, base, 2*mb) }

func noisyBy(r *rand.Rand, base, spike int64) int64 {
	u := base + int64(r.IntN(5)-2)*4096
	if r.Float64() < 0.3 {
		u += int64(r.Float64() * float64(spike))
	}
	return u
}

// TestGrowthErrorRates simulates pools with and without a leak, under the noise real workers show (reads taken
// mid-request, heaps that step up once to a new high-water mark, fresh workers warming up), and checks the rule's
// error rates: a healthy pool is reported as leaking in under 0.2% of windows, a 1 MiB a request leak is found in
// nearly every one, short windows included. Growth under 16 KiB a request (16 MiB over the thousand requests of a
// pool that never recycles) is below what the rule reports, by design.
func TestGrowthErrorRates(t *testing.T) {
	const runs = 1500
	r := rand.New(rand.NewPCG(1, 2))
	flat := func(r *rand.Rand, _ int, _ int64, _ int64) int64 { return noisy(r, 8*mb) }
	stepUp := func(r *rand.Rand, _ int, req, step int64) int64 {
		if req >= step {
			return noisy(r, 10*mb)
		}
		return noisy(r, 8*mb)
	}
	warming := func(r *rand.Rand, _ int, req, _ int64) int64 {
		return noisy(r, 6*mb+int64(3*mb*(1-math.Exp(-float64(req)/15))))
	}
	// A heavy app's worker (WordPress): 40 MiB, and a read mid-request catches up to 20 MiB more.
	heavy := func(r *rand.Rand, _ int, _ int64, _ int64) int64 { return noisyBy(r, 40*mb, 20*mb) }
	leak := func(g int64) func(*rand.Rand, int, int64, int64) int64 {
		return func(r *rand.Rand, _ int, req, _ int64) int64 { return noisy(r, 8*mb+g*req) }
	}
	cases := []struct {
		name     string
		pool     simPool
		maxReq   int
		wantLeak bool
		limit    float64 // the most (healthy) or least (leak) share of windows reported as leaking
	}{
		{"flat, 4 workers at 5/s, 2m", simPool{4, 5, 120, time.Second, 500, flat}, 0, false, 0.002},
		{"flat, 2 workers at 50/s, 2m", simPool{2, 50, 120, time.Second, 5000, flat}, 0, false, 0.002},
		{"flat, 8 workers at 0.5/s, 2m", simPool{8, 0.5, 120, time.Second, 100, flat}, 0, false, 0.002},
		{"one step up, 4 workers at 2/s, 2m", simPool{4, 2, 120, time.Second, 100, stepUp}, 0, false, 0.002},
		{"one step up, 2 workers at 1/s, 10s", simPool{2, 1, 20, 500 * time.Millisecond, 30, stepUp}, 0, false, 0.002},
		{"warming up, 4 workers at 5/s, 2m", simPool{4, 5, 120, time.Second, 0, warming}, 0, false, 0.002},
		{"warming up, 3 workers at 10/s, 10s", simPool{3, 10, 20, 500 * time.Millisecond, 0, warming}, 0, false, 0.002},
		{"heavy pages, 4 workers at 2/s, 2m", simPool{4, 2, 120, time.Second, 200, heavy}, 0, false, 0.002},
		{"heavy pages, 2 workers at 0.5/s, 2m", simPool{2, 0.5, 120, time.Second, 200, heavy}, 0, false, 0.002},
		{"flat, recycled every 500", simPool{4, 5, 120, time.Second, 300, flat}, 500, false, 0.002},
		{"1 MiB a request, 3 workers at 5/s, 10s", simPool{3, 5, 20, 500 * time.Millisecond, 0, leak(mb)}, 0, true, 0.99},
		{"1 MiB a request, 2 workers at 1/s, 2m", simPool{2, 1, 120, time.Second, 0, leak(mb)}, 0, true, 0.99},
		{"64 KiB a request, 4 workers at 5/s, 2m", simPool{4, 5, 120, time.Second, 100, leak(64 << 10)}, 0, true, 0.95},
		{"24 KiB a request, 4 workers at 20/s, 2m", simPool{4, 20, 120, time.Second, 100, leak(24 << 10)}, 0, true, 0.95},
		{"32 KiB a request, 4 workers at 20/s, 2m", simPool{4, 20, 120, time.Second, 100, leak(32 << 10)}, 0, true, 0.95},
	}
	for _, c := range cases {
		leaking := 0
		for i := 0; i < runs; i++ {
			w := c.pool.window(r)
			g := growthOf(w, "/status", c.maxReq)
			if g.Leaking(8 * mb) {
				leaking++
			}
		}
		share := float64(leaking) / runs
		t.Logf("%-40s reported leaking in %5.1f%% of %d windows", c.name, 100*share, runs)
		if c.wantLeak && share < c.limit {
			t.Errorf("%s: found in %.1f%% of windows, want at least %.1f%%", c.name, 100*share, 100*c.limit)
		}
		if !c.wantLeak && share > c.limit {
			t.Errorf("%s: reported in %.2f%% of windows, want at most %.2f%%", c.name, 100*share, 100*c.limit)
		}
	}
}

// TestWorkerSeriesRestartsOnRecycle: a pid whose request count goes back is a new worker (php-fpm recycled it and
// the pid came back), and reads without a request since the last are one point.
func TestWorkerSeriesRestartsOnRecycle(t *testing.T) {
	t0 := time.Unix(0, 0)
	var obs []observation
	for k, req := range []int64{30, 40, 40, 50, 5, 25, 35} {
		obs = append(obs, observation{at: t0.Add(time.Duration(k) * time.Second),
			status: &measure.FPMStatus{Processes: []measure.FPMProcess{{PID: 7, Requests: req}}},
			mem:    map[int]procMem{7: {uss: 1000 * req}}})
	}
	s := workerSeries(obs, "/status")
	if len(s) != 2 || len(s[0].Points) != 3 || len(s[1].Points) != 2 || s[1].Points[0].Requests != 25 {
		t.Fatalf("series %+v", s)
	}
}

// TestWorkerSeriesLeavesOutCheck: the requests check itself sent a worker (twice each in its count) are not the
// app's.
func TestWorkerSeriesLeavesOutCheck(t *testing.T) {
	t0 := time.Unix(0, 0)
	var obs []observation
	for k, p := range []measure.FPMProcess{{PID: 7, Requests: 30, State: "Idle"}, {PID: 7, Requests: 41, State: "Running", RequestURI: "/status?json&full"},
		{PID: 7, Requests: 52, State: "Idle"}, {PID: 7, Requests: 60, State: "Idle"}} {
		obs = append(obs, observation{at: t0.Add(time.Duration(k) * time.Second), status: &measure.FPMStatus{Processes: []measure.FPMProcess{p}},
			mem: map[int]procMem{7: {uss: 1000}}})
	}
	s := workerSeries(obs, "/status")
	var reqs []int64
	for _, p := range s[0].Points {
		reqs = append(reqs, p.Requests)
	}
	if len(s) != 1 || !slices.Equal(reqs, []int64{30, 40, 50, 58}) {
		t.Errorf("the app's requests %v, want 30 40 50 58", reqs)
	}
}
