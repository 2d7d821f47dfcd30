package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/phptune/phptune/internal/arms"
	"github.com/phptune/phptune/internal/stats"
)

// Saturation is the throughput-against-concurrency curve on a pool large enough not to cap it.
type Saturation struct {
	Pool   int     `json:"pool"` // static pool size used
	Points []Point `json:"points"`
	Knee   int     `json:"knee"` // smallest concurrency reaching KneeShare of the peak's throughput
	Peak   int     `json:"peak"`
	// NoiseSD is the spread of a trial's log goodput around its point's mean: what one trial's figure wobbles.
	NoiseSD float64 `json:"noise_sd"`
	// OOM is the concurrency at which the kernel's OOM killer struck and the sweep stopped (0: it did not).
	OOM int `json:"oom_at,omitempty"`
}

// Point is one concurrency of the sweep.
type Point struct {
	Concurrency int     `json:"concurrency"`
	RPS         float64 `json:"rps"`    // mean goodput of the trials
	Median      float64 `json:"median"` // their median: the curve's shape is judged on it
	Lo          float64 `json:"lo"`     // 95% CI of the mean (t distribution)
	Hi          float64 `json:"hi"`
	P99Us       float64 `json:"p99_us"`
	Errors      int64   `json:"errors"`
}

// sweepTrials are the trials at each concurrency of the sweep, each of about sweepRequests requests and at
// least sweepWindow long.
const (
	sweepTrials    = 3
	sweepRequests  = 150
	sweepWindow    = 500 * time.Millisecond
	sweepMaxWindow = time.Second
)

// nextConc is the sweep's next concurrency after c, up to limit: double, or four times when the last two steps
// both scaled throughput nearly as much as concurrency (an app that waits scales linearly far beyond the cores,
// and its slow low points would spend the sweep's time before it reaches the knee). Two steps, because the first
// (1 to 2 connections) scales well on any app: one connection also waits on the client.
func nextConc(c, limit int, points []Point) int {
	linear := func(i int) bool { // the step into points[i]
		return points[i].Median >= 0.9*points[i-1].Median*float64(points[i].Concurrency)/float64(points[i-1].Concurrency)
	}
	next := 2 * c
	if n := len(points); n >= 3 && linear(n-1) && linear(n-2) {
		next = 4 * c
	}
	if next > limit && c < limit {
		return limit // the pool's own size is the sweep's last point
	}
	return next
}

// KneeShare is the share of the peak's median throughput the knee's median reaches (the report states the rule).
const KneeShare = 0.85

// firstSweepPool is the sweep's pool until the curve is still rising at its size: a worker's first requests
// cost more than its later ones, and every worker of a static pool takes its turn (php-fpm's workers wait in
// accept, the longest-waiting first), so a pool is warmed a few requests a worker before it is measured (see
// Settle): 32 workers are warm in a few seconds even for WordPress, 128 in tens of seconds.
const firstSweepPool = 32

// saturation is the sweep's phase: it runs the sweep and keeps the curve saturationOf makes of it (t.sat, the
// result's when it is put together: finish). The comparisons load the knee: the server is as busy there as at
// the peak (within the sweep's noise), and more connections would only queue.
func (t *tuner) saturation(ctx context.Context) error {
	sw, err := t.sweep(ctx)
	sat := sw.partial()
	if err == nil {
		sat = saturationOf(sw.pool, sw.points, sw.oom)
	}
	t.sat = sat // as far as it got, an error's too
	if err != nil {
		return err
	}
	t.conc = max(sat.Knee, 2)
	t.peakRPS = sat.peakRPS()
	return nil
}

// swept is what a sweep measured: each point's trials, the pool at its last point, and the concurrency at which
// the OOM killer struck (0: it did not).
type swept struct {
	pool   int
	points []sweptPoint
	oom    int
}

// partial is the curve of a sweep cut short by an error: its points, without a knee or peak.
func (s swept) partial() *Saturation {
	sat := &Saturation{Pool: s.pool}
	for _, sp := range s.points {
		p, _ := sp.point()
		sat.Points = append(sat.Points, p)
	}
	return sat
}

// sweptPoint is one concurrency of the sweep as measured: its trials.
type sweptPoint struct {
	conc   int
	trials []sweepTrial
}

// sweepTrial is what one trial of the sweep measured.
type sweepTrial struct {
	rate   float64 // goodput
	value  float64 // the engine's observation: the noise is that of its log
	p99    float64
	errors int64
}

// point is the curve's point of p's trials, and their log observations.
func (p sweptPoint) point() (Point, []float64) {
	var good, p99, logs []float64
	var errs int64
	for _, tr := range p.trials {
		good = append(good, tr.rate)
		p99 = append(p99, tr.p99)
		logs = append(logs, math.Log(tr.value))
		errs += tr.errors
	}
	m, lo, hi := stats.MeanCI95(good)
	sort.Float64s(p99)
	return Point{Concurrency: p.conc, RPS: m, Median: stats.Median(good), Lo: lo, Hi: hi, P99Us: p99[len(p99)/2], Errors: errs}, logs
}

// saturationOf is the saturation curve of a sweep's points on a pool of pool workers, the OOM killer having
// struck at oom connections (0: not): its peak, its knee (curve.knee) and the noise of a trial.
func saturationOf(pool int, points []sweptPoint, oom int) *Saturation {
	sat := &Saturation{Pool: pool, OOM: oom}
	var cv curve
	var resid []float64
	for _, sp := range points {
		p, logs := sp.point()
		sat.Points = append(sat.Points, p)
		resid = append(resid, centred(logs)...)
		cv.add(p, logs)
	}
	if len(cv.points) == 0 {
		return sat
	}
	sat.Peak = cv.points[cv.peak].Concurrency
	sat.NoiseSD = rms(resid) * math.Sqrt(float64(sweepTrials)/float64(sweepTrials-1))
	sat.Knee = cv.knee()
	return sat
}

// peakRPS is the mean goodput at the curve's peak (0: no point).
func (s *Saturation) peakRPS() float64 {
	for _, p := range s.Points {
		if p.Concurrency == s.Peak {
			return p.RPS
		}
	}
	return 0
}

// sweep sweeps concurrency 1, 2, 4, ... on a static pool that cannot cap it, until throughput stops rising
// (curve.add). The pool grows from firstSweepPool to the largest the memory allows (128) only when the curve is
// still rising at its size. On an error it returns the points so far.
func (t *tuner) sweep(ctx context.Context) (swept, error) {
	limit := sweepPool(t.o.Memory, urlPeak(t.log.urls))
	cfg := t.best.Clone()
	cfg.PM, cfg.MaxChildren = "static", min(limit, firstSweepPool)
	sw := swept{pool: cfg.MaxChildren}
	t.plan.SweepTrials = sweepTrials
	var cv curve
	var points []Point
	rps := 1 / t.checkLatency()
	// One arm holds the pool for the whole sweep; each point's arm shares it.
	keep := t.stacks.Shared(cfg, arms.TrialSpec{Phase: "saturation", Metric: MetricGoodput, Conc: 1})
	if err := keep.Start(ctx); err != nil {
		return sw, err
	}
	defer func() { keep.Stop() }()
	// Concurrency never above the pool: the pool must not cap the curve. The sweep stops at a sixth of the
	// budget (after three points): a slow app's points are seconds each, and the knob races need the time.
	began := t.clock.Now()
	for c, last := 1, 0; c <= limit; c, last = nextConc(c, limit, points), c {
		if len(points) >= 3 && t.clock.Now().Sub(began) > t.o.Budget/6 {
			t.warn(fmt.Sprintf("the saturation sweep stopped at %d connections, a sixth of the budget: a larger --budget sweeps further", last))
			break
		}
		if c > firstSweepPool && cv.flat > 0 {
			break // past the first pool's size only while the curve rises: a point there takes many seconds
		}
		if c > cfg.MaxChildren {
			// Still rising at the pool's size: the sweep goes on with the largest pool.
			keep.Stop()
			cfg.MaxChildren, sw.pool = limit, limit
			keep = t.stacks.Shared(cfg, arms.TrialSpec{Phase: "saturation", Metric: MetricGoodput, Conc: 1})
			if err := keep.Start(ctx); err != nil {
				return sw, err
			}
		}
		t.status("saturation", plural(c, "connection", "connections"))
		// Each point's trials hold about sweepRequests requests at the last point's rate: the knee and the pool
		// size come from these few trials, so they are longer than a race's.
		t.lengths.Win = clampDur(time.Duration(sweepRequests/max(rps, 0.1)*float64(time.Second)), sweepWindow, sweepMaxWindow)
		t.lengths.Warm = clampDur(t.lengths.Win/4, minWarm, 500*time.Millisecond)
		a := t.stacks.Shared(cfg, arms.TrialSpec{Phase: "saturation", Metric: MetricGoodput, Conc: c, Detail: true})
		if err := a.Start(ctx); err != nil {
			return sw, err
		}
		sp := sweptPoint{conc: c}
		var oom error
		for i := 0; i < sweepTrials; i++ {
			o, err := a.Trial(ctx)
			if errors.Is(err, arms.ErrOOM) && len(points) > 0 && ctx.Err() == nil {
				oom = err
				break
			}
			if err != nil {
				a.Stop()
				return sw, err
			}
			rec := t.log.trials[len(t.log.trials)-1]
			sp.trials = append(sp.trials, sweepTrial{rate: o.Rate, value: o.Value, p99: rec.Latency.P99, errors: rec.Errors})
		}
		a.Stop() // the pool stays warm while the next point's arm holds it
		if oom != nil {
			// The memory ran out at this load: no point here, and no pool this large.
			sw.oom = c
			t.warn(fmt.Sprintf("the saturation sweep stopped at %d connections: %v", c, oom))
			break
		}
		p, logs := sp.point()
		sw.points, points = append(sw.points, sp), append(points, p)
		rps = max(p.RPS, rps)
		if cv.add(p, logs) {
			break
		}
	}
	return sw, nil
}

// curve is what the sweep's points so far say: the best of them, and whether the throughput still rises.
type curve struct {
	points []Point
	sds    []float64 // each point's sample SD of its trials' log goodput (NaN: none)
	peak   int       // the point with the best median
	level  int       // the last point that rose clearly over the level before it: what a rise must beat
	flat   int       // points in a row without a clear rise
}

// add records p, whose trials' log goodputs are logs, and says whether the sweep is done: two points in a row
// without a clear rise over the level. A rise must beat 5% and what the two points' noise makes of a flat curve
// one time in twenty: WordPress's trials vary by 10% or more, and with 5% alone noise carried its sweep to 128
// connections and its peak and knee to 32, where 2 served as well (2026-11-26, ra26: 19 req/s at 2 connections,
// 21.6 at 16, 25.6 at 32, then 22.5 and 21.2; ra27 the same at 32, its trials 20.8, 25.6 and 30.8): two minutes of
// sweep, and every comparison after it loaded 32 connections, the final's rounds twice as long. Medians: one
// disturbed trial of three does not move them.
func (cv *curve) add(p Point, logs []float64) (done bool) {
	_, sd := stats.MeanSD(logs)
	cv.points, cv.sds = append(cv.points, p), append(cv.sds, sd)
	i := len(cv.points) - 1
	if i == 0 || p.Median >= max(1.05, cv.margin(cv.level, i))*cv.points[cv.level].Median {
		cv.flat, cv.level = 0, i
	} else {
		cv.flat++
	}
	if p.Median > cv.points[cv.peak].Median {
		cv.peak = i
	}
	return cv.flat >= 2
}

// margin is the ratio of medians by which point j must exceed point i to be shown above it: what the two points'
// noise reaches one time in twenty (one-sided, on their means of sweepTrials trials).
func (cv *curve) margin(i, j int) float64 {
	a, b := cv.spread(i), cv.spread(j)
	return math.Exp(1.645 * math.Sqrt((a*a+b*b)/sweepTrials))
}

// spread is point i's noise: its own trials' SD, or the sweep's typical one when that is more (three trials can
// agree by chance, and a slow app's rates come in whole requests a second: WordPress's 10, 10 and 10 at one
// connection). The typical one is the median of the points' SDs, so one wild point does not widen it; for three
// trials the median of a sample SD is sqrt(ln 2) of the SD.
func (cv *curve) spread(i int) float64 {
	var ok []float64
	for _, sd := range cv.sds {
		if !math.IsNaN(sd) && !math.IsInf(sd, 0) {
			ok = append(ok, sd) // a trial that served nothing has no log: its point says nothing of the noise
		}
	}
	typical := 0.0
	if len(ok) > 0 {
		typical = stats.Median(ok) / math.Sqrt(math.Ln2)
	}
	if own := cv.sds[i]; !math.IsNaN(own) && !math.IsInf(own, 0) {
		return max(own, typical)
	}
	return typical
}

// knee is the fewest connections whose median is not shown below KneeShare of the peak's: the peak is the best
// of noisy medians, so it is high by chance, and a knee drawn at exactly 85% of it moved from run to run (demo
// runs put it at 4, 8, 16, 32 and 128). The pool race then tries the knee's neighbours.
func (cv *curve) knee() int {
	peak := cv.points[cv.peak]
	for i, p := range cv.points {
		if p.Median*cv.margin(i, cv.peak) >= KneeShare*peak.Median {
			return p.Concurrency
		}
	}
	return peak.Concurrency
}

// checkLatency is the mean latency of the first stack's check requests, a first guess of the app's speed.
func (t *tuner) checkLatency() float64 {
	if w := t.stacks.WarmOf(t.best); w != nil && w.CheckLatency > 0 {
		return w.CheckLatency
	}
	return 0.05
}

func centred(x []float64) []float64 {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - m
	}
	return out
}

func rms(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}
