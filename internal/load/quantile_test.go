package load

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestQuantileCountsFailures: fast errors, requests in flight at the end and unsent ones push the quantile up
// instead of vanishing from it.
func TestQuantileCountsFailures(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := 1; i <= 1000; i++ {
		h.RecordValue(int64(i * 10)) // 10 us .. 10 ms, p99 about 9.9 ms
	}
	clean := &Result{Requests: 1000, hist: h}
	q := clean.QuantileOfAll(0.99, time.Second)
	if q.Value < 9800 || q.Value > 10000 || q.Lo > q.Value || q.Hi < q.Value || q.Misses != 0 {
		t.Errorf("clean run: %+v", q)
	}
	// 20 connection errors (not in the histogram): 2% of the requests at the timeout, beyond the 99th percentile.
	failed := &Result{Requests: 1020, Errors: 20, hist: h}
	if q := failed.QuantileOfAll(0.99, time.Second); q.Value != 1e6 {
		t.Errorf("2%% connection errors: p99 %v, want the timeout", q.Value)
	}
	// 20 of the histogram's entries are 5xx answers, in flight, unsent: the same.
	for _, r := range []*Result{{Requests: 1000, Errors: 20, hist: h}, {Requests: 1000, InFlightAtEnd: 20, hist: h}, {Requests: 1000, Unsent: 20, hist: h}} {
		if q := r.QuantileOfAll(0.99, time.Second); q.Value != 1e6 {
			t.Errorf("%+v: p99 %v, want the timeout", *r, q.Value)
		}
	}
}

// TestQuantileIntervalCovers: the interval covers the true 99th percentile in about 95% of samples or more.
func TestQuantileIntervalCovers(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const runs, n = 1000, 2000
	truth := -math.Log(0.01) * 1000 // exponential, mean 1 ms: p99 = 4605 us
	covered := 0
	for i := 0; i < runs; i++ {
		h := hdrhistogram.New(1, 60_000_000, 3)
		for j := 0; j < n; j++ {
			h.RecordValue(int64(rng.ExpFloat64()*1000) + 1)
		}
		q := (&Result{Requests: n, hist: h}).QuantileOfAll(0.99, time.Second)
		if q.Lo <= truth && truth <= q.Hi {
			covered++
		}
	}
	t.Logf("covered %d of %d", covered, runs)
	if covered < runs*92/100 {
		t.Errorf("interval covered the true p99 in %d of %d runs", covered, runs)
	}
}
