package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/phptune/phptune/internal/exitcode"
)

// DefaultTimeout is every command's per-request timeout unless --timeout says otherwise: a request still
// unanswered then is counted as timed out and recorded at the timeout.
const DefaultTimeout = 10 * time.Second

// Options configure one run. Without Rate it is a closed model: each connection sends its next request when the
// last one is answered. With Rate it is an open model (wrk2's method): requests follow a schedule, and latency runs
// from each request's intended send time, so a stalled server cannot hide its queue (coordinated omission).
type Options struct {
	Target      Target
	Request     Request
	Connections int
	Requests    int64         // total measured requests; 0 = run for Duration
	Duration    time.Duration // measured window when Requests is 0
	Warmup      time.Duration // excluded from the results
	Timeout     time.Duration // per request; a timed-out request is recorded at this value
	// Rate, when > 0, is the open model's request rate (requests/s in all).
	Rate float64
	// MaxInflight, with Rate: one schedule shared by this many connections, a bounded pool in which a request
	// waits for a free connection (its queueing time is counted). 0: each of the Connections follows its own
	// schedule of Rate/Connections (wrk2).
	MaxInflight int
	// Phase, with Rate, delays the schedule by this share of a period (0 to 1): two runs at the same rate started
	// together, one at 0 and one at 0.5, send in turn rather than at the same instants, so that neither's requests
	// always come a moment before the other's (and wait less for a CPU).
	Phase float64
	// ExpectStatus lists the accepted statuses; empty = 1xx-3xx accepted, 4xx and 5xx are errors.
	ExpectStatus []int
	ExpectBody   *regexp.Regexp
	// Mix, when set, replaces the target's request URI with a weighted mix of URIs (FastCGI: REQUEST_URI and
	// QUERY_STRING for the target's front controller).
	Mix []MixItem
	// Progress, when set, is called about twice a second from another goroutine.
	Progress func(Progress)
	// SkipPreflight skips the single checked request before the run.
	SkipPreflight bool
	// Even, with Requests in the closed model, has every connection send whole cycles of the mix, the same
	// number each (Requests is rounded up to connections x whole cycles): every run then serves exactly the
	// same requests, whose costs can be compared run to run whatever the URLs' costs.
	Even bool
	// Drain, in the closed model over a window, lets the requests in flight when the window closes finish
	// (within the timeout) instead of abandoning them, and sends no new ones: every request sent is then
	// answered before the run returns, so Served counts all the work the server did for it (a trial's
	// requests per CPU-second). The window's figures are the same either way.
	Drain bool
	// Engine, when set, runs the trials instead of the built-in generator (k6).
	Engine Engine
}

// MixItem is one URI of a weighted mix, with its own content check (ExpectBody applies when it has none).
type MixItem struct {
	URI        string
	Weight     int
	ExpectBody *regexp.Regexp
	// Request, when set, is how this URI is sent (its method, headers, body: a form, a logged-in page); nil
	// sends it as the run's Request.
	Request *Request
	// Optional: a URL taken from an access log, which a tune leaves out with a warning when it fails on the app
	// as served (a deleted post, a page behind a login) rather than stopping.
	Optional bool
}

// RequestOf is how entry i of the mix is sent.
func (o *Options) RequestOf(i int) Request {
	if i < len(o.Mix) {
		return o.Mix[i].RequestOver(o.Request)
	}
	return o.Request
}

// RequestOver is how m is sent in a run whose request is base.
func (m MixItem) RequestOver(base Request) Request {
	if m.Request == nil {
		return base
	}
	r := *m.Request
	r.Method = cmp.Or(r.Method, base.Method)
	r.KeepAlive = base.KeepAlive
	return r
}

// MixSequence spreads the mix's entries over one cycle by smooth weighted round-robin, so that every stretch of
// requests has the mix's proportions rather than runs of one URI.
func MixSequence(mix []MixItem) []uint16 {
	if len(mix) <= 1 {
		return []uint16{0}
	}
	total := 0
	for _, m := range mix {
		total += m.Weight
	}
	cur := make([]int, len(mix))
	seq := make([]uint16, 0, total)
	for len(seq) < total {
		best := 0
		for i, m := range mix {
			cur[i] += m.Weight
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		seq = append(seq, uint16(best))
	}
	return seq
}

// Progress is a running count.
type Progress struct {
	Trial    int // 1-based, in RunTrials
	Trials   int
	Elapsed  time.Duration
	Total    time.Duration // warm-up plus measured window (duration mode), else 0
	Warmup   bool
	Requests int64
	Errors   int64
}

// Line is p as a status line says it: "trial 2/3 measuring 4s/10s  812 requests  0 errors".
func (p Progress) Line() string {
	phase := "measuring"
	if p.Warmup {
		phase = "warming up"
	}
	total := ""
	if p.Total > 0 {
		total = "/" + p.Total.Round(time.Second).String()
	}
	trial := ""
	if p.Trials > 1 {
		trial = fmt.Sprintf("trial %d/%d ", p.Trial, p.Trials)
	}
	return fmt.Sprintf("%s%s %s%s  %d requests  %d errors", trial, phase, p.Elapsed.Round(time.Second), total, p.Requests, p.Errors)
}

// Latency holds percentiles in microseconds.
type Latency struct {
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	Stdev float64 `json:"stdev"`
}

// Models.
const (
	Closed = "closed"
	Open   = "open"
)

// ErrNoAnswer is a preflight request that timed out: the page hangs, or a stall held it (a caller that knows the
// app stalls now and then may try again).
var ErrNoAnswer = errors.New("did not answer within --timeout")

// ErrNoRequests is a window in which no request completed; the result comes with it.
var ErrNoRequests = errors.New("no request completed")

// LateThreshold is how far behind its schedule a request must start, because its connection was still busy,
// to count as a late start.
const LateThreshold = time.Millisecond

// Result is one run's outcome; its JSON form is the schema phptune/bench/v1.
type Result struct {
	Schema      string    `json:"schema"`
	Target      string    `json:"target"`
	Protocol    string    `json:"protocol"`
	Method      string    `json:"method"`
	Model       string    `json:"model"` // closed or open
	Connections int       `json:"connections"`
	Rate        float64   `json:"rate,omitempty"`         // open model: requests/s asked for
	MaxInflight int       `json:"max_inflight,omitempty"` // open model with a bounded pool
	KeepAlive   bool      `json:"keepalive"`
	WarmupS     float64   `json:"warmup_s"`
	DurationS   float64   `json:"duration_s"` // the measured window as it ran (summed over trials)
	TimeoutS    float64   `json:"timeout_s"`
	Started     time.Time `json:"started"`

	Requests      int64             `json:"requests"` // completed in the measured window, errors included
	Errors        int64             `json:"errors"`
	ErrorsByClass map[string]int64  `json:"errors_by_class"`
	ErrorSamples  map[string]string `json:"error_samples,omitempty"`
	StatusCodes   map[string]int64  `json:"status_codes"`
	RPS           float64           `json:"rps"`
	Bytes         int64             `json:"bytes"`
	MaxBytes      int64             `json:"max_response_bytes"` // the largest response, headers included
	BytesPerSec   float64           `json:"bytes_per_sec"`
	StderrBytes   int64             `json:"php_stderr_bytes"`

	// Latency is from the intended send time in the open model (LatencyCorrected), from the actual send
	// otherwise; LatencyUncorrected, open model only, is from the actual send.
	Latency            Latency  `json:"latency_us"`
	LatencyCorrected   bool     `json:"latency_corrected"`
	LatencyUncorrected *Latency `json:"latency_uncorrected_us,omitempty"`
	LateStarts         int64    `json:"late_starts,omitempty"` // open model: sent over LateThreshold behind schedule
	MaxLagUs           float64  `json:"max_lag_us,omitempty"`  // open model: the furthest behind schedule a request was sent
	Unsent             int64    `json:"unsent,omitempty"`      // open model: scheduled in the window but never sent
	// LatencyAll, when some requests of the window failed, were still in flight at its end or were never sent,
	// is p50, p90 and p99 of every request the window meant to make, each of those counted as taking the
	// timeout (QuantileOfAll), with 95% intervals: the latency users saw, where Latency is that of the requests
	// answered (a refused connection or a reset has no latency worth the name, and would read as fast).
	LatencyAll []Quantile `json:"latency_all_us,omitempty"`

	InFlightAtEnd int64 `json:"in_flight_at_end"`
	// Served counts the requests answered well from the first send to the last answer (closed model): the
	// warm-up's, the window's and, with Drain, those still in flight when the window closed.
	Served            int64    `json:"served,omitempty"`
	Reconnects        int64    `json:"reconnects"`
	ClientCPUUsPerReq float64  `json:"client_cpu_us_per_req"`
	ClientCPUS        float64  `json:"client_cpu_s"`
	GoMaxProcs        int      `json:"gomaxprocs"`
	Warnings          []string `json:"warnings,omitempty"`
	Partial           bool     `json:"partial"`
	FPMStatus         any      `json:"fpm_status,omitempty"`

	// Interleave names the interleaved run (compare --interleave) the result is an arm of: the trials of
	// arms with the same Interleave were run in alternation, and trial i of each forms a pair.
	Interleave string `json:"interleave,omitempty"`
	Arm        string `json:"arm,omitempty"`
	// Trials, with RunTrials: one summary per trial; the fields above are the merged result, percentiles
	// from the merged histogram.
	Trials []Trial `json:"trials,omitempty"`
	// Histogram is the merged latency histogram (microseconds), HDR's compressed base64 encoding.
	HistogramEncoded string `json:"histogram,omitempty"`

	hist, histUncorr *hdrhistogram.Histogram
	drained          *hdrhistogram.Histogram // Options.Drain's answers to requests in flight at the close
}

// Trial is one trial's summary.
type Trial struct {
	Index             int       `json:"index"`
	Started           time.Time `json:"started"`
	DurationS         float64   `json:"duration_s"`
	Requests          int64     `json:"requests"`
	Errors            int64     `json:"errors"`
	RPS               float64   `json:"rps"`
	Latency           Latency   `json:"latency_us"`
	LatencyUncorr     *Latency  `json:"latency_uncorrected_us,omitempty"`
	ClientCPUUsPerReq float64   `json:"client_cpu_us_per_req"`
	Partial           bool      `json:"partial,omitempty"`
}

// SchemaBench names the JSON form of a Result.
const SchemaBench = "phptune/bench/v1"

// Histogram is the merged latency histogram of the measured window, in microseconds.
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.hist }

// TailP99 is the 99th percentile, microseconds, of the window's requests and, with Drain, of those in flight when
// it closed, answered in the drain: a request slower than the window is in flight at its close, and the window's
// own figures would leave out the tail a window is short for. 0: no request.
func (r *Result) TailP99() float64 {
	if r.hist == nil {
		return 0
	}
	if r.drained == nil {
		return float64(r.hist.ValueAtQuantile(99))
	}
	h := hdrhistogram.New(r.hist.LowestTrackableValue(), r.hist.HighestTrackableValue(), int(r.hist.SignificantFigures()))
	h.Merge(r.hist)
	h.Merge(r.drained)
	return float64(h.ValueAtQuantile(99))
}

// worker is one connection's private state; nothing in it is shared until the run ends.
type worker struct {
	id         int
	hist       *hdrhistogram.Histogram // closed model: from the send; open model: from the intended send
	histUncorr *hdrhistogram.Histogram // open model: from the actual send
	drained    *hdrhistogram.Histogram // closed model with Drain: the requests in flight at the close (nil: none)
	requests   int64
	errors     int64
	classes    [classCount]int64
	samples    [classCount]string
	statuses   [600]int64
	bytes      int64
	maxBytes   int64
	stderr     int64
	inFlight   int64
	served     int64 // answered well, warm-up and drain included
	reconnects int64
	late       int64
	maxLag     time.Duration
	unsent     int64
	k          int64 // open model, own schedule: requests drawn so far
	seq        []uint16
	pos        int
}

// nextReq is the index of the next request of the mix.
func (w *worker) nextReq() int {
	i := int(w.seq[w.pos])
	w.pos++
	if w.pos == len(w.seq) {
		w.pos = 0
	}
	return i
}

// shared counters for progress reporting.
type counters struct {
	requests atomic.Int64
	errors   atomic.Int64
}

// schedule is the open model's: request idx is due at t0 + idx/rate.
type schedule struct {
	t0            time.Time
	perReq        float64 // nanoseconds between requests, all connections together
	firstMeasured int64   // requests before this index are warm-up
	limit         int64   // requests scheduled in all
	hardEnd       time.Time
	shared        bool // one schedule for all connections (bounded pool) rather than one each
	next          atomic.Int64
	conns         int64
}

func (s *schedule) due(idx int64) time.Time {
	return s.t0.Add(time.Duration(float64(idx) * s.perReq))
}

// Run drives the target and returns the measured results: one trial. A cancelled ctx stops the run early: the
// result so far is returned with Partial set, together with ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) { return RunTrials(ctx, o, 1) }

func (o *Options) check() error {
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		return exitcode.UsageErrorf("--rate %v: want a positive rate in requests/s", o.Rate)
	}
	if o.MaxInflight < 0 || (o.MaxInflight > 0 && o.Rate == 0) {
		return exitcode.UsageErrorf("--max-inflight applies with --rate only, and must be positive")
	}
	if !(o.Phase >= 0 && o.Phase < 1) {
		return exitcode.UsageErrorf("phase %v: want a share of a period, from 0 to below 1", o.Phase)
	}
	if o.MaxInflight > 0 {
		o.Connections = o.MaxInflight
	}
	if o.Connections < 1 {
		return exitcode.UsageErrorf("-c %d: want at least 1 connection", o.Connections)
	}
	if o.Requests <= 0 && o.Duration <= 0 {
		return exitcode.UsageErrorf("give -n COUNT or -d DURATION")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Request.Method == "" {
		o.Request.Method = "GET"
	}
	total := 0
	for i := range o.Mix {
		if o.Mix[i].Weight == 0 {
			o.Mix[i].Weight = 1
		}
		if o.Mix[i].Weight < 0 || o.Mix[i].URI == "" || o.Mix[i].URI[0] != '/' {
			return exitcode.UsageErrorf("URL %q weight %d: want a path starting with / and a positive weight", o.Mix[i].URI, o.Mix[i].Weight)
		}
		total += o.Mix[i].Weight
	}
	if len(o.Mix) > 1<<16 || total > 1<<20 {
		return exitcode.UsageErrorf("the URL mix is too large: %d entries, weights summing to %d", len(o.Mix), total)
	}
	return nil
}

func (o *Options) newResult(t0 time.Time) *Result {
	res := &Result{
		Schema: SchemaBench, Target: o.Target.Raw, Protocol: o.Target.Protocol, Method: o.Request.Method, Model: Closed,
		Connections: o.Connections, KeepAlive: o.Request.KeepAlive || o.Target.Protocol == FastCGI,
		WarmupS: o.Warmup.Seconds(), TimeoutS: o.Timeout.Seconds(), GoMaxProcs: runtime.GOMAXPROCS(0), Started: t0,
		ErrorsByClass: map[string]int64{}, StatusCodes: map[string]int64{},
	}
	if o.Rate > 0 {
		res.Model, res.Rate, res.MaxInflight, res.LatencyCorrected = Open, o.Rate, o.MaxInflight, true
	}
	return res
}

func (o *Options) highest() int64 { return max(int64(o.Timeout/time.Microsecond)*2, int64(60e6)) }

// run is one trial (trial and trials are for progress reports only).
func run(ctx context.Context, o *Options, newClient func() client, trial, trials int) (*Result, error) {
	accept := acceptSet(o.ExpectStatus)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	t0 := time.Now()
	res := o.newResult(t0)
	measureStart := t0.Add(o.Warmup)
	var end time.Time
	if o.Requests <= 0 {
		end = measureStart.Add(o.Duration)
	}
	var sched *schedule
	if o.Rate > 0 {
		per := float64(time.Second) / o.Rate
		sched = &schedule{t0: t0.Add(time.Duration(o.Phase * per)), perReq: per, shared: o.MaxInflight > 0, conns: int64(o.Connections)}
		sched.firstMeasured = int64(math.Ceil(o.Warmup.Seconds() * o.Rate))
		if o.Requests > 0 {
			sched.limit = sched.firstMeasured + o.Requests
		} else {
			sched.limit = int64(math.Ceil((o.Warmup + o.Duration).Seconds() * o.Rate))
		}
		// After the last scheduled send, the backlog of a server that fell behind may drain for a while, not forever.
		sched.hardEnd = sched.due(sched.limit).Add(min(o.Timeout, 5*time.Second))
	}
	var remaining atomic.Int64
	remaining.Store(o.Requests)
	perConn := int64(0)
	if o.Even && o.Requests > 0 && o.Rate == 0 {
		cycle := int64(len(MixSequence(o.Mix)))
		perConn = (o.Requests + int64(o.Connections) - 1) / int64(o.Connections)
		perConn = (perConn + cycle - 1) / cycle * cycle
	}
	var cnt counters

	// CPU time of this process over the measured window: a snapshot when measuring begins.
	var ruStart atomic.Pointer[syscall.Rusage]
	if o.Warmup <= 0 {
		ru := rusage()
		ruStart.Store(&ru)
	}
	var timers sync.WaitGroup
	stopTimers := make(chan struct{})
	if o.Warmup > 0 {
		timers.Add(1)
		go func() {
			defer timers.Done()
			t := time.NewTimer(time.Until(measureStart))
			defer t.Stop()
			select {
			case <-t.C:
				ru := rusage()
				ruStart.Store(&ru)
				cnt.requests.Store(0)
				cnt.errors.Store(0)
			case <-stopTimers:
			}
		}()
	}
	if o.Progress != nil {
		timers.Add(1)
		go func() {
			defer timers.Done()
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			total := time.Duration(0)
			if o.Requests <= 0 {
				total = o.Warmup + o.Duration
			}
			for {
				select {
				case now := <-tick.C:
					o.Progress(Progress{Trial: trial, Trials: trials, Elapsed: now.Sub(t0), Total: total, Warmup: now.Before(measureStart),
						Requests: cnt.requests.Load(), Errors: cnt.errors.Load()})
				case <-stopTimers:
					return
				}
			}
		}()
	}

	seq := MixSequence(o.Mix)
	workers := make([]*worker, o.Connections)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{id: i, hist: hdrhistogram.New(1, o.highest(), 3), seq: seq, pos: i % len(seq)}
		if sched != nil {
			w.histUncorr = hdrhistogram.New(1, o.highest(), 3)
		}
		workers[i] = w
		c := newClient()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.close()
			if sched != nil {
				w.runOpen(runCtx, c, o, accept, sched, &cnt)
			} else if perConn > 0 {
				var own atomic.Int64
				own.Store(perConn)
				w.runClosed(runCtx, c, o, accept, measureStart, end, &own, &cnt)
			} else {
				w.runClosed(runCtx, c, o, accept, measureStart, end, &remaining, &cnt)
			}
			w.reconnects = c.reconnects()
		}()
	}
	wg.Wait()
	close(stopTimers)
	timers.Wait()
	finish := time.Now()
	ruEnd := rusage()

	res.mergeWorkers(o, workers)
	window := finish.Sub(measureStart)
	if !end.IsZero() && sched == nil && finish.After(end) {
		window = end.Sub(measureStart)
	}
	res.setWindow(max(window, time.Nanosecond))
	if rs := ruStart.Load(); rs != nil {
		res.ClientCPUS = cpuSeconds(ruEnd) - cpuSeconds(*rs)
		if res.Requests > 0 {
			res.ClientCPUUsPerReq = res.ClientCPUS * 1e6 / float64(res.Requests)
		}
	}
	if res.Unsent > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the server did not keep up with %.0f requests/s: %d scheduled requests were never sent", o.Rate, res.Unsent))
	}
	if err := ctx.Err(); err != nil {
		res.Partial = true
		return res, err
	}
	if res.Requests == 0 && o.Requests <= 0 {
		return res, fmt.Errorf("%w in the measured window of %s", ErrNoRequests, o.Duration)
	}
	return res, nil
}

func (res *Result) mergeWorkers(o *Options, workers []*worker) {
	res.hist = hdrhistogram.New(1, o.highest(), 3)
	if o.Rate > 0 {
		res.histUncorr = hdrhistogram.New(1, o.highest(), 3)
	}
	for _, w := range workers {
		res.hist.Merge(w.hist)
		if w.drained != nil {
			if res.drained == nil {
				res.drained = hdrhistogram.New(1, o.highest(), 3)
			}
			res.drained.Merge(w.drained)
		}
		if w.histUncorr != nil {
			res.histUncorr.Merge(w.histUncorr)
		}
		res.addCounts(&Result{Requests: w.requests, Errors: w.errors, Bytes: w.bytes, MaxBytes: w.maxBytes, StderrBytes: w.stderr,
			InFlightAtEnd: w.inFlight, Served: w.served, Reconnects: w.reconnects, LateStarts: w.late, Unsent: w.unsent,
			MaxLagUs: float64(w.maxLag / time.Microsecond)})
		for c, n := range w.classes {
			if n == 0 {
				continue
			}
			res.ErrorsByClass[classNames[c]] += n
			if w.samples[c] != "" {
				if res.ErrorSamples == nil {
					res.ErrorSamples = map[string]string{}
				}
				if _, ok := res.ErrorSamples[classNames[c]]; !ok {
					res.ErrorSamples[classNames[c]] = w.samples[c]
				}
			}
		}
		for code, n := range w.statuses {
			if n > 0 {
				res.StatusCodes[strconv.Itoa(code)] += n
			}
		}
	}
	res.setLatency()
}

func (res *Result) setLatency() {
	res.Latency = latencyOf(res.hist)
	if res.histUncorr != nil {
		l := latencyOf(res.histUncorr)
		res.LatencyUncorrected = &l
	}
	res.LatencyAll = nil
	if res.Errors+res.InFlightAtEnd+res.Unsent > 0 && res.TimeoutS > 0 {
		timeout := time.Duration(res.TimeoutS * float64(time.Second))
		for _, q := range []float64{0.5, 0.9, 0.99} {
			res.LatencyAll = append(res.LatencyAll, res.QuantileOfAll(q, timeout))
		}
	}
}

func (res *Result) setWindow(window time.Duration) {
	res.DurationS = window.Seconds()
	res.RPS = float64(res.Requests) / window.Seconds()
	res.BytesPerSec = float64(res.Bytes) / window.Seconds()
}

// runClosed is the closed model: the next request goes as soon as the last one is answered.
func (w *worker) runClosed(ctx context.Context, c client, o *Options, accept *[600]bool, measureStart, end time.Time,
	remaining *atomic.Int64, cnt *counters) {
	l := closedLoop{w: w, c: c, o: o, accept: accept, measureStart: measureStart, end: end, remaining: remaining, cnt: cnt}
	for ctx.Err() == nil && l.step(ctx) {
	}
}

// closedLoop is one connection's closed model, one request a step.
type closedLoop struct {
	w            *worker
	c            client
	o            *Options
	accept       *[600]bool
	measureStart time.Time
	end          time.Time // the window's close; zero with -n
	remaining    *atomic.Int64
	cnt          *counters
	out          outcome
	backoff      time.Duration
	deadline     deadline
}

// step sends one request and counts it; it reports false when the connection is done.
func (l *closedLoop) step(ctx context.Context) bool {
	w, o := l.w, l.o
	countMode := l.end.IsZero()
	start := time.Now()
	// With -n, the measured requests are the n that start after the warm-up; over a window, the ones that
	// complete in it, whenever they started (as wrk counts): with deep queues a request can take longer than
	// the window, and counting only those that start and end inside it would count almost none.
	startedInWindow := !start.Before(l.measureStart)
	if countMode {
		if startedInWindow && l.remaining.Add(-1) < 0 {
			return false
		}
	} else if !start.Before(l.end) {
		return false
	}
	// A request still running when the window closes is in flight at the end, not a timeout.
	var limit time.Time
	if !countMode && !o.Drain {
		limit = l.end
	}
	deadline := l.deadline.next(start, o.Timeout, limit)
	req := w.nextReq()
	err := l.c.do(ctx, deadline, &l.out, req)
	fin := time.Now()
	measuring := startedInWindow
	if !countMode {
		measuring = !fin.Before(l.measureStart)
	}
	if !countMode && !fin.Before(l.end) {
		// In flight when the window closed: not the window's; answered in the drain, or cut at its close.
		if o.Drain && ctx.Err() == nil && w.answered(o, l.accept, err, &l.out, req) {
			w.served++
			w.drain(o, fin.Sub(start))
		}
		if measuring {
			w.inFlight++
		}
		return false
	}
	if err != nil && ctx.Err() != nil {
		if measuring {
			w.inFlight++
		}
		return false
	}
	if !measuring {
		if err != nil {
			l.backoff = pause(ctx, err, l.backoff)
		} else if w.answered(o, l.accept, err, &l.out, req) {
			w.served++
		}
		return true
	}
	lat := fin.Sub(start)
	if err != nil && classifyErr(err) == cTimeout {
		lat = o.Timeout // recorded at the timeout, whatever the clock said
	}
	failed := w.record(o, l.accept, err, &l.out, lat, 0, req, l.cnt)
	if failed && err != nil {
		l.backoff = pause(ctx, err, l.backoff)
	} else if err == nil {
		l.backoff = 0
	}
	if !failed {
		w.served++
	}
	return true
}

// deadline is the one a connection's socket has: requests reuse it while it is within deadlineSlack after their
// own, because moving it is a runtime timer update every request (about 1% of the generator's CPU), and a
// request cut a little after its timeout changes no figure (a timed-out request is recorded at the timeout).
type deadline struct{ at time.Time }

// deadlineSlack is how much later than its timeout a request may be cut: a thousandth of it, at most 10 ms.
func deadlineSlack(timeout time.Duration) time.Duration {
	return min(timeout/1000, 10*time.Millisecond)
}

// next is the deadline of a request started at start: start+timeout, up to the slack later, or limit (when not
// zero) if that comes first. Near limit each request gets its own deadline, exactly as before, since there a
// late cut would turn a timeout into a request in flight at the window's close.
func (d *deadline) next(start time.Time, timeout time.Duration, limit time.Time) time.Time {
	want := start.Add(timeout)
	slack := deadlineSlack(timeout)
	if !limit.IsZero() && !want.Add(slack).Before(limit) {
		if want.Before(limit) {
			return want
		}
		return limit
	}
	if d.at.Before(want) {
		d.at = want.Add(slack)
	}
	return d.at
}

// answered says whether a request outside the window was answered well, by the window's own rule.
// drain records the latency of a request in flight at the window's close, answered in the drain.
func (w *worker) drain(o *Options, lat time.Duration) {
	if w.drained == nil {
		w.drained = hdrhistogram.New(1, o.highest(), 3)
	}
	w.drained.RecordValue(int64(lat / time.Microsecond))
}

func (w *worker) answered(o *Options, accept *[600]bool, err error, out *outcome, req int) bool {
	return err == nil && w.classifyResponse(out, o, accept, req) < 0
}

// runOpen is the open model: request idx is sent at its due time (or as soon as the connection is free when
// behind), and its latency counts from the due time.
func (w *worker) runOpen(ctx context.Context, c client, o *Options, accept *[600]bool, s *schedule, cnt *counters) {
	l := openLoop{w: w, c: c, o: o, accept: accept, s: s, cnt: cnt, timer: time.NewTimer(time.Hour)}
	l.timer.Stop()
	defer l.timer.Stop()
	for ctx.Err() == nil && l.step(ctx) {
	}
}

// openLoop is one connection's open model, one scheduled request a step.
type openLoop struct {
	w        *worker
	c        client
	o        *Options
	accept   *[600]bool
	s        *schedule
	cnt      *counters
	out      outcome
	timer    *time.Timer
	backoff  time.Duration
	deadline deadline
}

// next is the index in the schedule of this connection's next request.
func (l *openLoop) next() int64 {
	if l.s.shared {
		return l.s.next.Add(1) - 1
	}
	idx := int64(l.w.id) + l.w.k*l.s.conns
	l.w.k++
	return idx
}

// sleep waits until due; it reports whether it slept, and false for ok when ctx ended meanwhile.
func (l *openLoop) sleep(ctx context.Context, due, now time.Time) (slept, ok bool) {
	d := due.Sub(now)
	if d <= 0 {
		return false, true
	}
	l.timer.Reset(d)
	select {
	case <-l.timer.C:
		return true, true
	case <-ctx.Done():
		return true, false
	}
}

// step sends the next scheduled request and counts it; it reports false when the connection is done.
func (l *openLoop) step(ctx context.Context) bool {
	w, o, s := l.w, l.o, l.s
	idx := l.next()
	if idx >= s.limit {
		return false
	}
	measuring := idx >= s.firstMeasured
	due := s.due(idx)
	now := time.Now()
	if !now.Before(s.hardEnd) {
		// Past the drain period: what is left of the schedule was never sent.
		if measuring {
			w.unsent++
		}
		return true
	}
	slept, ok := l.sleep(ctx, due, now)
	if !ok {
		return false
	}
	start := time.Now()
	// Latency counts from the due time when the request went late because the connection was busy (the
	// server's delay: coordinated omission corrected), from the send when the generator slept until the due
	// time: the runtime's timers wake up to a millisecond late, and that delay is ours, not the server's.
	origin := due
	if slept {
		origin = start
	}
	deadline := l.deadline.next(start, o.Timeout, s.hardEnd)
	req := w.nextReq()
	err := l.c.do(ctx, deadline, &l.out, req)
	fin := time.Now()
	if err != nil && (ctx.Err() != nil || (deadline.Equal(s.hardEnd) && !fin.Before(s.hardEnd))) {
		if measuring {
			w.inFlight++
		}
		return ctx.Err() == nil
	}
	if !measuring {
		if err != nil {
			l.backoff = pause(ctx, err, l.backoff)
		}
		return true
	}
	lag := start.Sub(origin)
	if lag > w.maxLag {
		w.maxLag = lag
	}
	if lag > LateThreshold {
		w.late++
	}
	lat, uncorr := fin.Sub(origin), fin.Sub(start)
	if err != nil && classifyErr(err) == cTimeout {
		lat, uncorr = max(lag, 0)+o.Timeout, o.Timeout
	}
	if w.record(o, l.accept, err, &l.out, lat, uncorr, req, l.cnt) && err != nil {
		l.backoff = pause(ctx, err, l.backoff)
	} else if err == nil {
		l.backoff = 0
	}
	return true
}

// record counts one measured request; it reports whether it was an error.
func (w *worker) record(o *Options, accept *[600]bool, err error, out *outcome, lat, uncorr time.Duration, req int, cnt *counters) bool {
	cls := -1
	if err != nil {
		cls = classifyErr(err)
		if cls == cTimeout {
			w.hist.RecordValue(int64(lat / time.Microsecond))
			if w.histUncorr != nil {
				w.histUncorr.RecordValue(int64(uncorr / time.Microsecond))
			}
		}
	} else {
		w.hist.RecordValue(int64(lat / time.Microsecond))
		if w.histUncorr != nil {
			w.histUncorr.RecordValue(int64(uncorr / time.Microsecond))
		}
		w.bytes += out.bytes
		w.maxBytes = max(w.maxBytes, out.bytes)
		if out.status > 0 && out.status < 600 {
			w.statuses[out.status]++
		}
		w.stderr += out.stderrBytes
		cls = w.classifyResponse(out, o, accept, req)
	}
	w.requests++
	cnt.requests.Add(1)
	if cls < 0 {
		return false
	}
	w.errors++
	cnt.errors.Add(1)
	w.classes[cls]++
	if w.samples[cls] == "" {
		w.samples[cls] = sampleOf(cls, err, out)
	}
	return true
}

func (w *worker) classifyResponse(out *outcome, o *Options, accept *[600]bool, req int) int {
	if out.fcgiStatus != 0 {
		return cFCGIStatus
	}
	if c := statusClass(out.status, o, accept); c >= 0 {
		return c
	}
	if out.stderrBytes > 0 {
		return cStderr
	}
	re := o.ExpectBody
	if len(o.Mix) > 0 && o.Mix[req].ExpectBody != nil {
		re = o.Mix[req].ExpectBody
	}
	if re != nil && !re.Match(out.body) {
		return cBody
	}
	return -1
}

// statusClass is the class of a status under the accepted ones, -1 when it is accepted.
func statusClass(status int, o *Options, accept *[600]bool) int {
	switch {
	case status >= 0 && status < len(accept) && accept[status]:
		return -1
	case len(o.ExpectStatus) > 0 && status < 400:
		return cStatus
	case status == 502:
		return c502
	case status == 504:
		return c504
	case status >= 500:
		return c5xx
	case status >= 400:
		return c4xx
	}
	return cStatus
}

// pause backs off after transport errors so that a dead server is not hammered in a tight loop.
func pause(ctx context.Context, err error, last time.Duration) time.Duration {
	c := classifyErr(err)
	if c != cConnect && c != cProtocol {
		return 0
	}
	next := max(time.Millisecond, min(2*last, 200*time.Millisecond))
	t := time.NewTimer(next)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return next
}

func sampleOf(cls int, err error, out *outcome) string {
	if err != nil {
		return oneLine(err.Error())
	}
	if cls == cStderr || (out.stderrBytes > 0 && len(out.stderr) > 0) {
		return oneLine(string(out.stderr))
	}
	if cls == cBody {
		return fmt.Sprintf("status %d without the expected content", out.status)
	}
	return fmt.Sprintf("status %d", out.status)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func acceptSet(codes []int) *[600]bool {
	var a [600]bool
	if len(codes) == 0 {
		for c := 100; c < 400; c++ {
			a[c] = true
		}
		return &a
	}
	for _, c := range codes {
		if c >= 0 && c < 600 {
			a[c] = true
		}
	}
	return &a
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50: float64(h.ValueAtQuantile(50)), P90: float64(h.ValueAtQuantile(90)),
		P99: float64(h.ValueAtQuantile(99)), P999: float64(h.ValueAtQuantile(99.9)),
		Max: float64(h.Max()), Min: float64(h.Min()), Mean: h.Mean(), Stdev: h.StdDev(),
	}
}

func rusage() syscall.Rusage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru
}

func cpuSeconds(ru syscall.Rusage) float64 {
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// preflight sends one request and turns the failures that make a run pointless into one-line errors.
func preflight(ctx context.Context, o Options, c client) error {
	defer c.close()
	n := max(len(o.Mix), 1)
	for i := 0; i < n; i++ {
		if err := preflightOne(ctx, o, c, i); err != nil {
			return err
		}
	}
	return nil
}

func preflightOne(ctx context.Context, o Options, c client, i int) error {
	var out outcome
	err := c.do(ctx, time.Now().Add(o.Timeout), &out, i)
	what := o.Target.describe()
	if len(o.Mix) > 0 {
		what = o.RequestOf(i).Method + " " + o.Mix[i].URI + " on " + what
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ctx.Err()
	case classifyErr(err) == cConnect:
		return exitcode.UsageErrorf("cannot connect to %s: %v: is the server running there?", what, err)
	case classifyErr(err) == cProtocol:
		proto := "HTTP/1.1"
		if o.Target.Protocol == FastCGI {
			proto = "FastCGI"
		}
		return exitcode.UsageErrorf("%s does not speak %s: %v", what, proto, err)
	case classifyErr(err) == cTimeout:
		return fmt.Errorf("%s %w %s: the page hangs, or needs a longer --timeout", what, ErrNoAnswer, o.Timeout)
	default:
		return fmt.Errorf("first request to %s failed: %w", what, err)
	}
	if o.Target.Protocol == FastCGI && strings.Contains(string(out.stderr), "Primary script unknown") {
		return exitcode.UsageErrorf("php-fpm says \"Primary script unknown\": %s does not exist where php-fpm runs; give the script's absolute path as php-fpm sees it", o.Target.Script)
	}
	return nil
}
