package load

import (
	"bytes"
	"context"
	"math"
	"math/rand"
	"net"
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

// flakyServer answers HTTP requests with 200 and closes the connection; every fourth connection it closes
// without an answer.
func flakyServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for n := 1; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn, answer bool) {
				defer c.Close()
				buf := make([]byte, 4096)
				got := 0
				for !bytes.Contains(buf[:got], []byte("\r\n\r\n")) {
					m, err := c.Read(buf[got:])
					if err != nil {
						return
					}
					got += m
				}
				if answer {
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
				}
			}(c, n%4 != 0)
		}
	}()
	return l.Addr().String()
}

// TestBenchLatencyOfAllRequests: requests that got no answer stay out of the answered requests' latency, and
// every request's percentiles count them at the timeout; a run where all were answered has no such figure.
func TestBenchLatencyOfAllRequests(t *testing.T) {
	tg := mustTarget(t, "http://"+flakyServer(t)+"/")
	res, err := Run(context.Background(), Options{Target: tg, Connections: 1, Requests: 200, Timeout: time.Second, SkipPreflight: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors < 40 || len(res.LatencyAll) != 3 {
		t.Fatalf("errors %d %v, latency of all %+v: want a quarter failed and p50, p90, p99 of all", res.Errors, res.ErrorsByClass, res.LatencyAll)
	}
	p50, p99 := res.LatencyAll[0], res.LatencyAll[2]
	if p99.Value != 1e6 || p99.Misses != res.Errors || p99.N != res.Requests {
		t.Errorf("p99 of all %+v: want the 1 s timeout, counting %d failures of %d", p99, res.Errors, res.Requests)
	}
	if p50.Value >= 1e6 || p50.Value > 100*res.Latency.P50+1000 {
		t.Errorf("p50 of all %v us, of the answered %v us: three quarters were answered fast", p50.Value, res.Latency.P50)
	}
	if res.Latency.Max >= 1e6 {
		t.Errorf("the answered requests' latency holds %v us: failures without an answer must stay out of it", res.Latency.Max)
	}
	clean, err := Run(context.Background(), Options{Target: mustTarget(t, "http://"+rawHTTPServer(t)+"/"), Connections: 1, Requests: 50, Timeout: time.Second, SkipPreflight: true})
	if err != nil || clean.Errors != 0 || clean.LatencyAll != nil {
		t.Errorf("clean run: errors %d, latency of all %+v, err %v: want none", clean.Errors, clean.LatencyAll, err)
	}
}
