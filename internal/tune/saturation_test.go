package tune

import (
	"math"
	"testing"

	"github.com/phptune/phptune/internal/stats"
)

// TestTheSweepStopsWhereOnlyNoiseRises: a rise no larger than the trials' own spread could make of a flat curve
// does not carry the sweep on, and the knee is the fewest connections not shown below 85% of the peak; a curve
// that rises beyond its noise is still swept.
func TestTheSweepStopsWhereOnlyNoiseRises(t *testing.T) {
	wobble := []float64{0.97, 1, 1.03}
	scaled := func(f func(c float64) float64, spread float64) map[int][]float64 {
		m := map[int][]float64{}
		for c := 1; c <= 128; c *= 2 {
			for _, w := range wobble {
				m[c] = append(m[c], f(float64(c))*(1+(w-1)*spread/0.03))
			}
		}
		return m
	}
	cases := []struct {
		name             string
		trials           map[int][]float64
		wantLast, wantKn int
	}{
		// WordPress on two cores, trials varying by 10% (2026-11-26, ra26): the old 5% bar swept on to 128
		// connections, and put the peak at 32 and the knee there.
		{"flat and noisy", map[int][]float64{1: {14, 14, 13}, 2: {18, 19, 21}, 4: {17, 20, 21}, 8: {22, 19, 19},
			16: {25, 20.31, 21.58}, 32: {25.63, 24.03, 27.41}, 64: {21.2, 22.53, 23.58}, 128: {21.19, 18.12, 26.25}}, 8, 2},
		// The same, another run (ra27): 30.8 in one trial at 32 connections, the old peak and knee; the growth
		// of the pool past 32 is saturation's, so the curve alone goes on to 64.
		{"flat, a wild point", map[int][]float64{1: {10, 10, 10}, 2: {16, 16, 16}, 4: {18, 20, 18}, 8: {19, 20, 19},
			16: {23, 20.8, 19.5}, 32: {20.8, 25.6, 30.8}, 64: {20.8, 20.2, 21.7}}, 64, 4},
		// An app that waits scales with the connections whatever its noise.
		{"linear", scaled(func(c float64) float64 { return 10 * c }, 0.10), 128, 128},
		// A quiet curve that creeps up 6% a doubling is still rising at the 5% bar.
		{"quiet creep", scaled(func(c float64) float64 { return 200 * math.Pow(1.06, math.Log2(c)) * min(c, 2) / 2 }, 0.01), 128, 16},
	}
	for _, c := range cases {
		var cv curve
		last := 0
		for n := 1; n <= 128 && c.trials[n] != nil; n *= 2 {
			good := c.trials[n]
			var logs []float64
			for _, g := range good {
				logs = append(logs, math.Log(g))
			}
			last = n
			if cv.add(Point{Concurrency: n, Median: stats.Median(good)}, logs) {
				break
			}
		}
		if last != c.wantLast || cv.knee() != c.wantKn {
			t.Errorf("%s: swept to %d connections, knee %d; want %d, knee %d", c.name, last, cv.knee(), c.wantLast, c.wantKn)
		}
	}
}

// TestSaturationOfPoints: the curve of a sweep's points, without a tuner: the peak is the best median, the knee
// the fewest connections not shown below 85% of it, the OOM passed on, and a point's figures those of its trials.
func TestSaturationOfPoints(t *testing.T) {
	swept := func(trials map[int][]float64) []sweptPoint {
		var out []sweptPoint
		for c := 1; trials[c] != nil; c *= 2 {
			sp := sweptPoint{conc: c}
			for i, g := range trials[c] {
				sp.trials = append(sp.trials, sweepTrial{rate: g, value: g, p99: float64(1000 * (i + 1)), errors: 1})
			}
			out = append(out, sp)
		}
		return out
	}
	cases := []struct {
		name             string
		trials           map[int][]float64
		oom              int
		wantPeak, wantKn int
	}{
		// TestTheSweepStopsWhereOnlyNoiseRises's WordPress sweeps, as far as they went.
		{"flat and noisy", map[int][]float64{1: {14, 14, 13}, 2: {18, 19, 21}, 4: {17, 20, 21}, 8: {22, 19, 19}}, 0, 4, 2},
		{"flat, a wild point", map[int][]float64{1: {10, 10, 10}, 2: {16, 16, 16}, 4: {18, 20, 18}, 8: {19, 20, 19},
			16: {23, 20.8, 19.5}, 32: {20.8, 25.6, 30.8}, 64: {20.8, 20.2, 21.7}}, 0, 32, 4},
		{"rising, then the OOM killer", map[int][]float64{1: {10, 10, 10}, 2: {20, 20, 20}, 4: {40, 40, 40}}, 8, 4, 4},
	}
	mean := func(x []float64) float64 { m, _ := stats.MeanSD(x); return m }
	for _, c := range cases {
		sat := saturationOf(32, swept(c.trials), c.oom)
		if sat.Peak != c.wantPeak || sat.Knee != c.wantKn || sat.OOM != c.oom || sat.Pool != 32 || len(sat.Points) != len(c.trials) {
			t.Errorf("%s: peak %d, knee %d, OOM %d, pool %d, %d points; want peak %d, knee %d, OOM %d, pool 32, %d points",
				c.name, sat.Peak, sat.Knee, sat.OOM, sat.Pool, len(sat.Points), c.wantPeak, c.wantKn, c.oom, len(c.trials))
		}
		if p := sat.Points[0]; p.Concurrency != 1 || p.P99Us != 2000 || p.Errors != 3 || p.RPS != mean(c.trials[1]) {
			t.Errorf("%s: first point %+v", c.name, p)
		}
		if got := sat.peakRPS(); got != mean(c.trials[c.wantPeak]) {
			t.Errorf("%s: peak's rate %g, want %g", c.name, got, mean(c.trials[c.wantPeak]))
		}
	}
	// The noise is the spread of a trial's log goodput around its point's: here e^-0.1, 1, e^0.1 at each point.
	d := 0.1
	sat := saturationOf(32, []sweptPoint{
		{conc: 1, trials: []sweepTrial{{rate: 1, value: math.Exp(-d)}, {rate: 1, value: 1}, {rate: 1, value: math.Exp(d)}}},
		{conc: 2, trials: []sweepTrial{{rate: 2, value: 2 * math.Exp(-d)}, {rate: 2, value: 2}, {rate: 2, value: 2 * math.Exp(d)}}},
	}, 0)
	if want := d; math.Abs(sat.NoiseSD-want) > 1e-12 {
		t.Errorf("noise %g, want %g (the sample SD of -d, 0, d)", sat.NoiseSD, want)
	}
	if sat := saturationOf(32, nil, 0); sat.Knee != 0 || sat.Peak != 0 || len(sat.Points) != 0 {
		t.Errorf("no points: %+v", sat)
	}
}
