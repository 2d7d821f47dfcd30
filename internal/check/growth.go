package check

import (
	"math"
	"time"
)

// Workers' memory growth per request: each worker's private memory (USS) against its own request count, a
// series per worker (one that is recycled starts another: its count goes back). A PHP worker's heap grows in its
// first requests to the size its pages need and stays there; a leak keeps growing. So a worker's first
// warmupRequests are left out, and growth is reported only when it is steady: the pooled slope's lower bound
// (z = 3) projects past growthFloor (or half a worker's size) within the horizon, most workers grow, and both
// halves of the workers' series grow at a third of the whole's rate or more (a heap that stepped up once to a
// new high-water mark grows in one half only). TestGrowthErrorRates simulates the rule's error rates.

const (
	warmupRequests = 20
	// minSeriesPoints and minSeriesRequests make a worker's series long enough for a slope.
	minSeriesPoints   = 5
	minHalfPoints     = 3
	minHalfRequests   = 8
	minSeriesRequests = 10
	// HorizonNever is the horizon of a pool that never recycles its workers (pm.max_requests = 0): growth is
	// projected over a thousand requests.
	HorizonNever = 1000
	growthFloor  = 16 << 20
	growthZ      = 3.0
	halfZ        = 2.0
	// pageBytes is the resolution of USS: a slope's standard error is never taken below a page over the span.
	pageBytes = 4096
)

// memPoint is one worker's requests and USS at one read.
type memPoint struct {
	at  time.Time
	req int64 // the app's requests served
	raw int64 // php-fpm's count, check's own included
	uss int64
}

// workerSeries splits the reads into one series per worker life: by pid, restarted when its request count goes
// back (a recycled worker given the same pid); the first warmupRequests of a life are left out. A worker's
// count includes check's own status requests it served (each counts twice, as in accepted conn: the request and
// its kept connection's close); those are taken out, so that growth is per request of the app's.
func workerSeries(obs []observation, statusPath string) [][]memPoint {
	open := map[int]int{}  // pid -> index in out
	own := map[int]int64{} // pid -> check's requests it served before this read
	var out [][]memPoint
	for _, o := range obs {
		for _, p := range o.status.Processes {
			if i, seen := open[p.PID]; seen && len(out[i]) > 0 && p.Requests < out[i][len(out[i])-1].raw {
				delete(open, p.PID) // recycled: a new life
				own[p.PID] = 0
			}
			served := own[p.PID]
			if ownRequest(p, statusPath) {
				own[p.PID] += ownAccepted
				served++ // this read is counted already, its close not yet
			}
			m, ok := o.mem[p.PID]
			req := p.Requests - served
			if !ok || req < warmupRequests {
				continue
			}
			i, seen := open[p.PID]
			if seen && req == out[i][len(out[i])-1].req {
				continue // no request since: the same point again
			}
			if !seen {
				open[p.PID] = len(out)
				out = append(out, nil)
				i = len(out) - 1
			}
			out[i] = append(out[i], memPoint{at: o.at, req: req, raw: p.Requests, uss: m.uss})
		}
	}
	return out
}

// slope is a least-squares slope of USS on requests with its standard error.
type slope struct {
	b, se float64
	span  int64
}

func fitSlope(s []memPoint, minPoints int, minRequests int64) (slope, bool) {
	n := len(s)
	if n < minPoints || s[n-1].req-s[0].req < minRequests {
		return slope{}, false
	}
	var mx, my float64
	for _, p := range s {
		mx += float64(p.req)
		my += float64(p.uss)
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxx, sxy float64
	for _, p := range s {
		dx := float64(p.req) - mx
		sxx += dx * dx
		sxy += dx * (float64(p.uss) - my)
	}
	b := sxy / sxx
	var rss float64
	for _, p := range s {
		r := float64(p.uss) - my - b*(float64(p.req)-mx)
		rss += r * r
	}
	span := s[n-1].req - s[0].req
	se := math.Sqrt(rss / float64(n-2) / sxx)
	se = math.Max(se, pageBytes/float64(span))
	return slope{b: b, se: se, span: span}, true
}

// pooled is the inverse-variance weighted slope of the series, its standard error, and how many series had a
// slope and how many of them a positive one.
func pooled(series [][]memPoint, minPoints int, minRequests int64) (b, se float64, n, growing int, requests int64) {
	var sw, swb float64
	for _, s := range series {
		f, ok := fitSlope(s, minPoints, minRequests)
		if !ok {
			continue
		}
		w := 1 / (f.se * f.se)
		sw += w
		swb += w * f.b
		n++
		requests += f.span
		if f.b > 0 {
			growing++
		}
	}
	if n == 0 {
		return 0, 0, 0, 0, 0
	}
	return swb / sw, 1 / math.Sqrt(sw), n, growing, requests
}

// halves cuts every series in two at its middle point: a worker's earlier and later requests.
func halves(series [][]memPoint) (first, second [][]memPoint) {
	for _, s := range series {
		first, second = append(first, s[:len(s)/2]), append(second, s[len(s)/2:])
	}
	return first, second
}

// halfSlope is the pooled slope of half the series, or 0 when it is not shown positive (z = 2): a half that did
// not grow, or too few reads to tell.
func halfSlope(series [][]memPoint) float64 {
	b, se, n, _, _ := pooled(series, minHalfPoints, minHalfRequests)
	if n == 0 || b-halfZ*se <= 0 {
		return 0
	}
	return math.Round(b)
}

// growthOf measures the workers' growth per request; nil when no worker served enough requests to tell.
func growthOf(w window, statusPath string, maxRequests int) *Growth {
	series := workerSeries(w.obs, statusPath)
	b, se, n, growing, reqs := pooled(series, minSeriesPoints, minSeriesRequests)
	if n == 0 {
		return nil
	}
	g := &Growth{PerRequest: math.Round(b), Lower: math.Round(b - growthZ*se), Workers: n, Growing: growing, Requests: reqs}
	first, second := halves(series)
	g.FirstHalf, g.SecondHalf = halfSlope(first), halfSlope(second)
	g.Horizon = int64(maxRequests)
	if g.Horizon <= 0 {
		g.Horizon = HorizonNever
	}
	g.Projected = int64(g.PerRequest) * g.Horizon
	return g
}

// growthLimit is the growth within the horizon that makes a finding: growthFloor, or half a worker's size when
// that is more.
func growthLimit(meanUSS int64) int64 { return max(growthFloor, meanUSS/2) }

// Leaking says whether the growth is steady enough and large enough to report.
func (g *Growth) Leaking(meanUSS int64) bool {
	if g == nil || g.PerRequest <= 0 {
		return false
	}
	return g.Lower*float64(g.Horizon) >= float64(growthLimit(meanUSS)) &&
		3*g.Growing >= 2*g.Workers &&
		3*g.FirstHalf >= g.PerRequest && 3*g.SecondHalf >= g.PerRequest
}
