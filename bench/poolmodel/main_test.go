package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/bench/internal/capture"
)

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("8, 1,4,2")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{1, 2, 4, 8}) {
		t.Errorf("parseSizes = %v, want [1 2 4 8]", got)
	}
	for _, bad := range []string{"", "0", "-2", "1,,2", "two", "1.5", "4,"} {
		if got, err := parseSizes(bad); err == nil || !strings.Contains(err.Error(), "-sizes") {
			t.Errorf("parseSizes(%q) = %v, %v; want a -sizes error", bad, got, err)
		}
	}
}

// Three rounds: the pool of 4 serves 200 a second in each, the pool of 2 e^-0.1, e^-0.2 and e^-0.3 of it (mean
// -20%, sd 10%, median 200 e^-0.2), the pool of 1 half of it. The pool of 4 is the best; the pool of 1's W/C, 1.5
// (its median), sizes the model.
func TestReport(t *testing.T) {
	sizes := []int{1, 2, 4}
	got := [][]figures{
		{{100, 1.5}, {100, 1.4}, {100, 1.6}},
		{{200 * math.Exp(-0.1), 1.2}, {200 * math.Exp(-0.2), 1.1}, {200 * math.Exp(-0.3), 1.3}},
		{{200, 1.05}, {200, 1.0}, {200, 1.1}},
	}
	out := capture.Stdout(t, func() { report("demo", sizes, 8, 1500*time.Millisecond, 0, got) })
	cpus := runtime.NumCPU()
	want := fmt.Sprintf("demo: 3 rounds, 8 connections, 1.5s windows, %d CPUs; goodput against the best size (4)\n", cpus)
	if !strings.HasPrefix(out, want) {
		t.Errorf("first line: want %q in\n%s", want, out)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 5 {
			rows[f[0]] = f[1:]
		}
	}
	for size, want := range map[string][]string{
		"1": {"100.0", "-69.3%", "0.0%", "1.50"},
		"2": {fmt.Sprintf("%.1f", 200*math.Exp(-0.2)), "-20.0%", "10.0%", "1.20"},
		"4": {"200.0", "0.0%", "0.0%", "1.05"},
	} {
		if !slices.Equal(rows[size], want) {
			t.Errorf("size %s: %v, want %v\n%s", size, rows[size], want, out)
		}
	}
	model := fmt.Sprintf(
		"model: a request holds a worker 1.50x its CPU (pool of 1); %d CPUs busy take %.1f workers: size %d\n",
		cpus, 1.5*float64(cpus), int(math.Ceil(1.5*float64(cpus))))
	if !strings.HasSuffix(out, model) {
		t.Errorf("want the model's line %q in\n%s", model, out)
	}
	// Without a pool of 1 there is no model; a fixed number of requests a trial says so.
	out = capture.Stdout(t, func() { report("demo", sizes[1:], 8, time.Second, 50, got[1:]) })
	if strings.Contains(out, "model:") || !strings.Contains(out, "50 requests a trial, timed whole") {
		t.Errorf("sizes 2 and 4, 50 requests a trial:\n%s", out)
	}
}
