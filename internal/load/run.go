package load

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/phptune/phptune/internal/exitcode"
)

// Options configure one run (a closed model: each connection sends its next request when the last one ends).
type Options struct {
	Target      Target
	Request     Request
	Connections int
	Requests    int64         // total measured requests; 0 = run for Duration
	Duration    time.Duration // measured window when Requests is 0
	Warmup      time.Duration // excluded from the results
	Timeout     time.Duration // per request; a timed-out request is recorded at this value
	// ExpectStatus lists the accepted statuses; empty = 1xx-3xx accepted, 4xx and 5xx are errors.
	ExpectStatus []int
	ExpectBody   *regexp.Regexp
	// Progress, when set, is called about twice a second from another goroutine.
	Progress func(Progress)
	// SkipPreflight skips the single checked request before the run.
	SkipPreflight bool
}

// Progress is a running count.
type Progress struct {
	Elapsed  time.Duration
	Total    time.Duration // warm-up plus measured window (duration mode), else 0
	Warmup   bool
	Requests int64
	Errors   int64
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

// Result is one run's outcome; its JSON form is the schema phptune/bench/v1.
type Result struct {
	Schema            string            `json:"schema"`
	Target            string            `json:"target"`
	Protocol          string            `json:"protocol"`
	Method            string            `json:"method"`
	Connections       int               `json:"connections"`
	KeepAlive         bool              `json:"keepalive"`
	WarmupS           float64           `json:"warmup_s"`
	DurationS         float64           `json:"duration_s"` // the measured window as it ran
	TimeoutS          float64           `json:"timeout_s"`
	Started           time.Time         `json:"started"`
	Requests          int64             `json:"requests"` // completed in the measured window, errors included
	Errors            int64             `json:"errors"`
	ErrorsByClass     map[string]int64  `json:"errors_by_class"`
	ErrorSamples      map[string]string `json:"error_samples,omitempty"`
	StatusCodes       map[string]int64  `json:"status_codes"`
	RPS               float64           `json:"rps"`
	Bytes             int64             `json:"bytes"`
	BytesPerSec       float64           `json:"bytes_per_sec"`
	StderrBytes       int64             `json:"php_stderr_bytes"`
	Latency           Latency           `json:"latency_us"`
	InFlightAtEnd     int64             `json:"in_flight_at_end"`
	Reconnects        int64             `json:"reconnects"`
	ClientCPUUsPerReq float64           `json:"client_cpu_us_per_req"`
	ClientCPUS        float64           `json:"client_cpu_s"`
	GoMaxProcs        int               `json:"gomaxprocs"`
	Warnings          []string          `json:"warnings,omitempty"`
	Partial           bool              `json:"partial"`
	FPMStatus         any               `json:"fpm_status,omitempty"`

	hist *hdrhistogram.Histogram
}

// SchemaBench names the JSON form of a Result.
const SchemaBench = "phptune/bench/v1"

// Histogram is the merged latency histogram of the measured window, in microseconds.
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.hist }

// worker is one connection's private state; nothing in it is shared until the run ends.
type worker struct {
	hist       *hdrhistogram.Histogram
	requests   int64
	errors     int64
	classes    [classCount]int64
	samples    [classCount]string
	statuses   [600]int64
	bytes      int64
	stderr     int64
	inFlight   int64
	reconnects int64
}

// shared counters for progress reporting.
type counters struct {
	requests atomic.Int64
	errors   atomic.Int64
}

// Run drives the target and returns the measured results. A cancelled ctx stops the run early: the result
// so far is returned with Partial set, together with ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Connections < 1 {
		return nil, exitcode.UsageErrorf("-c %d: want at least 1 connection", o.Connections)
	}
	if o.Requests <= 0 && o.Duration <= 0 {
		return nil, exitcode.UsageErrorf("give -n COUNT or -d DURATION")
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Request.Method == "" {
		o.Request.Method = "GET"
	}
	accept := acceptSet(o.ExpectStatus)
	keepBody := o.ExpectBody != nil
	newClient := newClientFactory(o.Target, o.Request, keepBody, min(o.Timeout, 5*time.Second))

	if !o.SkipPreflight {
		if err := preflight(ctx, o, newClient()); err != nil {
			return nil, err
		}
	}

	res := &Result{
		Schema: SchemaBench, Target: o.Target.Raw, Protocol: o.Target.Protocol, Method: o.Request.Method,
		Connections: o.Connections, KeepAlive: o.Request.KeepAlive || o.Target.Protocol == FastCGI,
		WarmupS: o.Warmup.Seconds(), TimeoutS: o.Timeout.Seconds(), GoMaxProcs: runtime.GOMAXPROCS(0),
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	t0 := time.Now()
	res.Started = t0
	measureStart := t0.Add(o.Warmup)
	var end time.Time
	if o.Requests <= 0 {
		end = measureStart.Add(o.Duration)
	}
	var remaining atomic.Int64
	remaining.Store(o.Requests)
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
			select {
			case <-time.After(time.Until(measureStart)):
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
					o.Progress(Progress{Elapsed: now.Sub(t0), Total: total, Warmup: now.Before(measureStart),
						Requests: cnt.requests.Load(), Errors: cnt.errors.Load()})
				case <-stopTimers:
					return
				}
			}
		}()
	}

	highest := max(int64(o.Timeout/time.Microsecond)*2, int64(60e6))
	workers := make([]*worker, o.Connections)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{hist: hdrhistogram.New(1, highest, 3)}
		workers[i] = w
		c := newClient()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.close()
			w.run(runCtx, c, &o, accept, measureStart, end, &remaining, &cnt)
			w.reconnects = c.reconnects()
		}()
	}
	wg.Wait()
	close(stopTimers)
	timers.Wait()
	finish := time.Now()
	ruEnd := rusage()

	res.hist = hdrhistogram.New(1, highest, 3)
	res.ErrorsByClass = map[string]int64{}
	res.StatusCodes = map[string]int64{}
	for _, w := range workers {
		res.hist.Merge(w.hist)
		res.Requests += w.requests
		res.Errors += w.errors
		res.Bytes += w.bytes
		res.StderrBytes += w.stderr
		res.InFlightAtEnd += w.inFlight
		res.Reconnects += w.reconnects
		for c, n := range w.classes {
			if n > 0 {
				res.ErrorsByClass[classNames[c]] += n
				if res.ErrorSamples == nil {
					res.ErrorSamples = map[string]string{}
				}
				if _, ok := res.ErrorSamples[classNames[c]]; !ok && w.samples[c] != "" {
					res.ErrorSamples[classNames[c]] = w.samples[c]
				}
			}
		}
		for code, n := range w.statuses {
			if n > 0 {
				res.StatusCodes[fmt.Sprint(code)] += n
			}
		}
	}
	window := finish.Sub(measureStart)
	if !end.IsZero() && finish.After(end) {
		window = end.Sub(measureStart)
	}
	if window <= 0 {
		window = time.Nanosecond
	}
	res.DurationS = window.Seconds()
	res.RPS = float64(res.Requests) / window.Seconds()
	res.BytesPerSec = float64(res.Bytes) / window.Seconds()
	res.Latency = latencyOf(res.hist)
	if rs := ruStart.Load(); rs != nil {
		res.ClientCPUS = cpuSeconds(ruEnd) - cpuSeconds(*rs)
		if res.Requests > 0 {
			res.ClientCPUUsPerReq = res.ClientCPUS * 1e6 / float64(res.Requests)
		}
	}
	if err := ctx.Err(); err != nil {
		res.Partial = true
		return res, err
	}
	if res.Requests == 0 && o.Requests <= 0 {
		return res, fmt.Errorf("no request completed in the measured window of %s", o.Duration)
	}
	return res, nil
}

func (w *worker) run(ctx context.Context, c client, o *Options, accept *[600]bool, measureStart, end time.Time,
	remaining *atomic.Int64, cnt *counters) {
	var out outcome
	countMode := end.IsZero()
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		start := time.Now()
		measuring := !start.Before(measureStart)
		if measuring {
			if countMode {
				if remaining.Add(-1) < 0 {
					return
				}
			} else if !start.Before(end) {
				return
			}
		}
		deadline := start.Add(o.Timeout)
		if !countMode && deadline.After(end) {
			// A request still running when the window closes is in flight at the end, not a timeout.
			deadline = end
		}
		err := c.do(ctx, deadline, &out)
		fin := time.Now()
		if err != nil && (ctx.Err() != nil || (!countMode && !fin.Before(end) && deadline.Equal(end))) {
			if measuring {
				w.inFlight++
			}
			return
		}
		if !measuring {
			if err != nil {
				backoff = pause(ctx, err, backoff)
			}
			continue
		}
		cls := -1
		if err != nil {
			cls = classifyErr(err)
			if cls == cTimeout {
				w.hist.RecordValue(int64(o.Timeout / time.Microsecond))
			}
		} else {
			backoff = 0
			w.hist.RecordValue(int64(fin.Sub(start) / time.Microsecond))
			w.bytes += out.bytes
			if out.status > 0 && out.status < 600 {
				w.statuses[out.status]++
			}
			w.stderr += out.stderrBytes
			cls = w.classifyResponse(&out, o, accept)
		}
		w.requests++
		cnt.requests.Add(1)
		if cls >= 0 {
			w.errors++
			cnt.errors.Add(1)
			w.classes[cls]++
			if w.samples[cls] == "" {
				w.samples[cls] = sampleOf(cls, err, &out)
			}
			if err != nil {
				backoff = pause(ctx, err, backoff)
			}
		}
	}
}

func (w *worker) classifyResponse(out *outcome, o *Options, accept *[600]bool) int {
	switch {
	case out.fcgiStatus != 0:
		return cFCGIStatus
	case accept[out.status]:
	case len(o.ExpectStatus) > 0 && out.status < 400:
		return cStatus
	case out.status == 502:
		return c502
	case out.status == 504:
		return c504
	case out.status >= 500:
		return c5xx
	case out.status >= 400:
		return c4xx
	default:
		return cStatus
	}
	if out.stderrBytes > 0 {
		return cStderr
	}
	if o.ExpectBody != nil && !o.ExpectBody.Match(out.body) {
		return cBody
	}
	return -1
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
	var out outcome
	err := c.do(ctx, time.Now().Add(o.Timeout), &out)
	what := o.Target.describe()
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
		return fmt.Errorf("%s did not answer within --timeout %s", what, o.Timeout)
	default:
		return fmt.Errorf("first request to %s failed: %w", what, err)
	}
	if o.Target.Protocol == FastCGI && strings.Contains(string(out.stderr), "Primary script unknown") {
		return exitcode.UsageErrorf("php-fpm says \"Primary script unknown\": %s does not exist where php-fpm runs; give the script's absolute path as php-fpm sees it", o.Target.Script)
	}
	return nil
}
