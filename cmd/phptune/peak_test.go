package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
)

// peakLog is a combined log with request times: 10 requests a second for a minute, and peak requests in its
// 31st second.
func peakLog(t *testing.T, peak int) string {
	t.Helper()
	var b strings.Builder
	start := time.Date(2026, 11, 25, 14, 5, 0, 0, time.UTC)
	for s := range 60 {
		n := 10
		if s == 30 {
			n = peak
		}
		stamp := start.Add(time.Duration(s) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
		for range n {
			fmt.Fprintf(&b, "203.0.113.7 - - [%s] \"GET / HTTP/1.1\" 200 12 \"-\" \"ua\" 0.005\n", stamp)
		}
	}
	p := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTuneLogPeakTooBig: a log whose busiest second (5000 requests) is far beyond what a CPU-bound page (a few
// ms of PHP) serves here: tune prints the log's load with the mix, runs --p99 at the log's peak rate (--rate
// peak), and reports that the pool cannot hold the peak (5000 requests of 5 ms: 25 in flight by the log's times) on the pool's row,
// in a warning and in result.json.
func TestTuneLogPeakTooBig(t *testing.T) {
	app := servedDir(t)
	os.WriteFile(filepath.Join(app, "index.php"), []byte(`<?php $x = 0; for ($i = 0; $i < 1000000; $i++) { $x += $i; } echo "sum $x";`), 0o644)
	log := peakLog(t, 5000)
	out := t.TempDir()
	r := phptune(t, "tune", app, "--verbose", "--from-access-log", log, "--only", "none", "--budget", "30s", "--rate", "peak", "--p99", "1s",
		"--timeout", "2s", "--out", out)
	t.Logf("\n%s\n%s", r.stdout, r.stderr)
	if r.code != 3 || !strings.Contains(r.stderr, "the p99 goal 1s at 5000 req/s was not shown to be met") {
		t.Fatalf("exit %d, want 3: the goal missed at the log's peak of 5000 req/s", r.code)
	}
	if want := "  peak 5000 req/s (the busiest second, 14:05:30), 99th percentile second 5000 req/s, busiest minute 93 req/s"; !strings.Contains(r.stderr, want) {
		t.Errorf("the mix's summary lacks the load %q", want)
	}
	var res struct {
		LogLoad *struct {
			PeakRPS float64 `json:"peak_rps"`
			Timed   int     `json:"timed"`
		} `json:"log_load"`
		PeakCheck *struct {
			PeakRPS     float64 `json:"peak_rps"`
			Workers     int     `json:"workers_needed"`
			LogConc     float64 `json:"log_concurrency"`
			MostRPS     float64 `json:"most_rps"`
			MaxChildren int     `json:"max_children"`
			CapacityRPS float64 `json:"capacity_rps"`
			Holds       bool    `json:"holds"`
			Note        string  `json:"note"`
		} `json:"peak_check"`
		P99Check *struct {
			Rate float64 `json:"rate"`
		} `json:"p99_check"`
		Warnings       []string    `json:"warnings"`
		Recommendation knob.Config `json:"recommendation"`
	}
	data, _ := os.ReadFile(filepath.Join(out, "result.json"))
	if err := json.Unmarshal(data, &res); err != nil || res.LogLoad == nil || res.PeakCheck == nil || res.P99Check == nil {
		t.Fatalf("result.json lacks log_load, peak_check or p99_check (%v): %.400s", err, data)
	}
	if res.LogLoad.PeakRPS != 5000 || res.LogLoad.Timed != 5590 || res.P99Check.Rate != 5000 {
		t.Errorf("log load %+v, p99 check at %v req/s: want the peak 5000 of 5590 requests, checked at 5000", *res.LogLoad, res.P99Check.Rate)
	}
	c := res.PeakCheck
	if c.Holds || c.PeakRPS != 5000 || c.CapacityRPS <= 0 || c.CapacityRPS >= 5000 || c.Workers < 1 || c.MaxChildren != res.Recommendation.MaxChildren ||
		math.Abs(c.LogConc-25) > 0.01 {
		t.Errorf("peak check %+v: want a pool of %d that cannot hold 5000 req/s", *c, res.Recommendation.MaxChildren)
	}
	warned := false
	for _, w := range res.Warnings {
		warned = warned || strings.HasPrefix(w, "the log's peak of 5000 req/s (at most 25.0 requests in flight by the log's times) needs about") &&
			strings.Contains(w, "it cannot hold the peak, and no pool size measured here could")
	}
	if c.MostRPS <= 0 || c.MostRPS >= 5000 || !strings.Contains(r.stdout, "nor did any size measured") {
		t.Errorf("peak check %+v: want the most any size served, below the peak, and said on the pool's row", *c)
	}
	if !warned || !strings.Contains(r.stdout, "the log's peak: 5,000 req/s (25.0 in flight in the log), about") ||
		!strings.Contains(r.stdout, "CANNOT hold it") {
		t.Errorf("no warning %q or pool row's line in the summary", res.Warnings)
	}
}

// --rate peak needs a log that gives a rate; --rate takes a number or peak.
func TestTuneRatePeakBadInput(t *testing.T) {
	app := demoCopy(t, nil)
	oneSecond := filepath.Join(t.TempDir(), "access.log")
	os.WriteFile(oneSecond, []byte(strings.Repeat(`203.0.113.7 - - [25/Nov/2026:14:05:00 +0000] "GET / HTTP/1.1" 200 12 "-" "ua"`+"\n", 3)), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "peak", "--p99", "1s"}, "--rate peak takes the rate from the access log's busiest second: give --from-access-log"},
		{[]string{"--rate", "peak", "--p99", "1s", "--from-access-log", oneSecond}, "--rate peak: the access log gives no rate (all 3 requests"},
		{[]string{"--rate", "fast", "--p99", "1s"}, "want requests a second, such as 300, or peak"},
		{[]string{"--rate", "-5", "--p99", "1s"}, "want requests a second"},
	} {
		r := phptune(t, append(append([]string{"tune", app}, c.args...), "--out", t.TempDir())...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || !strings.Contains(lines[len(lines)-1], c.want) {
			t.Errorf("phptune tune %v: exit %d, stderr %q; want exit 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
