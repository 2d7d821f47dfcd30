package measure

import (
	"fmt"
	"math"

	"github.com/phptune/phptune/internal/bytesize"
	"github.com/phptune/phptune/internal/stats"
)

// Memory growth per request (DESIGN 9): a worker's private memory (USS), read between its requests, against
// its own count of requests served. PHP frees a request's memory at its end, so a worker that grows from
// request to request holds something past them: an extension's or a library's allocation (a leak), or a
// cache that fills. pm.max_requests bounds it.
//
// A worker's series is noisy in two ways. PHP's allocator keeps chunks of 2 MiB between requests and gives
// them back as it sees fit, and pages are counted whole, so the memory read moves up and down around its line;
// and a leak in one page of a mix grows a worker in steps, at the random times that page comes its way, so the
// series is a random walk about its drift and its reads are correlated. One worker's least-squares slope, with
// the standard error that assumes neither, would be too sure of itself. So each worker's standard error is
// widened for the correlation of its residuals (lag one), and the workers' slopes, pooled by the requests
// behind each, are also judged by how much they differ from worker to worker, whichever says less. Growth is
// shown when the pooled slope's lower bound is above zero at z = 3 (one-sided; Student's t with few workers) and both halves of the series
// grow at a third of the whole's rate or more: a heap that stepped up once to a new high-water mark grows in one
// half only, and a worker's first requests (its caches filling) are left out (SeriesTracker's warm-up).
// TestGrowthErrorRates simulates the rule's error rates.

// showP is the one-sided level at which growth counts as shown (z = 3 for many degrees of freedom): a false
// finding in about one soak in 700 from the slope alone, before the rules on its shape.
const showP = 0.99865

// pageBytes is the resolution of USS: a series' standard error is never taken below a page over its span.
const pageBytes = 4096

// growthMinPoints are the fewest reads a series needs for a slope.
const growthMinPoints = 4

// MemPoint is one read of a worker between requests.
type MemPoint struct {
	Requests int64 `json:"requests"` // served by the worker so far
	USS      int64 `json:"uss"`      // its private memory, bytes
}

// WorkerSeries is the reads of one worker's life, in order.
type WorkerSeries struct {
	PID    int        `json:"pid"`
	Points []MemPoint `json:"points"`
}

// SeriesTracker builds workers' series from successive reads of a pool: one series a worker life, by pid,
// started again when a pid's count of requests goes back (a recycled worker given the same pid); a worker's
// reads before Warm requests are left out (its caches fill in its first requests), and a read with no request
// since the last one is the same point again.
type SeriesTracker struct {
	Warm   int64
	Series []WorkerSeries
	open   map[int]int // pid -> index in Series
}

// Add records worker pid's count of requests and its USS.
func (s *SeriesTracker) Add(pid int, requests, uss int64) {
	if s.open == nil {
		s.open = map[int]int{}
	}
	if requests < s.Warm {
		if i, ok := s.open[pid]; ok && requests < s.last(i).Requests {
			delete(s.open, pid) // recycled and not warm yet
		}
		return
	}
	i, ok := s.open[pid]
	if ok {
		switch last := s.last(i); {
		case requests < last.Requests:
			ok = false
		case requests == last.Requests:
			return
		}
	}
	if !ok {
		s.Series = append(s.Series, WorkerSeries{PID: pid})
		i = len(s.Series) - 1
		s.open[pid] = i
	}
	s.Series[i].Points = append(s.Series[i].Points, MemPoint{Requests: requests, USS: uss})
}

// Close ends pid's series: its next read starts another (the worker was restarted, or a new phase begins).
func (s *SeriesTracker) Close(pid int) { delete(s.open, pid) }

func (s *SeriesTracker) last(i int) MemPoint {
	p := s.Series[i].Points
	return p[len(p)-1]
}

// Growth is the workers' growth per request.
type Growth struct {
	// PerRequest is the pooled slope, bytes a request; Lo and Hi its 95% interval, SE its standard error.
	PerRequest float64 `json:"bytes_per_request"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	SE         float64 `json:"se"`
	// Workers are the series with a slope (four reads or more), Requests the requests across them.
	Workers  int   `json:"workers"`
	Requests int64 `json:"requests"`
	// FirstHalf and SecondHalf are the pooled slopes of every series' earlier and later half.
	FirstHalf  float64 `json:"first_half"`
	SecondHalf float64 `json:"second_half"`
	// Shown says that steady growth is shown: the lower bound at z = 3 above zero, both halves growing.
	Shown bool `json:"shown"`
}

// String is the growth a request with its interval, in the estimate's unit: +10.6 KiB [9.6, 11.6].
func (g Growth) String() string {
	unit, mult := bytesize.Unit(g.PerRequest)
	if unit == "B" {
		return fmt.Sprintf("%+.0f B [%.0f, %.0f]", g.PerRequest, g.Lo, g.Hi)
	}
	return fmt.Sprintf("%+.1f %s [%.1f, %.1f]", g.PerRequest/mult, unit, g.Lo/mult, g.Hi/mult)
}

// Known says whether any series had a slope.
func (g Growth) Known() bool { return g.Workers > 0 }

// seriesFit is one series' least-squares slope with its standard error.
type seriesFit struct {
	b, se float64
	n     int
	span  int64
}

// fitSeries fits p's slope; ok is false with fewer than minPoints reads or no request between the first and
// the last.
func fitSeries(p []MemPoint, minPoints int) (f seriesFit, ok bool) {
	n := len(p)
	if n < minPoints || p[n-1].Requests <= p[0].Requests {
		return f, false
	}
	var mx, my float64
	for _, q := range p {
		mx += float64(q.Requests)
		my += float64(q.USS)
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxx, sxy float64
	for _, q := range p {
		dx := float64(q.Requests) - mx
		sxx += dx * dx
		sxy += dx * (float64(q.USS) - my)
	}
	f = seriesFit{b: sxy / sxx, n: n, span: p[n-1].Requests - p[0].Requests}
	if n > 2 {
		res := make([]float64, n)
		var rss float64
		for i, q := range p {
			res[i] = float64(q.USS) - my - f.b*(float64(q.Requests)-mx)
			rss += res[i] * res[i]
		}
		// Residuals that follow each other (a random walk about the line) carry less news than their number:
		// widen by the AR(1) factor of their lag-one correlation.
		var lag float64
		for i := 1; i < n; i++ {
			lag += res[i] * res[i-1]
		}
		rho := 0.0
		if rss > 0 {
			rho = min(max(lag/rss, 0), 0.9)
		}
		f.se = math.Sqrt(rss/float64(n-2)/sxx) * math.Sqrt((1+rho)/(1-rho))
	}
	f.se = math.Max(f.se, pageBytes/float64(f.span))
	return f, true
}

// pool is the slope of the series pooled by the requests behind each, with its standard error (the larger of
// the series' own and their spread) and the degrees of freedom of the one used.
func pool(series []WorkerSeries, minPoints int) (b, se float64, df, workers int, requests int64) {
	var fits []seriesFit
	var sw float64
	for _, s := range series {
		if f, ok := fitSeries(s.Points, minPoints); ok {
			fits = append(fits, f)
			sw += float64(f.span)
			b += float64(f.span) * f.b
			requests += f.span
		}
	}
	if len(fits) == 0 {
		return 0, 0, 0, 0, 0
	}
	b /= sw
	var within, between float64
	for _, f := range fits {
		w := float64(f.span) / sw
		within += w * w * f.se * f.se
		between += w * w * (f.b - b) * (f.b - b)
		df += max(f.n-2, 1)
	}
	se = math.Sqrt(within)
	if k := len(fits); k > 1 {
		// The series' own errors lean on a model of their noise; the spread between workers does not, and its
		// degrees of freedom are the workers'.
		se, df = math.Max(se, math.Sqrt(between*float64(k)/float64(k-1))), k-1
	}
	return b, se, df, len(fits), requests
}

// halves cuts every series in two at its middle read, which both halves share.
func halves(series []WorkerSeries) (first, second []WorkerSeries) {
	for _, s := range series {
		m := len(s.Points) / 2
		first = append(first, WorkerSeries{PID: s.PID, Points: s.Points[:m+1]})
		second = append(second, WorkerSeries{PID: s.PID, Points: s.Points[m:]})
	}
	return first, second
}

// EstimateGrowth is the workers' growth per request from their series.
func EstimateGrowth(series []WorkerSeries) Growth {
	b, se, df, n, reqs := pool(series, growthMinPoints)
	if n == 0 {
		return Growth{}
	}
	t := stats.TQuantile(0.975, df)
	g := Growth{PerRequest: b, SE: se, Lo: b - t*se, Hi: b + t*se, Workers: n, Requests: reqs}
	var fitted []WorkerSeries
	for _, s := range series {
		if _, ok := fitSeries(s.Points, growthMinPoints); ok {
			fitted = append(fitted, s)
		}
	}
	first, second := halves(fitted)
	g.FirstHalf, _, _, _, _ = pool(first, 2)
	g.SecondHalf, _, _, _, _ = pool(second, 2)
	growing := 0
	for _, s := range fitted {
		if f, _ := fitSeries(s.Points, growthMinPoints); f.b > 0 {
			growing++
		}
	}
	g.Shown = b-stats.TQuantile(showP, df)*se > 0 && 3*g.FirstHalf >= b && 2*g.SecondHalf >= b && 3*growing >= 2*len(fitted)
	return g
}
