// Package report turns results into what people and machines read: terminal summaries, JSON, and later HTML.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stats"
)

// WriteJSON writes v as indented JSON; a NaN or infinite figure (which JSON cannot hold) is written as 0 (Finite).
func WriteJSON(w io.Writer, v any) error {
	Finite(v)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// SaveBench writes a bench result, its histogram encoded, whole to path (WriteJSON): a file bench and compare
// read again.
func SaveBench(path string, r *load.Result) error {
	if err := r.Encode(); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return atomicfile.Save(path, buf.Bytes())
}

// Bench writes the human summary of a bench result, laid out so that ab and wrk users read it at a glance.
func Bench(w io.Writer, r *load.Result) {
	mode := "closed loop"
	if r.Model == load.Open {
		mode = fmt.Sprintf("open loop at %s req/s", rate(r.Rate))
		if r.MaxInflight > 0 {
			mode += fmt.Sprintf(" through at most %d in flight", r.MaxInflight)
		}
	}
	ka := ""
	if r.Protocol == load.HTTP {
		ka = ", no keep-alive"
		if r.KeepAlive {
			ka = ", keep-alive"
		}
	}
	proto := "HTTP/1.1"
	if r.Protocol == load.FastCGI {
		proto = "FastCGI"
	}
	warm := ""
	if r.WarmupS > 0 {
		warm = fmt.Sprintf(" after %s warm-up", secs(r.WarmupS))
	}
	fmt.Fprintf(w, "%s %s\n", r.Method, r.Target)
	fmt.Fprintf(w, "  %s, %d connections%s, %s, %s measured%s\n", proto, r.Connections, ka, mode, secs(r.DurationS), warm)
	if r.Partial {
		fmt.Fprintf(w, "  PARTIAL: interrupted, these are the results so far\n")
	}
	fmt.Fprintf(w, "\n  %-13s %s in %s   %s req/s   %s/s\n", "Requests", group(r.Requests), secs(r.DurationS), rate(r.RPS), bytesStr(r.BytesPerSec))
	latLabel := "Latency"
	if r.LatencyCorrected {
		latLabel = "Latency (CO)"
	}
	fmt.Fprintf(w, "  %-13s %s\n", latLabel, percentiles(r.Latency))
	fmt.Fprintf(w, "  %-13s mean %s, stdev %s, min %s\n", "", us(r.Latency.Mean), us(r.Latency.Stdev), us(r.Latency.Min))
	if r.LatencyUncorrected != nil {
		fmt.Fprintf(w, "  %-13s %s\n", "uncorrected", percentiles(*r.LatencyUncorrected))
		fmt.Fprintf(w, "  %-13s (CO) counts from each request's due time when a busy connection sent it late; uncorrected from the send\n", "")
		fmt.Fprintf(w, "  %-13s %s late by more than 1ms, largest lag %s\n", "Late starts", group(r.LateStarts), us(r.MaxLagUs))
		if r.Unsent > 0 {
			fmt.Fprintf(w, "  %-13s %s scheduled requests never sent: the server did not keep up\n", "Unsent", group(r.Unsent))
		}
	}
	if len(r.LatencyAll) > 0 {
		var parts []string
		for _, q := range r.LatencyAll {
			parts = append(parts, fmt.Sprintf("p%g %s [%s, %s]", 100*q.Q, us(q.Value), us(q.Lo), us(q.Hi)))
		}
		q := r.LatencyAll[0]
		fmt.Fprintf(w, "  %-13s %s\n", "All requests", strings.Join(parts, ", "))
		fmt.Fprintf(w, "  %-13s the latency above is of the requests answered; here %s of %s failed, unfinished or unsent count as the %s timeout (95%% intervals)\n",
			"", group(q.Misses), group(q.N), secs(r.TimeoutS))
	}
	if len(r.Trials) > 1 {
		rps := make([]float64, len(r.Trials))
		p99 := make([]float64, len(r.Trials))
		for i, t := range r.Trials {
			rps[i], p99[i] = t.RPS, t.Latency.P99
		}
		sort.Float64s(rps)
		sort.Float64s(p99)
		fmt.Fprintf(w, "  %-13s %d: req/s min %s median %s max %s; p99 min %s median %s max %s\n", "Trials", len(r.Trials),
			rate(rps[0]), rate(stats.Median(rps)), rate(rps[len(rps)-1]), us(p99[0]), us(stats.Median(p99)), us(p99[len(p99)-1]))
		fmt.Fprintf(w, "  %-13s percentiles above are from the trials' merged histogram\n", "")
	}
	fmt.Fprintf(w, "  %-13s %s\n", "Status", statuses(r.StatusCodes))
	if r.Errors == 0 {
		fmt.Fprintf(w, "  %-13s none\n", "Errors")
	} else {
		fmt.Fprintf(w, "  %-13s %s of %s (%.2f%%)\n", "Errors", group(r.Errors), group(r.Requests), 100*float64(r.Errors)/float64(max(r.Requests, 1)))
		classes := make([]string, 0, len(r.ErrorsByClass))
		for c := range r.ErrorsByClass {
			classes = append(classes, c)
		}
		sort.Slice(classes, func(i, j int) bool { return r.ErrorsByClass[classes[i]] > r.ErrorsByClass[classes[j]] })
		for _, c := range classes {
			line := fmt.Sprintf("    %-12s %s", c, group(r.ErrorsByClass[c]))
			if s := r.ErrorSamples[c]; s != "" {
				line += "   e.g. " + s
			}
			fmt.Fprintln(w, line)
		}
	}
	if r.StderrBytes > 0 {
		fmt.Fprintf(w, "  %-13s %s bytes written by PHP to FastCGI stderr\n", "PHP stderr", group(r.StderrBytes))
	}
	if r.InFlightAtEnd > 0 {
		fmt.Fprintf(w, "  %-13s %d requests still running when the window closed (not counted)\n", "In flight", r.InFlightAtEnd)
	}
	if r.Reconnects > 0 {
		fmt.Fprintf(w, "  %-13s %s (server closed kept connections)\n", "Reconnects", group(r.Reconnects))
	}
	fmt.Fprintf(w, "  %-13s %.1f us a request (%.2f s in all, GOMAXPROCS %d)\n", "Client CPU", r.ClientCPUUsPerReq, r.ClientCPUS, r.GoMaxProcs)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
}

func percentiles(l load.Latency) string {
	return fmt.Sprintf("p50 %s   p90 %s   p99 %s   p99.9 %s   max %s", us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max))
}

func statuses(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + group(m[k])
	}
	return strings.Join(parts, ", ")
}

// us formats microseconds with a unit that keeps 3 significant digits.
func us(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fs", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.2fms", v/1e3)
	default:
		return fmt.Sprintf("%.0fus", v)
	}
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(10 * time.Millisecond).String()
}

func rate(v float64) string {
	if v >= 100 {
		return group(int64(v + 0.5))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func bytesStr(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.2f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// group writes 1234567 as 1,234,567.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
