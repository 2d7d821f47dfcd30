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
	// Workers are the series with a slope (four reads or more), Growing those of them with a positive one,
	// Requests the requests across them.
	Workers  int   `json:"workers"`
	Growing  int   `json:"growing"`
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

// fit is a least-squares slope of USS on requests with its standard error (from the residuals, widened for
// their lag-one correlation when ar is set, never below a page over the span).
type fit struct {
	b, se float64
	n     int
	span  int64
}

func fitReads(p []MemPoint, ar bool) (f fit, ok bool) {
	n := len(p)
	if n < 2 || p[n-1].Requests <= p[0].Requests {
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
	f = fit{b: sxy / sxx, n: n, span: p[n-1].Requests - p[0].Requests}
	if n > 2 {
		res := make([]float64, n)
		var rss, lag float64
		for i, q := range p {
			res[i] = float64(q.USS) - my - f.b*(float64(q.Requests)-mx)
			rss += res[i] * res[i]
			if i > 0 {
				lag += res[i] * res[i-1]
			}
		}
		f.se = math.Sqrt(rss / float64(n-2) / sxx)
		if ar && rss > 0 {
			// Residuals that follow each other (a random walk about the line) carry less news than their
			// number: the AR(1) factor of their lag-one correlation.
			rho := min(max(lag/rss, 0), 0.9)
			f.se *= math.Sqrt((1 + rho) / (1 - rho))
		}
	}
	f.se = math.Max(f.se, pageBytes/float64(f.span))
	return f, true
}

// blockReads are the reads of a block: a series is cut into blocks of this many (the last takes what is left),
// neighbours sharing their boundary read so that every step between reads falls in one block.
const blockReads = 4

func blocks(p []MemPoint) [][]MemPoint {
	var out [][]MemPoint
	for i := 0; i+blockReads <= len(p); i += blockReads - 1 {
		end := i + blockReads
		if len(p)-end < blockReads-1 {
			end = len(p)
		}
		out = append(out, p[i:end])
		if end == len(p) {
			break
		}
	}
	return out
}

// minBlocks are the fewest blocks whose spread is a standard error with their degrees of freedom: with fewer,
// the larger of their spread and the residuals' (widened for their correlation) is taken at the reads'.
const minBlocks = 5

// pooled is the growth of the series: the blocks' slopes weighted by the requests behind each, with a standard
// error from their spread (batch means: blocks of a series that follow each other are nearly independent
// whatever its noise, where its reads are not), never below what the blocks' own residuals say; and the
// degrees of freedom of that error.
func pooled(series []WorkerSeries) (b, se float64, df int) {
	var fs []fit
	var sw float64
	for _, s := range series {
		for _, bl := range blocks(s.Points) {
			if f, ok := fitReads(bl, len(series) == 1 && len(blocks(s.Points)) < minBlocks); ok {
				fs = append(fs, f)
				sw += float64(f.span)
				b += float64(f.span) * f.b
			}
		}
	}
	if len(fs) == 0 {
		return 0, 0, 0
	}
	b /= sw
	var within, between float64
	for _, f := range fs {
		w := float64(f.span) / sw
		within += w * w * f.se * f.se
		between += w * w * (f.b - b) * (f.b - b)
		df += f.n - 2
	}
	se = math.Sqrt(within)
	if k := len(fs); k > 1 {
		se = math.Max(se, math.Sqrt(between*float64(k)/float64(k-1)))
		if k >= minBlocks {
			df = k - 1
		}
	}
	return b, se, max(df, 1)
}

// halves cuts every series in two at its middle read, which both halves share, and gives each half's slope,
// weighted by the requests behind each.
func halves(series []WorkerSeries) (first, second float64) {
	var w1, w2 float64
	for _, s := range series {
		m := len(s.Points) / 2
		if f, ok := fitReads(s.Points[:m+1], false); ok {
			first += float64(f.span) * f.b
			w1 += float64(f.span)
		}
		if f, ok := fitReads(s.Points[m:], false); ok {
			second += float64(f.span) * f.b
			w2 += float64(f.span)
		}
	}
	return first / max(w1, 1), second / max(w2, 1)
}

// EstimateGrowth is the workers' growth per request from their series; series of fewer than four reads are
// left out.
func EstimateGrowth(series []WorkerSeries) Growth {
	var fitted []WorkerSeries
	var g Growth
	growing := 0
	for _, s := range series {
		f, ok := fitReads(s.Points, false)
		if !ok || len(s.Points) < growthMinPoints {
			continue
		}
		fitted = append(fitted, s)
		g.Requests += f.span
		if f.b > 0 {
			growing++
		}
	}
	if len(fitted) == 0 {
		return Growth{}
	}
	b, se, df := pooled(fitted)
	t := stats.TQuantile(0.975, df)
	g.PerRequest, g.SE, g.Lo, g.Hi, g.Workers, g.Growing = b, se, b-t*se, b+t*se, len(fitted), growing
	g.FirstHalf, g.SecondHalf = halves(fitted)
	g.Shown = b-stats.TQuantile(showP, df)*se > 0 && 3*g.FirstHalf >= b && 2*g.SecondHalf >= b && 3*growing >= 2*len(fitted)
	return g
}

// GrowthFloor is the least growth worth recycling a worker for (GrowthRoom).
const GrowthFloor = 16 << 20

// GrowthRoom is the growth a worker of size bytes is allowed before it is recycled, and the growth before
// recycling that check reports: GrowthFloor, or half the worker when that is more. Less is not worth the
// restarts: a worker growing 50 bytes a request would otherwise be recycled every hundred requests, each new
// one refilling its caches, to save a few KiB.
func GrowthRoom(size int64) int64 { return max(GrowthFloor, size/2) }
