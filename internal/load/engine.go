package load

import (
	"context"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Engine runs a trial with a generator other than phptune's own (k6): it sends the requests that the Options
// describe and counts them into a Recorder, so that the result is the built-in generator's and every verdict works
// on it unchanged. The preflight stays phptune's own.
type Engine interface {
	Trial(ctx context.Context, o *Options, trial, trials int) (*Result, error)
}

// Recorder counts requests measured by another engine into a Result: the same error classes, status checks and
// HDR histogram (microseconds) as the built-in generator's. Not safe for concurrent use.
type Recorder struct {
	o      *Options
	accept *[600]bool
	w      *worker
	res    *Result
}

// NewRecorder starts a result for one trial of o (as checked: a Runner's Options), started at t0.
func NewRecorder(o *Options, t0 time.Time) *Recorder {
	w := &worker{hist: hdrhistogram.New(1, o.highest(), 3)}
	return &Recorder{o: o, accept: acceptSet(o.ExpectStatus), w: w, res: o.newResult(t0)}
}

// Response counts an answered request: its status, size and latency.
func (r *Recorder) Response(status int, bytes int64, lat time.Duration) {
	w := r.w
	w.hist.RecordValue(int64(lat / time.Microsecond))
	w.requests++
	w.bytes += bytes
	w.maxBytes = max(w.maxBytes, bytes)
	if status > 0 && status < 600 {
		w.statuses[status]++
	}
	if c := statusClass(status, r.o, r.accept); c >= 0 {
		r.count(c, 1, fmt.Sprintf("status %d", status))
	}
}

// ContentMissing turns n accepted responses into errors of class body: the engine found their content marker
// missing.
func (r *Recorder) ContentMissing(n int64) {
	r.count(cBody, n, "an accepted status without the expected content")
}

// Bytes adds received bytes that the engine counts apart from the responses.
func (r *Recorder) Bytes(n int64) { r.w.bytes += n }

// Failure counts a request that got no response: class is ClassConnect, ClassTimeout, ClassIO or ClassProtocol;
// a timed-out request enters the histogram at lat, as the built-in generator records it.
func (r *Recorder) Failure(class string, lat time.Duration, sample string) {
	c := cIO
	for i, n := range classNames {
		if n == class {
			c = i
		}
	}
	r.w.requests++
	if c == cTimeout {
		r.w.hist.RecordValue(int64(lat / time.Microsecond))
	}
	r.count(c, 1, oneLine(sample))
}

func (r *Recorder) count(c int, n int64, sample string) {
	r.w.errors += n
	r.w.classes[c] += n
	if r.w.samples[c] == "" {
		r.w.samples[c] = sample
	}
}

// Unsent counts requests that were due in the window but never sent (an open model's dropped iterations).
func (r *Recorder) Unsent(n int64) { r.w.unsent += n }

// Warn adds a warning to the result.
func (r *Recorder) Warn(w string) { r.res.Warnings = append(r.res.Warnings, w) }

// Requests is the count so far.
func (r *Recorder) Requests() int64 { return r.w.requests }

// Result is the trial's result over a measured window of the given length, cpu the engine's own CPU time, with
// the counts of more recorders of the same trial (other instances of the engine) merged in.
func (r *Recorder) Result(window, cpu time.Duration, more ...*Recorder) *Result {
	res := r.res
	ws := []*worker{r.w}
	for _, m := range more {
		ws = append(ws, m.w)
		res.Warnings = append(res.Warnings, m.res.Warnings...)
	}
	res.mergeWorkers(r.o, ws)
	if res.Model == Open {
		// k6 drops an iteration it cannot start on time rather than starting it late: latency is from the
		// actual send, and the dropped requests are counted as unsent.
		res.LatencyCorrected, res.histUncorr, res.LatencyUncorrected = false, nil, nil
	}
	res.setWindow(window)
	res.ClientCPUS = cpu.Seconds()
	if res.Requests > 0 {
		res.ClientCPUUsPerReq = res.ClientCPUS * 1e6 / float64(res.Requests)
	}
	return res
}

// Check fills o's defaults and checks it, as a run would (for tools that write o's load for another engine).
func Check(o *Options) error { return o.check() }
