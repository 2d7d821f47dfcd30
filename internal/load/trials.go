package load

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/phptune/phptune/internal/exitcode"
)

// Runner runs trials of one set of options; compare interleaves the trials of several Runners.
type Runner struct {
	o         Options
	newClient func() client
}

// NewRunner checks o and pre-encodes its request.
func NewRunner(o Options) (*Runner, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Runner{o: o, newClient: newClientFactory(&o, o.ExpectBody != nil || hasBodyCheck(o.Mix), min(o.Timeout, 5*time.Second))}, nil
}

// WithProgress returns a Runner that shares r's request and reports progress to f.
func (r *Runner) WithProgress(f func(Progress)) *Runner {
	c := *r
	c.o.Progress = f
	return &c
}

func hasBodyCheck(mix []MixItem) bool {
	for _, m := range mix {
		if m.ExpectBody != nil {
			return true
		}
	}
	return false
}

// Options are the runner's options, defaults filled in.
func (r *Runner) Options() Options { return r.o }

// Preflight sends one checked request: the failures that make a run pointless become one-line errors.
func (r *Runner) Preflight(ctx context.Context) error { return preflight(ctx, r.o, r.newClient()) }

// Trial runs one trial, its warm-up included; i and k (1-based index and count) are for progress reports.
func (r *Runner) Trial(ctx context.Context, i, k int) (*Result, error) {
	if r.o.Engine != nil {
		return r.o.Engine.Trial(ctx, &r.o, i, k)
	}
	return run(ctx, &r.o, r.newClient, i, k)
}

// RunTrials runs k trials of o, each with its own warm-up, and merges them: counts add up, percentiles come
// from the merged histograms (not from averaging per-trial percentiles), and each trial's summary is kept for
// the statistics. A cancelled ctx returns the trials so far, merged, with Partial set.
func RunTrials(ctx context.Context, o Options, k int) (*Result, error) {
	if k < 1 {
		return nil, exitcode.UsageErrorf("--repeat %d: want at least 1 trial", k)
	}
	r, err := NewRunner(o)
	if err != nil {
		return nil, err
	}
	if !o.SkipPreflight {
		if err := r.Preflight(ctx); err != nil {
			return nil, err
		}
	}
	var results []*Result
	var runErr error
	for i := 0; i < k; i++ {
		res, err := r.Trial(ctx, i+1, k)
		if res != nil {
			results = append(results, res)
		}
		if err != nil {
			runErr = err
			break
		}
	}
	if len(results) == 0 {
		return nil, runErr
	}
	return Merge(results), runErr
}

// Trials is a trial's own summary.
func (r *Result) trial(i int) Trial {
	return Trial{Index: i, Started: r.Started, DurationS: r.DurationS, Requests: r.Requests, Errors: r.Errors, RPS: r.RPS,
		Latency: r.Latency, LatencyUncorr: r.LatencyUncorrected, ClientCPUUsPerReq: r.ClientCPUUsPerReq, Partial: r.Partial}
}

// Merge combines trials of the same options into one result with a Trial entry for each.
func Merge(trials []*Result) *Result {
	first := trials[0]
	m := *first
	m.ErrorsByClass, m.StatusCodes, m.ErrorSamples = map[string]int64{}, map[string]int64{}, nil
	m.Requests, m.Errors, m.Bytes, m.StderrBytes, m.InFlightAtEnd, m.Reconnects, m.Served = 0, 0, 0, 0, 0, 0, 0
	m.LateStarts, m.Unsent, m.MaxLagUs, m.ClientCPUS, m.Partial = 0, 0, 0, 0, false
	m.Warnings, m.Trials = nil, nil
	m.hist = hdrhistogram.New(first.hist.LowestTrackableValue(), first.hist.HighestTrackableValue(), int(first.hist.SignificantFigures()))
	if first.histUncorr != nil {
		m.histUncorr = hdrhistogram.New(first.histUncorr.LowestTrackableValue(), first.histUncorr.HighestTrackableValue(), int(first.histUncorr.SignificantFigures()))
	}
	window := 0.0
	seen := map[string]bool{}
	for i, r := range trials {
		m.Trials = append(m.Trials, r.trial(i+1))
		m.hist.Merge(r.hist)
		if m.histUncorr != nil && r.histUncorr != nil {
			m.histUncorr.Merge(r.histUncorr)
		}
		m.addCounts(r)
		m.Partial = m.Partial || r.Partial
		window += r.DurationS
		for c, n := range r.ErrorsByClass {
			m.ErrorsByClass[c] += n
		}
		for c, s := range r.ErrorSamples {
			if m.ErrorSamples == nil {
				m.ErrorSamples = map[string]string{}
			}
			if _, ok := m.ErrorSamples[c]; !ok {
				m.ErrorSamples[c] = s
			}
		}
		for s, n := range r.StatusCodes {
			m.StatusCodes[s] += n
		}
		for _, w := range r.Warnings {
			if !seen[w] {
				seen[w] = true
				m.Warnings = append(m.Warnings, w)
			}
		}
	}
	m.setLatency()
	m.setWindow(time.Duration(window * float64(time.Second)))
	if m.Requests > 0 {
		m.ClientCPUUsPerReq = m.ClientCPUS * 1e6 / float64(m.Requests)
	}
	if len(trials) == 1 {
		m.Trials = nil
	}
	return &m
}

// addCounts adds r's counters to res's (the maxima take the larger): one list for a run's workers and a merge's trials.
func (res *Result) addCounts(r *Result) {
	res.Requests += r.Requests
	res.Errors += r.Errors
	res.Bytes += r.Bytes
	res.MaxBytes = max(res.MaxBytes, r.MaxBytes)
	res.StderrBytes += r.StderrBytes
	res.InFlightAtEnd += r.InFlightAtEnd
	res.Served += r.Served
	res.Reconnects += r.Reconnects
	res.LateStarts += r.LateStarts
	res.Unsent += r.Unsent
	res.MaxLagUs = max(res.MaxLagUs, r.MaxLagUs)
	res.ClientCPUS += r.ClientCPUS
}

// Encode fills HistogramEncoded from the merged histogram, for saving.
func (r *Result) Encode() error {
	if r.hist == nil {
		return nil
	}
	b, err := r.hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encode histogram: %w", err)
	}
	r.HistogramEncoded = string(b)
	return nil
}

// ReadResult loads a saved bench result (schema phptune/bench/v1).
func ReadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitcode.UsageErrorf("read result: %v", err)
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, exitcode.UsageErrorf("%s: not a phptune result: %v", path, err)
	}
	if r.Schema != SchemaBench {
		return nil, exitcode.UsageErrorf("%s: schema %q, want %s: give results saved by phptune bench --out or --json", path, r.Schema, SchemaBench)
	}
	if r.HistogramEncoded != "" {
		h, err := hdrhistogram.Decode([]byte(r.HistogramEncoded))
		if err != nil {
			return nil, exitcode.UsageErrorf("%s: bad histogram: %v", path, err)
		}
		r.hist = h
	}
	return &r, nil
}
