package report

import (
	"bytes"
	"strings"
	"testing"

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
