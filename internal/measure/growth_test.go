package measure

import (
	"math"
	"math/rand/v2"
	"testing"
)

// soakSim is a simulated pool read between steps of load: each worker serves a Poisson number of requests a
// step, and its private memory follows its own count of requests.
type soakSim struct {
	workers, steps int
	perStep        float64 // requests a worker serves in a step, on average
	// settled: each worker has served between settled and twice as many requests, unread, before the first read
	// (tune's soak starts on a pool warmed by a short load).
	settled int
	warm    int64 // the tracker's warm-up
	// leak is what a request adds (0 for most pages).
	leak func(r *rand.Rand) int64
	// recycle, when > 0, restarts a worker (count back to 0, memory back to its start) after that many requests.
	recycle int64
	// Noise that is no leak. PHP's allocator keeps up to cached 2 MiB chunks between requests (partly touched),
	// changing with probability churn at a read. The heap keeps the high-water mark of its requests' needs
	// (records of a lognormal need of median 256 KiB, spread record): new records come ever more rarely. A cache
	// fills: fill bytes, approached as 1 - exp(-requests/tau).
	cached    int
	churn     float64
	record    float64
	fill, tau float64
}

const miB = 1 << 20

// noisyPool is a soak of a pool that does not leak, with every kind of noise at once.
func noisyPool() soakSim {
	return soakSim{workers: 6, steps: 30, perStep: 40, settled: 100, warm: 20, cached: 2, churn: 0.3, record: 0.5, fill: 4 * miB, tau: 60}
}

type simWorker struct {
	req, leaked int64
	// needZ is the largest of the heap's normal draws so far (needs is false before the first): exp is monotone,
	// so the high-water mark is taken from it at a read, not at every request.
	needZ float64
	needs bool
	cache int
}

func (s soakSim) serve(r *rand.Rand, w *simWorker) {
	if s.recycle > 0 && w.req == s.recycle {
		*w = simWorker{cache: w.cache} // the allocator's cache follows the requests, not the worker's age
	}
	w.req++
	if s.leak != nil {
		w.leaked += s.leak(r)
	}
	if s.record > 0 {
		if z := r.NormFloat64(); !w.needs || z > w.needZ {
			w.needZ, w.needs = z, true
		}
	}
}

func (s soakSim) run(r *rand.Rand) []WorkerSeries {
	tr := SeriesTracker{Warm: s.warm}
	ws := make([]simWorker, s.workers)
	for i := range ws {
		for n := s.settled + r.IntN(s.settled+1); n > 0; n-- {
			s.serve(r, &ws[i])
		}
	}
	for k := 0; k < s.steps; k++ {
		for i := range ws {
			w := &ws[i]
			for n := poisson(r, s.perStep); n > 0; n-- {
				s.serve(r, w)
			}
			if r.Float64() < s.churn {
				w.cache = r.IntN(s.cached + 1)
			}
			uss := 12*miB + w.leaked + int64(float64(w.cache)*2*miB*(0.3+0.7*r.Float64()))
			if w.needs {
				uss += int64(miB / 4 * math.Exp(s.record*w.needZ))
			}
			if s.tau > 0 {
				uss += int64(s.fill * (1 - math.Exp(-float64(w.req)/s.tau)))
			}
			tr.Add(100+i, w.req, uss/pageBytes*pageBytes)
		}
	}
	return tr.Series
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

// TestGrowthErrorRates: over thousands of simulated soaks, pools that do not leak (the allocator's cache moving
// by chunks, a heap keeping its high-water mark, a cache filling; a pool of two workers read a dozen times;
// workers recycled) are shown to grow in under half a percent; a page of a twentieth of the mix that leaks
// 1 MiB a request, a steady 16 KiB a request in that noise, and a page leaking 1 MiB kept alone on one worker
// for six steps are found nearly always, and the 95% interval covers the true growth in about 95% of runs.
func TestGrowthErrorRates(t *testing.T) {
	const runs = 3000
	r := rand.New(rand.NewPCG(1, 2))
	churn := soakSim{workers: 6, steps: 30, perStep: 40, settled: 100, warm: 20, cached: 2, churn: 0.3}
	records, filling := churn, churn
	records.record = 0.5
	filling.fill, filling.tau = 4*miB, 60
	two := noisyPool()
	two.workers, two.steps, two.perStep = 2, 12, 15
	recycled := churn
	recycled.recycle, recycled.settled = 400, 0
	nulls := []struct {
		name string
		sim  soakSim
	}{{"allocator's cache", churn}, {"high-water marks", records}, {"a cache filling", filling}, {"all of these", noisyPool()},
		{"all of these, 2 workers read 12 times", two}, {"allocator's cache, recycled every 400", recycled}}
	for _, c := range nulls {
		shown := 0
		for i := 0; i < runs; i++ {
			if EstimateGrowth(c.sim.run(r)).Shown {
				shown++
			}
		}
		t.Logf("no leak, %s: growth shown in %d of %d", c.name, shown, runs)
		if shown > runs/200 {
			t.Errorf("%s: growth shown in %d of %d soaks of a pool that does not leak: want under 0.5%%", c.name, shown, runs)
		}
	}
	lumpy := churn
	lumpy.leak = func(r *rand.Rand) int64 {
		if r.IntN(20) == 0 {
			return miB
		}
		return 0
	}
	lumpyTwo := lumpy
	lumpyTwo.workers, lumpyTwo.steps, lumpyTwo.perStep = 2, 12, 100
	// cmd/phptune's TestTuneSoakFindsALeak: a fiftieth of the mix, two workers read 30 times, 55 requests apart.
	fiftieth := lumpy
	fiftieth.workers, fiftieth.perStep, fiftieth.settled = 2, 55, 200
	fiftieth.leak = func(r *rand.Rand) int64 {
		if r.IntN(50) == 0 {
			return miB
		}
		return 0
	}
	// internal/tune's TestSoakFindsARealLeak: a tenth of the mix on two fresh workers read 16 times, 30 requests
	// apart (fewer reads and requests than that test's at 300 req/s).
	realLeak := lumpy
	realLeak.workers, realLeak.steps, realLeak.perStep, realLeak.settled = 2, 16, 30, 0
	realLeak.leak = func(r *rand.Rand) int64 {
		if r.IntN(10) == 0 {
			return miB
		}
		return 0
	}
	steady := churn
	steady.leak = func(*rand.Rand) int64 { return 16 << 10 }
	alone := soakSim{workers: 1, steps: 12, perStep: 4, warm: 1, cached: 1, churn: 0.3, leak: func(*rand.Rand) int64 { return miB }}
	leaks := []struct {
		name string
		sim  soakSim
		want float64
	}{{"1 MiB on a twentieth of the mix", lumpy, miB / 20}, {"the same, 2 workers read 12 times", lumpyTwo, miB / 20},
		{"1 MiB on a fiftieth, 2 workers read 30 times", fiftieth, miB / 50},
		{"1 MiB on a tenth, 2 fresh workers read 16 times 30 requests apart", realLeak, miB / 10},
		{"16 KiB a request", steady, 16 << 10}, {"1 MiB a request, one worker alone, 12 steps", alone, miB}}
	for _, c := range leaks {
		shown, covered := 0, 0
		for i := 0; i < runs; i++ {
			g := EstimateGrowth(c.sim.run(r))
			if g.Shown {
				shown++
			}
			if g.Lo <= c.want && c.want <= g.Hi {
				covered++
			}
		}
		t.Logf("%s: shown in %d of %d, interval covers in %d", c.name, shown, runs, covered)
		if shown < runs*99/100 {
			t.Errorf("%s: shown in %d of %d: want 99%% or more", c.name, shown, runs)
		}
		if covered < runs*93/100 {
			t.Errorf("%s: the 95%% interval covers the true growth in %d of %d", c.name, covered, runs)
		}
	}
}

// TestSeriesTracker: a worker's warm-up reads are left out, a read with no request since is not a point, and a
// recycled worker (its count goes back, even under the same pid) starts a series of its own.
func TestSeriesTracker(t *testing.T) {
	tr := SeriesTracker{Warm: 10}
	for _, p := range []MemPoint{{5, 1}, {10, 100}, {10, 101}, {20, 200}, {30, 300}, {3, 10}, {12, 20}, {22, 30}} {
		tr.Add(7, p.Requests, p.USS)
	}
	tr.Add(8, 15, 5)
	if len(tr.Series) != 3 {
		t.Fatalf("series %+v: want 3", tr.Series)
	}
	if s := tr.Series[0].Points; len(s) != 3 || s[0] != (MemPoint{10, 100}) || s[2] != (MemPoint{30, 300}) {
		t.Errorf("first life %+v", s)
	}
	if s := tr.Series[1].Points; len(s) != 2 || s[0] != (MemPoint{12, 20}) {
		t.Errorf("second life %+v: want it from its 10th request", s)
	}
	tr.Close(8)
	tr.Add(8, 16, 6)
	if len(tr.Series) != 4 {
		t.Errorf("a closed series went on: %+v", tr.Series)
	}
}

// TestEstimateGrowthExact: a worker that grows by exactly 1 MiB a request, read every few requests, is measured
// at 1 MiB with a tight interval; one that does not grow at all shows nothing; a series too short has no slope.
func TestEstimateGrowthExact(t *testing.T) {
	var grow, flat WorkerSeries
	for i, n := range []int64{20, 21, 23, 27, 35, 51} {
		grow.Points = append(grow.Points, MemPoint{n, 10*miB + (n-20)*miB})
		flat.Points = append(flat.Points, MemPoint{n, 10*miB + int64(i%2)*pageBytes})
	}
	g := EstimateGrowth([]WorkerSeries{grow})
	if !g.Shown || math.Abs(g.PerRequest-miB) > 1 || g.Hi-g.Lo > 0.01*miB {
		t.Errorf("1 MiB a request: %+v", g)
	}
	if g := EstimateGrowth([]WorkerSeries{flat}); g.Shown || g.Lo > 0 {
		t.Errorf("flat: %+v", g)
	}
	if g := EstimateGrowth([]WorkerSeries{{Points: grow.Points[:3]}}); g.Known() {
		t.Errorf("three reads: %+v", g)
	}
}
