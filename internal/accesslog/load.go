package accesslog

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Load is the traffic a log shows over time: the requests that reach PHP (every method and status, health
// checks and --log-exclude'd URIs too; not static files unless kept, nor lines without a request), each counted
// in the second of its stamp (nginx stamps a request when it ends, Apache's %t when it began). Rates are over the seconds from the first request to the last, idle seconds counted
// as zero, silences of gapLimit or more left out (a rotation missing, a server down: not traffic).
type Load struct {
	Requests int `json:"requests"`
	Timed    int `json:"timed"`   // of them, with a time stamp read
	Untimed  int `json:"untimed"` // without one: counted in the mix, not in the rates
	// OutOfOrder counts lines stamped more than a second before the line above them in the same file; rotated
	// files may come in any order. All are sorted before anything is counted.
	OutOfOrder int       `json:"out_of_order"`
	First      time.Time `json:"first,omitzero"`
	Last       time.Time `json:"last,omitzero"`
	SpanS      float64   `json:"span_s"` // the seconds the rates are over
	Gaps       int       `json:"gaps"`   // silences of gapLimit or more, left out
	GapS       float64   `json:"gap_s"`
	// Zones are the offsets from UTC the stamps were logged in; times here are shown in the first.
	Zones []string `json:"zones,omitempty"`
	// ToTheSecond says some stamps are to the second ($time_local, %t): each is taken as the middle of its second.
	ToTheSecond bool `json:"to_the_second"`

	MeanRPS float64   `json:"mean_rps"`
	PeakRPS float64   `json:"peak_rps"` // the busiest second's requests
	PeakAt  time.Time `json:"peak_at,omitzero"`
	P99RPS  float64   `json:"p99_second_rps"` // 99% of the seconds had at most this many requests
	// PeakMinuteRPS is the busiest 60 seconds' mean rate (0 when the log spans less than a minute).
	PeakMinuteRPS float64   `json:"peak_minute_rps"`
	PeakMinuteAt  time.Time `json:"peak_minute_at,omitzero"`

	// The service time is php-fpm's: $upstream_response_time where logged, else the request time. Each
	// request's service time ends at its stamp (begins, for Apache's %t); a second's concurrency is the service
	// time falling in it (the requests in flight on average over that second: Little's law, L = lambda W).
	ServiceFrom       string    `json:"service_from,omitempty"`
	ServiceTimed      int       `json:"service_timed"` // requests with a service time
	ServiceMeanUs     float64   `json:"service_mean_us"`
	ServiceP99Us      float64   `json:"service_p99_us"`
	PeakConcurrency   float64   `json:"peak_concurrency"`
	PeakConcurrencyAt time.Time `json:"peak_concurrency_at,omitzero"`
	P99Concurrency    float64   `json:"p99_concurrency"`
	// Note says why there is no rate, when there is none.
	Note string `json:"note,omitempty"`
}

// Where the service times come from (Load.ServiceFrom).
const (
	ServiceUpstream = "upstream"          // $upstream_response_time: php-fpm's own time
	ServiceRequest  = "request"           // the request time: php-fpm's and the client's
	ServiceMixed    = "upstream, request" // upstream where logged, else the request time
)

// HasRate says whether the log gave a rate over time: stamps in two seconds at least.
func (l *Load) HasRate() bool { return l != nil && l.PeakRPS > 0 }

// WorkersAt is the workers the busiest second keeps busy at service seconds a request: its rate times the
// service time (Little's law), rounded up. No margin is added: the busiest second is itself the margin over
// the seconds around it. 0 without a rate.
func (l *Load) WorkersAt(service float64) int {
	if !l.HasRate() || service <= 0 {
		return 0
	}
	return int(math.Ceil(l.PeakRPS*service - 1e-9))
}

// gapLimit is the shortest silence taken for missing log rather than idle time.
const gapLimit = time.Hour

const usPerS = int64(time.Second / time.Microsecond)

// loadTally gathers the stamps of the requests that reach PHP while the files are read: 24 bytes a request.
type loadTally struct {
	reqs                  []timedReq
	requests, untimed     int
	outOfOrder            int
	last                  int64 // the previous stamp of this file
	stampedInFile         int
	zones                 []int // offsets seen, in seconds, the first first
	upstream, requestOnly int   // requests whose service time is php-fpm's own, or the request's
	coarse                bool
}

// timedReq is a request's stamp, microseconds since 1970, and its service time in microseconds (-1: none
// logged); start says the stamp is when it began.
type timedReq struct {
	at, service int64
	start       bool
}

// maxZones bounds the offsets kept: more are no more telling.
const maxZones = 4

// newFile starts a file: lines are in order within one.
func (l *loadTally) newFile() { l.stampedInFile = 0 }

// add counts a request that reaches PHP.
func (l *loadTally) add(r *request) {
	l.requests++
	if !r.stamped {
		l.untimed++
		return
	}
	if l.stampedInFile > 0 && r.at < l.last-usPerS {
		l.outOfOrder++
	}
	l.last = r.at
	l.stampedInFile++
	l.coarse = l.coarse || r.coarse
	if r.zoned && len(l.zones) < maxZones && !slices.Contains(l.zones, r.zone) {
		l.zones = append(l.zones, r.zone)
	}
	service := int64(-1)
	switch {
	case r.upTimed && plausible(r.upstream):
		service = int64(math.Round(r.upstream * 1e6))
		l.upstream++
	case r.timed && plausible(r.seconds):
		service = int64(math.Round(r.seconds * 1e6))
		l.requestOnly++
	}
	l.reqs = append(l.reqs, timedReq{r.at, service, r.start})
}

// load works the figures out; it sorts the stamps it holds.
func (l *loadTally) load() *Load {
	out := &Load{Requests: l.requests, Timed: len(l.reqs), Untimed: l.untimed, OutOfOrder: l.outOfOrder, ToTheSecond: l.coarse}
	zone := time.UTC
	for i, z := range l.zones {
		name := time.Unix(0, 0).In(time.FixedZone("", z)).Format("-0700")
		out.Zones = append(out.Zones, name)
		if i == 0 {
			zone = time.FixedZone(name, z)
		}
	}
	at := func(sec int64) time.Time { return time.Unix(sec, 0).In(zone) }
	if len(l.reqs) == 0 {
		out.Note = "no request has a time stamp phptune reads: no rate"
		return out
	}
	slices.SortFunc(l.reqs, func(a, b timedReq) int { return cmp.Compare(a.at, b.at) })
	out.First, out.Last = at(second(l.reqs[0].at)), at(second(l.reqs[len(l.reqs)-1].at))
	if second(l.reqs[0].at) == second(l.reqs[len(l.reqs)-1].at) {
		out.Note = fmt.Sprintf("all %d requests stamped were logged in the same second: no rate over time can be given", len(l.reqs))
		out.ServiceFrom, out.ServiceTimed, out.ServiceMeanUs, out.ServiceP99Us = l.service()
		return out
	}
	firsts, span := l.segments(out)
	out.SpanS = float64(span)
	out.MeanRPS = float64(len(l.reqs)) / float64(span)
	l.rates(out, span, at)
	out.ServiceFrom, out.ServiceTimed, out.ServiceMeanUs, out.ServiceP99Us = l.service()
	if out.ServiceTimed > 0 {
		l.concurrency(out, firsts, span, at)
	}
	return out
}

// segments splits the sorted stamps where a silence of gapLimit or more falls: it returns the index of each
// segment's first request and the seconds the segments cover.
func (l *loadTally) segments(out *Load) (firsts []int, span int64) {
	firsts = []int{0}
	for i := 1; i < len(l.reqs); i++ {
		if l.reqs[i].at-l.reqs[i-1].at >= int64(gapLimit/time.Microsecond) {
			firsts = append(firsts, i)
			out.Gaps++
			out.GapS += float64(second(l.reqs[i].at) - second(l.reqs[i-1].at) - 1)
		}
	}
	for k, i := range firsts {
		last := len(l.reqs) - 1
		if k+1 < len(firsts) {
			last = firsts[k+1] - 1
		}
		span += second(l.reqs[last].at) - second(l.reqs[i].at) + 1
	}
	return firsts, span
}

// rates finds the busiest second, the 99th percentile second (idle seconds counted) and the busiest 60 seconds.
func (l *loadTally) rates(out *Load, span int64, at func(int64) time.Time) {
	type count struct{ sec, n int64 }
	var secs []count // the seconds with requests, in order
	for _, r := range l.reqs {
		s := second(r.at)
		if len(secs) > 0 && secs[len(secs)-1].sec == s {
			secs[len(secs)-1].n++
			continue
		}
		secs = append(secs, count{s, 1})
	}
	ns := make([]run, len(secs))
	for i, c := range secs {
		ns[i] = run{c.n, 1}
		if float64(c.n) > out.PeakRPS {
			out.PeakRPS, out.PeakAt = float64(c.n), at(c.sec)
		}
	}
	out.P99RPS = float64(p99(ns, span-int64(len(secs))))
	if secs[len(secs)-1].sec-secs[0].sec < 59 {
		return // under a minute: no busiest minute to tell
	}
	var best, sum int64
	j := 0
	for i, c := range secs {
		for j < len(secs) && secs[j].sec < c.sec+60 {
			sum += secs[j].n
			j++
		}
		if sum > best {
			best, out.PeakMinuteAt = sum, at(c.sec)
		}
		sum -= secs[i].n
	}
	out.PeakMinuteRPS = float64(best) / 60
}

// service is where the service times come from, how many requests have one, their mean and 99th percentile.
func (l *loadTally) service() (from string, n int, meanUs, p99Us float64) {
	var ts []run
	var sum int64
	for _, r := range l.reqs {
		if r.service >= 0 {
			ts = append(ts, run{r.service, 1})
			sum += r.service
		}
	}
	if len(ts) == 0 {
		return "", 0, 0, 0
	}
	switch {
	case l.requestOnly == 0:
		from = ServiceUpstream
	case l.upstream == 0:
		from = ServiceRequest
	default:
		from = ServiceMixed
	}
	return from, len(ts), float64(sum) / float64(len(ts)), float64(p99(ts, 0))
}

// concurrency sweeps the service intervals (each ending at its stamp, or beginning at it when stamped at the
// start; within its segment's seconds: firsts are the segments' first requests) and sums each second's share of
// them: the busiest second's and the 99th percentile second's.
func (l *loadTally) concurrency(out *Load, firsts []int, span int64, at func(int64) time.Time) {
	starts := make([]int64, 0, out.ServiceTimed)
	ends := make([]int64, 0, out.ServiceTimed)
	for k, i := range firsts {
		last := len(l.reqs)
		if k+1 < len(firsts) {
			last = firsts[k+1]
		}
		from, to := second(l.reqs[i].at)*usPerS, (second(l.reqs[last-1].at)+1)*usPerS
		for _, r := range l.reqs[i:last] {
			switch {
			case r.service < 0:
			case r.start:
				starts = append(starts, r.at)
				ends = append(ends, min(r.at+r.service, to))
			default:
				starts = append(starts, max(r.at-r.service, from))
				ends = append(ends, r.at)
			}
		}
	}
	slices.Sort(starts)
	slices.Sort(ends)
	var areas []run // microseconds of service in each second with any
	var peak, peakSec int64
	flush := func(sec, area, n int64) {
		if area > 0 {
			areas = append(areas, run{area, n})
			if area > peak {
				peak, peakSec = area, sec
			}
		}
	}
	var inflight, area int64
	t := starts[0]
	advance := func(to int64) {
		for second(t) < second(to) {
			b := (second(t) + 1) * usPerS
			area += inflight * (b - t)
			flush(second(t), area, 1)
			area, t = 0, b
			if inflight == 0 {
				t = to
				break
			}
			// The whole seconds before to's, each at inflight: one run (a long request spans thousands).
			if n := second(to) - second(t); n > 0 {
				flush(second(t), inflight*usPerS, n)
				t += n * usPerS
			}
		}
		area += inflight * (to - t)
		t = to
	}
	for i, j := 0, 0; j < len(ends); {
		if i < len(starts) && starts[i] <= ends[j] {
			advance(starts[i])
			inflight++
			i++
			continue
		}
		advance(ends[j])
		inflight--
		j++
	}
	flush(second(t), area, 1)
	if len(areas) == 0 {
		return
	}
	var busy int64
	for _, r := range areas {
		busy += r.n
	}
	out.PeakConcurrency, out.PeakConcurrencyAt = float64(peak)/1e6, at(peakSec)
	out.P99Concurrency = float64(p99(areas, span-busy)) / 1e6
}

// run is n seconds (or requests) of one value.
type run struct{ v, n int64 }

// p99 is the 99th percentile (nearest rank) of runs and zeros more zero values; it sorts runs.
func p99(runs []run, zeros int64) int64 {
	slices.SortFunc(runs, func(a, b run) int { return cmp.Compare(a.v, b.v) })
	n := zeros
	for _, r := range runs {
		n += r.n
	}
	k := (99*n + 99) / 100 // the rank, from 1: ceil(0.99 n)
	if k <= zeros {
		return 0
	}
	k -= zeros
	for _, r := range runs {
		if k <= r.n {
			return r.v
		}
		k -= r.n
	}
	return runs[len(runs)-1].v
}

// second is the second a time in microseconds falls in.
func second(us int64) int64 {
	s := us / usPerS
	if us < 0 && s*usPerS != us {
		s--
	}
	return s
}
