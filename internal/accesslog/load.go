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
// in the second of its stamp (nginx stamps a request when it ends, Apache's %t when it began). Rates are over
// the seconds from the first request to the last, idle seconds counted as zero, silences of gapLimit or more
// left out (a rotation missing, a server down: not traffic).
type Load struct {
	Requests int `json:"requests"`
	Timed    int `json:"timed"`   // of them, with a time stamp read
	Untimed  int `json:"untimed"` // without one: counted in the mix, not in the rates
	// OutOfOrder counts lines stamped more than a second before the line above them in the same file; rotated
	// files may come in any order. Each request counts where its stamp puts it, whatever the order.
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
const gapLimit = int64(time.Hour / time.Second)

const usPerS = int64(time.Second / time.Microsecond)

// loadTally gathers, while the files are read, what the load needs: per second of the log, its requests and
// the service time falling in it; and each request's service time (4 bytes), for their 99th percentile. Lines
// in any order add up the same.
type loadTally struct {
	secs  []secTally
	index map[int64]int // second -> its secTally, once they came out of order (nil: secs is sorted)
	last  int           // the secTally used last: consecutive lines mostly share a second
	// services are the requests' service times in microseconds (plausible ones fit).
	services              []uint32
	requests, untimed     int
	timed                 int
	outOfOrder            int
	prev                  int64 // the previous stamp of this file
	stampedInFile         int
	zones                 []int // offsets seen, in seconds, the first first
	upstream, requestOnly int   // requests whose service time is php-fpm's own, or the request's
	coarse                bool
}

// secTally is one second of the log: its requests, the service time (microseconds) of those that began or
// ended in it, and the change in the number of requests in flight all through it (spanning it whole), from it on.
type secTally struct {
	sec, area   int64
	n, spanning int32
}

// maxZones bounds the offsets kept: more are no more telling.
const maxZones = 4

// newFile starts a file: lines are in order within one.
func (l *loadTally) newFile() { l.stampedInFile = 0 }

// slot is the tally of second sec. While the seconds come about in order (a log, a request's start a little
// before its stamp) they are kept sorted and found by binary search; once one comes far out of order (rotated
// files read newest first) an index finds them.
func (l *loadTally) slot(sec int64) *secTally {
	if l.last < len(l.secs) && l.secs[l.last].sec == sec {
		return &l.secs[l.last]
	}
	if l.index != nil {
		i, ok := l.index[sec]
		if !ok {
			i = len(l.secs)
			l.secs = append(grow(l.secs), secTally{sec: sec})
			l.index[sec] = i
		}
		l.last = i
		return &l.secs[i]
	}
	i, found := slices.BinarySearchFunc(l.secs, sec, func(s secTally, t int64) int { return cmp.Compare(s.sec, t) })
	switch {
	case found:
	case len(l.secs)-i <= nearEnd:
		l.secs = slices.Insert(grow(l.secs), i, secTally{sec: sec})
	default:
		l.index = make(map[int64]int, 2*len(l.secs))
		for j, s := range l.secs {
			l.index[s.sec] = j
		}
		return l.slot(sec)
	}
	l.last = i
	return &l.secs[i]
}

// nearEnd is how far from the end of the sorted seconds a new one is inserted in place.
const nearEnd = 64

// add counts a request that reaches PHP.
func (l *loadTally) add(r *request) {
	l.requests++
	if !r.stamped {
		l.untimed++
		return
	}
	l.timed++
	if l.stampedInFile > 0 && r.at < l.prev-usPerS {
		l.outOfOrder++
	}
	l.prev = r.at
	l.stampedInFile++
	l.coarse = l.coarse || r.coarse
	if r.zoned && len(l.zones) < maxZones && !slices.Contains(l.zones, r.zone) {
		l.zones = append(l.zones, r.zone)
	}
	l.slot(second(r.at)).n++
	var service int64
	switch {
	case r.upTimed && plausible(r.upstream):
		service = int64(math.Round(r.upstream * 1e6))
		l.upstream++
	case r.timed && plausible(r.seconds):
		service = int64(math.Round(r.seconds * 1e6))
		l.requestOnly++
	default:
		return
	}
	l.services = append(grow(l.services), uint32(service))
	if r.start {
		l.spread(r.at, r.at+service)
	} else {
		l.spread(r.at-service, r.at)
	}
}

// grow doubles a full slice: append's own growth, a quarter at a time for large ones, allocates about five
// times the final size on the way, and a fresh process pays for each new page.
func grow[S ~[]E, E any](s S) S {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s), 256))
}

// spread adds a service interval (microseconds) to the seconds it falls in: its share of its first and last
// second, and one more request in flight all through the seconds between.
func (l *loadTally) spread(from, to int64) {
	a, b := second(from), second(to)
	if a == b {
		l.slot(a).area += to - from
		return
	}
	l.slot(a).area += (a+1)*usPerS - from
	l.slot(b).area += to - b*usPerS
	if b > a+1 {
		l.slot(a+1).spanning++
		l.slot(b).spanning--
	}
}

// load works the figures out.
func (l *loadTally) load() *Load {
	out := &Load{Requests: l.requests, Timed: l.timed, Untimed: l.untimed, OutOfOrder: l.outOfOrder, ToTheSecond: l.coarse}
	zone := time.UTC
	for i, z := range l.zones {
		name := time.Unix(0, 0).In(time.FixedZone("", z)).Format("-0700")
		out.Zones = append(out.Zones, name)
		if i == 0 {
			zone = time.FixedZone(name, z)
		}
	}
	at := func(sec int64) time.Time { return time.Unix(sec, 0).In(zone) }
	if l.timed == 0 {
		out.Note = "no request has a time stamp phptune reads: no rate"
		return out
	}
	out.ServiceFrom, out.ServiceTimed, out.ServiceMeanUs, out.ServiceP99Us = l.service()
	slices.SortFunc(l.secs, func(a, b secTally) int { return cmp.Compare(a.sec, b.sec) })
	stamped := make([]secTally, 0, len(l.secs)) // the seconds with requests
	for _, s := range l.secs {
		if s.n > 0 {
			stamped = append(stamped, s)
		}
	}
	out.First, out.Last = at(stamped[0].sec), at(stamped[len(stamped)-1].sec)
	if len(stamped) == 1 {
		out.Note = fmt.Sprintf("all %d requests stamped were logged in the same second: no rate over time can be given", l.timed)
		return out
	}
	span := segments(stamped, out)
	out.SpanS = float64(span)
	out.MeanRPS = float64(l.timed) / float64(span)
	rates(stamped, span, out, at)
	if out.ServiceTimed > 0 {
		l.concurrency(stamped, span, out, at)
	}
	return out
}

// segments counts the seconds the rates are over, the stamped seconds' span less silences of gapLimit or more.
func segments(stamped []secTally, out *Load) (span int64) {
	span = stamped[len(stamped)-1].sec - stamped[0].sec + 1
	for i := 1; i < len(stamped); i++ {
		if d := stamped[i].sec - stamped[i-1].sec; d >= gapLimit {
			out.Gaps++
			out.GapS += float64(d - 1)
			span -= d - 1
		}
	}
	return span
}

// rates finds the busiest second, the 99th percentile second (idle seconds counted) and the busiest 60 seconds.
func rates(stamped []secTally, span int64, out *Load, at func(int64) time.Time) {
	ns := make([]run, len(stamped))
	for i, s := range stamped {
		ns[i] = run{int64(s.n), 1}
		if float64(s.n) > out.PeakRPS {
			out.PeakRPS, out.PeakAt = float64(s.n), at(s.sec)
		}
	}
	out.P99RPS = float64(p99(ns, span-int64(len(stamped))))
	if stamped[len(stamped)-1].sec-stamped[0].sec < 59 {
		return // under a minute: no busiest minute to tell
	}
	var best, sum int64
	j := 0
	for i, s := range stamped {
		for j < len(stamped) && stamped[j].sec < s.sec+60 {
			sum += int64(stamped[j].n)
			j++
		}
		if sum > best {
			best, out.PeakMinuteAt = sum, at(s.sec)
		}
		sum -= int64(stamped[i].n)
	}
	out.PeakMinuteRPS = float64(best) / 60
}

// service is where the service times come from, how many requests have one, their mean and 99th percentile.
func (l *loadTally) service() (from string, n int, meanUs, p99Us float64) {
	if len(l.services) == 0 {
		return "", 0, 0, 0
	}
	var sum int64
	for _, s := range l.services {
		sum += int64(s)
	}
	switch {
	case l.requestOnly == 0:
		from = ServiceUpstream
	case l.upstream == 0:
		from = ServiceRequest
	default:
		from = ServiceMixed
	}
	slices.Sort(l.services)
	n = len(l.services)
	return from, n, float64(sum) / float64(n), float64(l.services[rank99(int64(n))-1])
}

// concurrency sums each second's share of the service intervals (sorted l.secs: the partial seconds, plus the
// requests in flight all through it) within the segments of the stamped seconds (a request's time before the
// log's first stamp, after its last or in a silence is not counted): the busiest second's and the 99th
// percentile second's.
func (l *loadTally) concurrency(stamped []secTally, span int64, out *Load, at func(int64) time.Time) {
	areas := make([]run, 0, len(l.secs)) // microseconds of service in each second with any, within the segments
	var peak, peakSec, busy, spanning int64
	add := func(sec, area, n int64) {
		if area > 0 {
			areas = append(areas, run{area, n})
			busy += n
			if area > peak {
				peak, peakSec = area, sec
			}
		}
	}
	j := -1 // the last stamped second at or before the one looked at
	for i, s := range l.secs {
		// The seconds since the previous one tallied: all spanned by the same requests.
		if i > 0 && s.sec > l.secs[i-1].sec+1 && inSegment(stamped, j, s.sec-1) {
			add(l.secs[i-1].sec+1, spanning*usPerS, s.sec-l.secs[i-1].sec-1)
		}
		for j+1 < len(stamped) && stamped[j+1].sec <= s.sec {
			j++
		}
		spanning += int64(s.spanning)
		if inSegment(stamped, j, s.sec) {
			add(s.sec, s.area+spanning*usPerS, 1)
		}
	}
	if len(areas) == 0 {
		return
	}
	out.PeakConcurrency, out.PeakConcurrencyAt = float64(peak)/1e6, at(peakSec)
	out.P99Concurrency = float64(p99(areas, span-busy)) / 1e6
}

// inSegment says whether second sec, at or after stamped[j] and before stamped[j+1], is within a segment.
func inSegment(stamped []secTally, j int, sec int64) bool {
	switch {
	case j < 0:
		return false
	case stamped[j].sec == sec:
		return true
	}
	return j+1 < len(stamped) && stamped[j+1].sec-stamped[j].sec < gapLimit
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
	k := rank99(n)
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

// rank99 is the 99th percentile's rank among n values, from 1: ceil(0.99 n).
func rank99(n int64) int64 { return (99*n + 99) / 100 }

// second is the second a time in microseconds falls in.
func second(us int64) int64 {
	s := us / usPerS
	if us < 0 && s*usPerS != us {
		s--
	}
	return s
}
