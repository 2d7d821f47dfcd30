package accesslog

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Summary writes the mix as a person reads it: one line of counts (lines read, parsed, unparseable
// with the first one shown, dropped by reason, kept), then one line per route: share, requests, mean
// time when known, why, pattern and its examples with weights; then the load over time (see Load).
func (m *Mix) Summary(w io.Writer) {
	fmt.Fprintln(w, m.countsLine())
	for _, r := range m.Routes {
		fmt.Fprintln(w, m.routeLine(r))
	}
	for _, line := range m.Load.loadLines() {
		fmt.Fprintln(w, line)
	}
}

func (m *Mix) countsLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "access log %s (%s): %d lines, %d parsed", m.filesName(), m.Format, m.Lines, m.Lines-m.Unparsed)
	if m.Unparsed > 0 {
		bad := m.FirstBad[0]
		fmt.Fprintf(&b, ", %d unparseable (first: %s:%d %q)", m.Unparsed, bad.File, bad.Line, clip(bad.Text, 80))
	}
	var drops []string
	for r := byNoRequest; r < nReasons; r++ {
		if n := m.Dropped[reasons[r].key]; n > 0 {
			drops = append(drops, fmt.Sprintf("%d %s", n, reasons[r].what))
		}
	}
	if len(drops) > 0 {
		fmt.Fprintf(&b, ", dropped %s", strings.Join(drops, ", "))
	}
	fmt.Fprintf(&b, "; kept %d, %d routes chosen cover %.1f%%", m.Kept, len(m.Routes), m.Covered*100)
	return b.String()
}

func (m *Mix) filesName() string {
	if len(m.Files) == 1 {
		return m.Files[0]
	}
	return fmt.Sprintf("%d files", len(m.Files))
}

func (m *Mix) routeLine(r Route) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %5.1f%% %8d req", r.Share*100, r.Count)
	if m.HasTime {
		fmt.Fprintf(&b, " %9s", millis(r.MeanTime))
	}
	fmt.Fprintf(&b, "  %-13s %s %s ", r.Why, r.Method, r.Pattern)
	for i, e := range r.Examples {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s (w %d)", e.URI, e.Weight)
	}
	return b.String()
}

func millis(s float64) string {
	ms := s * 1000
	if ms < 10 {
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// loadLines are the load's lines of the summary: its span and mean, the busiest second, the 99th percentile
// second and the busiest minute; concurrency and service time when logged, and the workers the peak needs at
// the log's mean service time; what the rates leave out.
func (l *Load) loadLines() []string {
	if l == nil || l.Requests == 0 {
		return nil
	}
	if !l.HasRate() {
		return []string{fmt.Sprintf("load: %d requests to PHP; %s", l.Requests, l.Note)}
	}
	clock := l.clock()
	lines := []string{
		fmt.Sprintf("load: %d requests to PHP over %s, %s to %s%s; mean %s req/s", l.Timed, span(l.SpanS),
			l.First.Format(clock), l.Last.Format(clock), l.zoneNote(), rps(l.MeanRPS)),
		fmt.Sprintf("  peak %s req/s (the busiest second, %s), 99th percentile second %s req/s, %s", rps(l.PeakRPS),
			l.PeakAt.Format(clock), rps(l.P99RPS), l.minuteNote()),
	}
	if l.ServiceTimed == 0 {
		lines = append(lines, "  no request times logged, so no concurrency: log $request_time or $upstream_response_time (nginx), %D (Apache)")
	} else {
		share := ""
		if l.ServiceTimed < l.Timed {
			share = fmt.Sprintf(" (%d%% of requests)", 100*l.ServiceTimed/l.Timed)
		}
		mean := millis(l.ServiceMeanUs / 1e6)
		lines = append(lines,
			fmt.Sprintf("  concurrency at its peak %.1f (p99 second %.1f) from %s%s", l.PeakConcurrency, l.P99Concurrency,
				serviceWords[l.ServiceFrom], share),
			fmt.Sprintf("  service time %s mean, %s p99: at the mean, the peak needs about %d workers", mean,
				millis(l.ServiceP99Us/1e6), l.WorkersAt(l.ServiceMeanUs/1e6)))
	}
	return append(lines, l.notes()...)
}

var serviceWords = map[string]string{ServiceUpstream: "upstream_response_time", ServiceRequest: "request times",
	ServiceMixed: "upstream_response_time, else request times"}

// clock is the layout times are shown in: the time of day, with the date when the log spans days.
func (l *Load) clock() string {
	if l.First.Format("20060102") == l.Last.Format("20060102") {
		return "15:04:05"
	}
	return "Jan 2 15:04:05"
}

func (l *Load) zoneNote() string {
	if len(l.Zones) == 0 {
		return " (no zone logged)"
	}
	return " (" + l.Zones[0] + ")"
}

func (l *Load) minuteNote() string {
	if l.PeakMinuteRPS == 0 {
		return "no busiest minute (under a minute logged)"
	}
	return fmt.Sprintf("busiest minute %s req/s", rps(l.PeakMinuteRPS))
}

// notes say what the rates do not count, and how the order and the zones were read.
func (l *Load) notes() []string {
	var left, read []string
	if l.Untimed > 0 {
		left = append(left, fmt.Sprintf("%d requests without a time stamp read", l.Untimed))
	}
	if l.Gaps > 0 {
		left = append(left, fmt.Sprintf("%s of an hour or more (%s in all)", plural(l.Gaps, "silence"), span(l.GapS)))
	}
	if l.OutOfOrder > 0 {
		read = append(read, fmt.Sprintf("%s out of time order, each counted at its stamp", plural(l.OutOfOrder, "line")))
	}
	if len(l.Zones) > 1 {
		read = append(read, fmt.Sprintf("stamps in %s, shown in %s", strings.Join(l.Zones, ", "), l.Zones[0]))
	}
	var out []string
	if len(left) > 0 {
		out = append(out, "  left out of the rates: "+strings.Join(left, ", "))
	}
	if len(read) > 0 {
		out = append(out, "  "+strings.Join(read, "; "))
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// span is a length of time in seconds as a person reads it: 59s, 23h59m12s, 3d2h.
func span(s float64) string {
	d := time.Duration(s) * time.Second
	if d >= 48*time.Hour {
		return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	}
	return d.String()
}

// rps is a rate: whole requests from 10 a second, one decimal below.
func rps(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
