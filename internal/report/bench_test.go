package report

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/load"
)

func TestFormatting(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{87: "87us", 1234: "1.23ms", 2500000: "2.50s"} {
		if got := us(in); got != want {
			t.Errorf("us(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestBenchSummary(t *testing.T) {
	r := &load.Result{Target: "fcgi://127.0.0.1:9000/x/index.php", Protocol: load.FastCGI, Method: "GET", Connections: 4,
		DurationS: 10, Requests: 1000, Errors: 30, RPS: 100, Partial: true, InFlightAtEnd: 2,
		ErrorsByClass: map[string]int64{load.ClassPHPStderr: 20, load.ClassTimeout: 10},
		ErrorSamples:  map[string]string{load.ClassPHPStderr: "PHP message: PHP Warning: oops"},
		StatusCodes:   map[string]int64{"200": 990}, Warnings: []string{"pool capped"},
		Latency:    load.Latency{P50: 900, P99: 25000, Max: 30000000},
		LatencyAll: []load.Quantile{{Q: 0.5, Value: 950, Lo: 900, Hi: 1000, N: 1002, Misses: 32}, {Q: 0.99, Value: 30e6, Lo: 25000, Hi: 30e6, N: 1002, Misses: 32}},
		TimeoutS:   30}
	var b bytes.Buffer
	Bench(&b, r)
	out := b.String()
	for _, want := range []string{"FastCGI, 4 connections", "PARTIAL", "100 req/s", "p50 900us", "p99 25.00ms", "max 30.00s",
		"30 of 1,000 (3.00%)", "php_stderr   20   e.g. PHP message: PHP Warning: oops", "timeout      10",
		"200: 990", "2 requests still running", "warning: pool capped",
		"All requests  p50 950us [900us, 1.00ms], p99 30.00s [25.00ms, 30.00s]", "32 of 1,002 failed, unfinished or unsent count as the 30s timeout"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// Classes are listed most frequent first.
	if strings.Index(out, "    php_stderr") > strings.Index(out, "    timeout ") {
		t.Errorf("classes not sorted by count:\n%s", out)
	}
}

// TestSaveBench: a saved bench result reads back whole, its histogram with it, a figure that is not a number as 0.
func TestSaveBench(t *testing.T) {
	o := load.Options{Timeout: time.Second}
	rec := load.NewRecorder(&o, time.Now())
	for _, lat := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 40 * time.Millisecond} {
		rec.Response(200, 100, lat)
	}
	r := rec.Result(time.Second, 0)
	r.RPS = math.NaN()
	path := filepath.Join(t.TempDir(), "a.json")
	if err := SaveBench(path, r); err != nil {
		t.Fatal(err)
	}
	back, err := load.ReadResult(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Requests != 3 || back.RPS != 0 || back.HistogramEncoded == "" {
		t.Fatalf("read back %d requests, rps %v, histogram %q; want 3, 0 and the histogram", back.Requests, back.RPS, back.HistogramEncoded)
	}
	if h := back.Histogram(); h == nil || h.TotalCount() != 3 || h.Max() < 39000 {
		t.Errorf("histogram read back: %v, want the 3 latencies up to 40ms", h)
	}
	if err := SaveBench(filepath.Join(t.TempDir(), "no", "such", "dir.json"), r); err == nil {
		t.Error("saved into a directory that is not there")
	}
}
